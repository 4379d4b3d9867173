// Per-device state shared by the CUDA translation units (internal).
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "kiln_cuda.hpp"

#define KC_CHECK(call)                                                                          \
  do {                                                                                          \
    const cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess)                                                                      \
      throw ::kiln::cuda::Error(std::string("CUDA error ") + cudaGetErrorName(e_) + " (" +      \
                                cudaGetErrorString(e_) + ") in " #call " at " __FILE__ ":" +    \
                                std::to_string(__LINE__));                                      \
  } while (0)
#define KC_LAUNCHED() KC_CHECK(cudaGetLastError())

namespace kiln {
namespace cuda {

// A device's lock: one operation at a time (calls come from several libuv workers). An urgent caller (a
// latency-critical proof: a WinningPoSt's partition) goes before every ordinary one waiting, so it waits at
// most for the operation running now (with two prover lanes per GPU, the other lane's next partition is
// usually waiting here already); among callers of one kind the order is unspecified, as a mutex's.
class DeviceLock {
 public:
  void lock(bool urgent = false) {
    std::unique_lock<std::mutex> l(m_);
    if (urgent) ++urgent_waiting_;
    cv_.wait(l, [&] { return !held_ && (urgent || urgent_waiting_ == 0); });
    if (urgent) --urgent_waiting_;
    held_ = true;
  }
  void unlock() {
    {
      std::lock_guard<std::mutex> l(m_);
      held_ = false;
    }
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool held_ = false;
  unsigned urgent_waiting_ = 0;
};

struct Ctx {
  int dev = 0;
  int sms = 0;
  cudaStream_t stream = nullptr;
  DeviceLock mu;  // one operation at a time per device (calls come from several libuv workers)
  // NTT twiddle table: tw[i] = ω_N^i, i < N/2, for the largest log N seen.
  void* tw = nullptr;
  unsigned tw_log = 0;
  // Memory plan of the standalone msm entry point (setMemoryPlan): the scratch budget of one MSM
  // (0: as the MSM needs) and the staging slots of host bases.
  size_t msm_budget = 0;
  size_t slot_bytes = size_t(256) << 20;
  unsigned slots = 2;
};

// The context of device `dev` (created on first use; cudaSetDevice done by the caller's guard).
Ctx& ctx(int dev);

// Locks the device's context (before ordinary callers when `urgent`) and makes it current on this thread.
struct Guard {
  Ctx& c;
  explicit Guard(int dev, bool urgent = false) : c(ctx(dev)) {
    c.mu.lock(urgent);
    try {
      KC_CHECK(cudaSetDevice(dev));
    } catch (...) {
      c.mu.unlock();
      throw;
    }
  }
  ~Guard() { c.mu.unlock(); }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};

// Stream-ordered scratch allocation from the device's pool (cached between calls).
template <class T>
T* dalloc(Ctx& c, size_t count) {
  void* p = nullptr;
  if (count == 0) count = 1;
  KC_CHECK(cudaMallocAsync(&p, count * sizeof(T), c.stream));
  return static_cast<T*>(p);
}
inline void dfree(Ctx& c, void* p) {
  if (p) KC_CHECK(cudaFreeAsync(p, c.stream));
}

// Stream-ordered device buffers freed at scope exit (also when a call throws); free() returns one early.
struct Scratch {
  Ctx& c;
  std::vector<void*> held;
  explicit Scratch(Ctx& cx) : c(cx) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <class T>
  T* get(size_t count) {
    T* p = dalloc<T>(c, count);
    held.push_back(p);
    return p;
  }
  void free(void* p) {
    for (size_t i = 0; i < held.size(); i++) {
      if (held[i] != p) continue;
      held.erase(held.begin() + (long)i);
      dfree(c, p);
      return;
    }
  }
  ~Scratch() {
    for (void* p : held) cudaFreeAsync(p, c.stream);
  }
};

// Pippenger window forced by set_msm_window (0 = the cost model's choice); a diagnostic for benches.
inline std::atomic<unsigned> g_msm_window{0};
// Threads per block of the point-accumulating MSM kernels (set_msm_threads). They need ~180 (G1)
// to 255 (G2) registers per thread, so registers and whole blocks decide residency; on the H200 32,
// 64, 128 and 256 measured the same (the multiply rate bounds them), 96 worse (bench:gpu
// --threads-sweep, 2026-11-30).
inline std::atomic<unsigned> g_msm_threads{32};
// The most scalars of one Pippenger batch (set_msm_batch; 0 = the cost model's batch): a diagnostic, so
// that tests run a chunk's scalars in several batches.
inline std::atomic<size_t> g_msm_batch{0};
// Fewest pairs per thread of a batch-affine level (set_msm_affine_pairs; msm_impl.cuh ba_reduce): each
// thread's run of pairs shares one inversion. 128 while the inversion was Fermat's (~570 multiplications);
// a diagnostic for benches since the binary GCD made it ~10× cheaper.
inline std::atomic<unsigned> g_ba_pairs{128};
// The MSM accumulation kernel (set_msm_acc, msm_impl.cuh accumulate): 1 (k_accumulate_hot) by default.
inline std::atomic<int> g_msm_acc{5};  // 5: batch-affine levels in G2, the XYZZ kernel in G1

// Pippenger window width for m points (msm.cu: a small translation unit, quick to rebuild).
unsigned pick_window(size_t m);
// The MSM accumulation kernel (msm_impl.cuh accumulate): g_msm_acc, read per call.
int acc_variant();
// Whether the batch-affine levels may take a pass of this curve's MSM (1 G1, 2 G2) under `av` (acc_variant):
// 4 everywhere, 5 (the default) in G2; the pass's size decides the rest (msm_impl.cuh ba_levels). One rule for
// the pass itself and for msm_shape, which leaves the levels their room.
inline bool levels_may_run(int av, int curve) { return av == 4 || (av == 5 && curve == 2); }

// MSM bases: resident on the device (`d`), or in host memory (`host`: pinned pieces in order, whole
// points each, owned by the caller; `d` null) and streamed through a Streamer when used.
struct HostPiece {
  const uint8_t* p;
  size_t points;
};
struct Bases {
  int dev;
  int curve;
  size_t n;
  void* d;
  std::vector<HostPiece> host = {};
  std::function<void()> on_free = {};  // the addon's: unpins the host pieces
  // Precomputed multiples (bases_precompute): d holds `copies` copies of the n points, copy j =
  // 2^(j·pre_c·pre_wc)·copy 0 at d + j·n; MSMs over them use window pre_c and pre_wc windows of
  // buckets. copies = 1: none (the plain bases).
  unsigned copies = 1, pre_c = 0, pre_wc = 0;
};
inline size_t point_bytes(int curve) { return curve == 1 ? 96 : 192; }

// n CUDA events, destroyed with the holder (also when a call throws); ms(a, b) = elapsed a → b.
struct Events {
  std::vector<cudaEvent_t> e;
  explicit Events(size_t n) : e(n) {
    for (auto& x : e) KC_CHECK(cudaEventCreate(&x));
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    for (auto& x : e) cudaEventDestroy(x);
  }
  float ms(size_t a, size_t b) const {
    float v = 0;
    KC_CHECK(cudaEventElapsedTime(&v, e[a], e[b]));
    return v;
  }
};

inline unsigned blocks_for(size_t n, unsigned threads) { return (unsigned)((n + threads - 1) / threads); }

// msm_g1.cu / msm_g2.cu
void msm_g1(Ctx& c, Bases* b, const void* d_scalars, const uint32_t* d_sidx, void* out, MsmTimes& t);
void msm_g2(Ctx& c, Bases* b, const void* d_scalars, const uint32_t* d_sidx, void* out, MsmTimes& t);
void batch_add_g1(Ctx& c, Bases* b, const uint32_t* d_idx, size_t n, void* out);
// The precomputed copies of resident bases (b->copies … set here): see msm_impl.cuh precompute_bases.
void precompute_g1(Ctx& c, Bases* b, unsigned copies, unsigned cbits);
void precompute_g2(Ctx& c, Bases* b, unsigned copies, unsigned cbits);
void random_points_g1(Ctx& c, const void* gen, void* d_out, size_t n, uint64_t seed);
void random_points_g2(Ctx& c, const void* gen, void* d_out, size_t n, uint64_t seed);

}  // namespace cuda
}  // namespace kiln
