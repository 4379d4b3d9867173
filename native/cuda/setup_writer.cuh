// The development setup's writers (setup.cu): pinned staging buffers and a pool of threads that pwrite
// them at each chunk's offset, apart from the device kernels. Host code only.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include "ctx.cuh"

namespace kiln {
namespace cuda {
namespace setup_io {

using clk = std::chrono::steady_clock;
inline double ms_since(clk::time_point t0) { return std::chrono::duration<double, std::milli>(clk::now() - t0).count(); }

// Pinned staging buffers and a pool of threads that pwrite them. A buffer is acquired by the host
// thread, filled by a copy on the copy stream, and handed over by a host function at the end of
// that copy (on_copied); a writer thread writes it and frees it.
class Writer {
 public:
  Writer(int fd, size_t slot_bytes, unsigned slots, unsigned threads, bool flush, double* progress)
      : fd_(fd), bytes_(slot_bytes), flush_(flush), progress_(progress), slots_(slots) {
    try {
      for (Slot& s : slots_) {
        s.w = this;
        s.index = (int)(&s - slots_.data());
        KC_CHECK(cudaHostAlloc(&s.mem, std::max<size_t>(slot_bytes, 1), cudaHostAllocPortable));
      }
      for (unsigned i = 0; i < threads; i++) th_.emplace_back([this] { loop(); });
    } catch (...) {
      stop();
      throw;
    }
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { stop(); }

  size_t staging_bytes() const { return bytes_ * slots_.size(); }
  void* ptr(int s) const { return slots_[s].mem; }

  // A free staging buffer; waits for one (counted in `waited`). `check` runs while waiting (a CUDA
  // error would otherwise leave the host functions unrun and this wait endless); throws the first
  // write error.
  int acquire(double& waited, const std::function<void()>& check) {
    const auto t0 = clk::now();
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      if (!err_.empty()) throw Error(err_);
      for (Slot& s : slots_)
        if (!s.busy) {
          s.busy = true;
          waited += ms_since(t0);
          return s.index;
        }
      if (cv_.wait_for(l, std::chrono::milliseconds(200)) == std::cv_status::timeout) {
        l.unlock();
        check();
        l.lock();
      }
    }
  }
  // What the host function will hand over: `n` bytes of buffer s at file offset `off`.
  void* arm(int s, uint64_t off, size_t n) {
    std::lock_guard<std::mutex> l(mu_);
    slots_[s].off = off;
    slots_[s].n = n;
    return &slots_[s];
  }
  // cudaLaunchHostFunc callback (a CUDA thread: no CUDA calls here).
  static void CUDART_CB on_copied(void* p) {
    Slot* s = static_cast<Slot*>(p);
    Writer* w = s->w;
    {
      std::lock_guard<std::mutex> l(w->mu_);
      w->q_.push_back(s->index);
    }
    w->cv_.notify_all();
  }
  // Waits until every buffer is written (all host functions have run: the caller synchronised the
  // copy stream); throws the first write error.
  void drain(double& waited) {
    const auto t0 = clk::now();
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] {
      return !err_.empty() || (q_.empty() && std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy; }));
    });
    waited += ms_since(t0);
    if (!err_.empty()) throw Error(err_);
  }
  // A small write from the calling thread (section counts).
  void write_now(const void* p, size_t n, uint64_t off) {
    std::string e = pwrite_all(static_cast<const uint8_t*>(p), n, off);
    if (!e.empty()) throw Error(e);
    std::lock_guard<std::mutex> l(mu_);
    account(n);
  }

 private:
  struct Slot {
    Writer* w = nullptr;
    int index = 0;
    void* mem = nullptr;
    uint64_t off = 0;
    size_t n = 0;
    bool busy = false;
  };
  void account(size_t n) {
    written_ += n;
    if (progress_) progress_[3] = (double)written_;
  }
  std::string pwrite_all(const uint8_t* b, size_t n, uint64_t off) {
    while (n) {
      const ssize_t w = ::pwrite(fd_, b, n, (off_t)off);
      if (w < 0) {
        if (errno == EINTR) continue;
        return std::string("devSetupInsecure: write failed at offset ") + std::to_string(off) + ": " + std::strerror(errno);
      }
      if (w == 0) return "devSetupInsecure: write returned 0 at offset " + std::to_string(off);
      b += w;
      n -= (size_t)w;
      off += (uint64_t)w;
    }
    return {};
  }
  void loop() {
    for (;;) {
      int si;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;
        si = q_.front();
        q_.pop_front();
        if (!err_.empty()) {  // after an error: drop what is queued
          slots_[si].busy = false;
          cv_.notify_all();
          continue;
        }
      }
      Slot& s = slots_[si];
      std::string e = pwrite_all(static_cast<const uint8_t*>(s.mem), s.n, s.off);
#ifdef SYNC_FILE_RANGE_WRITE
      // Start the write-back of this range now (asynchronous), so that dirty pages do not pile up
      // and the final fsync has little left to do. Fails harmlessly on pipes and devices.
      if (e.empty() && flush_) ::sync_file_range(fd_, (off_t)s.off, (off_t)s.n, SYNC_FILE_RANGE_WRITE);
#endif
      {
        std::lock_guard<std::mutex> l(mu_);
        if (!e.empty() && err_.empty()) err_ = e;
        if (e.empty()) account(s.n);
        s.busy = false;
      }
      cv_.notify_all();
    }
  }
  void stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : th_)
      if (t.joinable()) t.join();
    th_.clear();
    for (Slot& s : slots_)
      if (s.mem) {
        cudaFreeHost(s.mem);
        s.mem = nullptr;
      }
  }

  int fd_;
  size_t bytes_;
  bool flush_;
  double* progress_;
  std::vector<Slot> slots_;
  std::vector<std::thread> th_;
  std::deque<int> q_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string err_;
  uint64_t written_ = 0;
  bool stop_ = false;
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace setup_io
}  // namespace cuda
}  // namespace kiln
