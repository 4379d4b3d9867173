// BLS12-381 fields: Fq (base, 6 limbs), Fr (scalar, 4 limbs), Fq2 = Fq[u]/(u^2 + 1).
// Constants were generated with Python from p and r and are checked by test/native-field.test.ts.
#pragma once
#include "mont.hpp"

namespace kiln {

struct FqParams {
  static constexpr int N = 6;
  static constexpr u64 MOD[6] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                                 0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
  static constexpr u64 INV = 0x89f3fffcfffcfffdULL;
  static constexpr u64 ONE[6] = {0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                                 0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL};
  static constexpr u64 R2[6] = {0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL,
                                0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL};
};

struct FrParams {
  static constexpr int N = 4;
  static constexpr u64 MOD[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
                                 0x73eda753299d7d48ULL};
  static constexpr u64 INV = 0xfffffffeffffffffULL;
  static constexpr u64 ONE[4] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                                 0x1824b159acc5056fULL};
  static constexpr u64 R2[4] = {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
                                0x0748d9d99f59ff11ULL};
  // 2-adicity of r - 1 and a primitive 2^32-th root of unity, 7^((r-1)/2^32), in Montgomery form.
  static constexpr int TWO_ADICITY = 32;
  static constexpr u64 ROOT_2_32[4] = {0xb9b58d8c5f0e466aULL, 0x5b1b4c801819d7ecULL, 0x0af53ae352a31e64ULL,
                                       0x5bf3adda19e9b27bULL};
  // The coset generator g = 7 (bellperson's multiplicative generator), Montgomery form.
  static constexpr u64 COSET_GEN[4] = {0x0000000efffffff1ULL, 0x17e363d300189c0fULL, 0xff9c57876f8457b0ULL,
                                       0x351332208fc5a8c4ULL};
};

using Fq = Fp<FqParams>;
using Fr = Fp<FrParams>;

struct Fq2 {
  Fq c0, c1;

  KILN_HD static KILN_INLINE Fq2 zero() { return {Fq::zero(), Fq::zero()}; }
  KILN_HD static KILN_INLINE Fq2 one() { return {Fq::one(), Fq::zero()}; }
  KILN_HD KILN_INLINE bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  KILN_HD KILN_INLINE bool operator==(const Fq2& o) const { return c0 == o.c0 && c1 == o.c1; }
  KILN_HD KILN_INLINE bool operator!=(const Fq2& o) const { return !(*this == o); }
  KILN_HD friend KILN_INLINE Fq2 operator+(const Fq2& a, const Fq2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  KILN_HD friend KILN_INLINE Fq2 operator-(const Fq2& a, const Fq2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  KILN_HD friend KILN_INLINE Fq2 operator-(const Fq2& a) { return {-a.c0, -a.c1}; }
  KILN_HD KILN_INLINE Fq2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  // Karatsuba with lazy reduction: three 12-limb products, two Montgomery reductions.
  //   c0 = a0 b0 - a1 b1 (+ p·R when negative, so it lies in [0, p·R))
  //   c1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1 = a0 b1 + a1 b0 < 2p^2 < p·R
  KILN_HD friend inline Fq2 operator*(const Fq2& a, const Fq2& b) {
    u64 v0[12], v1[12], s[12], sa[6], sb[6];
    Fq::mul_wide(v0, a.c0.v, b.c0.v);
    Fq::mul_wide(v1, a.c1.v, b.c1.v);
    Fq::add_unreduced(sa, a.c0.v, a.c1.v);
    Fq::add_unreduced(sb, b.c0.v, b.c1.v);
    Fq::mul_wide(s, sa, sb);
    u64 d[12], bw = 0, bw2 = 0;
    for (int i = 0; i < 12; i++) {
      s[i] = sbb(s[i], v0[i], bw, bw);
      d[i] = sbb(v0[i], v1[i], bw2, bw2);
    }
    bw = 0;
    for (int i = 0; i < 12; i++) s[i] = sbb(s[i], v1[i], bw, bw);
    const u64 mask = 0 - bw2;  // a0 b0 < a1 b1: add p·2^384
    u64 c = 0;
    for (int i = 0; i < 6; i++) d[6 + i] = adc(d[6 + i], FqParams::MOD[i] & mask, c, c);
    return {Fq::redc_wide(d), Fq::redc_wide(s)};
  }
  KILN_HD KILN_INLINE Fq2& operator*=(const Fq2& b) { return *this = *this * b; }
  KILN_HD KILN_INLINE Fq2& operator+=(const Fq2& b) { return *this = *this + b; }
  KILN_HD KILN_INLINE Fq2& operator-=(const Fq2& b) { return *this = *this - b; }
  // (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: 2 base multiplications.
  KILN_HD KILN_INLINE Fq2 sqr() const {
    const Fq t = c0 * c1;
    return {(c0 + c1) * (c0 - c1), t.dbl()};
  }
  KILN_HD Fq2 inverse() const {
    const Fq t = (c0.sqr() + c1.sqr()).inverse();
    return {c0 * t, -(c1 * t)};
  }
};

}  // namespace kiln
