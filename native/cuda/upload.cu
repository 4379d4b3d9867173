// The chunked SRS upload (upload.hpp): device vectors allocated whole, filled chunk by chunk from the
// native loader's pinned staging buffers on a stream of their own.
#include <algorithm>
#include <map>
#include <mutex>

#include "ctx.cuh"
#include "stream.cuh"
#include "upload.hpp"

namespace kiln {
namespace cuda {
namespace {

// The device's upload stream (created on first use). Copies on it overlap the compute stream: the
// SRS of one circuit can stream in while another circuit's proof runs.
cudaStream_t upload_stream(int dev) {
  static std::mutex mu;
  static std::map<int, cudaStream_t> streams;
  std::lock_guard<std::mutex> lock(mu);
  cudaStream_t& s = streams[dev];
  if (!s) {
    KC_CHECK(cudaSetDevice(dev));
    KC_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  return s;
}

}  // namespace

cudaStream_t stream_copy_stream(int dev) {
  static std::mutex mu;
  static std::map<int, cudaStream_t> streams;
  std::lock_guard<std::mutex> lock(mu);
  cudaStream_t& s = streams[dev];
  if (!s) {
    KC_CHECK(cudaSetDevice(dev));
    KC_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  return s;
}

Bases* bases_host(int dev, int curve, const std::vector<std::pair<const uint8_t*, size_t>>& pieces,
                  std::function<void()> on_free) {
  Guard g(dev);  // the device's context exists before a proof streams from these
  auto* b = new Bases{dev, curve, 0, nullptr};
  const size_t pb = point_bytes(curve);
  for (const auto& [p, bytes] : pieces) {
    if (bytes % pb) {
      delete b;
      throw Error("hostBases: a piece of " + std::to_string(bytes) + " bytes is not a whole number of points");
    }
    if (bytes) b->host.push_back({p, bytes / pb});
    b->n += bytes / pb;
  }
  b->on_free = std::move(on_free);
  return b;
}

Bases* bases_alloc(int dev, int curve, size_t n) {
  Guard g(dev);  // the device's context exists (and is current) before its memory is taken
  auto* b = new Bases{dev, curve, n, nullptr};
  const cudaError_t e = cudaMalloc(&b->d, std::max<size_t>(n * point_bytes(curve), 16));
  if (e != cudaSuccess) {
    delete b;
    KC_CHECK(e);
  }
  return b;
}

void bases_write(Bases* b, size_t first, const void* host, size_t n) {
  if (first > b->n || n > b->n - first)
    throw Error("bases_write: points [" + std::to_string(first) + ", " + std::to_string(first + n) + ") out of range (" +
                std::to_string(b->n) + " points)");
  if (n == 0) return;
  if (!b->d) throw Error("bases_write: the bases live in host memory (hostBases)");
  if (b->copies > 1) throw Error("bases_write: the bases have precomputed copies (write them before precomputeBases)");
  KC_CHECK(cudaSetDevice(b->dev));
  const cudaStream_t s = upload_stream(b->dev);
  const size_t pb = point_bytes(b->curve);
  KC_CHECK(cudaMemcpyAsync(static_cast<uint8_t*>(b->d) + first * pb, host, n * pb, cudaMemcpyHostToDevice, s));
  KC_CHECK(cudaStreamSynchronize(s));
}

}  // namespace cuda
}  // namespace kiln
