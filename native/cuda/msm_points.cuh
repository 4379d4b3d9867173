// What the MSM kernels and the batch-affine levels share, with no CUB: the signed base index and the
// vector loads of points. Host-compilable (with ptx_host.hpp), so tools/msm-affine-host-check.cpp runs
// the batch-affine levels (msm_affine.cuh) without a GPU.
#pragma once
#include "../src/ec/xyzz.hpp"
#include "field.cuh"

namespace kiln {
namespace cuda {

constexpr u32 kSignBit = 0x80000000u;  // a sorted value's sign: the base negated

// Affine point loaded with 16-byte vector loads (both layouts are multiples of 16 bytes).
template <class F>
__device__ __forceinline__ Affine<F> load_affine(const Affine<F>* p) {
  Affine<F> r;
  const uint4* s = reinterpret_cast<const uint4*>(p);
  uint4* d = reinterpret_cast<uint4*>(&r);
#pragma unroll
  for (int i = 0; i < (int)(sizeof(Affine<F>) / 16); i++) d[i] = __ldg(s + i);
  return r;
}

// The x of an affine point (its first half), by 16-byte loads.
template <class F>
__device__ __forceinline__ F load_x(const Affine<F>* p) {
  F r;
  const uint4* s = reinterpret_cast<const uint4*>(p);
  uint4* d = reinterpret_cast<uint4*>(&r);
#pragma unroll
  for (int i = 0; i < (int)(sizeof(F) / 16); i++) d[i] = __ldg(s + i);
  return r;
}

}  // namespace cuda
}  // namespace kiln
