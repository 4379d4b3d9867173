// The zcash *uncompressed* point encoding of bellperson's .params / .vk files, converted to and from
// the native layout (host only; instantiated in kernels_ec.cpp).
//
//   wire:   G1 = x ‖ y, G2 = x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0; each Fq 48 bytes big-endian; the top three
//           bits of the first byte are flags: compression (0x80, must be 0), infinity (0x40), sort
//           (0x20, must be 0). The identity is 0x40 followed by zero bits only.
//   native: Montgomery little-endian limbs, c0 first, identity = all zero bytes.
//
// Decoding checks exactly what src/curve/codec.ts checks, in the same order, so both report the
// same first bad point with the same reason: flags, then each coordinate < p in wire order, then
// (0, 0) without the infinity flag; optionally y^2 = x^3 + b, then membership of the r-torsion
// subgroup ([r]P = O, by double-and-add: slow, like the TypeScript check it mirrors).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "../ec/xyzz.hpp"
#include "../ff/bls12_381.hpp"
#include "../util/thread_pool.hpp"

namespace kiln {

enum class PointFault : int {
  None = 0,
  Compressed,       // compression flag set in an uncompressed point
  Sort,             // sort flag set in an uncompressed point
  InfinityNonZero,  // infinity flag set but the coordinates are not zero
  NonCanonical,     // coordinate `coord` (wire order) is >= p
  ZeroZero,         // (0, 0) without the infinity flag
  NotOnCurve,
  NotInSubgroup,
};

struct DecodeFault {
  size_t index = SIZE_MAX;  // SIZE_MAX: no fault
  PointFault fault = PointFault::None;
  int coord = 0;  // wire order: G1 0 = x, 1 = y; G2 0 = x.c1, 1 = x.c0, 2 = y.c1, 3 = y.c0
};

// Point checks requested by the caller.
enum : int { kCheckNone = 0, kCheckCurve = 1, kCheckSubgroup = 2 };

namespace zcash {

constexpr uint8_t FLAG_COMPRESSED = 0x80, FLAG_INFINITY = 0x40, FLAG_SORT = 0x20, FLAG_MASK = 0xe0;

inline u64 load_be64(const uint8_t* p) {
  u64 v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
inline void store_be64(uint8_t* p, u64 v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

// 48 big-endian bytes → 6 little-endian limbs; `top_mask` clears flag bits of the first byte.
inline void read_be48(const uint8_t* p, u64* limbs, u64 top_mask) {
  for (int k = 0; k < 6; k++) limbs[5 - k] = load_be64(p + 8 * k);
  limbs[5] &= top_mask;
}
inline void write_be48(uint8_t* p, const u64* limbs) {
  for (int k = 0; k < 6; k++) store_be64(p + 8 * k, limbs[5 - k]);
}
// a < p
inline bool below_modulus(const u64* a) {
  u64 borrow = 0;
  for (int i = 0; i < 6; i++) (void)sbb(a[i], FqParams::MOD[i], borrow, borrow);
  return borrow != 0;
}
inline bool all_zero(const uint8_t* p, size_t n) {
  u64 acc = 0;
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    u64 v;
    std::memcpy(&v, p + k, 8);
    acc |= v;
  }
  for (; k < n; k++) acc |= p[k];
  return acc == 0;
}

// Group traits: wire coordinate k (in wire order) ↔ native Fq slot.
struct G1Wire {
  using F = Fq;
  static constexpr int COORDS = 2;
  static constexpr size_t WIRE = 96, NATIVE = 96;
  static constexpr int slot(int k) { return k; }  // x, y
  static F b() { return Fq::from_u64(4); }
};
struct G2Wire {
  using F = Fq2;
  static constexpr int COORDS = 4;
  static constexpr size_t WIRE = 192, NATIVE = 192;
  static constexpr int slot(int k) { return k ^ 1; }  // x.c1 x.c0 y.c1 y.c0 → x.c0 x.c1 y.c0 y.c1
  static F b() { return {Fq::from_u64(4), Fq::from_u64(4)}; }
};

// r, little-endian limbs (canonical), for the subgroup check.
constexpr u64 R_LIMBS[4] = {FrParams::MOD[0], FrParams::MOD[1], FrParams::MOD[2], FrParams::MOD[3]};

// Decodes one point; returns the fault (None on success) and writes `dst` only on success.
template <class W>
inline PointFault decode_one(const uint8_t* s, uint8_t* d, int check, const typename W::F& b, int& coord) {
  using F = typename W::F;
  const uint8_t f = s[0];
  if (f & FLAG_COMPRESSED) return PointFault::Compressed;
  if (f & FLAG_SORT) return PointFault::Sort;
  if (f & FLAG_INFINITY) {
    if ((f & ~FLAG_MASK) != 0 || !all_zero(s + 1, W::WIRE - 1)) return PointFault::InfinityNonZero;
    std::memset(d, 0, W::NATIVE);
    return PointFault::None;
  }
  Fq fq[W::COORDS];
  u64 any = 0;
  for (int k = 0; k < W::COORDS; k++) {
    u64 limbs[6];
    read_be48(s + 48 * k, limbs, k == 0 ? ~(u64(FLAG_MASK) << 56) : ~u64(0));
    if (!below_modulus(limbs)) {
      coord = k;
      return PointFault::NonCanonical;
    }
    for (int i = 0; i < 6; i++) any |= limbs[i];
    fq[W::slot(k)] = Fq::from_canonical(limbs);
  }
  if (any == 0) return PointFault::ZeroZero;
  Affine<F> pt;
  static_assert(sizeof(pt) == sizeof(fq), "layout");
  std::memcpy(static_cast<void*>(&pt), fq, sizeof(pt));
  if (check & (kCheckCurve | kCheckSubgroup)) {
    if (pt.y.sqr() != pt.x.sqr() * pt.x + b) return PointFault::NotOnCurve;
    if ((check & kCheckSubgroup) && !scalar_mul<F>(pt, R_LIMBS, 4).is_identity()) return PointFault::NotInSubgroup;
  }
  std::memcpy(d, static_cast<const void*>(&pt), W::NATIVE);
  return PointFault::None;
}

template <class W>
inline void encode_one(const uint8_t* s, uint8_t* d) {
  if (all_zero(s, W::NATIVE)) {
    std::memset(d, 0, W::WIRE);
    d[0] = FLAG_INFINITY;
    return;
  }
  for (int k = 0; k < W::COORDS; k++) {
    Fq x;
    std::memcpy(static_cast<void*>(&x), s + 48 * W::slot(k), 48);
    u64 c[6];
    x.to_canonical(c);  // any limb pattern gives a value < p, as codec.ts's readFqMont
    write_be48(d + 48 * k, c);
  }
}

constexpr size_t CHUNK = 2048;  // points per pool task

template <class W>
DecodeFault decode(const uint8_t* src, uint8_t* dst, size_t n, int check, ThreadPool& pool) {
  const typename W::F b = W::b();
  // Subgroup checks cost ~10^3 times a conversion: smaller tasks keep both cores busy.
  const size_t chunk = (check & kCheckSubgroup) ? 16 : CHUNK;
  const size_t tasks = (n + chunk - 1) / chunk;
  std::atomic<size_t> first{SIZE_MAX};
  std::vector<DecodeFault> faults(tasks);
  pool.parallel_for(tasks, [&](size_t t) {
    const size_t begin = t * chunk, end = std::min(n, begin + chunk);
    for (size_t i = begin; i < end; i++) {
      if (i > first.load(std::memory_order_relaxed)) return;  // an earlier point already failed
      int coord = 0;
      const PointFault f = decode_one<W>(src + i * W::WIRE, dst + i * W::NATIVE, check, b, coord);
      if (f != PointFault::None) {
        faults[t] = {i, f, coord};
        size_t cur = first.load();
        while (i < cur && !first.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  DecodeFault best;
  for (const DecodeFault& f : faults)
    if (f.index < best.index) best = f;
  return best;
}

template <class W>
void encode(const uint8_t* src, uint8_t* dst, size_t n, ThreadPool& pool) {
  const size_t tasks = (n + CHUNK - 1) / CHUNK;
  pool.parallel_for(tasks, [&](size_t t) {
    const size_t begin = t * CHUNK, end = std::min(n, begin + CHUNK);
    for (size_t i = begin; i < end; i++) encode_one<W>(src + i * W::NATIVE, dst + i * W::WIRE);
  });
}

}  // namespace zcash
}  // namespace kiln
