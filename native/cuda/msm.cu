// MSM entry points that move the inputs: resident bases (the SRS), scalars uploaded per call, and
// the window model and diagnostics knobs. The drivers are msm_impl.cuh (msm_g1.cu, msm_g2.cu).
#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "ctx.cuh"
#include "field.cuh"

namespace kiln {
namespace cuda {

// Window width: minimises W·(m + 25K): a mixed addition per point per window, and a per-bucket cost
// (chunk sums, two running-sum additions, the segment's share of lo·T, bucket memory) fitted on the
// H200 sweeps of 2026-11-30 (G1 2^24: c = 15/16/17/18/20 → 378/353/369/402/497 ms; G1 2^22: c =
// 14/15/16/17 → 109/107/108/132 ms). Picks 14 at 2^20, 16 at 2^22 and 2^24, 19 at 2^26. c ≤ 20.
unsigned pick_window(size_t m) {
  unsigned best = 4;
  double best_cost = 1e300;
  for (unsigned c = 4; c <= 20; c++) {
    const double W = (256 + c - 1) / c, K = double(1u << (c - 1));
    const double cost = W * ((double)m + 25.0 * K);
    if (cost < best_cost) best_cost = cost, best = c;
  }
  return best;
}

int acc_variant() {
  const char* e = std::getenv("KILN_MSM_ACC");
  return e && *e ? std::atoi(e) : 1;
}

void set_msm_window(unsigned c) { g_msm_window.store(c); }
void set_msm_threads(unsigned t) { g_msm_threads.store(t); }

Bases* bases_upload(int dev, int curve, const void* host, size_t n) {
  Guard g(dev);
  auto* b = new Bases{dev, curve, n, nullptr};
  try {
    KC_CHECK(cudaMalloc(&b->d, std::max<size_t>(n * point_bytes(curve), 16)));
    if (n) KC_CHECK(cudaMemcpyAsync(b->d, host, n * point_bytes(curve), cudaMemcpyHostToDevice, g.c.stream));
    KC_CHECK(cudaStreamSynchronize(g.c.stream));
  } catch (...) {
    if (b->d) cudaFree(b->d);
    delete b;
    throw;
  }
  return b;
}
void bases_free(Bases* b) {
  if (!b) return;
  {
    Guard g(b->dev);
    cudaFree(b->d);
  }
  delete b;
}
size_t bases_count(const Bases* b) { return b->n; }
size_t bases_bytes(const Bases* b) { return b->n * point_bytes(b->curve); }

void msm(Bases* b, const void* scalars, size_t nscalars, const uint32_t* sidx, void* out, MsmTimes& t) {
  Guard g(b->dev);
  Ctx& c = g.c;
  void* d_sc = dalloc<DFr>(c, nscalars);
  uint32_t* d_sidx = nullptr;
  if (nscalars) KC_CHECK(cudaMemcpyAsync(d_sc, scalars, nscalars * 32, cudaMemcpyHostToDevice, c.stream));
  if (sidx) {
    d_sidx = dalloc<uint32_t>(c, b->n);
    KC_CHECK(cudaMemcpyAsync(d_sidx, sidx, b->n * 4, cudaMemcpyHostToDevice, c.stream));
  }
  try {
    if (b->curve == 1) msm_g1(c, b, d_sc, d_sidx, out, t);
    else msm_g2(c, b, d_sc, d_sidx, out, t);
  } catch (...) {
    dfree(c, d_sc);
    dfree(c, d_sidx);
    throw;
  }
  dfree(c, d_sc);
  dfree(c, d_sidx);
}

void batch_add(Bases* b, const uint32_t* idx, size_t n, void* out, float& ms) {
  Guard g(b->dev);
  Ctx& c = g.c;
  const auto t0 = std::chrono::steady_clock::now();
  uint32_t* d_idx = dalloc<uint32_t>(c, n);
  if (n) KC_CHECK(cudaMemcpyAsync(d_idx, idx, n * 4, cudaMemcpyHostToDevice, c.stream));
  batch_add_g1(c, b, d_idx, n, out);
  dfree(c, d_idx);
  ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace cuda
}  // namespace kiln
