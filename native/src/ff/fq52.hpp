// Fq arithmetic for 8 independent elements at once with AVX-512 IFMA (vpmadd52luq/vpmadd52huq):
// the G1 and G2 MSMs (msm/ifma.hpp). Compiled only into the translation unit built with
// the IFMA flags (kernels_ifma.cpp); the rest of the addon never sees these types.
//
// Representation ("M52"):
//  * an element a is held as the canonical integer a·2^416 mod q (Montgomery form for R = 2^416,
//    eight 52-bit limbs), not the a·2^384 of Fq (ff/mont.hpp);
//  * in memory (buckets, tables, converted bases) that integer is packed into six u64 limbs, so a
//    G1 point is 96 bytes like Affine<Fq> and the identity is still all zero bytes;
//  * in registers, F8 holds eight elements limb-major (l[j] = limb j of the 8 lanes), limbs
//    < 2^52 unless a function says otherwise.
// Conversions: M(x, y) = x·y·2^-416 (mul). Fq (a·2^384) → M52: M(x, 2^448 mod q) = a·2^416;
// M52 → Fq: M(x, 2^384 mod q) = a·2^384. The scalar twins (to_m52 / from_m52) use Fq's own
// multiplication with 2^416 and 2^352 mod q.
//
// Bounds: mul takes operands < 8q (as integers, limbs normalised) and returns < 2q, because
// 64q < 2^416; sub(a, b, kq) = a + k·q − b with signed carry propagation; csub(x, kq) subtracts k·q
// when x ≥ k·q. Callers keep stored coordinates canonical (< q) so equality is a byte compare.
#pragma once
#include "bls12_381.hpp"
#include "v52.hpp"

namespace kiln {
namespace m52 {

using v52::add_lazy;
using v52::bc;
using v52::blend;
using v52::csub;
using v52::kMask;
using v52::norm;
using v52::sub;
using v52::transpose8;
using v52::V;
using F8 = v52::FL<8>;

// 6×64 → 8×52 limbs of a canonical integer < 2^384 (scalar).
inline void unpack52(const u64* in, u64* out) {
  for (int j = 0; j < 8; j++) {
    const unsigned bit = 52 * j, k = bit / 64, s = bit % 64;
    u64 v = in[k] >> s;
    if (s > 12 && k + 1 < 6) v |= in[k + 1] << (64 - s);
    out[j] = v & kMask;
  }
}
// 8×52 (normalised, value < 2^384) → 6×64 (scalar).
inline void pack64(const u64* in, u64* out) {
  for (int k = 0; k < 6; k++) out[k] = 0;
  for (int j = 0; j < 8; j++) {
    const unsigned bit = 52 * j, k = bit / 64, s = bit % 64;
    out[k] |= in[j] << s;
    if (s > 12 && k + 1 < 6) out[k + 1] |= in[j] >> (64 - s);
  }
}

struct Consts {
  u64 q[8], q2[8], q4[8];  // q, 2q, 4q in normalised 52-bit limbs
  u64 n0;                  // −q^−1 mod 2^52
  u64 to52[8];             // 2^448 mod q
  u64 to64[8];             // 2^384 mod q
  u64 one[8];              // 2^416 mod q: the M52 form of 1
  Fq s_to52, s_to64;       // raw Fq limbs of 2^416 and 2^352 mod q (scalar conversions)
  u64 q64[6];              // q as six u64 limbs
};

inline Consts make_consts() {
  Consts c{};
  auto pow2 = [](unsigned k, u64* out) {  // canonical 2^k mod q, six u64 limbs
    Fq t = Fq::from_u64(2).pow_u64(k);
    t.to_canonical(out);
  };
  u64 t64[6];
  for (int i = 0; i < 6; i++) c.q64[i] = FqParams::MOD[i];
  unpack52(c.q64, c.q);
  // 2q and 4q: q < 2^381, so both fit eight 52-bit limbs.
  u64 carry2 = 0, carry4 = 0;
  for (int j = 0; j < 8; j++) {
    const u64 v2 = (c.q[j] << 1) + carry2, v4 = (c.q[j] << 2) + carry4;
    c.q2[j] = v2 & kMask;
    carry2 = v2 >> 52;
    c.q4[j] = v4 & kMask;
    carry4 = v4 >> 52;
  }
  u64 inv = 1;  // q^−1 mod 2^64 by Newton
  for (int i = 0; i < 7; i++) inv *= 2 - FqParams::MOD[0] * inv;
  c.n0 = (0 - inv) & kMask;
  pow2(448, t64);
  unpack52(t64, c.to52);
  pow2(384, t64);
  unpack52(t64, c.to64);
  pow2(416, t64);
  unpack52(t64, c.one);
  pow2(416, c.s_to52.v);
  pow2(352, c.s_to64.v);
  return c;
}

inline const Consts kC = make_consts();

// Scalar conversions of one coordinate (six u64 limbs in, six out).
inline void to_m52(const Fq& a, u64* out) {  // a·2^384 → a·2^416
  const Fq r = a * kC.s_to52;
  for (int i = 0; i < 6; i++) out[i] = r.v[i];
}
inline Fq from_m52(const u64* in) {  // a·2^416 → a·2^384
  Fq x;
  for (int i = 0; i < 6; i++) x.v[i] = in[i];
  return x * kC.s_to64;
}
// q − y for a canonical nonzero y (six u64 limbs); 0 stays 0.
inline void neg64(const u64* y, u64* out) {
  bool zero = true;
  for (int i = 0; i < 6; i++) zero = zero && y[i] == 0;
  if (zero) {
    for (int i = 0; i < 6; i++) out[i] = 0;
    return;
  }
  u64 b = 0;
  for (int i = 0; i < 6; i++) out[i] = sbb(kC.q64[i], y[i], b, b);
}

#define KILN_V KILN_INLINE

// x·y·2^−416 for 8 lanes (operands < 8q, limbs < 2^52); result < 2q, limbs normalised.
KILN_V F8 mul(const F8& a, const F8& b) { return v52::mont_mul<8>(a, b, kC.q, kC.n0); }

// Eight 6-limb packed coordinates (rows p[L] + off) → F8.
KILN_V F8 load(const u64* const* p, unsigned off) {
  V r[8];
  for (int L = 0; L < 8; L++) r[L] = _mm512_maskz_loadu_epi64(0x3f, p[L] + off);
  transpose8(r);  // r[k] = limb k (64-bit) of the 8 lanes
  const V mask = bc(kMask);
  F8 f;
  for (int j = 0; j < 8; j++) {
    const unsigned bit = 52 * j, k = bit / 64, s = bit % 64;
    V v = _mm512_srli_epi64(r[k], s);
    if (s > 12 && k + 1 < 6) v = _mm512_or_si512(v, _mm512_slli_epi64(r[k + 1], 64 - s));
    f.l[j] = _mm512_and_si512(v, mask);
  }
  return f;
}

// F8 (canonical, normalised) → eight 6-limb packed coordinates at p[L] + off.
KILN_V void store(const F8& f, u64* const* p, unsigned off) {
  V r[8];
  for (int k = 0; k < 8; k++) r[k] = _mm512_setzero_si512();
  for (int j = 0; j < 8; j++) {
    const unsigned bit = 52 * j, k = bit / 64, s = bit % 64;
    r[k] = _mm512_or_si512(r[k], _mm512_slli_epi64(f.l[j], s));
    if (s > 12 && k + 1 < 6) r[k + 1] = _mm512_or_si512(r[k + 1], _mm512_srli_epi64(f.l[j], 64 - s));
  }
  transpose8(r);
  for (int L = 0; L < 8; L++) _mm512_mask_storeu_epi64(p[L] + off, 0x3f, r[L]);
}

KILN_V F8 broadcast(const u64* limbs) { return v52::broadcast<8>(limbs); }

// Fq2 = Fq[u]/(u² + 1), eight lanes: c0 and c1 as two F8. Same contract as F8 per component:
// mul takes components < 4q (normalised) and returns components < 2q (Karatsuba: three F8
// products, then c0 = a0b0 − a1b1 ∈ (0, 4q) and c1 = (a0 + a1)(b0 + b1) − a0b0 − a1b1 ∈ (0, 6q)
// brought below 2q by conditional subtractions).
struct F8x2 {
  F8 c0, c1;
};

KILN_V F8x2 mul(const F8x2& a, const F8x2& b) {
  const F8 t0 = mul(a.c0, b.c0), t1 = mul(a.c1, b.c1);
  const F8 t2 = mul(norm(add_lazy(a.c0, a.c1)), norm(add_lazy(b.c0, b.c1)));
  F8x2 r;
  r.c0 = csub(sub(t0, t1, kC.q2), kC.q2);
  r.c1 = csub(csub(sub(t2, add_lazy(t0, t1), kC.q4), kC.q4), kC.q2);
  return r;
}
KILN_V F8x2 sub(const F8x2& a, const F8x2& b, const u64* kq) { return {sub(a.c0, b.c0, kq), sub(a.c1, b.c1, kq)}; }
KILN_V F8x2 add_lazy(const F8x2& a, const F8x2& b) { return {add_lazy(a.c0, b.c0), add_lazy(a.c1, b.c1)}; }
KILN_V F8x2 csub(const F8x2& x, const u64* kq) { return {csub(x.c0, kq), csub(x.c1, kq)}; }
KILN_V F8x2 blend(__mmask8 m, const F8x2& a, const F8x2& b) { return {blend(m, a.c0, b.c0), blend(m, a.c1, b.c1)}; }

}  // namespace m52
}  // namespace kiln
