// The device field code (field.cuh) compiled by a host compiler, for tests without a GPU: CUDA's
// qualifiers as no-ops and the PTX carry-chain primitives emulated with a carry flag per thread, with
// the semantics of the PTX ISA (add.cc / addc: CC.CF is the carry; sub.cc / subc: CC.CF is the
// borrow; mad.lo/hi.cc: the low / high half of the 64-bit product plus c, carry out to CC.CF).
// test/cuda-field-host.test.ts compiles native/cuda/tools/field-host-check.cpp with it and compares
// the device arithmetic with the CPU addon's (native/src/ff) on random and edge inputs. Never included
// under nvcc.
#pragma once
#if defined(__CUDACC__)
#error "ptx_host.hpp is the host emulation of the device primitives; nvcc compiles the real ones"
#endif
#include <cstdint>

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __constant__
#define __align__(n) alignas(n)

// The launch coordinates and the vector loads the MSM's kernels use, for host runs of a kernel body one
// thread at a time (tools/msm-affine-host-check.cpp sets blockIdx.x and keeps blockDim.x = 1).
struct HostDim3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local HostDim3 blockIdx, threadIdx, blockDim{1, 1, 1}, gridDim{1, 1, 1};
struct uint4 {
  uint32_t x, y, z, w;
};
template <class T>
inline T __ldg(const T* p) {
  return *p;
}

namespace kiln {
namespace cuda {
namespace ptx_host {
inline thread_local uint32_t cf = 0;  // CC.CF
inline uint32_t set(uint64_t s) {
  cf = (uint32_t)(s >> 32) & 1;
  return (uint32_t)s;
}
inline uint32_t lo(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
inline uint32_t hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
}  // namespace ptx_host

inline uint32_t __umulhi(uint32_t a, uint32_t b) { return ptx_host::hi(a, b); }
inline int __clz(uint32_t x) { return x ? __builtin_clz(x) : 32; }

inline uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return ptx_host::set((uint64_t)ptx_host::lo(a, b) + c); }
inline uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
  return ptx_host::set((uint64_t)ptx_host::lo(a, b) + c + ptx_host::cf);
}
inline uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return ptx_host::set((uint64_t)ptx_host::hi(a, b) + c); }
inline uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
  return ptx_host::set((uint64_t)ptx_host::hi(a, b) + c + ptx_host::cf);
}
inline uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { return ptx_host::hi(a, b) + c + ptx_host::cf; }
inline uint32_t add_cc(uint32_t a, uint32_t b) { return ptx_host::set((uint64_t)a + b); }
inline uint32_t addc_cc(uint32_t a, uint32_t b) { return ptx_host::set((uint64_t)a + b + ptx_host::cf); }
inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + ptx_host::cf; }
inline uint32_t sub_cc(uint32_t a, uint32_t b) {
  const uint64_t d = (uint64_t)a - b;
  ptx_host::cf = (uint32_t)(d >> 63);
  return (uint32_t)d;
}
inline uint32_t subc_cc(uint32_t a, uint32_t b) {
  const uint64_t d = (uint64_t)a - b - ptx_host::cf;
  ptx_host::cf = (uint32_t)(d >> 63);
  return (uint32_t)d;
}
inline uint32_t borrow_mask() { return 0u - ptx_host::cf; }
inline uint32_t addc0(uint32_t a) { return a + ptx_host::cf; }

}  // namespace cuda
}  // namespace kiln
