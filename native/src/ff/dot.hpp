// Σ xᵢ·cᵢ over Montgomery Fr with one reduction per run of up to kRun products instead of one per product:
// the witness interpreter's linear combinations (witness/interp.hpp), most of a Poseidon circuit's witness.
//
// The 512-bit products xᵢR·cᵢR are summed exactly (below 64·r² < 13.2·2^512: nine limbs), reduced once
// (REDC: ·R⁻¹), and what is left above 2^256 folded back with a table of k·2^256 mod r. The result is the
// field element Σ xᵢ·cᵢ, fully reduced, so the bytes equal those of a product-by-product sum (the
// TypeScript interpreter, program-interpreter.ts, is the twin the tests compare with). run_scalar is the
// portable path; kernels_fr_ifma.cpp's dot_fr_ifma forms the same sum with AVX-512 IFMA.
#pragma once
#include "bls12_381.hpp"

namespace kiln {
namespace dot {

constexpr u32 kRun = 64;

// Σ *xs[j] · *cs[j] for j < n ≤ kRun.
using Fn = Fr (*)(const Fr* const* xs, const Fr* const* cs, u32 n);

// k·2^256 mod r for k < 16, as raw limbs (Fr::one() holds 2^256 mod r).
struct FoldTable {
  Fr t[16];
  FoldTable() {
    t[0] = Fr::zero();
    for (int k = 1; k < 16; k++) t[k] = t[k - 1] + Fr::one();
  }
};
inline const FoldTable& fold_table() {
  static const FoldTable table;
  return table;
}

// T (limbs 0..8, T < 13.2·2^512; limb 9 ignored and zero) → T·2^-256 mod r, fully reduced.
inline Fr reduce(u64* t) {
  // REDC over the four low limbs: t + m·r·2^(64i) stays below 14.2·2^512 (nine limbs hold it)
  for (int i = 0; i < 4; i++) {
    const u64 m = t[i] * FrParams::INV;
    u64 carry = 0;
    for (int j = 0; j < 4; j++) {
      const u128 s = (u128)m * FrParams::MOD[j] + t[i + j] + carry;
      t[i + j] = (u64)s;
      carry = (u64)(s >> 64);
    }
    for (int j = i + 4; j < 9 && carry != 0; j++) {
      const u128 s = (u128)t[j] + carry;
      t[j] = (u64)s;
      carry = (u64)(s >> 64);
    }
  }
  // the value t[4..7] + t[8]·2^256 (< 14.2·2^256 + r) ≡ t[4..7] + fold[t[8]] (mod r)
  const Fr& f = fold_table().t[t[8] & 15];
  u64 s[5];
  u64 c = 0;
  for (int j = 0; j < 4; j++) s[j] = adc(t[4 + j], f.v[j], c, c);
  s[4] = c;
  // s < 2^256 + r < 3.3·r: at most three subtractions
  for (;;) {
    u64 d[4];
    u64 b = 0;
    for (int j = 0; j < 4; j++) d[j] = sbb(s[j], FrParams::MOD[j], b, b);
    if (s[4] < b) break;  // s < r
    s[4] -= b;
    for (int j = 0; j < 4; j++) s[j] = d[j];
  }
  Fr r;
  for (int j = 0; j < 4; j++) r.v[j] = s[j];
  return r;
}

// The 512-bit product is written out rather than taken from Fp::mul_wide's loops: 1.60 s against 1.89-2.29 s for a
// 256-sector WindowPoSt witness on one core here (bench:witness-post --threads 1, scalar path).
inline Fr run_scalar(const Fr* const* xs, const Fr* const* cs, u32 n) {
  u64 t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0, t5 = 0, t6 = 0, t7 = 0, t8 = 0;
  for (u32 j = 0; j < n; j++) {
    const u64* a = xs[j]->v;
    const u64* b = cs[j]->v;
    u64 p[8];
    u128 s;
    u64 c;
    s = (u128)a[0] * b[0];
    p[0] = (u64)s;
    c = (u64)(s >> 64);
    s = (u128)a[1] * b[0] + c;
    p[1] = (u64)s;
    c = (u64)(s >> 64);
    s = (u128)a[2] * b[0] + c;
    p[2] = (u64)s;
    c = (u64)(s >> 64);
    s = (u128)a[3] * b[0] + c;
    p[3] = (u64)s;
    p[4] = (u64)(s >> 64);
    for (int i = 1; i < 4; i++) {
      s = (u128)a[0] * b[i] + p[i];
      p[i] = (u64)s;
      c = (u64)(s >> 64);
      s = (u128)a[1] * b[i] + p[i + 1] + c;
      p[i + 1] = (u64)s;
      c = (u64)(s >> 64);
      s = (u128)a[2] * b[i] + p[i + 2] + c;
      p[i + 2] = (u64)s;
      c = (u64)(s >> 64);
      s = (u128)a[3] * b[i] + p[i + 3] + c;
      p[i + 3] = (u64)s;
      p[i + 4] = (u64)(s >> 64);
    }
    u64 k = 0;
    t0 = adc(t0, p[0], k, k);
    t1 = adc(t1, p[1], k, k);
    t2 = adc(t2, p[2], k, k);
    t3 = adc(t3, p[3], k, k);
    t4 = adc(t4, p[4], k, k);
    t5 = adc(t5, p[5], k, k);
    t6 = adc(t6, p[6], k, k);
    t7 = adc(t7, p[7], k, k);
    t8 += k;
  }
  u64 t[10] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, 0};
  return reduce(t);
}

}  // namespace dot
}  // namespace kiln
