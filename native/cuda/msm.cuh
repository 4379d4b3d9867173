// MSM kernels, templated on the coordinate field (DFq → G1, DFq2 → G2). The curve formulas are the
// CPU addon's (native/src/ec/xyzz.hpp, KILN_HD), instantiated with the device fields.
//
// Pipeline (driver in msm_impl.cuh, entry points in msm.cu):
//   classify     scalars → canonical; 0 (or identity base) dropped, 1 → list `ones`, others → (base
//                index, canonical scalar) compacted with warp-aggregated atomics
//   sum_points   the ones: strided XYZZ mixed additions per thread, then tree reduction
//   digits       signed c-bit digits per (window, point), the CPU's stateless formula:
//                d = v + b_low − 2^c·b_top, |d| ≤ 2^(c−1); key = window·K + |d| − 1, value = base
//                index | sign << 31; zero digits get a sentinel key that sorts last
//   sort         cub::DeviceRadixSort over the key bits only (bucket planning by sorting)
//   bounds       start/end of every bucket's run in the sorted array
//   accumulate   runs split into chunks of at most kChunk points (a scan of chunk counts), one thread
//                per chunk, XYZZ accumulation (madd-2008-s); long runs (equal scalars) are spread
//                over many threads instead of serialising one
//   bucket_sum   chunks of a bucket summed and added to the bucket kept across the chunks of a run
//   window_sum   per window, segments of G buckets: Σ (j − lo + 1)·B_j by running sums, plus
//                lo·(Σ B_j); then a tree reduction of the segments
// The windows are combined by Horner on the host (native/cuda/host.cpp, CPU arithmetic).
#pragma once
#include <cub/cub.cuh>

#include "../src/ec/xyzz.hpp"
#include "field.cuh"
#include "msm_points.cuh"
#include "random.cuh"

namespace kiln {
namespace cuda {

__device__ __forceinline__ u32 lane_id() { return threadIdx.x & 31; }

// ---- classification --------------------------------------------------------------------------
// cnt[0] = ones, cnt[1] = others. Bases that are the identity count as zero scalars.
template <class F>
__global__ void k_classify(const Affine<F>* __restrict__ bases, size_t n, const DFr* __restrict__ scalars,
                           const u32* __restrict__ sidx, u32* __restrict__ ones, u32* __restrict__ oth_idx,
                           DFr* __restrict__ oth_sc, u32* __restrict__ cnt) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t base = (size_t)blockIdx.x * blockDim.x; base < n; base += stride) {
    const size_t i = base + threadIdx.x;
    int cls = 0;
    DFr s;
    if (i < n) {
      const DFr m = scalars[sidx ? sidx[i] : i];
      s = m.from_mont();
      bool zero = s.is_zero();
      if (!zero) {
        const F& x = bases[i].x;
        const F& y = bases[i].y;
        zero = x.is_zero() && y.is_zero();
      }
      if (!zero) {
        bool one = s.w[0] == 1;
#pragma unroll
        for (int k = 1; k < 8; k++) one &= s.w[k] == 0;
        cls = one ? 1 : 2;
      }
    }
    const u32 lt = (1u << lane_id()) - 1;
#pragma unroll
    for (int c = 1; c <= 2; c++) {
      const u32 mask = __ballot_sync(0xffffffffu, cls == c);
      if (mask == 0) continue;
      const int leader = __ffs(mask) - 1;
      u32 pos = 0;
      if ((int)lane_id() == leader) pos = atomicAdd(&cnt[c - 1], __popc(mask));
      pos = __shfl_sync(0xffffffffu, pos, leader) + __popc(mask & lt);
      if (cls == c) {
        if (c == 1) {
          ones[pos] = (u32)i;
        } else {
          oth_idx[pos] = (u32)i;
          oth_sc[pos] = s;
        }
      }
    }
  }
}

// ---- batched sums ------------------------------------------------------------------------------
// out[t] = Σ bases[idx[k]] for k ≡ t (mod T), T = gridDim·blockDim. idx == nullptr: idx[k] = k.
template <class F>
__global__ void k_sum_points(const Affine<F>* __restrict__ bases, const u32* __restrict__ idx, size_t n,
                             Xyzz<F>* __restrict__ out) {
  const size_t T = (size_t)gridDim.x * blockDim.x;
  const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  Xyzz<F> acc = Xyzz<F>::identity();
  for (size_t k = t; k < n; k += T) acc = acc.add_affine(load_affine(bases + (idx ? idx[k] : k)));
  out[t] = acc;
}

// out[g·S' + t] = Σ in[g·S + t·fan + k], k < fan, S' = ceil(S / fan).
template <class F>
__global__ void k_reduce_groups(const Xyzz<F>* __restrict__ in, u32 groups, u32 S, u32 fan, Xyzz<F>* __restrict__ out) {
  const u32 S2 = (S + fan - 1) / fan;
  const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (size_t)groups * S2) return;
  const u32 g = (u32)(t / S2), q = (u32)(t % S2);
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 k = q * fan; k < S && k < (q + 1) * fan; k++) acc = acc.add(in[(size_t)g * S + k]);
  out[t] = acc;
}

// ---- Pippenger -----------------------------------------------------------------------------------
// scalar_bits (field.cuh): a c-bit window of a canonical scalar.

// Windows w0 … w0 + W − 1 (a group of the run's windows: the sort then needs memory for W windows
// only); keys relative to the group (window w0 ↔ buckets 0 … K − 1).
// Signed c-bit digit g of a canonical scalar: d = v + b_low − 2^c·b_top, |d| ≤ 2^(c−1) (the CPU's formula).
__device__ __forceinline__ int signed_digit(const DFr& s, u32 g, u32 c) {
  const u32 st = g * c;
  const u32 v = scalar_bits(s.w, st, c);
  const u32 b = st ? (s.w[(st - 1) >> 5] >> ((st - 1) & 31)) & 1 : 0;
  return (int)v + (int)b - (int)(((v >> (c - 1)) & 1) << c);
}

static __global__ void k_digits(const DFr* __restrict__ sc, const u32* __restrict__ idx, size_t m, u32 c, u32 w0,
                                u32 W, u32 sentinel, u32* __restrict__ keys, u32* __restrict__ vals) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const DFr s = sc[i];
  const u32 base = idx[i];
  const u32 K = 1u << (c - 1);
  for (u32 w = 0; w < W; w++) {
    const int d = signed_digit(s, w0 + w, c);
    u32 key = sentinel, val = 0;
    if (d != 0) {
      const u32 a = d < 0 ? (u32)(-d) : (u32)d;
      key = w * K + a - 1;
      val = base | (d < 0 ? kSignBit : 0);
    }
    keys[(size_t)w * m + i] = key;
    vals[(size_t)w * m + i] = val;
  }
}

// The same digits over precomputed bases (msm_impl.cuh precompute_bases): copy j of base i is
// 2^(j·c·wc)·base_i, at index j·stride + i, and the D = ⌈256/c⌉ digits of a scalar fall into wc
// windows of buckets, digit g = j·wc + w into window w with copy j. This pass makes the keys of windows
// w0 … w0 + W − 1 of every copy: slot j·W + (w − w0) of point i (digits g ≥ D, past the scalar: the
// sentinel).
static __global__ void k_digits_pre(const DFr* __restrict__ sc, const u32* __restrict__ idx, size_t m, u32 c, u32 w0,
                                    u32 W, u32 wc, u32 copies, u32 stride, u32 sentinel, u32* __restrict__ keys,
                                    u32* __restrict__ vals) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const DFr s = sc[i];
  const u32 base = idx[i];
  const u32 K = 1u << (c - 1);
  const u32 D = (256 + c - 1) / c;
  for (u32 j = 0; j < copies; j++) {
    for (u32 w = 0; w < W; w++) {
      const u32 g = j * wc + w0 + w;
      u32 key = sentinel, val = 0;
      if (g < D) {
        const int d = signed_digit(s, g, c);
        if (d != 0) {
          const u32 a = d < 0 ? (u32)(-d) : (u32)d;
          key = w * K + a - 1;
          val = (j * stride + base) | (d < 0 ? kSignBit : 0);
        }
      }
      const size_t slot = (size_t)j * W + w;
      keys[slot * m + i] = key;
      vals[slot * m + i] = val;
    }
  }
}

// out[i] = 2^step · src[i] (XYZZ doublings; the identity stays the identity): the next copy of the
// precomputed bases before its normalisation to affine.
template <class F>
__global__ void k_pre_double(const Affine<F>* __restrict__ src, size_t k, u32 step, Xyzz<F>* __restrict__ out) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= k) return;
  const Affine<F> a = load_affine(src + i);
  Xyzz<F> x = Xyzz<F>::from_affine(a);
  for (u32 s = 0; s < step; s++) x = x.dbl();
  out[i] = x;
}

// start/end of every bucket's run in the sorted keys (both zeroed before).
static __global__ void k_bounds(const u32* __restrict__ keys, size_t total, u32 sentinel, u32* __restrict__ start,
                         u32* __restrict__ end) {
  const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= total) return;
  const u32 k = keys[p];
  if (k == sentinel) return;
  if (p == 0 || keys[p - 1] != k) start[k] = (u32)p;
  if (p + 1 == total || keys[p + 1] != k) end[k] = (u32)(p + 1);
}

static __global__ void k_chunk_counts(const u32* __restrict__ start, const u32* __restrict__ end, u32 nb, u32 L,
                               u32* __restrict__ cc) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= nb) return;
  cc[b] = (end[b] - start[b] + L - 1) / L;
}

// The bucket b of chunk j: the first b with off[b + 1] > j (off has nb + 1 entries, off[0] = 0).
__device__ __forceinline__ u32 bucket_of(const u32* __restrict__ off, u32 nb, u32 j) {
  u32 lo = 0, hi = nb;
  while (lo < hi) {
    const u32 mid = (lo + hi) >> 1;
    if (off[mid + 1] > j) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Points [p0, p1) of chunk j of bucket b: the bucket's run cut into its ⌈len/L⌉ chunks of nearly equal
// length (each ≤ L, none empty), not L, L, …, remainder: a warp waits for its longest chunk, and with
// small buckets (wide windows over precomputed bases: ~100 points a bucket) a 64 + 32 split would
// leave a third of the lanes idle.
__device__ __forceinline__ void chunk_range(const u32* __restrict__ start, const u32* __restrict__ end,
                                            const u32* __restrict__ choff, u32 b, u32 j, u32& p0, u32& p1) {
  const u32 q = j - choff[b], nch = choff[b + 1] - choff[b], len = end[b] - start[b];
  p0 = start[b] + (u32)(((u64)q * len) / nch);
  p1 = start[b] + (u32)(((u64)(q + 1) * len) / nch);
}

// choff has nb + 1 entries (choff[0] = 0, choff[b+1] = Σ_{≤b} chunks).
template <class F>
__device__ __forceinline__ void accumulate_chunk(const Affine<F>* __restrict__ bases, const u32* __restrict__ vals,
                                                 const u32* __restrict__ start, const u32* __restrict__ end,
                                                 const u32* __restrict__ choff, u32 nb, u32 L,
                                                 Xyzz<F>* __restrict__ partial) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= choff[nb]) return;
  const u32 b = bucket_of(choff, nb, j);
  u32 p0, p1;
  chunk_range(start, end, choff, b, j, p0, p1);
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 p = p0; p < p1; p++) {
    const u32 v = vals ? vals[p] : p;  // no value array: the points themselves (the batch-affine levels' last)
    Affine<F> pt = load_affine(bases + (v & ~kSignBit));
    if (v & kSignBit) pt.y = -pt.y;
    acc = acc.add_affine(pt);
  }
  partial[j] = acc;
}
template <class F>
__global__ void k_accumulate(const Affine<F>* __restrict__ bases, const u32* __restrict__ vals,
                             const u32* __restrict__ start, const u32* __restrict__ end,
                             const u32* __restrict__ choff, u32 nb, u32 L, Xyzz<F>* __restrict__ partial) {
  accumulate_chunk(bases, vals, start, end, choff, nb, L, partial);
}
// The accumulation's bucket addition, for bases that are never the identity (classify drops them):
// no identity test on the point, and the rare equal-x cases (doubling, P + (−P)) out of line so
// their code takes neither registers nor instruction cache in the loop.
template <class F>
__device__ __noinline__ Xyzz<F> madd_rare(Xyzz<F> a, Affine<F> q) {
  return a.add_affine(q);
}
template <class F>
__device__ __forceinline__ Xyzz<F> madd_hot(const Xyzz<F>& a, const Affine<F>& q) {
  if (a.ZZ.is_zero()) return {q.x, q.y, F::one(), F::one()};
  const F U2 = q.x * a.ZZ;
  const F S2 = q.y * a.ZZZ;
  const F P = U2 - a.X;
  const F R = S2 - a.Y;
  if (P.is_zero()) return madd_rare(a, q);
  const F PP = P.sqr();
  const F PPP = P * PP;
  const F Q = a.X * PP;
  Xyzz<F> r;
  r.X = R.sqr() - PPP - Q.dbl();
  r.Y = R * (Q - r.X) - a.Y * PPP;
  r.ZZ = a.ZZ * PP;
  r.ZZZ = a.ZZZ * PPP;
  return r;
}

// k_accumulate with madd_hot, the accumulator starting at the chunk's first point (a chunk is
// never empty). F may be a multiplication variant of the bases' field (same layout).
template <class F>
__global__ void k_accumulate_hot(const Affine<F>* __restrict__ bases, const u32* __restrict__ vals,
                                 const u32* __restrict__ start, const u32* __restrict__ end,
                                 const u32* __restrict__ choff, u32 nb, u32 L, Xyzz<F>* __restrict__ partial) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= choff[nb]) return;
  const u32 b = bucket_of(choff, nb, j);
  u32 p0, p1;
  chunk_range(start, end, choff, b, j, p0, p1);
  u32 v = vals[p0];
  Affine<F> q = load_affine(bases + (v & ~kSignBit));
  if (v & kSignBit) q.y = -q.y;
  Xyzz<F> acc = {q.x, q.y, F::one(), F::one()};
  for (u32 p = p0 + 1; p < p1; p++) {
    v = vals[p];
    q = load_affine(bases + (v & ~kSignBit));
    if (v & kSignBit) q.y = -q.y;
    acc = madd_hot(acc, q);
  }
  partial[j] = acc;
}

// Next level of a bucket's chunk tree: cc[b] = ceil(chunks of b / fan).
static __global__ void k_chunk_counts_off(const u32* __restrict__ off, u32 nb, u32 fan, u32* __restrict__ cc) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= nb) return;
  cc[b] = (off[b + 1] - off[b] + fan - 1) / fan;
}

// next[j] = Σ of ≤ fan consecutive partials of one bucket (off: this level, off2: the next).
template <class F>
__global__ void k_reduce_chunks(const Xyzz<F>* __restrict__ partial, const u32* __restrict__ off,
                                const u32* __restrict__ off2, u32 nb, u32 fan, Xyzz<F>* __restrict__ next) {
  const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= off2[nb]) return;
  const u32 b = bucket_of(off2, nb, j);
  const u32 p0 = off[b] + (j - off2[b]) * fan;
  const u32 p1 = min(off[b + 1], p0 + fan);
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 p = p0; p < p1; p++) acc = acc.add(partial[p]);
  next[j] = acc;
}

template <class F>
__global__ void k_bucket_sum(const Xyzz<F>* __restrict__ partial, const u32* __restrict__ choff, u32 nb,
                             Xyzz<F>* __restrict__ buckets) {
  const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= nb) return;
  const u32 k0 = choff[b], k1 = choff[b + 1];
  if (k0 == k1) return;  // no point of this pass: the kept bucket stays
  Xyzz<F> acc = buckets[b];
  for (u32 k = k0; k < k1; k++) acc = acc.add(partial[k]);
  buckets[b] = acc;
}

// *acc += *p (one point: the ones of a chunk added to the run's).
template <class F>
__global__ void k_add_into(Xyzz<F>* acc, const Xyzz<F>* p) {
  *acc = acc->add(*p);
}

// cnt += scalars that are neither 0 nor 1 among sc[idx ? idx[i] : i], i < n (Montgomery form in).
static __global__ void k_count_others(const DFr* __restrict__ sc, const u32* __restrict__ idx, size_t n,
                                      unsigned long long* cnt) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  unsigned long long mine = 0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const DFr s = sc[idx ? idx[i] : i].from_mont();
    bool small = s.w[0] <= 1;
#pragma unroll
    for (int k = 1; k < 8; k++) small &= s.w[k] == 0;
    mine += small ? 0 : 1;
  }
  for (int o = 16; o > 0; o >>= 1) mine += __shfl_down_sync(0xffffffffu, mine, o);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(cnt, mine);
}

// Segment sums: thread (w, s) covers buckets [lo, lo + G) of window w (bucket j ↔ digit j + 1).
template <class F>
__global__ void k_window_segments(const Xyzz<F>* __restrict__ buckets, u32 W, u32 K, u32 G, Xyzz<F>* __restrict__ out) {
  const u32 S = K / G;
  const u32 t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= W * S) return;
  const u32 w = t / S, s = t % S;
  const u32 lo = s * G;
  const Xyzz<F>* B = buckets + (size_t)w * K;
  Xyzz<F> run = Xyzz<F>::identity(), acc = Xyzz<F>::identity();
  for (u32 j = lo + G; j-- > lo;) {
    run = run.add(B[j]);
    acc = acc.add(run);
  }
  // acc += lo · run (double-and-add on a small integer)
  Xyzz<F> m = Xyzz<F>::identity();
  for (int bit = 31; bit >= 0; bit--) {
    m = m.dbl();
    if ((lo >> bit) & 1) m = m.add(run);
  }
  out[t] = acc.add(m);
}

// ---- bench helper: random points on the device (random.cuh has the scalars) ----------------------
// out[i] = [k_i]·g with a random 64-bit k_i (affine, one inversion each).
template <class F>
__global__ void k_random_points(const Affine<F>* g, Affine<F>* out, size_t n, u64 seed) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u64 k = mix64(seed ^ (i * 0xd1b54a32d192ed03ULL)) | 1;
  const Affine<F> base = *g;
  out[i] = scalar_mul(base, &k, 1).to_affine();
}

}  // namespace cuda
}  // namespace kiln
