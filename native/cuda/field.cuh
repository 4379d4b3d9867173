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
// Multiplication: CIOS on 32-bit limbs, "no-carry" variant, 64-bit products (IMAD.WIDE.U32) in
// portable C++ (the default). A PTX carry-chain version (mad.lo.cc / madc.hi.cc, fewer
// instructions) is kept behind KILN_CUDA_PTX_MUL: it passed every test but measured slower on the
// H200 (2026-11-30: NTT 2^26 30.0 → 40.9 ms, G2 MSM 2^22 341 → 424 ms, G1 MSM 2^22 108 → 100 ms):
// one long chain through the carry flag serialises what the compiler otherwise interleaves.
// Its chain sequence and bounds were checked by a Python model of the exact instructions.
// Values are kept fully reduced.
#pragma once
#include <cstdint>

#include "../src/util/hd.hpp"

namespace kiln {
namespace cuda {

using u32 = uint32_t;
using u64 = uint64_t;

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
__device__ __forceinline__ u32 addc0(u32 a) {
  u32 r;
  asm volatile("addc.u32 %0, %1, 0;" : "=r"(r) : "r"(a));
  return r;
}

static __constant__ u32 kFqMod[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                                      0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
static __constant__ u32 kFqOne[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                                      0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
static __constant__ u32 kFrMod[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                     0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
static __constant__ u32 kFrOne[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                     0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
static __constant__ u32 kFrR2[8] = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb,
                                    0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};

struct FqP {
  static constexpr int L = 12;
  static constexpr u32 INV = 0xfffcfffd;  // −p^−1 mod 2^32
  __device__ static __forceinline__ u32 mod(int i) { return kFqMod[i]; }
  __device__ static __forceinline__ u32 one(int i) { return kFqOne[i]; }
};
struct FrP {
  static constexpr int L = 8;
  static constexpr u32 INV = 0xffffffff;  // −r^−1 mod 2^32
  __device__ static __forceinline__ u32 mod(int i) { return kFrMod[i]; }
  __device__ static __forceinline__ u32 one(int i) { return kFrOne[i]; }
};

template <class P>
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
    u32 borrow = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
      const u64 s = (u64)t[i] - P::mod(i) - borrow;
      d[i] = (u32)s;
      borrow = (u32)(s >> 63);
    }
#pragma unroll
    for (int i = 0; i < L; i++) r[i] = borrow ? t[i] : d[i];
  }

  __device__ friend __forceinline__ DFp operator+(const DFp& a, const DFp& b) {
    u32 t[L];
    u32 c = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
      const u64 s = (u64)a.w[i] + b.w[i] + c;
      t[i] = (u32)s;
      c = (u32)(s >> 32);
    }
    DFp r;
    reduce_once(r.w, t);
    return r;
  }
  __device__ friend __forceinline__ DFp operator-(const DFp& a, const DFp& b) {
    DFp r;
    u32 borrow = 0;
#pragma unroll
    for (int i = 0; i < L; i++) {
      const u64 s = (u64)a.w[i] - b.w[i] - borrow;
      r.w[i] = (u32)s;
      borrow = (u32)(s >> 63);
    }
    if (borrow) {
      u32 c = 0;
#pragma unroll
      for (int i = 0; i < L; i++) {
        const u64 s = (u64)r.w[i] + P::mod(i) + c;
        r.w[i] = (u32)s;
        c = (u32)(s >> 32);
      }
    }
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
#ifdef KILN_CUDA_PTX_MUL
    mont_mul_ptx(r, a, b);
#else
    mont_mul_portable(r, a, b);
#endif
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

  __device__ friend __forceinline__ DFp operator*(const DFp& a, const DFp& b) {
    DFp r;
    mont_mul(r.w, a.w, b.w);
    return r;
  }
  __device__ __forceinline__ DFp& operator*=(const DFp& b) { return *this = *this * b; }
  __device__ __forceinline__ DFp& operator+=(const DFp& b) { return *this = *this + b; }
  __device__ __forceinline__ DFp& operator-=(const DFp& b) { return *this = *this - b; }
  __device__ __forceinline__ DFp sqr() const { return *this * *this; }

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
  // Fermat inverse; inverse of zero is zero.
  __device__ DFp inverse() const {
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
    const DFq t = (c0.sqr() + c1.sqr()).inverse();
    return {c0 * t, -(c1 * t)};
  }
};

static_assert(sizeof(DFq) == 48 && sizeof(DFr) == 32 && sizeof(DFq2) == 96, "device field layout");

}  // namespace cuda
}  // namespace kiln
