// CSR matrix-vector product on the device (host buffers in and out; indices checked on the device
// before anything is written).
#include <algorithm>
#include <chrono>

#include "csr.cuh"
#include "ctx.cuh"

namespace kiln {
namespace cuda {

unsigned csr_mat_vec(int dev, uint32_t rows, uint32_t cols, const uint32_t* rowPtr, const uint32_t* colIdx,
                     const uint32_t* coeffIdx, size_t nnz, const void* coeffs, size_t ncoeffs, const void* w,
                     void* out, float& ms) {
  if (rowPtr[0] != 0) return 1;
  if (rowPtr[rows] > nnz) return 8;
  Guard g(dev);
  Ctx& c = g.c;
  const auto t0 = std::chrono::steady_clock::now();
  uint32_t *d_rp = dalloc<uint32_t>(c, rows + 1), *d_ci = dalloc<uint32_t>(c, nnz), *d_ki = dalloc<uint32_t>(c, nnz);
  DFr *d_co = dalloc<DFr>(c, ncoeffs), *d_w = dalloc<DFr>(c, cols), *d_out = dalloc<DFr>(c, rows);
  uint32_t* d_err = dalloc<uint32_t>(c, 1);
  KC_CHECK(cudaMemcpyAsync(d_rp, rowPtr, (rows + 1) * 4ull, cudaMemcpyHostToDevice, c.stream));
  if (nnz) {
    KC_CHECK(cudaMemcpyAsync(d_ci, colIdx, nnz * 4, cudaMemcpyHostToDevice, c.stream));
    KC_CHECK(cudaMemcpyAsync(d_ki, coeffIdx, nnz * 4, cudaMemcpyHostToDevice, c.stream));
  }
  if (ncoeffs) KC_CHECK(cudaMemcpyAsync(d_co, coeffs, ncoeffs * 32, cudaMemcpyHostToDevice, c.stream));
  if (cols) KC_CHECK(cudaMemcpyAsync(d_w, w, (size_t)cols * 32, cudaMemcpyHostToDevice, c.stream));
  KC_CHECK(cudaMemsetAsync(d_err, 0, 4, c.stream));
  const size_t m = std::max<size_t>(rows, nnz);
  if (m) {
    k_csr_check<<<blocks_for(m, 256), 256, 0, c.stream>>>(d_rp, rows, d_ci, d_ki, rowPtr[rows], cols, (uint32_t)ncoeffs, d_err);
    KC_LAUNCHED();
  }
  uint32_t err = 0;
  KC_CHECK(cudaMemcpyAsync(&err, d_err, 4, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaStreamSynchronize(c.stream));
  if (!err && rows) {
    k_csr_matvec<<<blocks_for(rows, 128), 128, 0, c.stream>>>(d_rp, rows, d_ci, d_ki, d_co, d_w, d_out);
    KC_LAUNCHED();
    KC_CHECK(cudaMemcpyAsync(out, d_out, (size_t)rows * 32, cudaMemcpyDeviceToHost, c.stream));
    KC_CHECK(cudaStreamSynchronize(c.stream));
  }
  for (void* p : {(void*)d_rp, (void*)d_ci, (void*)d_ki, (void*)d_co, (void*)d_w, (void*)d_out, (void*)d_err}) dfree(c, p);
  KC_CHECK(cudaStreamSynchronize(c.stream));
  ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return err;
}

}  // namespace cuda
}  // namespace kiln
