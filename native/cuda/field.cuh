// Device prime fields for BLS12-381 in the CPU addon's byte layout (native/API.md): Montgomery form,
// R = 2^256 (Fr) / 2^384 (Fq), little-endian limbs. The device works on 32-bit limbs (the GPU
// multiplies 32×32 bits natively; a 64-bit product costs four), so a value here is the same bytes
// as the CPU's u64 limbs and buffers are copied without conversion.
//
// Why not the CPU's ff/mont.hpp: its constants are `static constexpr` member arrays, which device
// code cannot read (nvcc: "identifier ... is undefined in device code"), and its 64-bit limbs would
// cost ~4 IMADs per limb product. The curve formulas ARE shared: ec/xyzz.hpp is templated on the
// field, and Xyzz<DFq>/Xyzz<DFq2> run on the device with the CPU's exact formulas.
//
// Multiplication (KILN_CUDA_MUL, below): CIOS on 32-bit limbs in the even/odd PTX form (mont_mul_eo:
// two independent carry chains per row) for both fields; Fq's is one non-inlined function (DFp
// mul_call). Measured on the H200: the even/odd form halved the Fq MSMs against the portable form
// (64-bit products); for Fr the portable form was faster while additions were 64-bit C++ (NTT 2^26
// 30.0 vs 39.5 ms), and once additions became PTX carry chains the even/odd form won (2^27 52.5 →
// 40.7 ms, 2026-12-02). A PTX single-chain version (KILN_CUDA_MUL=1) passed every test but measured
// slower (one chain through the carry flag serialises what the two chains interleave).
// Values are kept fully reduced.
#pragma once
#include <cstdint>

#include "../src/util/hd.hpp"
#if !defined(__CUDACC__)
#include "ptx_host.hpp"  // a host compiler (tests): the qualifiers and the PTX primitives emulated
#endif

// Which Montgomery multiplication (see DFp::mont_mul): 0 portable, 1 PTX single chain, 2 (default) PTX
// even/odd, 3 even/odd for Fq and portable for Fr (the default until 2026-12-02).
#ifndef KILN_CUDA_MUL
#ifdef KILN_CUDA_PTX_MUL
#define KILN_CUDA_MUL 1
#else
#define KILN_CUDA_MUL 2
#endif
#endif

namespace kiln {
namespace cuda {

using u32 = uint32_t;
using u64 = uint64_t;

#if defined(__CUDACC__)
// PTX carry-chain primitives. `volatile` keeps consecutive statements in order, so the carry flag
// flows from one to the next.
__device__ __forceinline__ u32 mad_lo_cc(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 madc_lo_cc(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 mad_hi_cc(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 madc_hi_cc(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 madc_hi(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 add_cc(u32 a, u32 b) {
  u32 r;
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 addc_cc(u32 a, u32 b) {
  u32 r;
  asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 addc(u32 a, u32 b) {
  u32 r;
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 sub_cc(u32 a, u32 b) {
  u32 r;
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 subc_cc(u32 a, u32 b) {
  u32 r;
  asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// 0xffffffff when the chain before borrowed, else 0.
__device__ __forceinline__ u32 borrow_mask() {
  u32 r;
  asm volatile("subc.u32 %0, 0, 0;" : "=r"(r));
  return r;
}
__device__ __forceinline__ u32 addc0(u32 a) {
  u32 r;
  asm volatile("addc.u32 %0, %1, 0;" : "=r"(r) : "r"(a));
  return r;
}
#endif  // __CUDACC__ (else ptx_host.hpp)

static __constant__ u32 kFqMod[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                                      0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
static __constant__ u32 kFqOne[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                                      0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
static __constant__ u32 kFqR2[12] = {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6, 0x4c95b6d5, 0x8de5476c,
                                     0x939d83c0, 0x67eb88a9, 0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5};
static __constant__ u32 kFrMod[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                     0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
static __constant__ u32 kFrOne[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                     0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
static __constant__ u32 kFrR2[8] = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb,
                                    0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};

// GCD_STEPS: the binary GCD inversion's outer steps, ⌈(2·bits(MOD) − 1)/31⌉ (DFp::inverse_gcd).
struct FqP {
  static constexpr int L = 12;
  static constexpr u32 INV = 0xfffcfffd;  // −p^−1 mod 2^32
  static constexpr int GCD_STEPS = 25;    // 381 bits
  __device__ static __forceinline__ u32 mod(int i) { return kFqMod[i]; }
  __device__ static __forceinline__ u32 one(int i) { return kFqOne[i]; }
  __device__ static __forceinline__ u32 r2(int i) { return kFqR2[i]; }  // R² mod p
};
struct FrP {
  static constexpr int L = 8;
  static constexpr u32 INV = 0xffffffff;  // −r^−1 mod 2^32
  static constexpr int GCD_STEPS = 17;    // 255 bits
  __device__ static __forceinline__ u32 mod(int i) { return kFrMod[i]; }
  __device__ static __forceinline__ u32 one(int i) { return kFrOne[i]; }
  __device__ static __forceinline__ u32 r2(int i) { return kFrR2[i]; }  // R² mod r
};

// V selects a variant for A/B measurements in one build (a kernel taking one reinterprets the same
// bytes): 0 the default; 1 the Fq multiplication inlined at every use, as before 2026-12-02; 2 squarings
// by the dedicated squaring (mont_sqr_sos) instead of a multiplication.
// Non-inlined, the ~550 instructions of each of a bucket addition's ten multiplications are one
// function instead of ~100 KB of loop body, which the warps of an SM missed in the instruction cache
// (H200, G1 MSM 2^24: accumulation 120.0 → 113.8 ms; the addon's build 19 → 3 min).
template <class P, int V = 0>
struct __align__(16) DFp {
  static constexpr int L = P::L;
  u32 w[L];

  __device__ static __forceinline__ DFp zero() {
    DFp r;
#pragma unroll
    for (int i = 0; i < L; i++) r.w[i] = 0;
    return r;
  }
  __device__ static __forceinline__ DFp one() {
    DFp r;
#pragma unroll
    for (int i = 0; i < L; i++) r.w[i] = P::one(i);
    return r;
  }
  __device__ __forceinline__ bool is_zero() const {
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < L; i++) acc |= w[i];
    return acc == 0;
  }
  __device__ __forceinline__ bool is_one() const {
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < L; i++) acc |= w[i] ^ P::one(i);
    return acc == 0;
  }
  __device__ __forceinline__ bool operator==(const DFp& o) const {
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < L; i++) acc |= w[i] ^ o.w[i];
    return acc == 0;
  }
  __device__ __forceinline__ bool operator!=(const DFp& o) const { return !(*this == o); }

  // r = t − MOD if t ≥ MOD else t.
  __device__ static __forceinline__ void reduce_once(u32* r, const u32* t) {
    u32 d[L];
    d[0] = sub_cc(t[0], P::mod(0));
#pragma unroll
    for (int i = 1; i < L; i++) d[i] = subc_cc(t[i], P::mod(i));
    const u32 m = borrow_mask();
#pragma unroll
    for (int i = 0; i < L; i++) r[i] = m ? t[i] : d[i];
  }

  // Addition and subtraction are single carry chains in PTX (add.cc/addc, sub.cc/subc): about half
  // the instructions of 64-bit arithmetic per limb. a + b < 2^(32L) (MOD < 2^(32L−1)), so the sum
  // has no carry out; the conditional subtraction / addition of MOD is a select / a mask.
  __device__ friend __forceinline__ DFp operator+(const DFp& a, const DFp& b) {
    u32 t[L], d[L];
    t[0] = add_cc(a.w[0], b.w[0]);
#pragma unroll
    for (int i = 1; i < L - 1; i++) t[i] = addc_cc(a.w[i], b.w[i]);
    t[L - 1] = addc(a.w[L - 1], b.w[L - 1]);
    d[0] = sub_cc(t[0], P::mod(0));
#pragma unroll
    for (int i = 1; i < L; i++) d[i] = subc_cc(t[i], P::mod(i));
    const u32 m = borrow_mask();
    DFp r;
#pragma unroll
    for (int i = 0; i < L; i++) r.w[i] = m ? t[i] : d[i];
    return r;
  }
  __device__ friend __forceinline__ DFp operator-(const DFp& a, const DFp& b) {
    DFp r;
    r.w[0] = sub_cc(a.w[0], b.w[0]);
#pragma unroll
    for (int i = 1; i < L; i++) r.w[i] = subc_cc(a.w[i], b.w[i]);
    const u32 m = borrow_mask();
    r.w[0] = add_cc(r.w[0], P::mod(0) & m);
#pragma unroll
    for (int i = 1; i < L - 1; i++) r.w[i] = addc_cc(r.w[i], P::mod(i) & m);
    r.w[L - 1] = addc(r.w[L - 1], P::mod(L - 1) & m);
    return r;
  }
  __device__ friend __forceinline__ DFp operator-(const DFp& a) {
    if (a.is_zero()) return a;
    DFp r;
    u32 borrow = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
      const u64 s = (u64)P::mod(i) - a.w[i] - borrow;
      r.w[i] = (u32)s;
      borrow = (u32)(s >> 63);
    }
    return r;
  }
  __device__ __forceinline__ DFp dbl() const { return *this + *this; }

  // CIOS, no-carry variant (valid: MOD's top limb < 2^31 − 1). a, b < MOD (a may be < 2^(32L)
  // when b is 1: the result is still < MOD after the final subtraction, which from_mont relies on).
  __device__ static __forceinline__ void mont_mul(u32* r, const u32* a, const u32* b) {
#if KILN_CUDA_MUL == 3
    if constexpr (L == 12) mont_mul_eo(r, a, b);
    else mont_mul_portable(r, a, b);
#elif KILN_CUDA_MUL == 2
    mont_mul_eo(r, a, b);
#elif KILN_CUDA_MUL == 1
    mont_mul_ptx(r, a, b);
#else
    mont_mul_portable(r, a, b);
#endif
  }

  // ---- even/odd CIOS (KILN_CUDA_MUL=2) ----------------------------------------------------------
  // The running sum is kept as T = E + O·2^32 in two L-limb arrays: the products a_j·b of even j
  // land on limb pairs (2k, 2k+1) of E, those of odd j on the pairs of O (offset by one limb), so a
  // row is two independent carry chains instead of one chain through lo and hi halves. After the
  // reduction E[0] = 0, and T/2^32 = E[1..] + O: the arrays swap roles for the next row (O is now
  // aligned at limb 0, E at limb 1), the old E[1] is added into O[0] with its carry flowing into the
  // next row's first multiply-add of E at the right weight, and E is shifted by two limbs inside that
  // chain. Carries out of the top limb are zero because every partial value stays below 2^(32L+1)·MOD
  // (MOD < 2^(32L−1)). L must be even (12 for Fq, 8 for Fr).
  // acc (pairs) += x[0::2]·y, carry left in CC.
  __device__ static __forceinline__ void eo_cmad(u32* acc, const u32* x, u32 y) {
    acc[0] = mad_lo_cc(x[0], y, acc[0]);
    acc[1] = madc_hi_cc(x[0], y, acc[1]);
#pragma unroll
    for (int j = 2; j < L; j += 2) {
      acc[j] = madc_lo_cc(x[j], y, acc[j]);
      acc[j + 1] = madc_hi_cc(x[j], y, acc[j + 1]);
    }
  }
  // Same with the modulus's even (off = 0) or odd (off = 1) limbs.
  __device__ static __forceinline__ void eo_cmad_mod(u32* acc, int off, u32 y) {
    acc[0] = mad_lo_cc(P::mod(off), y, acc[0]);
    acc[1] = madc_hi_cc(P::mod(off), y, acc[1]);
#pragma unroll
    for (int j = 2; j < L; j += 2) {
      acc[j] = madc_lo_cc(P::mod(j + off), y, acc[j]);
      acc[j + 1] = madc_hi_cc(P::mod(j + off), y, acc[j + 1]);
    }
  }
  // acc (pairs) = x[0::2]·y.
  __device__ static __forceinline__ void eo_mul(u32* acc, const u32* x, u32 y) {
#pragma unroll
    for (int j = 0; j < L; j += 2) {
      acc[j] = x[j] * y;
      acc[j + 1] = __umulhi(x[j], y);
    }
  }
  // odd (pairs) = odd shifted down two limbs + x[0::2]·y, taking the carry in CC.
  __device__ static __forceinline__ void eo_madc_rshift(u32* odd, const u32* x, u32 y) {
#pragma unroll
    for (int j = 0; j < L - 2; j += 2) {
      odd[j] = madc_lo_cc(x[j], y, odd[j + 2]);
      odd[j + 1] = madc_hi_cc(x[j], y, odd[j + 3]);
    }
    odd[L - 2] = madc_lo_cc(x[L - 2], y, 0);
    odd[L - 1] = madc_hi(x[L - 2], y, 0);
  }
  // One row: (even, odd) += a·bi, then the reduction by m·MOD that zeroes even[0].
  __device__ static __forceinline__ void eo_row(u32* even, u32* odd, const u32* a, u32 bi, bool first) {
    if (first) {
      eo_mul(odd, a + 1, bi);
      eo_mul(even, a, bi);
    } else {
      even[0] = add_cc(even[0], odd[1]);
      eo_madc_rshift(odd, a + 1, bi);
      eo_cmad(even, a, bi);
      odd[L - 1] = addc0(odd[L - 1]);
    }
    const u32 m = even[0] * P::INV;
    eo_cmad_mod(odd, 1, m);
    eo_cmad_mod(even, 0, m);
    odd[L - 1] = addc0(odd[L - 1]);
  }
  __device__ static __forceinline__ void mont_mul_eo(u32* r, const u32* a, const u32* b) {
    u32 even[L], odd[L];
#pragma unroll
    for (int i = 0; i < L; i += 2) {
      eo_row(even, odd, a, b[i], i == 0);
      eo_row(odd, even, a, b[i + 1], false);
    }
    // T = odd + even·2^32 with odd[0] = 0: the result is even[k] + odd[k + 1].
    even[0] = add_cc(even[0], odd[1]);
#pragma unroll
    for (int k = 1; k < L - 1; k++) even[k] = addc_cc(even[k], odd[k + 1]);
    even[L - 1] = addc0(even[L - 1]);
    reduce_once(r, even);
  }

  // One Montgomery reduction row on L + 1 limbs: t += m·MOD with m = t[0]·INV (t[0] becomes 0), then t
  // shifted down one limb (t[L] = 0 after).
  __device__ static __forceinline__ void reduce_row(u32* t) {
    const u32 m = t[0] * P::INV;
    t[0] = mad_lo_cc(m, P::mod(0), t[0]);
#pragma unroll
    for (int j = 1; j < L; j++) t[j] = madc_lo_cc(m, P::mod(j), t[j]);
    t[L] = addc0(t[L]);
    t[1] = mad_hi_cc(m, P::mod(0), t[1]);
#pragma unroll
    for (int j = 2; j < L; j++) t[j] = madc_hi_cc(m, P::mod(j - 1), t[j]);
    t[L] = madc_hi(m, P::mod(L - 1), t[L]);
#pragma unroll
    for (int j = 0; j < L; j++) t[j] = t[j + 1];
    t[L] = 0;
  }

  // t (L + 1 limbs) += a·b_i, then += m·MOD and shift one limb, row by row (see the header).
  __device__ static __forceinline__ void mont_mul_ptx(u32* r, const u32* a, const u32* b) {
    u32 t[L + 1];
#pragma unroll
    for (int i = 0; i <= L; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
      const u32 bi = b[i];
      t[0] = mad_lo_cc(a[0], bi, t[0]);
#pragma unroll
      for (int j = 1; j < L; j++) t[j] = madc_lo_cc(a[j], bi, t[j]);
      t[L] = addc0(t[L]);
      t[1] = mad_hi_cc(a[0], bi, t[1]);
#pragma unroll
      for (int j = 2; j < L; j++) t[j] = madc_hi_cc(a[j - 1], bi, t[j]);
      t[L] = madc_hi(a[L - 1], bi, t[L]);
      reduce_row(t);
    }
    reduce_once(r, t);
  }

  __device__ static __forceinline__ void mont_mul_portable(u32* r, const u32* a, const u32* b) {
    u32 t[L];
#pragma unroll
    for (int i = 0; i < L; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
      u64 s = (u64)a[0] * b[i] + t[0];
      u32 A = (u32)(s >> 32);
      const u32 t0 = (u32)s;
      const u32 m = t0 * P::INV;
      u64 c = (u64)m * P::mod(0) + t0;
      u32 C = (u32)(c >> 32);
#pragma unroll
      for (int j = 1; j < L; j++) {
        s = (u64)a[j] * b[i] + t[j] + A;
        A = (u32)(s >> 32);
        c = (u64)m * P::mod(j) + (u32)s + C;
        C = (u32)(c >> 32);
        t[j - 1] = (u32)c;
      }
      t[L - 1] = C + A;
    }
    reduce_once(r, t);
  }

  // ---- squaring (V = 2): the square as 2L limbs, then a Montgomery reduction ----------------------
  // Off-diagonal products a_i·a_j (i < j) once, doubled, plus the diagonal a_i²: L(L+1)/2 limb products
  // instead of L² (Fq: 78 against 144, the multiply-adds 156 against 288); the reduction is the CIOS's
  // other half. REDC(t) for t = t_lo + t_hi·2^(32L) < MOD·2^(32L) is t_hi + REDC(t_lo) (the quotient m
  // depends on t_lo only; REDC(t_lo) ≤ MOD, t_hi < MOD), so the reduction runs on L + 1 limbs and one
  // field addition folds the top half in.
  __device__ static __forceinline__ void sqr_wide(u32* t, const u32* a) {
#pragma unroll
    for (int k = 0; k < 2 * L; k++) t[k] = 0;
    // row i: positions 2i + 1 … i + L − 1 (lo halves, the carry into i + L), 2i + 2 … i + L (hi halves).
    // Rows before i never reach position i + L, and the partial sum after row i is below 2^(32(i + L + 1)),
    // so neither chain carries out of it.
#pragma unroll
    for (int i = 0; i < L - 1; i++) {
      t[2 * i + 1] = mad_lo_cc(a[i], a[i + 1], t[2 * i + 1]);
#pragma unroll
      for (int j = i + 2; j < L; j++) t[i + j] = madc_lo_cc(a[i], a[j], t[i + j]);
      t[i + L] = addc0(t[i + L]);
      t[2 * i + 2] = mad_hi_cc(a[i], a[i + 1], t[2 * i + 2]);
#pragma unroll
      for (int j = i + 2; j < L; j++) t[i + j + 1] = madc_hi_cc(a[i], a[j], t[i + j + 1]);
      if (i + 1 < L - 1) t[i + L + 1] = addc0(t[i + L + 1]);
    }
    // × 2 (t[0] is 0), then + Σ a_i²·2^(64i)
    t[1] = add_cc(t[1], t[1]);
#pragma unroll
    for (int k = 2; k < 2 * L - 1; k++) t[k] = addc_cc(t[k], t[k]);
    t[2 * L - 1] = addc0(0);
    t[0] = mad_lo_cc(a[0], a[0], t[0]);
    t[1] = madc_hi_cc(a[0], a[0], t[1]);
#pragma unroll
    for (int i = 1; i < L - 1; i++) {
      t[2 * i] = madc_lo_cc(a[i], a[i], t[2 * i]);
      t[2 * i + 1] = madc_hi_cc(a[i], a[i], t[2 * i + 1]);
    }
    t[2 * L - 2] = madc_lo_cc(a[L - 1], a[L - 1], t[2 * L - 2]);
    t[2 * L - 1] = madc_hi(a[L - 1], a[L - 1], t[2 * L - 1]);
  }
  // r = t·2^(−32L) mod MOD for t < MOD·2^(32L) (2L limbs), fully reduced.
  __device__ static __forceinline__ void redc_wide(u32* r, const u32* t) {
    u32 u[L + 1];
#pragma unroll
    for (int i = 0; i < L; i++) u[i] = t[i];
    u[L] = 0;
    // REDC(t_lo): L rows of u += m·MOD, shifted down one limb (mont_mul_ptx's reduction half)
#pragma unroll
    for (int i = 0; i < L; i++) reduce_row(u);
    // + t_hi: < 2·MOD < 2^(32L), then one conditional subtraction
    u32 s[L];
    s[0] = add_cc(u[0], t[L]);
#pragma unroll
    for (int i = 1; i < L - 1; i++) s[i] = addc_cc(u[i], t[L + i]);
    s[L - 1] = addc(u[L - 1], t[2 * L - 1]);
    reduce_once(r, s);
  }
  __device__ static __forceinline__ void mont_sqr_sos(u32* r, const u32* a) {
    u32 t[2 * L];
    sqr_wide(t, a);
    redc_wide(r, t);
  }
  __device__ static __noinline__ DFp sqr_call(DFp a) {
    DFp r;
    mont_sqr_sos(r.w, a.w);
    return r;
  }

  __device__ static __noinline__ DFp mul_call(DFp a, DFp b) {
    DFp r;
    mont_mul(r.w, a.w, b.w);
    return r;
  }
  __device__ friend __forceinline__ DFp operator*(const DFp& a, const DFp& b) {
    if constexpr (L == 12 && V != 1) return mul_call(a, b);
    DFp r;
    mont_mul(r.w, a.w, b.w);
    return r;
  }
  __device__ __forceinline__ DFp& operator*=(const DFp& b) { return *this = *this * b; }
  __device__ __forceinline__ DFp& operator+=(const DFp& b) { return *this = *this + b; }
  __device__ __forceinline__ DFp& operator-=(const DFp& b) { return *this = *this - b; }
  // V = 2: the dedicated squaring (mont_sqr_sos; Fq's a non-inlined function as its multiplication).
  __device__ __forceinline__ DFp sqr() const {
    if constexpr (V == 2) {
      if constexpr (L == 12) return sqr_call(*this);
      DFp r;
      mont_sqr_sos(r.w, w);
      return r;
    }
    return *this * *this;
  }

  // Montgomery → canonical integer (any 32L-bit input gives a value < MOD, i.e. read mod MOD).
  __device__ __forceinline__ DFp from_mont() const {
    u32 one[L];
#pragma unroll
    for (int i = 0; i < L; i++) one[i] = i == 0;
    DFp r;
    mont_mul(r.w, w, one);
    return r;
  }

  // this^e, e given as u32 limbs (little-endian), square-and-multiply.
  __device__ DFp pow(const u32* e, int limbs) const {
    DFp r = one();
    for (int i = limbs * 32 - 1; i >= 0; i--) {
      r = r.sqr();
      if ((e[i >> 5] >> (i & 31)) & 1) r *= *this;
    }
    return r;
  }
  __device__ DFp pow_u64(u64 e) const {
    DFp r = one();
    DFp b = *this;
    while (e) {
      if (e & 1) r *= b;
      b = b.sqr();
      e >>= 1;
    }
    return r;
  }
  // Fermat inverse (this^(MOD − 2), ~1.5·bits multiplications); inverse of zero is zero. The binary GCD's
  // fallback and its twin in the tests.
  __device__ DFp inverse_fermat() const {
    u32 e[L];
    u32 borrow = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
      const u64 s = (u64)P::mod(i) - (i == 0 ? 2u : 0u) - borrow;
      e[i] = (u32)s;
      borrow = (u32)(s >> 63);
    }
    return pow(e, L);
  }

  // The inverse; of zero, zero. By the binary GCD below: about a tenth of the Fermat inverse's instructions
  // for Fq (the batch-affine MSM levels spend one per thread's run of pairs).
  __device__ DFp inverse() const {
    if (is_zero()) return *this;
    bool ok;
    const DFp r = inverse_gcd(ok);
    return ok ? r : inverse_fermat();  // never taken when the step bound holds (tools/field-host-check.cpp)
  }

  // ---- inversion by Pornin's optimised binary GCD (eprint 2020/972, algorithm 2) ---------------------
  // a ← y (this, the Montgomery form xR of x), b ← MOD, u ← R² mod MOD, v ← 0. Each outer step runs 31
  // steps of the binary GCD on 64-bit approximations of a and b (their low 31 bits and top 33 bits at
  // the length of the longer one; exact once both fit 64 bits), which give the step's transition matrix
  // [[f0, g0], [f1, g1]] (|f| + |g| ≤ 2^31); then (a, b) ← (a·f0 + b·g0, a·f1 + b·g1) / 2^31 exactly
  // (the low bits were exact), made non-negative by negating a row, and (u, v) ← the same rows over u, v
  // divided by 2^31 mod MOD (Montgomery's way: + k·MOD with k = −t·MOD^−1 mod 2^31). The invariants
  // a ≡ u·y/R², b ≡ v·y/R² (mod MOD) hold at every step, and ⌈(2·bits(MOD) − 1)/31⌉ steps bring b to
  // gcd = 1 (a = 0), where v = R²/y = R/x: the Montgomery form of 1/x. ok = false (the caller falls back to
  // Fermat) if b ended other than 1 or a value outgrew L limbs, neither of which the bound allows.
  // t (L + 2 limbs, two's complement) = x·f (x < 2^(32L), |f| ≤ 2^31); y: the modulus instead of x.
  template <bool kMod>
  __device__ static __forceinline__ void gcd_mul(u32* t, const u32* x, long long f) {
    const u32 m = (u32)(f < 0 ? -f : f);
    const u32 neg = f < 0 ? 0xffffffffu : 0u;
    u32 a[L], p[L + 1];
#pragma unroll
    for (int i = 0; i < L; i++) a[i] = kMod ? P::mod(i) : x[i];
    // the low halves at their limbs, the high halves one limb up, in one carry chain
    p[0] = a[0] * m;
    p[1] = mad_hi_cc(a[0], m, a[1] * m);
#pragma unroll
    for (int i = 2; i < L; i++) p[i] = madc_hi_cc(a[i - 1], m, a[i] * m);
    p[L] = madc_hi(a[L - 1], m, 0);
    // negated when f < 0: (p XOR neg) + 1
    t[0] = add_cc(p[0] ^ neg, neg & 1u);
#pragma unroll
    for (int i = 1; i <= L; i++) t[i] = addc_cc(p[i] ^ neg, 0);
    t[L + 1] = addc(neg, 0);
  }
  // t += o (L + 2 limbs).
  __device__ static __forceinline__ void gcd_add(u32* t, const u32* o) {
    t[0] = add_cc(t[0], o[0]);
#pragma unroll
    for (int i = 1; i < L + 1; i++) t[i] = addc_cc(t[i], o[i]);
    t[L + 1] = addc(t[L + 1], o[L + 1]);
  }
  // r (L + 1 limbs) = t / 2^31, t exactly divisible (arithmetic shift of L + 2 limbs).
  __device__ static __forceinline__ void gcd_shr31(u32* r, const u32* t) {
#pragma unroll
    for (int i = 0; i <= L; i++) r[i] = (t[i] >> 31) | (t[i + 1] << 1);
  }
  // r (L + 1 limbs) += MOD & mask.
  __device__ static __forceinline__ void gcd_add_mod(u32* r, u32 mask) {
    r[0] = add_cc(r[0], P::mod(0) & mask);
#pragma unroll
    for (int i = 1; i < L; i++) r[i] = addc_cc(r[i], P::mod(i) & mask);
    r[L] = addc(r[L], 0);
  }
  // (x·f + y·g)/2^31 for the pair (a, b): non-negative (a row negated when not), ok = false if it outgrew L limbs.
  __device__ static __forceinline__ void gcd_row(u32* out, const u32* x, const u32* y, long long& f, long long& g,
                                                 bool& ok) {
    u32 t[L + 2], o[L + 2], r[L + 1];
    gcd_mul<false>(t, x, f);
    gcd_mul<false>(o, y, g);
    gcd_add(t, o);
    gcd_shr31(r, t);
    const u32 neg = (u32)((int)r[L] >> 31);  // 0 or all ones
    if (neg) {
      f = -f;
      g = -g;
    }
    // |r| by (r XOR neg) + 1
    u32 s[L + 1];
    s[0] = add_cc(r[0] ^ neg, neg & 1u);
#pragma unroll
    for (int i = 1; i <= L; i++) s[i] = addc_cc(r[i] ^ neg, 0);
    if (s[L] != 0) ok = false;
#pragma unroll
    for (int i = 0; i < L; i++) out[i] = s[i];
  }
  // (x·f + y·g)/2^31 mod MOD for the pair (u, v), x, y < MOD: + k·MOD makes the sum divisible, the quotient
  // lies in (−2·MOD, 2·MOD) and two conditional additions and a subtraction bring it to [0, MOD).
  __device__ static __forceinline__ void gcd_row_mod(u32* out, const u32* x, const u32* y, long long f, long long g) {
    u32 t[L + 2], o[L + 2], r[L + 1];
    gcd_mul<false>(t, x, f);
    gcd_mul<false>(o, y, g);
    gcd_add(t, o);
    const long long k = (long long)((t[0] * P::INV) & 0x7fffffffu);
    gcd_mul<true>(o, nullptr, k);
    gcd_add(t, o);
    gcd_shr31(r, t);
    gcd_add_mod(r, (u32)((int)r[L] >> 31));
    gcd_add_mod(r, (u32)((int)r[L] >> 31));
    reduce_once(out, r);  // r < 2·MOD < 2^(32L): r[L] = 0
  }
  // Top 33 and low 31 bits of x at the length len ≥ 64 of the longer value; x itself when len = 64.
  __device__ static __forceinline__ u64 gcd_approx(const u32* x, int len) {
    const int s = len - 33, w = s >> 5, off = s & 31;
    u32 lo = 0, hi = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
      if (i == w) lo = x[i];
      if (i == w + 1) hi = x[i];
    }
    const u64 top = ((((u64)hi << 32) | lo) >> off) & ((u64(1) << 33) - 1);
    return (top << 31) | (x[0] & 0x7fffffffu);
  }
  __device__ __noinline__ DFp inverse_gcd(bool& ok) const {
    u32 a[L], b[L], u[L], v[L];
#pragma unroll
    for (int i = 0; i < L; i++) {
      a[i] = w[i];
      b[i] = P::mod(i);
      u[i] = P::r2(i);
      v[i] = 0;
    }
    ok = true;
    for (int step = 0; step < P::GCD_STEPS; step++) {
      // a = 0: b is the gcd (random values get there in ~18 of Fq's 25 steps); no step count enters v
      u32 nz = 0;
#pragma unroll
      for (int i = 0; i < L; i++) nz |= a[i];
      if (!nz) break;
      // the length of the longer of a, b (b ≥ 1: it stays odd)
      int hi = 0;
      u32 top = 0;
#pragma unroll
      for (int i = 0; i < L; i++) {
        const u32 o = a[i] | b[i];
        if (o) {
          hi = i;
          top = o;
        }
      }
      int len = 32 * hi + 32 - __clz(top);
      if (len < 64) len = 64;
      u64 xa = gcd_approx(a, len), xb = gcd_approx(b, len);
      long long f0 = 1, g0 = 0, f1 = 0, g1 = 1;
      for (int j = 0; j < 31; j++) {
        if (xa & 1) {
          if (xa < xb) {
            const u64 x = xa;
            xa = xb;
            xb = x;
            long long y = f0;
            f0 = f1;
            f1 = y;
            y = g0;
            g0 = g1;
            g1 = y;
          }
          xa -= xb;
          f0 -= f1;
          g0 -= g1;
        }
        xa >>= 1;
        f1 += f1;
        g1 += g1;
      }
      u32 na[L], nb[L];
      gcd_row(na, a, b, f0, g0, ok);
      gcd_row(nb, a, b, f1, g1, ok);
      u32 nu[L], nv[L];
      gcd_row_mod(nu, u, v, f0, g0);
      gcd_row_mod(nv, u, v, f1, g1);
#pragma unroll
      for (int i = 0; i < L; i++) {
        a[i] = na[i];
        b[i] = nb[i];
        u[i] = nu[i];
        v[i] = nv[i];
      }
    }
    u32 d = b[0] ^ 1u;
#pragma unroll
    for (int i = 1; i < L; i++) d |= b[i];
    if (d) ok = false;
    DFp r;
#pragma unroll
    for (int i = 0; i < L; i++) r.w[i] = v[i];
    return r;
  }
};

using DFq = DFp<FqP>;
using DFr = DFp<FrP>;

// Fq2 = Fq[u]/(u^2 + 1), c0 ‖ c1 as on the CPU.
struct __align__(16) DFq2 {
  DFq c0, c1;
  __device__ static __forceinline__ DFq2 zero() { return {DFq::zero(), DFq::zero()}; }
  __device__ static __forceinline__ DFq2 one() { return {DFq::one(), DFq::zero()}; }
  __device__ __forceinline__ bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  __device__ __forceinline__ bool operator==(const DFq2& o) const { return c0 == o.c0 && c1 == o.c1; }
  __device__ __forceinline__ bool operator!=(const DFq2& o) const { return !(*this == o); }
  __device__ friend __forceinline__ DFq2 operator+(const DFq2& a, const DFq2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  __device__ friend __forceinline__ DFq2 operator-(const DFq2& a, const DFq2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  __device__ friend __forceinline__ DFq2 operator-(const DFq2& a) { return {-a.c0, -a.c1}; }
  __device__ __forceinline__ DFq2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  // Karatsuba: 3 base multiplications.
  __device__ friend __forceinline__ DFq2 operator*(const DFq2& a, const DFq2& b) {
    const DFq v0 = a.c0 * b.c0;
    const DFq v1 = a.c1 * b.c1;
    const DFq s = (a.c0 + a.c1) * (b.c0 + b.c1);
    return {v0 - v1, s - v0 - v1};
  }
  __device__ __forceinline__ DFq2& operator*=(const DFq2& b) { return *this = *this * b; }
  __device__ __forceinline__ DFq2& operator+=(const DFq2& b) { return *this = *this + b; }
  __device__ __forceinline__ DFq2& operator-=(const DFq2& b) { return *this = *this - b; }
  __device__ __forceinline__ DFq2 sqr() const {
    const DFq t = c0 * c1;
    return {(c0 + c1) * (c0 - c1), t.dbl()};
  }
  __device__ DFq2 inverse() const {
    const DFq t = (c0.sqr() + c1.sqr()).inverse();  // of zero, zero
    return {c0 * t, -(c1 * t)};
  }
};

static_assert(sizeof(DFq) == 48 && sizeof(DFr) == 32 && sizeof(DFq2) == 96, "device field layout");

// c-bit window starting at bit s of a canonical 256-bit scalar (8 limbs), c ≤ 24 (no dynamic register indexing):
// the MSM's Pippenger digits (msm.cuh) and the fixed-base tables' windows (setup.cu).
__device__ __forceinline__ u32 scalar_bits(const u32* k, u32 s, u32 c) {
  const u32 li = s >> 5, off = s & 31;
  u32 lo = 0, hi = 0;
#pragma unroll
  for (u32 j = 0; j < 8; j++) {
    if (j == li) lo = k[j];
    if (j == li + 1) hi = k[j];
  }
  const u64 v = (((u64)hi << 32) | lo) >> off;
  return (u32)v & ((1u << c) - 1);
}

}  // namespace cuda
}  // namespace kiln
