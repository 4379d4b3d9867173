// Fr NTT and elementwise kernels (the quotient's pointwise step). Same algorithm and conventions as the CPU
// (native/src/ntt/ntt.hpp): bit reversal then radix-2 DIT; inverse uses ω^−1 and 1/n; coset g = 7.
//
// Stages run in groups of up to kGroupLog in shared memory (one block holds 2^k elements of stride
// 2^s: the butterflies of stages s … s+k−1 never leave the block), two stages per pass; the first group gathers its
// input in bit-reversed order, out of place, so there is no separate permutation pass.
// Twiddles: one device table tw[i] = ω_N^i (i < N/2) for the largest N seen; a size n ≤ N reads
// it with stride N/n; ω^−e = −ω^(N/2 − e).
#pragma once
#include "field.cuh"

namespace kiln {
namespace cuda {

constexpr unsigned kGroupLog = 10;  // 1024 elements × 32 B = 32 KiB of shared memory per block

__device__ __forceinline__ DFr twiddle(const DFr* __restrict__ tw, u64 e, u32 logStride, bool inverse, u64 halfN) {
  // ω_n^e = ω_N^(e·N/n)
  const u64 i = e << logStride;
  if (!inverse || i == 0) return tw[i];
  return -tw[halfN - i];
}

// tw[i] = ω^i for i < half: each thread one chunk of 64 from a power.
static __global__ void k_twiddles(DFr* tw, u64 half, DFr omega) {
  const u64 c = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  const u64 i0 = c * 64;
  if (i0 >= half) return;
  DFr x = omega.pow_u64(i0);
  for (u64 i = i0; i < i0 + 64 && i < half; i++) {
    tw[i] = x;
    x *= omega;
  }
}

__device__ __forceinline__ u64 bitrev(u64 x, unsigned logn) {
  return logn == 0 ? 0 : (__brevll(x) >> (64 - logn));
}

// One group of k stages starting at stage s (half-size 2^s), two stages at a time: a thread holds 4 elements (j, j + h, j + 2h,
// j + 3h; h = 2^t) in registers through stages t and t + 1, so shared memory is read and written
// and the block synchronised once per two stages. Stage t multiplies by ω_{2^(s+t+1)}^e, stage t + 1
// by ω_{2^(s+t+2)}^e and ω_{2^(s+t+2)}^(e + 2^(s+t)) (e = p·2^s + lo): 4 multiplications per 4
// elements and 2 stages, as radix 2, with 3 twiddle loads instead of 4. An odd k ends with one
// radix-2 stage. src == nullptr: in place on dst; otherwise dst[x] = src[bitrev(x)] on load (first
// group, s = 0). Against the radix-2 kernel it replaced: 2^27 54.8 → 52.5 ms (H200, 2026-12-02).
// slo != nullptr (the transform's last group only): each element is stored times c·g^x, x its index, from two
// tables slo[x mod 2^slog] = g^(x mod 2^slog) and shi[x >> slog] = c·g^((x >> slog)·2^slog) (ntt.cu ScaleTables):
// the coset shift and 1/n of the quotient's inverse transforms without a pass of their own over the vector.
static __global__ void k_ntt_group(const DFr* __restrict__ src, DFr* __restrict__ dst, unsigned logn, unsigned s,
                                   unsigned k, const DFr* __restrict__ tw, unsigned logN, bool inverse,
                                   const DFr* __restrict__ slo = nullptr, const DFr* __restrict__ shi = nullptr,
                                   unsigned slog = 0) {
  extern __shared__ DFr sh[];
  const u64 b = blockIdx.x;
  const u64 lo = b & ((u64(1) << s) - 1);
  const u64 hi = b >> s;
  const u64 gbase = (hi << (s + k)) | lo;
  for (u32 j = threadIdx.x; j < (1u << k); j += blockDim.x) {
    const u64 g = gbase + ((u64)j << s);
    sh[j] = src ? src[bitrev(g, logn)] : dst[g];
  }
  __syncthreads();
  const u64 halfN = u64(1) << (logN - 1);
  unsigned t = 0;
  for (; t + 1 < k; t += 2) {
    const u32 h = 1u << t;
    for (u32 u = threadIdx.x; u < (1u << (k - 2)); u += blockDim.x) {
      const u32 p = u & (h - 1);
      const u32 j0 = ((u >> t) << (t + 2)) | p;
      const u64 e = ((u64)p << s) | lo;
      const DFr w1 = twiddle(tw, e, logN - (s + t + 1), inverse, halfN);
      const DFr w2 = twiddle(tw, e, logN - (s + t + 2), inverse, halfN);
      const DFr w3 = twiddle(tw, e + (u64(1) << (s + t)), logN - (s + t + 2), inverse, halfN);
      DFr x0 = sh[j0], x1 = sh[j0 + h], x2 = sh[j0 + 2 * h], x3 = sh[j0 + 3 * h];
      DFr y = x1 * w1;
      x1 = x0 - y;
      x0 = x0 + y;
      y = x3 * w1;
      x3 = x2 - y;
      x2 = x2 + y;
      y = x2 * w2;
      sh[j0] = x0 + y;
      sh[j0 + 2 * h] = x0 - y;
      y = x3 * w3;
      sh[j0 + h] = x1 + y;
      sh[j0 + 3 * h] = x1 - y;
    }
    __syncthreads();
  }
  if (t < k) {
    for (u32 tau = threadIdx.x; tau < (1u << (k - 1)); tau += blockDim.x) {
      const u32 p = tau & ((1u << t) - 1);
      const u32 i0 = ((tau >> t) << (t + 1)) | p;
      const u32 i1 = i0 + (1u << t);
      const u64 e = ((u64)p << s) | lo;
      const DFr w = twiddle(tw, e, logN - (s + t + 1), inverse, halfN);
      const DFr x = sh[i0];
      const DFr y = sh[i1] * w;
      sh[i0] = x + y;
      sh[i1] = x - y;
    }
    __syncthreads();
  }
  if (slo != nullptr) {
    const u64 mask = (u64(1) << slog) - 1;
    for (u32 j = threadIdx.x; j < (1u << k); j += blockDim.x) {
      const u64 x = gbase + ((u64)j << s);
      dst[x] = sh[j] * (slo[x & mask] * shi[x >> slog]);
    }
    return;
  }
  for (u32 j = threadIdx.x; j < (1u << k); j += blockDim.x) dst[gbase + ((u64)j << s)] = sh[j];
}

// t[j] = c · base^(j << shift) for j < count (the tables of the fused scalings above).
static __global__ void k_pow_table(DFr* t, u64 count, DFr base, DFr c, unsigned shift) {
  const u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (j < count) t[j] = c * base.pow_u64(j << shift);
}

// a[i] *= c · g^i (g == 1: a plain scaling). Each thread a chunk of 32 from one power.
static __global__ void k_scale_powers(DFr* a, u64 n, DFr c, DFr g, bool powers) {
  const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  const u64 i0 = t * 32;
  if (i0 >= n) return;
  DFr f = powers ? c * g.pow_u64(i0) : c;
  for (u64 i = i0; i < i0 + 32 && i < n; i++) {
    a[i] *= f;
    if (powers) f *= g;
  }
}

// In-place bit-reversal permutation (the in-place transform's first step, before its stage groups).
static __global__ void k_bitrev_inplace(DFr* a, unsigned logn) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (u64(1) << logn)) return;
  const u64 j = bitrev(i, logn);
  if (i < j) {
    const DFr x = a[i];
    a[i] = a[j];
    a[j] = x;
  }
}

// a *= b (the quotient computed one vector at a time: a·b before c is formed)
static __global__ void k_mul_pointwise(DFr* __restrict__ a, const DFr* __restrict__ b, u64 n) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * b[i];
}

// a = (a − c)·zinv (with a holding a·b)
static __global__ void k_sub_scale(DFr* __restrict__ a, const DFr* __restrict__ c, u64 n, DFr zinv) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = (a[i] - c[i]) * zinv;
}

// a = (a·b − c)·zinv
static __global__ void k_quotient_pointwise(DFr* __restrict__ a, const DFr* __restrict__ b, const DFr* __restrict__ c,
                                     u64 n, DFr zinv) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = (a[i] * b[i] - c[i]) * zinv;
}

}  // namespace cuda
}  // namespace kiln
