// Batch normalisation XYZZ → affine on the device (Montgomery's trick per thread), shared by the
// INSECURE setup's fixed-base tables (setup.cu) and the MSM's precomputed bases (msm_impl.cuh).
#pragma once
#include "../src/ec/xyzz.hpp"
#include "field.cuh"

namespace kiln {
namespace cuda {

constexpr unsigned kRun = 32;  // points per inversion when normalising

// Affine points of in[0 … k): thread t normalises points t, t + S, t + 2S, … (S threads in all,
// ≤ kRun points each, consecutive threads on consecutive points) with one inversion; pre[] holds the
// prefix products of the non-identity ZZZ.
template <class F>
__global__ void k_normalize(const Xyzz<F>* __restrict__ in, u64 k, u64 S, Affine<F>* __restrict__ out,
                            F* __restrict__ pre) {
  const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= S || t >= k) return;
  F acc = F::one();
  u64 last = t;
  for (u64 i = t; i < k; i += S) {
    if (!in[i].is_identity()) acc *= in[i].ZZZ;
    pre[i] = acc;
    last = i;
  }
  F inv = acc.inverse();
  for (u64 i = last + S;;) {
    i -= S;
    const Xyzz<F> p = in[i];
    if (p.is_identity()) {
      out[i] = Affine<F>::identity();
    } else {
      const F izzz = i >= t + S ? inv * pre[i - S] : inv;
      inv *= p.ZZZ;
      out[i] = p.to_affine_with(izzz);
    }
    if (i == t) break;
  }
}

}  // namespace cuda
}  // namespace kiln
