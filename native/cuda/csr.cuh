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

static __global__ void k_csr_matvec(const u32* __restrict__ rowPtr, u32 rows, const u32* __restrict__ colIdx,
                             const u32* __restrict__ coeffIdx, const DFr* __restrict__ coeffs,
                             const DFr* __restrict__ w, DFr* __restrict__ out) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  DFr acc = DFr::zero();
  for (u32 k = rowPtr[i]; k < rowPtr[i + 1]; k++) acc += coeffs[coeffIdx[k]] * w[colIdx[k]];
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
  for (u32 k = rp[i] - base; k < rp[i + 1] - base; k++) acc += coeffs[ki[k]] * w[ci[k]];
  out[i] = acc;
}

}  // namespace cuda
}  // namespace kiln
