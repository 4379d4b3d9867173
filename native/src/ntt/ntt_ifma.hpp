// Radix-2 NTT over Fr on AVX-512 IFMA, eight elements per vector (ff/fr52.hpp): the fast twin of
// ntt/ntt.hpp, with the same conventions (natural order in and out, bit reversal then DIT stages,
// ω_n = root_of_unity(log_n), coset generator g = 7, inverse = transform with ω^-1 then ×1/n·g^-i)
// and canonical outputs, so both produce identical bytes for canonical inputs.
//
// Data stays in Fr's Montgomery form (a·2^256); every constant is in the R' = 2^260 form, so the
// 52-bit Montgomery product with a constant keeps the data's form (see fr52.hpp).
//
// One transform (`transform`):
//  1. gather + first three stages, per 64 positions: vector k (0…7), lane l holds position
//     64B + 8l + k of the bit-reversed sequence, read straight from the caller's array (AoS, 4×64
//     limbs); stages h = 1, 2, 4 then pair vector k with k + h lane-wise under a broadcast twiddle;
//     an 8×8 transpose per limb yields natural order (vector m, lane l = position 64B + 8m + l);
//     written to a scratch array S in "SoA52" form: 8 elements = 5 vectors (one per 52-bit limb).
//  2. stages h = 8 … kBlock/2 block by block (each block of S stays in L2); one task takes a few
//     blocks n/span apart so that its gathers use whole cache lines of the source;
//  3. the later stages over all of S, split across threads stage by stage;
//  4. a store pass S → caller's array (natural order, canonical, 4×64 limbs) that also applies the
//     per-element scaling (1/n, g^±i, Z^-1) or the quotient's pointwise step.
// Bounds: values in S have normalised limbs and stay < 32r < 2^260 (lazy reduction, see Schedule):
// a butterfly computes v = M(x, w) < 2r for any x (w canonical), then u + v and u + 2r − v, and
// only every ~7th stage first reduces u below 16r. Twiddles are canonical; running powers in the
// scaling passes are < 2r (M(x, p) < r + x·p/2^260 < 3r), reduced by conditional subtractions.
//
// Twiddle tables (one per direction): stage h ≥ 8, positions j … j+7 (j ≡ 0 mod 8) are vector
// group h/8 + j/8 (5 vectors), holding ω_{2h}^(±(j+l)) in R' form; n/8 groups (40 bytes/element).
// Memory per call: scratch 40n bytes plus 40n per table (quotient: both tables), vs 32n for the
// scalar path's table; up to 96 MiB of freed buffers is kept for later calls (BufCache). Sizes below 2^6 take the scalar path.
#pragma once
#include <cstdlib>
#ifdef __linux__
#include <sys/mman.h>
#endif
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "../ff/fr52.hpp"
#include "ntt.hpp"

namespace kiln {
namespace ntt52 {

using r52::F5;
using r52::V;
using namespace r52;

constexpr unsigned kMinLog = 6;                     // n ≥ 64: one gather block
constexpr size_t kBlock = size_t(1) << 12;          // elements per L2 block (160 KiB of S)

// Freed scratch and table buffers are kept (up to kCacheBytes in all) for the next call: fresh
// pages cost a fault and a clear each, ~25% of a 2^16 transform otherwise.
constexpr size_t kCacheBytes = size_t(96) << 20;

class BufCache {
 public:
  static BufCache& get() {
    static BufCache* c = new BufCache();  // never destroyed, like the pool
    return *c;
  }
  // A buffer of at least `bytes` (64-byte aligned; 2 MiB aligned and huge-page advised when big).
  void* take(size_t& bytes) {
    {
      std::lock_guard<std::mutex> g(m_);
      for (size_t i = 0; i < free_.size(); i++) {
        if (free_[i].second >= bytes && free_[i].second <= 2 * bytes) {
          void* p = free_[i].first;
          bytes = free_[i].second;
          held_ -= bytes;
          free_.erase(free_.begin() + long(i));
          return p;
        }
      }
    }
    const size_t huge = size_t(1) << 21;
    const bool big = bytes >= 2 * huge;
    if (big) bytes = (bytes + huge - 1) & ~(huge - 1);
    void* p = std::aligned_alloc(big ? huge : 64, bytes);
    if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (big) madvise(p, bytes, MADV_HUGEPAGE);  // fewer page faults on the fresh pages (advisory)
#endif
    return p;
  }
  void give(void* p, size_t bytes) {
    {
      std::lock_guard<std::mutex> g(m_);
      if (held_ + bytes <= kCacheBytes) {
        free_.emplace_back(p, bytes);
        held_ += bytes;
        return;
      }
    }
    std::free(p);
  }

 private:
  std::mutex m_;
  std::vector<std::pair<void*, size_t>> free_;
  size_t held_ = 0;
};

// 64-byte aligned array of groups (5 vectors each), from BufCache.
class VBuf {
 public:
  VBuf() = default;
  explicit VBuf(size_t groups) {
    bytes_ = (groups > 0 ? groups : 1) * 5 * sizeof(V);
    p_ = static_cast<V*>(BufCache::get().take(bytes_));
  }
  ~VBuf() {
    if (p_) BufCache::get().give(p_, bytes_);
  }
  VBuf(VBuf&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  VBuf& operator=(VBuf&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  V* get() const { return p_; }

 private:
  V* p_ = nullptr;
  size_t bytes_ = 0;
};

struct Tables {
  unsigned log_n = 0;
  size_t n = 0;
  VBuf tw;                  // (n/8) groups × 5 vectors; group h/8 + j/8 for stage h ≥ 8
  u64 small[7][5];          // stages h = 1, 2, 4: ω_{2h}^(±j) at index h − 1 + j (R' form)
};

inline VBuf alloc_groups(size_t groups) { return VBuf(groups); }

// Lanes start·step^(b + l), l = 0…7, in R' form (scalar).
inline F5 power_lanes(const Fr& start, const Fr& step, u64 b) {
  u64 lanes[8][5];
  Fr x = start * step.pow_u64(b);
  for (int l = 0; l < 8; l++) {
    to_r52(x, lanes[l]);
    x *= step;
  }
  return from_lanes(lanes);
}

inline F5 r52_broadcast(const Fr& x) {
  u64 t[5];
  to_r52(x, t);
  return broadcast(t);
}

inline void build_tables(Tables& T, unsigned log_n, bool inverse, ThreadPool& tp) {
  const size_t n = size_t(1) << log_n;
  T.log_n = log_n;
  T.n = n;
  Fr w = root_of_unity(log_n);
  if (inverse) w = w.inverse();
  // Small stages: ω_{2h} = w^(n/2h).
  for (unsigned h = 1; h <= 4; h <<= 1) {
    const Fr wh = w.pow_u64(n / (2 * h));
    Fr x = Fr::one();
    for (unsigned j = 0; j < h; j++) {
      to_r52(x, T.small[h - 1 + j]);
      x *= wh;
    }
  }
  T.tw = alloc_groups(n / 8);
  V* tw = T.tw.get();
  // Top stage h = n/2: group n/16 + v holds w^(8v + l).
  const size_t top = n / 16;
  {
    const size_t chunk = 512;  // groups per task
    const size_t tasks = (top + chunk - 1) / chunk;
    const F5 s8 = r52_broadcast(w.pow_u64(8));
    tp.parallel_for(tasks, [&](size_t t) {
      const size_t b = t * chunk, e = std::min(top, b + chunk);
      F5 p = power_lanes(Fr::one(), w, 8 * b);
      for (size_t v = b; v < e; v++) {
        st(tw + 5 * (top + v), csub(p, kC.r));  // canonical twiddles (p itself < 2r)
        p = mul(p, s8);
      }
    });
  }
  // Lower stages: ω_{2h}^j = ω_{4h}^(2j): the even lanes of two groups of stage 2h.
  const V even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  for (size_t hv = top / 2; hv >= 1; hv >>= 1) {  // hv = h/8
    const size_t chunk = 1024;
    const size_t tasks = (hv + chunk - 1) / chunk;
    tp.parallel_for(tasks, [&](size_t t) {
      const size_t b = t * chunk, e = std::min(hv, b + chunk);
      for (size_t jj = b; jj < e; jj++) {
        const V* s = tw + 5 * (2 * hv + 2 * jj);
        V* d = tw + 5 * (hv + jj);
        for (int k = 0; k < 5; k++) d[k] = _mm512_permutex2var_epi64(s[k], even, s[5 + k]);
      }
    });
  }
}

// DIT butterfly (u, x) ← (u + x·w, u + 2r − x·w), w canonical: v = M(x, w) < 2r for any x, so
// each stage raises the bound on the values by 2r; with Reduce, u is first brought below 16r
// (valid for u < 32r), so the outputs are < 18r (see stage_reduce).
template <bool Reduce>
KILN_V5 void bf(F5& u, F5& x, const F5& w) {
  const F5 v = mul(x, w);
  const F5 a = Reduce ? csub(u, kC.r16) : u;
  u = add(a, v);
  x = sub_kr(a, v, kC.r2);
}
template <bool Reduce>
KILN_V5 void bf_mem(V* u, V* x, const V* w) {
  F5 U = ld(u), X = ld(x);
  bf<Reduce>(U, X, ld(w));
  st(u, U);
  st(x, X);
}

// Lazy reduction schedule. Inputs are < 2^256 < 3r; the gather's three stages leave < 11r (see
// transform). From then on stage s takes values < B·r: outputs < (B + 2)·r, or < 18r when
// B > 30 and u is reduced first; so values stay < 32r < 2^260 throughout.
constexpr unsigned kBoundAfterGather = 11;
struct Schedule {
  bool reduce[33] = {};
  unsigned final_bound = 0;
  explicit Schedule(unsigned log_n) {
    unsigned B = kBoundAfterGather;
    for (unsigned s = 3; s < log_n; s++) {
      reduce[s] = B > 30;
      B = reduce[s] ? 18 : B + 2;
    }
    final_bound = B;
  }
};

inline unsigned ctz_size(size_t x) { return unsigned(__builtin_ctzll(x)); }

inline unsigned brev3(unsigned x) { return ((x & 1) << 2) | (x & 2) | ((x >> 2) & 1); }

// Stages hv and 2hv (vector units) on the quads x + jj + {0, hv, 2hv, 3hv}, jj ∈ [j0, j1).
template <bool R1, bool R2>
inline void radix4(V* x, const V* w1, const V* w2, size_t hv, size_t j0, size_t j1) {
  for (size_t jj = j0; jj < j1; jj++) {
    V* p0 = x + 5 * jj;
    F5 x0 = ld(p0), x1 = ld(p0 + 5 * hv), x2 = ld(p0 + 10 * hv), x3 = ld(p0 + 15 * hv);
    const F5 wa = ld(w1 + 5 * jj);
    bf<R1>(x0, x1, wa);
    bf<R1>(x2, x3, wa);
    bf<R2>(x0, x2, ld(w2 + 5 * jj));
    bf<R2>(x1, x3, ld(w2 + 5 * (hv + jj)));
    st(p0, x0);
    st(p0 + 5 * hv, x1);
    st(p0 + 10 * hv, x2);
    st(p0 + 15 * hv, x3);
  }
}

// src (n Fr, natural order) → S (n/8 groups, transformed, natural order, < 4r).
inline void transform(const Fr* src, V* S, const Tables& T, ThreadPool& tp) {
  const unsigned log_n = T.log_n;
  const size_t n = T.n;
  const V* tw = T.tw.get();
  const Schedule sch(log_n);
  const u64* a = reinterpret_cast<const u64*>(src);
  const size_t block = std::min(n, kBlock);
  size_t off_l[8], off_k[8];
  for (unsigned i = 0; i < 8; i++) {
    off_l[i] = size_t(brev3(i)) << (log_n - 6);
    off_k[i] = size_t(brev3(i)) << (log_n - 3);
  }
  F5 sw[7];
  for (int i = 0; i < 7; i++) sw[i] = broadcast(T.small[i]);
  // Each task takes `span` blocks n/span apart: their gathers read neighbouring source elements
  // (bit reversal maps them to consecutive indices), so every 64-byte line read is used whole.
  const size_t T_ = tp.size();
  const size_t nblocks = n / block;
  size_t span = 1;
  while (span < 4 && nblocks / (2 * span) >= 2 * T_) span <<= 1;
  const size_t tasks = nblocks / span;
  tp.parallel_for(tasks, [&](size_t t0) {
    for (size_t sub = 0; sub < block / 64; sub++) {
      for (size_t t = 0; t < span; t++) {
        const size_t B = (t0 + t * tasks) * (block / 64) + sub;
        const size_t base = bit_reverse(u32(B), log_n - 6);
        F5 x[8];
        for (int k = 0; k < 8; k++) {
          const u64* p[8];
          for (int l = 0; l < 8; l++) p[l] = a + 4 * (base + off_l[l] + off_k[k]);
          x[k] = gather8(p);
        }
        // h = 1, w = 1: inputs < 3r → outputs u + v < 6r, u + 4r − v < 7r
        for (int k = 0; k < 8; k += 2) {
          const F5 u = x[k];
          x[k] = add(u, x[k + 1]);
          x[k + 1] = sub_kr(u, x[k + 1], kC.r4);
        }
        // h = 2, 4 (w = 1 multiplied too, to keep v < 2r): < 9r, then < 11r
        for (int k = 0; k < 8; k += 4) {
          bf<false>(x[k], x[k + 2], sw[1]);
          bf<false>(x[k + 1], x[k + 3], sw[2]);
        }
        for (int k = 0; k < 4; k++) bf<false>(x[k], x[k + 4], sw[3 + k]);
        V* d = S + 5 * (8 * B);
        for (int j = 0; j < 5; j++) {
          V m[8];
          for (int k = 0; k < 8; k++) m[k] = x[k].l[j];
          transpose8(m);
          for (int l = 0; l < 8; l++) _mm512_store_si512((void*)(d + 5 * l + j), m[l]);
        }
      }
    }
    for (size_t t = 0; t < span; t++) {
      V* Sb = S + 5 * ((t0 + t * tasks) * block / 8);
      for (size_t hv = 1, s = 3; hv < block / 8; hv <<= 1, s++) {
        for (size_t g = 0; g < block / 8; g += 2 * hv) {
          V* u = Sb + 5 * g;
          if (sch.reduce[s])
            for (size_t jj = 0; jj < hv; jj++) bf_mem<true>(u + 5 * jj, u + 5 * (hv + jj), tw + 5 * (hv + jj));
          else
            for (size_t jj = 0; jj < hv; jj++) bf_mem<false>(u + 5 * jj, u + 5 * (hv + jj), tw + 5 * (hv + jj));
        }
      }
    }
  });
  // Later stages over all of S, two per pass (radix-4: half the memory traffic), split across
  // threads; an odd count starts with one radix-2 stage.
  size_t hv = block / 8;
  unsigned s0 = 3 + ctz_size(hv);  // stage index of hv
  if (hv < n / 8 && ((log_n - ctz_size(block)) & 1)) {
    const size_t half = n / 16;  // vector butterflies
    const size_t tasks = std::min<size_t>(4 * T_, std::max<size_t>(1, half >> 8));
    for_stage_runs(tp, half, tasks, hv, [&](size_t g, size_t j0, size_t j1) {
      V* u = S + 5 * (g * 2 * hv);
      if (sch.reduce[s0])
        for (size_t jj = j0; jj < j1; jj++) bf_mem<true>(u + 5 * jj, u + 5 * (hv + jj), tw + 5 * (hv + jj));
      else
        for (size_t jj = j0; jj < j1; jj++) bf_mem<false>(u + 5 * jj, u + 5 * (hv + jj), tw + 5 * (hv + jj));
    });
    hv <<= 1;
    s0++;
  }
  for (; hv < n / 8; hv <<= 2, s0 += 2) {
    const int mode = int(sch.reduce[s0]) | (int(sch.reduce[s0 + 1]) << 1);
    const size_t quads = n / 32;  // 4 vectors, 4 vector butterflies each
    const size_t tasks = std::min<size_t>(4 * T_, std::max<size_t>(1, quads >> 7));
    for_stage_runs(tp, quads, tasks, hv, [&](size_t g, size_t j0, size_t j1) {
      V* x = S + 5 * (g * 4 * hv);
      const V* w1 = tw + 5 * hv;
      const V* w2 = tw + 5 * (2 * hv);
      switch (mode) {
        case 0: radix4<false, false>(x, w1, w2, hv, j0, j1); break;
        case 1: radix4<true, false>(x, w1, w2, hv, j0, j1); break;
        case 2: radix4<false, true>(x, w1, w2, hv, j0, j1); break;
        default: radix4<true, true>(x, w1, w2, hv, j0, j1); break;
      }
    });
  }
}

constexpr size_t kStoreChunk = 256;  // groups (2048 elements) per task in the elementwise passes

// dst[i] = canonical(S[i]).
inline void store_plain(const V* S, Fr* dst, size_t n, ThreadPool& tp) {
  const size_t groups = n / 8;
  u64* d = reinterpret_cast<u64*>(dst);
  tp.parallel_for((groups + kStoreChunk - 1) / kStoreChunk, [&](size_t t) {
    const size_t b = t * kStoreChunk, e = std::min(groups, b + kStoreChunk);
    for (size_t G = b; G < e; G++) {
      F5 x = ld(S + 5 * G);  // < 32r
      x = csub(csub(csub(csub(csub(x, kC.r16), kC.r8), kC.r4), kC.r2), kC.r);
      store8(x, d + 32 * G);
    }
  });
}

// dst[i] = S[i] · start · step^i (canonical).
inline void store_scaled(const V* S, Fr* dst, size_t n, const Fr& start, const Fr& step, ThreadPool& tp) {
  const size_t groups = n / 8;
  u64* d = reinterpret_cast<u64*>(dst);
  const F5 s8 = r52_broadcast(step.pow_u64(8));
  tp.parallel_for((groups + kStoreChunk - 1) / kStoreChunk, [&](size_t t) {
    const size_t b = t * kStoreChunk, e = std::min(groups, b + kStoreChunk);
    F5 p = power_lanes(start, step, 8 * b);
    for (size_t G = b; G < e; G++) {
      const F5 x = csub(csub(mul(ld(S + 5 * G), p), kC.r2), kC.r);  // p < 2r: product < 3r
      store8(x, d + 32 * G);
      p = mul(p, s8);
    }
  });
}

// a[i] = S[i]·b[i]·2^-260 − c[i] (canonical): the quotient's pointwise step (see quotient_ifma).
inline void store_pointwise(const V* S, Fr* a, const Fr* b, const Fr* c, size_t n, ThreadPool& tp) {
  const size_t groups = n / 8;
  u64* d = reinterpret_cast<u64*>(a);
  const u64* pb = reinterpret_cast<const u64*>(b);
  const u64* pc = reinterpret_cast<const u64*>(c);
  tp.parallel_for((groups + kStoreChunk - 1) / kStoreChunk, [&](size_t t) {
    const size_t lo = t * kStoreChunk, e = std::min(groups, lo + kStoreChunk);
    for (size_t G = lo; G < e; G++) {
      const F5 x = csub(mul(ld(S + 5 * G), load8(pb + 32 * G)), kC.r);  // < r (b < r)
      const F5 y = sub_kr(x, load8(pc + 32 * G), kC.r);                  // x + r − c < 2r
      store8(csub(y, kC.r), d + 32 * G);
    }
  });
}

// a[i] *= start·step^i in place (canonical in, canonical out).
inline void scale_inplace(Fr* a, size_t n, const Fr& start, const Fr& step, ThreadPool& tp) {
  const size_t groups = n / 8;
  u64* d = reinterpret_cast<u64*>(a);
  const F5 s8 = r52_broadcast(step.pow_u64(8));
  tp.parallel_for((groups + kStoreChunk - 1) / kStoreChunk, [&](size_t t) {
    const size_t b = t * kStoreChunk, e = std::min(groups, b + kStoreChunk);
    F5 p = power_lanes(start, step, 8 * b);
    for (size_t G = b; G < e; G++) {
      const F5 x = csub(mul(load8(d + 32 * G), p), kC.r);  // < r + 2^256·2r/2^260 < 2r
      store8(x, d + 32 * G);
      p = mul(p, s8);
    }
  });
}

// The Backend's ntt(values, {inverse, coset}) on one vector (same results as kiln::ntt).
inline void ntt_ifma(Fr* a, unsigned log_n, bool inverse, bool coset, ThreadPool& tp) {
  if (log_n < kMinLog) return ntt(a, log_n, inverse, coset, tp);
  const size_t n = size_t(1) << log_n;
  Tables T;
  build_tables(T, log_n, inverse, tp);
  auto S = alloc_groups(n / 8);
  const Fr g = coset_gen();
  if (!inverse) {
    if (coset) scale_inplace(a, n, Fr::one(), g, tp);
    transform(a, S.get(), T, tp);
    store_plain(S.get(), a, n, tp);
  } else {
    transform(a, S.get(), T, tp);
    const Fr n_inv = Fr::from_u64(n).inverse();
    store_scaled(S.get(), a, n, n_inv, coset ? g.inverse() : Fr::one(), tp);
  }
}

// Groth16 quotient (same results as kiln::quotient; b and c are left as coset evaluations).
// The pointwise product multiplies two data values: M(x·2^256, y·2^256) = xy·2^252, short of the
// data form by 2^4. `a` is internal until it is overwritten by h, so its coset evaluations are
// produced ×16 instead (1/n·16 in its scaling): M(16a·2^256, b·2^256) = ab·2^256.
inline void quotient_ifma(Fr* a, Fr* b, Fr* c, unsigned log_n, ThreadPool& tp) {
  if (log_n < kMinLog) return quotient(a, b, c, log_n, tp);
  const size_t n = size_t(1) << log_n;
  Tables Ti, Tf;
  build_tables(Ti, log_n, true, tp);
  build_tables(Tf, log_n, false, tp);
  auto S = alloc_groups(n / 8);
  const Fr g = coset_gen();
  const Fr n_inv = Fr::from_u64(n).inverse();
  for (Fr* v : {b, c, a}) {
    transform(v, S.get(), Ti, tp);                                                   // → coefficients (×n)
    store_scaled(S.get(), v, n, v == a ? n_inv * Fr::from_u64(16) : n_inv, g, tp);  // ÷n, × g^i
    transform(v, S.get(), Tf, tp);                                                   // → evaluations on gH
    if (v != a) store_plain(S.get(), v, n, tp);
  }
  store_pointwise(S.get(), a, b, c, n, tp);
  const Fr z_inv = (g.pow_u64(n) - Fr::one()).inverse();
  transform(a, S.get(), Ti, tp);
  store_scaled(S.get(), a, n, n_inv * z_inv, g.inverse(), tp);
}

}  // namespace ntt52
}  // namespace kiln
