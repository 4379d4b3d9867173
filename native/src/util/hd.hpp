// Host/device qualifiers shared by every arithmetic header.
// Under nvcc (__CUDACC__) the arithmetic compiles for both host and device; the host-only
// addon builds it with plain g++. No STL is used inside the arithmetic headers.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define KILN_HD __host__ __device__
#define KILN_INLINE __forceinline__
#else
#define KILN_HD
#define KILN_INLINE inline __attribute__((always_inline))
#endif

#if defined(__x86_64__) && !defined(__CUDA_ARCH__)
#include <immintrin.h>
#define KILN_X86 1
#endif

namespace kiln {
using u64 = uint64_t;
using u32 = uint32_t;
using u128 = unsigned __int128;

// a + b + carry_in; carry_out in {0,1}.
KILN_HD KILN_INLINE u64 adc(u64 a, u64 b, u64 carry_in, u64& carry_out) {
#ifdef KILN_X86
  unsigned long long r;
  carry_out = _addcarry_u64((unsigned char)carry_in, a, b, &r);
  return r;
#else
  u128 s = (u128)a + b + carry_in;
  carry_out = (u64)(s >> 64);
  return (u64)s;
#endif
}

// a - b - borrow_in; borrow_out in {0,1}.
KILN_HD KILN_INLINE u64 sbb(u64 a, u64 b, u64 borrow_in, u64& borrow_out) {
#ifdef KILN_X86
  unsigned long long r;
  borrow_out = _subborrow_u64((unsigned char)borrow_in, a, b, &r);
  return r;
#else
  u128 d = (u128)a - b - borrow_in;
  borrow_out = (u64)(d >> 64) & 1;
  return (u64)d;
#endif
}
}  // namespace kiln
