// Deterministic pseudo-random data generated on the device (benches).
#pragma once
#include "field.cuh"

namespace kiln {
namespace cuda {

__device__ __forceinline__ u64 mix64(u64 x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Random 254-bit values (read as Montgomery scalars: any bit pattern is a valid input).
static __global__ void k_random_scalars(DFr* out, size_t n, u64 seed) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  DFr s;
  u64 x = seed ^ (i * 0x9e3779b97f4a7c15ULL);
#pragma unroll
  for (int k = 0; k < 4; k++) {
    x = mix64(x + k);
    s.w[2 * k] = (u32)x;
    s.w[2 * k + 1] = (u32)(x >> 32);
  }
  s.w[7] &= 0x3fffffff;
  out[i] = s;
}

}  // namespace cuda
}  // namespace kiln
