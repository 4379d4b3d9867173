// Benches on data generated on the device: MSM over random bases [k_i]·gen and random scalars,
// and the bare NTT. The whole-partition bench is in partition.cu.
#include <algorithm>
#include <chrono>
#include <vector>

#include "ctx.cuh"
#include "ntt_ops.cuh"
#include "random.cuh"

namespace kiln {
namespace cuda {

static void finish_stats(BenchResult& r, std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  r.min_ms = v.front();
  r.median_ms = v[v.size() / 2];
}

BenchResult bench_msm(int dev, int curve, unsigned log_n, const void* gen, int iters, unsigned pre_copies,
                      unsigned pre_c) {
  const size_t n = size_t(1) << log_n;
  Bases* b = nullptr;
  {
    Guard g(dev);
    b = new Bases{dev, curve, n, nullptr};
    KC_CHECK(cudaMalloc(&b->d, n * point_bytes(curve)));
    if (curve == 1) random_points_g1(g.c, gen, b->d, n, 0x1234 + log_n);
    else random_points_g2(g.c, gen, b->d, n, 0x5678 + log_n);
  }
  BenchResult r;
  r.point.resize(point_bytes(curve));
  try {
    if (pre_copies > 1) r.pre = bases_precompute(b, pre_copies, pre_c ? pre_c : pre_window(n, pre_copies));
    Guard g(dev);
    Ctx& c = g.c;
    DFr* sc = dalloc<DFr>(c, n);
    k_random_scalars<<<blocks_for(n, 256), 256, 0, c.stream>>>(sc, n, 0x9abc + log_n);
    KC_LAUNCHED();
    std::vector<double> times;
    for (int it = -1; it < iters; it++) {  // one warm-up
      KC_CHECK(cudaStreamSynchronize(c.stream));
      const auto t0 = std::chrono::steady_clock::now();
      MsmTimes t;
      if (curve == 1) msm_g1(c, b, sc, nullptr, r.point.data(), t);
      else msm_g2(c, b, sc, nullptr, r.point.data(), t);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (it >= 0) times.push_back(ms);
      r.last = t;
    }
    dfree(c, sc);
    finish_stats(r, times);
  } catch (...) {
    bases_free(b);
    throw;
  }
  bases_free(b);
  return r;
}

BenchResult bench_ntt(int dev, unsigned log_n, int iters) {
  Guard g(dev);
  Ctx& c = g.c;
  const size_t n = size_t(1) << log_n;
  DFr* a = dalloc<DFr>(c, n);
  DFr* s = dalloc<DFr>(c, n);
  k_random_scalars<<<blocks_for(n, 256), 256, 0, c.stream>>>(a, n, 0x4242 + log_n);
  KC_LAUNCHED();
  ensure_twiddles(c, log_n);
  Events ev(2);
  std::vector<double> times;
  BenchResult r;
  for (int it = -1; it < iters; it++) {
    KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
    DFr* res = ntt_raw(c, a, s, log_n, false);
    KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
    KC_CHECK(cudaEventSynchronize(ev.e[1]));
    const float ms = ev.ms(0, 1);
    if (it >= 0) times.push_back(ms);
    if (res != a) std::swap(a, s);
  }
  finish_stats(r, times);
  dfree(c, a);
  dfree(c, s);
  KC_CHECK(cudaStreamSynchronize(c.stream));
  return r;
}

// The quotient on device buffers (quotient_dev: 3 × (iNTT, coset NTT), the pointwise step, the coset iNTT)
// over random values, CUDA events: with the inverse transforms' scalings fused or in passes (set_ntt_fused).
BenchResult bench_quotient(int dev, unsigned log_n, int iters) {
  Guard g(dev);
  Ctx& c = g.c;
  const size_t n = size_t(1) << log_n;
  DFr* buf[4];
  for (int i = 0; i < 4; i++) {
    buf[i] = dalloc<DFr>(c, n);
    k_random_scalars<<<blocks_for(n, 256), 256, 0, c.stream>>>(buf[i], n, 0x5151 + i);
    KC_LAUNCHED();
  }
  Events ev(2);
  std::vector<double> times;
  BenchResult r;
  for (int it = -1; it < iters; it++) {
    KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
    DFr* rest[3];
    DFr* h = quotient_dev(c, buf[0], buf[1], buf[2], buf[3], log_n, rest);
    KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
    KC_CHECK(cudaEventSynchronize(ev.e[1]));
    if (it >= 0) times.push_back(ev.ms(0, 1));
    buf[0] = h;
    buf[1] = rest[1];
    buf[2] = rest[2];
    buf[3] = rest[0];
  }
  finish_stats(r, times);
  for (DFr* p : buf) dfree(c, p);
  KC_CHECK(cudaStreamSynchronize(c.stream));
  return r;
}

}  // namespace cuda
}  // namespace kiln
