// G2 instantiation of the MSM driver and the bench's random points.
#include "msm_impl.cuh"

namespace kiln {
namespace cuda {

void msm_g2(Ctx& c, Bases* b, const void* d_scalars, const uint32_t* d_sidx, void* out, MsmTimes& t) {
  msm_impl<DFq2>(c, b, d_scalars, d_sidx, out, t, 2);
}

void precompute_g2(Ctx& c, Bases* b, unsigned copies, unsigned cbits) {
  precompute_bases<DFq2>(c, b, copies, cbits);
}

std::unique_ptr<MsmRunner> msm_runner_g2(Ctx& c, size_t n, const void* d_scalars, const uint32_t* d_sidx,
                                         const MsmShape& s, MsmTimes& t) {
  return std::make_unique<MsmRunnerT<DFq2>>(c, n, d_scalars, d_sidx, s, t, 2);
}

void random_points_g2(Ctx& c, const void* gen, void* d_out, size_t n, uint64_t seed) {
  Affine<DFq2>* g = dalloc<Affine<DFq2>>(c, 1);
  KC_CHECK(cudaMemcpyAsync(g, gen, sizeof(Affine<DFq2>), cudaMemcpyHostToDevice, c.stream));
  k_random_points<DFq2><<<blocks_for(n, 128), 128, 0, c.stream>>>(g, static_cast<Affine<DFq2>*>(d_out), n, seed);
  KC_LAUNCHED();
  dfree(c, g);
  KC_CHECK(cudaStreamSynchronize(c.stream));
}

}  // namespace cuda
}  // namespace kiln
