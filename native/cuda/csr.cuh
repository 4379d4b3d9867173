// CSR matrix-vector kernels over Fr (csr.cu, partition.cu): the device-side index checks and one
// thread per row. Same conventions as the CPU (native/src/sparse/csr.hpp).
#pragma once
#include "field.cuh"

namespace kiln {
namespace cuda {

// CSR checks: err[0] |= 1 for a bad rowPtr, 2 for a column out of range, 4 for a coefficient index.
static __global__ void k_csr_check(const u32* __restrict__ rowPtr, u32 rows, const u32* __restrict__ colIdx,
                            const u32* __restrict__ coeffIdx, u64 nnz, u32 cols, u32 ncoeffs, u32* err) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows && rowPtr[i] > rowPtr[i + 1]) atomicOr(err, 1u);
  if (i < nnz) {
    if (colIdx[i] >= cols) atomicOr(err, 2u);
    if (coeffIdx[i] >= ncoeffs) atomicOr(err, 4u);
  }
}

// KILN_CUDA_CSR_VEC=1 (build define, an experiment; default 0): the coefficient and the witness element of
// each term read as two 16-byte loads through the read-only path, where the compiler emits eight 4-byte loads
// (the PTX of k_csr_matvec: 16 ld.global.nc.u32 a term). A random gather of w then asks the L1 for its 32-byte
// sector twice instead of eight times. The 32 GiB PoRep partition's three mat-vecs take 149 ms of its 1.59 s on
// an H100 (2026-12-08), against ~30 ms that their traffic and multiplications would explain. Not yet run on a
// GPU: build it with KILN_CUDA_DEFINES="-DKILN_CUDA_CSR_VEC=1" beside the default and compare with
// KILN_CUDA_ADDON (bench:gpu --partition; test:gpu's partition checks against the CPU).
#ifndef KILN_CUDA_CSR_VEC
#define KILN_CUDA_CSR_VEC 0
#endif
#if KILN_CUDA_CSR_VEC
__device__ __forceinline__ DFr csr_load(const DFr* __restrict__ p) {
  DFr r;
  const uint4* s = reinterpret_cast<const uint4*>(p);
  uint4* d = reinterpret_cast<uint4*>(&r);
  d[0] = __ldg(s);
  d[1] = __ldg(s + 1);
  return r;
}
#else
// (a reference: the multiplication reads the operands' limbs from global memory as before)
__device__ __forceinline__ const DFr& csr_load(const DFr* __restrict__ p) { return *p; }
#endif

static __global__ void k_csr_matvec(const u32* __restrict__ rowPtr, u32 rows, const u32* __restrict__ colIdx,
                             const u32* __restrict__ coeffIdx, const DFr* __restrict__ coeffs,
                             const DFr* __restrict__ w, DFr* __restrict__ out) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  DFr acc = DFr::zero();
  for (u32 k = rowPtr[i]; k < rowPtr[i + 1]; k++) acc += csr_load(coeffs + coeffIdx[k]) * csr_load(w + colIdx[k]);
  out[i] = acc;
}

// Rows of a streamed matrix (partition.cu): rp holds rowPtr[r0 … r0 + rows] (absolute term offsets),
// ci/ki the terms from rowPtr[r0] on; out is the rows' slice of the output.
static __global__ void k_csr_matvec_rows(const u32* __restrict__ rp, u32 rows, const u32* __restrict__ ci,
                                         const u32* __restrict__ ki, const DFr* __restrict__ coeffs,
                                         const DFr* __restrict__ w, DFr* __restrict__ out) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  const u32 base = rp[0];
  DFr acc = DFr::zero();
  for (u32 k = rp[i] - base; k < rp[i + 1] - base; k++) acc += csr_load(coeffs + ki[k]) * csr_load(w + ci[k]);
  out[i] = acc;
}

}  // namespace cuda
}  // namespace kiln
