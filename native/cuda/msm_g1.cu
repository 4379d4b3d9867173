// G1 instantiation of the MSM driver, batched addition and the bench's random points.
#include "msm_impl.cuh"

namespace kiln {
namespace cuda {

void msm_g1(Ctx& c, Bases* b, const void* d_scalars, const uint32_t* d_sidx, void* out, MsmTimes& t) {
  msm_impl<DFq>(c, b, d_scalars, d_sidx, out, t, 1);
}

void batch_add_g1(Ctx& c, Bases* b, const uint32_t* d_idx, size_t n, void* out) {
  Xyzz<DFq>* d = dalloc<Xyzz<DFq>>(c, 1);
  KC_CHECK(cudaMemsetAsync(d, 0, sizeof(Xyzz<DFq>), c.stream));
  if (n) sum_points<DFq>(c, static_cast<const Affine<DFq>*>(b->d), d_idx, n, d);
  Xyzz<DFq> h;
  KC_CHECK(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, c.stream));
  dfree(c, d);
  KC_CHECK(cudaStreamSynchronize(c.stream));
  finish_msm(1, nullptr, 0, 0, &h, out);
}

void random_points_g1(Ctx& c, const void* gen, void* d_out, size_t n, uint64_t seed) {
  Affine<DFq>* g = dalloc<Affine<DFq>>(c, 1);
  KC_CHECK(cudaMemcpyAsync(g, gen, sizeof(Affine<DFq>), cudaMemcpyHostToDevice, c.stream));
  k_random_points<DFq><<<blocks_for(n, 128), 128, 0, c.stream>>>(g, static_cast<Affine<DFq>*>(d_out), n, seed);
  KC_LAUNCHED();
  dfree(c, g);
  KC_CHECK(cudaStreamSynchronize(c.stream));
}

}  // namespace cuda
}  // namespace kiln
