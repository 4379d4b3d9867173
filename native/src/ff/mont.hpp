// Generic N-limb prime field in Montgomery form (R = 2^(64N)), little-endian u64 limbs.
//
// Params P must provide:
//   static constexpr int N;          limb count
//   static constexpr u64 MOD[N];     the modulus, < 2^(64N - 2) (see NO_CARRY below)
//   static constexpr u64 INV;        -MOD^-1 mod 2^64
//   static constexpr u64 ONE[N];     R mod MOD
//   static constexpr u64 R2[N];      R^2 mod MOD
//
// Multiplication is CIOS with the "no-carry" shortcut (Gautam Botrel / gnark): valid when the top
// limb of the modulus is below 2^63 - 1, which holds for both BLS12-381 fields (p: 0x1a01…,
// r: 0x73ed…). Every operation keeps values fully reduced in [0, MOD).
// Variable-time is fine here: the prover's inputs are not secret against a local timing attacker.
#pragma once
#include "../util/hd.hpp"
#include "mont_x86.hpp"

namespace kiln {

// {MOD[0..N-1], INV} in one array, the operand of the assembly multiplication.
template <class P>
struct ModInv {
  u64 v[P::N + 1];
  constexpr ModInv() : v{} {
    for (int i = 0; i < P::N; i++) v[i] = P::MOD[i];
    v[P::N] = P::INV;
  }
};
template <class P>
inline constexpr ModInv<P> kModInv{};

template <class P>
struct Fp {
  static constexpr int N = P::N;
  u64 v[N];

  KILN_HD static KILN_INLINE Fp zero() {
    Fp r;
    for (int i = 0; i < N; i++) r.v[i] = 0;
    return r;
  }
  KILN_HD static KILN_INLINE Fp one() {
    Fp r;
    for (int i = 0; i < N; i++) r.v[i] = P::ONE[i];
    return r;
  }
  KILN_HD KILN_INLINE bool is_zero() const {
    u64 acc = 0;
    for (int i = 0; i < N; i++) acc |= v[i];
    return acc == 0;
  }
  KILN_HD KILN_INLINE bool is_one() const {
    u64 acc = 0;
    for (int i = 0; i < N; i++) acc |= v[i] ^ P::ONE[i];
    return acc == 0;
  }
  KILN_HD KILN_INLINE bool operator==(const Fp& o) const {
    u64 acc = 0;
    for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
    return acc == 0;
  }
  KILN_HD KILN_INLINE bool operator!=(const Fp& o) const { return !(*this == o); }

  // r = t - MOD if t >= MOD else t (t < 2 MOD).
  KILN_HD static KILN_INLINE void reduce_once(u64* r, const u64* t) {
    u64 d[N];
    u64 borrow = 0;
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) d[i] = sbb(t[i], P::MOD[i], borrow, borrow);
    const u64 keep = 0 - borrow;  // all ones when t < MOD
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) r[i] = (t[i] & keep) | (d[i] & ~keep);
  }

  KILN_HD friend KILN_INLINE Fp operator+(const Fp& a, const Fp& b) {
    // a + b < 2 MOD < 2^(64N): no carry out of the top limb.
    u64 t[N];
    u64 c = 0;
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) t[i] = adc(a.v[i], b.v[i], c, c);
    Fp r;
    reduce_once(r.v, t);
    return r;
  }
  KILN_HD friend KILN_INLINE Fp operator-(const Fp& a, const Fp& b) {
    Fp r;
    u64 borrow = 0;
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) r.v[i] = sbb(a.v[i], b.v[i], borrow, borrow);
    const u64 mask = 0 - borrow;
    u64 c = 0;
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) r.v[i] = adc(r.v[i], P::MOD[i] & mask, c, c);
    return r;
  }
  KILN_HD friend KILN_INLINE Fp operator-(const Fp& a) {
    const u64 mask = a.is_zero() ? 0 : ~u64(0);
    Fp r;
    u64 borrow = 0;
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) r.v[i] = sbb(P::MOD[i], a.v[i], borrow, borrow) & mask;
    return r;
  }
  KILN_HD KILN_INLINE Fp dbl() const { return *this + *this; }

  // Montgomery product a*b*R^-1 (CIOS, no-carry variant), fully unrolled.
  KILN_HD static KILN_INLINE void mont_mul(u64* r, const u64* a, const u64* b) {
#ifdef KILN_MONT_X86
    if constexpr (N == 4 || N == 6) {
      u64 t[N];
      if constexpr (N == 4)
        mont_mul_x86_4(t, a, b, kModInv<P>.v);
      else
        mont_mul_x86_6(t, a, b, kModInv<P>.v);
      reduce_once(r, t);
      return;
    }
#endif
    mont_mul_portable(r, a, b);
  }

  KILN_HD static KILN_INLINE void mont_mul_portable(u64* r, const u64* a, const u64* b) {
    u64 t[N];
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) t[i] = 0;
#pragma GCC unroll 8
    for (int i = 0; i < N; i++) {
      u128 s = (u128)a[0] * b[i] + t[0];
      u64 A = (u64)(s >> 64);
      const u64 t0 = (u64)s;
      const u64 m = t0 * P::INV;
      u128 c = (u128)m * P::MOD[0] + t0;
      u64 C = (u64)(c >> 64);
#pragma GCC unroll 8
      for (int j = 1; j < N; j++) {
        s = (u128)a[j] * b[i] + t[j] + A;
        A = (u64)(s >> 64);
        c = (u128)m * P::MOD[j] + (u64)s + C;
        C = (u64)(c >> 64);
        t[j - 1] = (u64)c;
      }
      t[N - 1] = C + A;
    }
    reduce_once(r, t);
  }

  // Lazy-reduction building blocks (used by Fq2): the full 2N-limb product, and the Montgomery
  // reduction of a 2N-limb value T < MOD·R to T·R^-1 mod MOD. One operand of mul_wide/mont_mul
  // may be unreduced up to 2·MOD (the product stays below MOD·R because MOD < R/4).
  KILN_HD static KILN_INLINE void mul_wide(u64* out, const u64* a, const u64* b) {
#ifdef KILN_MONT_X86
    if constexpr (N == 6) {
      mul_wide_x86_6(out, a, b);
      return;
    }
#endif
    for (int i = 0; i < 2 * N; i++) out[i] = 0;
    for (int i = 0; i < N; i++) {
      u64 carry = 0;
      for (int j = 0; j < N; j++) {
        const u128 s = (u128)a[j] * b[i] + out[i + j] + carry;
        out[i + j] = (u64)s;
        carry = (u64)(s >> 64);
      }
      out[i + N] = carry;
    }
  }

  KILN_HD static KILN_INLINE Fp redc_wide(const u64* T) {
    u64 u[N];
#ifdef KILN_MONT_X86
    if constexpr (N == 6) {
      redc_low_x86_6(u, T, kModInv<P>.v);
    } else
#endif
    {
      u64 t[N + 1];
      for (int i = 0; i < N; i++) t[i] = T[i];
      t[N] = 0;
      for (int i = 0; i < N; i++) {
        const u64 m = t[0] * P::INV;
        u128 c = (u128)m * P::MOD[0] + t[0];
        u64 C = (u64)(c >> 64);
        for (int j = 1; j < N; j++) {
          c = (u128)m * P::MOD[j] + t[j] + C;
          C = (u64)(c >> 64);
          t[j - 1] = (u64)c;
        }
        t[N - 1] = t[N] + C;
        t[N] = 0;
      }
      for (int i = 0; i < N; i++) u[i] = t[i];
    }
    // u ≤ MOD and the high half < MOD: the sum is below 2·MOD.
    u64 s[N];
    u64 c = 0;
    for (int i = 0; i < N; i++) s[i] = adc(u[i], T[N + i], c, c);
    Fp r;
    reduce_once(r.v, s);
    return r;
  }

  // Unreduced a + b (< 2·MOD), an operand for mul_wide.
  KILN_HD static KILN_INLINE void add_unreduced(u64* r, const u64* a, const u64* b) {
    u64 c = 0;
    for (int i = 0; i < N; i++) r[i] = adc(a[i], b[i], c, c);
  }

  KILN_HD friend KILN_INLINE Fp operator*(const Fp& a, const Fp& b) {
    Fp r;
    mont_mul(r.v, a.v, b.v);
    return r;
  }
  KILN_HD KILN_INLINE Fp& operator*=(const Fp& b) {
    mont_mul(v, v, b.v);
    return *this;
  }
  KILN_HD KILN_INLINE Fp& operator+=(const Fp& b) { return *this = *this + b; }
  KILN_HD KILN_INLINE Fp& operator-=(const Fp& b) { return *this = *this - b; }
  KILN_HD KILN_INLINE Fp sqr() const { return *this * *this; }

  // Canonical integer (N limbs, < MOD) → Montgomery form.
  KILN_HD static KILN_INLINE Fp from_canonical(const u64* a) {
    Fp r;
    mont_mul(r.v, a, P::R2);
    return r;
  }
  // Montgomery → canonical (any N-limb input gives a value < MOD).
  KILN_HD KILN_INLINE void to_canonical(u64* out) const {
    u64 one[N];
    one[0] = 1;
    for (int i = 1; i < N; i++) one[i] = 0;
    mont_mul(out, v, one);
  }
  KILN_HD static KILN_INLINE Fp from_u64(u64 x) {
    u64 a[N];
    a[0] = x;
    for (int i = 1; i < N; i++) a[i] = 0;
    return from_canonical(a);
  }

  // this^e for an N-limb exponent e (little-endian), 4-bit fixed window.
  KILN_HD Fp pow(const u64* e, int limbs = N) const {
    Fp table[16];
    table[0] = one();
    table[1] = *this;
    for (int i = 2; i < 16; i++) table[i] = table[i - 1] * *this;
    Fp r = one();
    bool started = false;
    for (int i = limbs * 16 - 1; i >= 0; i--) {
      const unsigned nib = (unsigned)(e[i >> 4] >> ((i & 15) * 4)) & 15;
      if (started) r = r.sqr().sqr().sqr().sqr();
      if (nib) {
        r = started ? r * table[nib] : table[nib];
        started = true;
      }
    }
    return r;
  }
  KILN_HD Fp pow_u64(u64 e) const {
    u64 ee[N];
    ee[0] = e;
    for (int i = 1; i < N; i++) ee[i] = 0;
    return pow(ee);
  }

  // Multiplicative inverse; inverse of zero is zero. Host: binary extended Euclid (variable time,
  // ~3× faster than Fermat for Fq); device: Fermat (a^(MOD-2)).
  KILN_HD Fp inverse() const {
#if defined(__CUDA_ARCH__)
    return inverse_fermat();
#else
    return inverse_binary();
#endif
  }
  KILN_HD Fp inverse_fermat() const {
    u64 e[N];
    u64 borrow = 0;
    e[0] = sbb(P::MOD[0], 2, 0, borrow);
    for (int i = 1; i < N; i++) e[i] = sbb(P::MOD[i], 0, borrow, borrow);
    return pow(e);
  }
  // Binary extended Euclid on the Montgomery representation x̃ = x·R: u·x̃ ≡ x1·... keeps the
  // invariants x1·x̃ ≡ u and x2·x̃ ≡ v (mod MOD), halving u or v (and x1 or x2 mod MOD) while even and
  // subtracting the smaller from the larger; ends with u = 1 or v = 1, giving x̃^-1 = x^-1·R^-1.
  // Then mont_mul by R^3 gives x^-1·R. MOD < 2^(64N-2), so x + MOD never overflows N limbs.
  Fp inverse_binary() const {
    if (is_zero()) return zero();
    u64 u[N], w[N], x1[N], x2[N];
    for (int i = 0; i < N; i++) {
      u[i] = v[i];
      w[i] = P::MOD[i];
      x1[i] = 0;
      x2[i] = 0;
    }
    x1[0] = 1;
    auto is_one_n = [](const u64* a) {
      u64 o = a[0] ^ 1;
      for (int i = 1; i < N; i++) o |= a[i];
      return o == 0;
    };
    auto shr1 = [](u64* a) {
      for (int i = 0; i < N - 1; i++) a[i] = (a[i] >> 1) | (a[i + 1] << 63);
      a[N - 1] >>= 1;
    };
    auto half_mod = [&](u64* x) {  // x/2 mod MOD
      if (x[0] & 1) {
        u64 c = 0;
        for (int i = 0; i < N; i++) x[i] = adc(x[i], P::MOD[i], c, c);
      }
      shr1(x);
    };
    auto geq = [](const u64* a, const u64* b) {
      for (int i = N - 1; i >= 0; i--)
        if (a[i] != b[i]) return a[i] > b[i];
      return true;
    };
    auto sub_n = [](u64* a, const u64* b) {
      u64 br = 0;
      for (int i = 0; i < N; i++) a[i] = sbb(a[i], b[i], br, br);
    };
    auto sub_mod = [&](u64* a, const u64* b) {  // a = a − b mod MOD (both < MOD)
      u64 br = 0;
      for (int i = 0; i < N; i++) a[i] = sbb(a[i], b[i], br, br);
      if (br) {
        u64 c = 0;
        for (int i = 0; i < N; i++) a[i] = adc(a[i], P::MOD[i], c, c);
      }
    };
    while (!is_one_n(u) && !is_one_n(w)) {
      while (!(u[0] & 1)) {
        shr1(u);
        half_mod(x1);
      }
      while (!(w[0] & 1)) {
        shr1(w);
        half_mod(x2);
      }
      if (geq(u, w)) {
        sub_n(u, w);
        sub_mod(x1, x2);
      } else {
        sub_n(w, u);
        sub_mod(x2, x1);
      }
    }
    Fp r;
    const u64* res = is_one_n(u) ? x1 : x2;
    for (int i = 0; i < N; i++) r.v[i] = res[i];
    static const Fp r3 = [] {  // R^3 mod MOD = mont(R^2, R^2)
      Fp a;
      for (int i = 0; i < N; i++) a.v[i] = P::R2[i];
      return a * a;
    }();
    return r * r3;
  }
};

}  // namespace kiln
