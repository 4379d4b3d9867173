// Fr arithmetic for 8 independent elements at once with AVX-512 IFMA (vpmadd52luq/vpmadd52huq):
// the vector NTT (ntt/ntt_ifma.hpp). Compiled only into the translation unit built with the IFMA
// flags (kernels_fr_ifma.cpp).
//
// Representation:
//  * F5 holds eight elements limb-major in five 52-bit limbs (l[j] = limb j of the 8 lanes); limbs
//    are normalised (< 2^52) unless a function says otherwise, so a value is < 2^260.
//  * mul(x, y) = x·y·2^-260 mod r (Montgomery with R' = 2^260). The NTT keeps its *data* in Fr's
//    own form a·2^256 (ff/mont.hpp) and stores every *constant* (twiddles, coset powers, 1/n, …)
//    in the R' form w·2^260 mod r: mul(a·2^256, w·2^260) = (a·w)·2^256, so the data never changes
//    domain and loading/storing is only repacking 4×64 ↔ 5×52 bits.
//  * The R' form of an Fr x is x·16 computed with Fr's multiplication (x·2^256·16 = x·2^260).
//
// Bounds (r < 2^255, 2^260 > 35r): mul returns < r + x·y/2^260, so < 2r whenever x·y < r·2^260,
// e.g. any x (< 2^260) times a canonical y (< r). add / sub_kr / csub keep limbs normalised.
#pragma once
#include "bls12_381.hpp"
#include "v52.hpp"

namespace kiln {
namespace r52 {

using v52::bc;
using v52::csub;
using v52::kMask;
using v52::transpose8;
using v52::V;
using F5 = v52::FL<5>;

// 4×64 → 5×52 limbs of an integer < 2^256 (scalar).
inline void unpack52(const u64* in, u64* out) {
  out[0] = in[0] & kMask;
  out[1] = ((in[0] >> 52) | (in[1] << 12)) & kMask;
  out[2] = ((in[1] >> 40) | (in[2] << 24)) & kMask;
  out[3] = ((in[2] >> 28) | (in[3] << 36)) & kMask;
  out[4] = in[3] >> 16;
}

struct Consts {
  u64 r[5], r2[5], r4[5], r8[5], r16[5];  // k·r in normalised 52-bit limbs
  u64 n0;                  // −r^−1 mod 2^52
};

inline Consts make_consts() {
  Consts c{};
  unpack52(FrParams::MOD, c.r);
  u64* out[4] = {c.r2, c.r4, c.r8, c.r16};
  for (int k = 0; k < 4; k++) {  // r < 2^255: 16r < 2^259 fits five limbs
    u64 carry = 0;
    for (int j = 0; j < 5; j++) {
      const u64 v = (c.r[j] << (k + 1)) + carry;
      out[k][j] = v & kMask;
      carry = v >> 52;
    }
  }
  c.n0 = FrParams::INV & kMask;  // INV = −r^−1 mod 2^64
  return c;
}

inline const Consts kC = make_consts();

// R' form (x·2^260 mod r) of the field element an Fr holds, as five 52-bit limbs.
inline void to_r52(const Fr& x, u64* out) {
  const Fr y = x * Fr::from_u64(16);
  unpack52(y.v, out);
}

#define KILN_V5 KILN_INLINE

KILN_V5 F5 broadcast(const u64* limbs) { return v52::broadcast<5>(limbs); }

// Lane-wise limbs: lanes[L][j] = limb j of lane L.
inline F5 from_lanes(const u64 (*lanes)[5]) {
  alignas(64) u64 t[5][8];
  for (int L = 0; L < 8; L++)
    for (int j = 0; j < 5; j++) t[j][L] = lanes[L][j];
  F5 f;
  for (int j = 0; j < 5; j++) f.l[j] = _mm512_load_si512((const void*)t[j]);
  return f;
}

KILN_V5 F5 ld(const V* p) {
  F5 f;
  for (int j = 0; j < 5; j++) f.l[j] = _mm512_load_si512((const void*)(p + j));
  return f;
}
KILN_V5 void st(V* p, const F5& f) {
  for (int j = 0; j < 5; j++) _mm512_store_si512((void*)(p + j), f.l[j]);
}

// x·y·2^−260 for 8 lanes (limbs < 2^52); result < r + x·y/2^260, limbs normalised.
KILN_V5 F5 mul(const F5& a, const F5& b) { return v52::mont_mul<5>(a, b, kC.r, kC.n0); }

// a + b (normalised inputs, sum < 2^260); result normalised.
KILN_V5 F5 add(const F5& a, const F5& b) { return v52::add(a, b); }

// a + k·r − b (kr = limbs of k·r), requires a + k·r ≥ b and < 2^260; result normalised.
KILN_V5 F5 sub_kr(const F5& a, const F5& b, const u64* kr) { return v52::sub(a, b, kr); }

// x − k·r where x ≥ k·r, else x (x normalised): v52::csub.

// Four limb-major u64 vectors (limb k of 8 lanes, value < 2^256) → F5.
KILN_V5 F5 from64(const V* r) {
  const V mask = bc(kMask);
  F5 f;
  f.l[0] = _mm512_and_si512(r[0], mask);
  f.l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(r[0], 52), _mm512_slli_epi64(r[1], 12)), mask);
  f.l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(r[1], 40), _mm512_slli_epi64(r[2], 24)), mask);
  f.l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(r[2], 28), _mm512_slli_epi64(r[3], 36)), mask);
  f.l[4] = _mm512_srli_epi64(r[3], 16);
  return f;
}

// F5 (normalised, value < 2^256) → four limb-major u64 vectors.
KILN_V5 void to64(const F5& f, V* r) {
  r[0] = _mm512_or_si512(f.l[0], _mm512_slli_epi64(f.l[1], 52));
  r[1] = _mm512_or_si512(_mm512_srli_epi64(f.l[1], 12), _mm512_slli_epi64(f.l[2], 40));
  r[2] = _mm512_or_si512(_mm512_srli_epi64(f.l[2], 24), _mm512_slli_epi64(f.l[3], 28));
  r[3] = _mm512_or_si512(_mm512_srli_epi64(f.l[3], 36), _mm512_slli_epi64(f.l[4], 16));
}

// R0..R3 hold two 4-limb elements each (R0 = e0 e1, …, R3 = e6 e7) → limb-major L0..L3.
KILN_V5 void aos_to_soa(const V* R, V* L) {
  const V ia = _mm512_set_epi64(13, 9, 5, 1, 12, 8, 4, 0);
  const V ib = _mm512_set_epi64(15, 11, 7, 3, 14, 10, 6, 2);
  const V t0 = _mm512_permutex2var_epi64(R[0], ia, R[1]);  // limbs 0,1 of e0..e3
  const V t1 = _mm512_permutex2var_epi64(R[0], ib, R[1]);  // limbs 2,3 of e0..e3
  const V t2 = _mm512_permutex2var_epi64(R[2], ia, R[3]);  // limbs 0,1 of e4..e7
  const V t3 = _mm512_permutex2var_epi64(R[2], ib, R[3]);  // limbs 2,3 of e4..e7
  L[0] = _mm512_shuffle_i64x2(t0, t2, 0x44);
  L[1] = _mm512_shuffle_i64x2(t0, t2, 0xee);
  L[2] = _mm512_shuffle_i64x2(t1, t3, 0x44);
  L[3] = _mm512_shuffle_i64x2(t1, t3, 0xee);
}

// Inverse of aos_to_soa.
KILN_V5 void soa_to_aos(const V* L, V* R) {
  const V ia = _mm512_set_epi64(13, 9, 5, 1, 12, 8, 4, 0);
  const V ib = _mm512_set_epi64(15, 11, 7, 3, 14, 10, 6, 2);
  const V t0 = _mm512_shuffle_i64x2(L[0], L[1], 0x44);  // limb 0 of e0..e3, limb 1 of e0..e3
  const V t2 = _mm512_shuffle_i64x2(L[0], L[1], 0xee);  // same for e4..e7
  const V t1 = _mm512_shuffle_i64x2(L[2], L[3], 0x44);
  const V t3 = _mm512_shuffle_i64x2(L[2], L[3], 0xee);
  R[0] = _mm512_permutex2var_epi64(t0, ia, t1);
  R[1] = _mm512_permutex2var_epi64(t0, ib, t1);
  R[2] = _mm512_permutex2var_epi64(t2, ia, t3);
  R[3] = _mm512_permutex2var_epi64(t2, ib, t3);
}

// Eight consecutive Fr (4 u64 each) at p → F5.
KILN_V5 F5 load8(const u64* p) {
  V R[4], L[4];
  for (int k = 0; k < 4; k++) R[k] = _mm512_loadu_si512((const void*)(p + 8 * k));
  aos_to_soa(R, L);
  return from64(L);
}

// Eight Fr at arbitrary addresses p[0..7] → F5.
KILN_V5 F5 gather8(const u64* const* p) {
  V R[4], L[4];
  for (int k = 0; k < 4; k++)
    R[k] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i*)p[2 * k])),
                              _mm256_loadu_si256((const __m256i*)p[2 * k + 1]), 1);
  aos_to_soa(R, L);
  return from64(L);
}

// F5 (normalised, value < 2^256) → eight consecutive Fr at p.
KILN_V5 void store8(const F5& f, u64* p) {
  V L[4], R[4];
  to64(f, L);
  soa_to_aos(L, R);
  for (int k = 0; k < 4; k++) _mm512_storeu_si512((void*)(p + 8 * k), R[k]);
}

}  // namespace r52
}  // namespace kiln
