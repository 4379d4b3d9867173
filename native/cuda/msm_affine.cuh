// Batch-affine bucket accumulation (KILN_MSM_ACC=4): the sorted runs of a Pippenger pass reduced by
// levels of pairwise affine additions, each addition's inversion shared with the others of its thread
// by Montgomery's trick, before the XYZZ chunks add up what is left.
//
// A bucket's run is padded to a multiple of M = 2^levels (pad entries kPad, the identity), so that at
// every level pair j of the level's array is elements 2j and 2j + 1 of one bucket, whatever the runs'
// lengths: no bucket lookup in the levels, and any multiple of M cuts the array into slices whose trees
// are independent (slices bound the levels' memory). After the levels a bucket b holds the points
// foff[b] … foff[b + 1] − 1 of the last level (⌈run / M⌉ of them), which the chunked XYZZ accumulation
// sums (start = foff, end = foff + 1, no value array).
//
// One affine addition P1 + P2 with λ = (y2 − y1)/(x2 − x1) (doubling: 3x1²/2y1) costs, with the batch
// inversion, 6 multiplications (prefix product, two in the backward pass, λ, λ², λ(x1 − x3)) against
// madd-2008-s's 10, plus 1/K of an inversion (K pairs per thread) and the traffic of reading both points
// twice and writing the result.
#pragma once
#include "msm_points.cuh"

namespace kiln {
namespace cuda {

constexpr u32 kPad = 0xFFFFFFFFu;  // a padded slot of a run: the identity


// A level's input element: level 1 gathers bases (signed, through the padded value array), later levels
// read the previous level's points. Identity: a pad slot, or (0, 0) in a level's array (x = 0 is no point
// of the prime-order subgroups: y² = b has no solution of odd order).
template <class F, bool kGather>
__device__ __forceinline__ bool ba_load_x(const Affine<F>* __restrict__ in, const u32* __restrict__ pv, size_t e,
                                          F& x) {
  if constexpr (kGather) {
    const u32 v = pv[e];
    if (v == kPad) return false;
    x = load_x(in + (v & ~kSignBit));
    return true;
  } else {
    x = load_x(in + e);
    return !x.is_zero();
  }
}
template <class F, bool kGather>
__device__ __forceinline__ bool ba_load(const Affine<F>* __restrict__ in, const u32* __restrict__ pv, size_t e,
                                        Affine<F>& p) {
  if constexpr (kGather) {
    const u32 v = pv[e];
    if (v == kPad) return false;
    p = load_affine(in + (v & ~kSignBit));
    if (v & kSignBit) p.y = -p.y;
    return true;
  } else {
    p = load_affine(in + e);
    return !p.x.is_zero();
  }
}

// The pair's class: 0 an addition or a doubling (den set), 1 the result is the left point, 2 the right
// one, 3 the identity (P + (−P)).
template <class F>
__device__ __forceinline__ int ba_class(bool ha, bool hb, const Affine<F>& a, const Affine<F>& b, F& den, F& num) {
  if (!ha) return 2;
  if (!hb) return 1;
  if (a.x == b.x) {
    if (!(a.y == b.y)) return 3;
    den = a.y.dbl();
    const F xx = a.x.sqr();
    num = xx.dbl() + xx;
    return 0;
  }
  den = b.x - a.x;
  num = b.y - a.y;
  return 0;
}

// out[j] = in[2j] + in[2j + 1], j < npairs; thread t takes pairs t, t + T, t + 2T, … with one inversion.
// Forward: the prefix products of the denominators, each stored in its pair's output x; backward: each
// pair's inverse from the running inverse and the prefix before it, then the affine sum.
template <class F, bool kGather>
__global__ void k_ba_level(const Affine<F>* __restrict__ in, const u32* __restrict__ pv, size_t npairs, u32 T,
                           Affine<F>* __restrict__ out) {
  const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= T || t >= npairs) return;
  F acc = F::one();
  size_t last = t;
  for (size_t j = t; j < npairs; j += T) {
    F xa, xb;
    const bool ha = ba_load_x<F, kGather>(in, pv, 2 * j, xa);
    const bool hb = ba_load_x<F, kGather>(in, pv, 2 * j + 1, xb);
    if (ha && hb) {
      if (!(xa == xb)) {
        acc *= xb - xa;
      } else {  // rare: a doubling or P + (−P); the y's decide
        Affine<F> a, b;
        F den, num;
        ba_load<F, kGather>(in, pv, 2 * j, a);
        ba_load<F, kGather>(in, pv, 2 * j + 1, b);
        if (ba_class(true, true, a, b, den, num) == 0) acc *= den;
      }
    }
    out[j].x = acc;
    last = j;
  }
  F inv = acc.inverse();
  for (size_t j = last;; j -= T) {
    Affine<F> a, b;
    const bool ha = ba_load<F, kGather>(in, pv, 2 * j, a);
    const bool hb = ba_load<F, kGather>(in, pv, 2 * j + 1, b);
    F den, num;
    const int k = ba_class(ha, hb, a, b, den, num);
    Affine<F> r;
    if (k == 0) {
      const F il = j >= t + T ? inv * out[j - T].x : inv;  // 1 / den: the prefix before this pair
      inv *= den;
      const F lam = num * il;
      r.x = lam.sqr() - a.x - b.x;
      r.y = lam * (a.x - r.x) - a.y;
    } else {
      r = k == 1 ? a : k == 2 ? (hb ? b : Affine<F>::identity()) : Affine<F>::identity();
    }
    out[j] = r;
    if (j < t + T) break;
  }
}

// Points of bucket b after the levels: ⌈run / M⌉ (0 for an empty bucket).
static __global__ void k_ba_counts(const u32* __restrict__ start, const u32* __restrict__ end, u32 nb, u32 M,
                                   u32* __restrict__ cc) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= nb) return;
  cc[b] = (end[b] - start[b] + M - 1) / M;
}

// The sorted values into their padded runs: bucket b's run starts at foff[b]·M (pv preset to kPad).
static __global__ void k_ba_scatter(const u32* __restrict__ keys, const u32* __restrict__ vals, size_t total,
                                    u32 sentinel, const u32* __restrict__ start, const u32* __restrict__ foff, u32 M,
                                    u32* __restrict__ pv) {
  const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= total) return;
  const u32 k = keys[p];
  if (k == sentinel) return;
  pv[(size_t)foff[k] * M + (p - start[k])] = vals[p];
}

}  // namespace cuda
}  // namespace kiln
