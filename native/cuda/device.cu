// Device management: the GPU probe, the runtime/driver versions and the per-device contexts
// (ctx.cuh: stream, lock, twiddle table; the stream-ordered pool keeps freed scratch).
#include <map>
#include <memory>
#include <vector>

#include "ctx.cuh"

namespace kiln {
namespace cuda {

int probe(std::vector<GpuInfo>& out, std::string& why) {
  out.clear();
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    // cudaErrorInsufficientDriver (35) / cudaErrorNoDevice (100) on machines without a GPU.
    why = std::string("no GPU: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    cudaGetLastError();
    return 0;
  }
  for (int i = 0; i < n; i++) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    out.push_back({i, p.name, p.totalGlobalMem, p.major, p.minor, p.multiProcessorCount});
  }
  if (out.empty()) why = "no GPU: no CUDA device found";
  return (int)out.size();
}

std::string runtime_version() {
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  return "runtime " + std::to_string(rt) + ", driver " + std::to_string(drv);
}

Ctx& ctx(int dev) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<Ctx>> all;
  std::lock_guard<std::mutex> lock(mu);
  auto& p = all[dev];
  if (!p) {
    int n = 0;
    KC_CHECK(cudaGetDeviceCount(&n));
    if (dev < 0 || dev >= n) throw Error("device index " + std::to_string(dev) + " out of range (" + std::to_string(n) + " GPUs)");
    auto c = std::make_unique<Ctx>();
    c->dev = dev;
    KC_CHECK(cudaSetDevice(dev));
    KC_CHECK(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, dev));
    KC_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    // Keep freed scratch in the pool between calls (no re-allocation per proof).
    cudaMemPool_t pool;
    KC_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    uint64_t thr = UINT64_MAX;
    KC_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr));
    p = std::move(c);
  }
  return *p;
}

}  // namespace cuda
}  // namespace kiln
