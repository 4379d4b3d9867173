// Eight-lane arithmetic in 52-bit limbs with AVX-512 IFMA, generic in the limb count L: what the
// Fq (ff/fq52.hpp, L = 8) and Fr (ff/fr52.hpp, L = 5) vector fields share. FL<L> holds eight
// elements limb-major (l[j] = limb j of the 8 lanes); "normalised" means every limb < 2^52.
#pragma once
#if !defined(__AVX512F__) || !defined(__AVX512IFMA__)
#error "v52.hpp needs -mavx512f -mavx512ifma"
#endif
#include <immintrin.h>

#include "../util/hd.hpp"

namespace kiln {
namespace v52 {

using V = __m512i;
constexpr u64 kMask = (u64(1) << 52) - 1;

template <int L>
struct FL {
  V l[L];
};

KILN_INLINE V bc(u64 x) { return _mm512_set1_epi64((long long)x); }

template <int L>
KILN_INLINE FL<L> broadcast(const u64* limbs) {
  FL<L> f;
#pragma GCC unroll 8
  for (int j = 0; j < L; j++) f.l[j] = bc(limbs[j]);
  return f;
}

// Montgomery product x·y·2^(−52L) mod m for 8 lanes (operand scanning): normalised operands,
// mod = the modulus in L normalised limbs, n0 = −m^−1 mod 2^52. Result < m + x·y/2^(52L),
// normalised. IFMA uses the low 52 bits of each multiplicand only, hence normalised inputs.
template <int L>
KILN_INLINE FL<L> mont_mul(const FL<L>& a, const FL<L>& b, const u64* mod, u64 n0v) {
  const V z = _mm512_setzero_si512();
  V t[L + 1];
#pragma GCC unroll 9
  for (int j = 0; j <= L; j++) t[j] = z;
  const V n0 = bc(n0v);
#pragma GCC unroll 8
  for (int i = 0; i < L; i++) {
    const V bi = b.l[i];
#pragma GCC unroll 8
    for (int j = 0; j < L; j++) t[j] = _mm512_madd52lo_epu64(t[j], a.l[j], bi);
#pragma GCC unroll 8
    for (int j = 0; j < L; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a.l[j], bi);
    const V m = _mm512_madd52lo_epu64(z, t[0], n0);
#pragma GCC unroll 8
    for (int j = 0; j < L; j++) t[j] = _mm512_madd52lo_epu64(t[j], m, bc(mod[j]));
#pragma GCC unroll 8
    for (int j = 0; j < L; j++) t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, bc(mod[j]));
    const V c = _mm512_srli_epi64(t[0], 52);
#pragma GCC unroll 8
    for (int j = 0; j < L; j++) t[j] = t[j + 1];
    t[0] = _mm512_add_epi64(t[0], c);
    t[L] = z;
  }
  FL<L> r;
  const V mask = bc(kMask);
  V c = z;
#pragma GCC unroll 8
  for (int j = 0; j < L; j++) {
    const V v = _mm512_add_epi64(t[j], c);
    c = _mm512_srli_epi64(v, 52);
    r.l[j] = _mm512_and_si512(v, mask);
  }
  return r;
}

// a + k·m − b (kq = limbs of k·m), limbs of a and b < 2^53, with signed carries; result
// normalised (non-negative when a + k·m ≥ b).
template <int L>
KILN_INLINE FL<L> sub(const FL<L>& a, const FL<L>& b, const u64* kq) {
  const V mask = bc(kMask);
  FL<L> r;
  V c = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int j = 0; j < L; j++) {
    const V v = _mm512_add_epi64(_mm512_sub_epi64(_mm512_add_epi64(a.l[j], bc(kq[j])), b.l[j]), c);
    c = _mm512_srai_epi64(v, 52);
    r.l[j] = _mm512_and_si512(v, mask);
  }
  return r;
}

// x − k·m where x ≥ k·m, else x (x normalised).
template <int L>
KILN_INLINE FL<L> csub(const FL<L>& x, const u64* kq) {
  const V mask = bc(kMask);
  FL<L> t;
  V c = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int j = 0; j < L; j++) {
    const V v = _mm512_add_epi64(_mm512_sub_epi64(x.l[j], bc(kq[j])), c);
    c = _mm512_srai_epi64(v, 52);
    t.l[j] = _mm512_and_si512(v, mask);
  }
  const __mmask8 keep = _mm512_cmplt_epi64_mask(c, _mm512_setzero_si512());
  FL<L> r;
#pragma GCC unroll 8
  for (int j = 0; j < L; j++) r.l[j] = _mm512_mask_blend_epi64(keep, t.l[j], x.l[j]);
  return r;
}

// Limb-wise a + b, not normalised (limbs < 2^53): an operand for sub's b.
template <int L>
KILN_INLINE FL<L> add_lazy(const FL<L>& a, const FL<L>& b) {
  FL<L> r;
#pragma GCC unroll 8
  for (int j = 0; j < L; j++) r.l[j] = _mm512_add_epi64(a.l[j], b.l[j]);
  return r;
}

// Carry propagation of non-negative limbs (< 2^63).
template <int L>
KILN_INLINE FL<L> norm(const FL<L>& a) {
  const V mask = bc(kMask);
  FL<L> r;
  V c = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int j = 0; j < L; j++) {
    const V v = _mm512_add_epi64(a.l[j], c);
    c = _mm512_srli_epi64(v, 52);
    r.l[j] = _mm512_and_si512(v, mask);
  }
  return r;
}

// Normalised a + b (normalised inputs).
template <int L>
KILN_INLINE FL<L> add(const FL<L>& a, const FL<L>& b) {
  return norm(add_lazy(a, b));
}

// Where mask bit i is set, lane i of b, else of a.
template <int L>
KILN_INLINE FL<L> blend(__mmask8 m, const FL<L>& a, const FL<L>& b) {
  FL<L> r;
#pragma GCC unroll 8
  for (int j = 0; j < L; j++) r.l[j] = _mm512_mask_blend_epi64(m, a.l[j], b.l[j]);
  return r;
}

// In-place transpose of an 8×8 matrix of u64 held in eight registers.
KILN_INLINE void transpose8(V* r) {
  V t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm512_unpacklo_epi64(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi64(r[2 * i], r[2 * i + 1]);
  }
  // t0 = (r0[0] r1[0] | r0[2] r1[2] | r0[4] r1[4] | r0[6] r1[6]), t1 the odd columns; same for t2…t7.
  for (int h = 0; h < 2; h++) {
    const int b = 4 * h;
    u[b + 0] = _mm512_shuffle_i64x2(t[b + 0], t[b + 2], 0x88);  // cols 0,4 of rows b..b+3
    u[b + 1] = _mm512_shuffle_i64x2(t[b + 0], t[b + 2], 0xdd);  // cols 2,6
    u[b + 2] = _mm512_shuffle_i64x2(t[b + 1], t[b + 3], 0x88);  // cols 1,5
    u[b + 3] = _mm512_shuffle_i64x2(t[b + 1], t[b + 3], 0xdd);  // cols 3,7
  }
  r[0] = _mm512_shuffle_i64x2(u[0], u[4], 0x88);
  r[4] = _mm512_shuffle_i64x2(u[0], u[4], 0xdd);
  r[2] = _mm512_shuffle_i64x2(u[1], u[5], 0x88);
  r[6] = _mm512_shuffle_i64x2(u[1], u[5], 0xdd);
  r[1] = _mm512_shuffle_i64x2(u[2], u[6], 0x88);
  r[5] = _mm512_shuffle_i64x2(u[2], u[6], 0xdd);
  r[3] = _mm512_shuffle_i64x2(u[3], u[7], 0x88);
  r[7] = _mm512_shuffle_i64x2(u[3], u[7], 0xdd);
}

}  // namespace v52
}  // namespace kiln
