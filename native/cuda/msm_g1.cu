// G1 instantiation of the MSM driver, batched addition and the bench's random points.
#include "msm_impl.cuh"

namespace kiln {
namespace cuda {

void msm_g1(Ctx& c, Bases* b, const void* d_scalars, const uint32_t* d_sidx, void* out, MsmTimes& t) {
  msm_impl<DFq>(c, b, d_scalars, d_sidx, out, t, 1);
}

void precompute_g1(Ctx& c, Bases* b, unsigned copies, unsigned cbits) {
  precompute_bases<DFq>(c, b, copies, cbits);
}

std::unique_ptr<MsmRunner> msm_runner_g1(Ctx& c, size_t n, const void* d_scalars, const uint32_t* d_sidx,
                                         const MsmShape& s, MsmTimes& t) {
  return std::make_unique<MsmRunnerT<DFq>>(c, n, d_scalars, d_sidx, s, t, 1);
}

size_t msm_count_others(Ctx& c, const void* d_scalars, const uint32_t* d_sidx, size_t n) {
  if (n == 0) return 0;
  auto* d = dalloc<unsigned long long>(c, 1);
  KC_CHECK(cudaMemsetAsync(d, 0, sizeof(unsigned long long), c.stream));
  const unsigned blocks = std::max(1u, std::min<unsigned>(blocks_for(n, 256), (unsigned)c.sms * 8));
  k_count_others<<<blocks, 256, 0, c.stream>>>(static_cast<const DFr*>(d_scalars), d_sidx, n, d);
  KC_LAUNCHED();
  unsigned long long h = 0;
  KC_CHECK(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, c.stream));
  dfree(c, d);
  KC_CHECK(cudaStreamSynchronize(c.stream));
  return (size_t)h;
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
