// Host data streamed to the device through a ring of staging slots: SRS sections and
// circuit matrices that do not fit on a small GPU live in pinned host memory and come over PCIe one
// chunk at a time, on a copy stream of their own, up to `slots` chunks ahead of the compute stream.
//
//   items       the chunks in the order the compute stream will use them, each one or more host
//               ranges copied to offsets of one slot
//   acquire()   the compute stream waits (on the GPU, not the host) for the next item's copy; returns
//               its slot
//   release()   the compute stream marks the slot used (an event); the copy of the item `slots`
//               ahead is queued behind that event on the copy stream
//
// Bytes copied and the copy stream's busy time (events around each copy) are counted; so is the
// time the compute stream spent waiting for copies (`wait_ms`: copies not hidden under compute).
// Internal (partition.cu, msm.cu).
#pragma once
#include <algorithm>
#include <vector>

#include "ctx.cuh"

namespace kiln {
namespace cuda {

struct StreamPiece {
  const void* src;  // host (pinned for full speed)
  size_t bytes;
  size_t dst_off;  // within the slot
};

struct StreamItem {
  std::vector<StreamPiece> pieces;
  size_t bytes() const {
    size_t b = 0;
    for (const auto& p : pieces) b += p.bytes;
    return b;
  }
};

// The device's copy stream for streamed data (created on first use; not the witness copy stream,
// so that a queued witness upload of the next proof does not hold up this proof's chunks).
cudaStream_t stream_copy_stream(int dev);

// Points [p0, p0 + k) of host bases as the pieces of one item (they may span host pieces).
std::vector<StreamPiece> host_range(const Bases* b, size_t p0, size_t k);

class Streamer {
 public:
  // `slots` device buffers of `slot_bytes` from the pool (on c.stream); nothing is copied until start().
  Streamer(Ctx& c, unsigned slots, size_t slot_bytes) : c_(c), slot_bytes_(slot_bytes) {
    cs_ = stream_copy_stream(c.dev);
    slots = std::max(1u, slots);
    for (unsigned i = 0; i < slots; i++) {
      buf_.push_back(dalloc<uint8_t>(c_, slot_bytes_));
      copied_.push_back(new_event(false));
      used_.push_back(new_event(false));
    }
    // the copy stream writes into pool memory allocated on the compute stream: order it after that
    cudaEvent_t ready = new_event(false);
    KC_CHECK(cudaEventRecord(ready, c_.stream));
    KC_CHECK(cudaStreamWaitEvent(cs_, ready, 0));
  }
  Streamer(const Streamer&) = delete;
  Streamer& operator=(const Streamer&) = delete;
  ~Streamer() {
    // nothing may still write into a slot when it goes back to the pool
    cudaStreamSynchronize(cs_);
    for (void* p : buf_) cudaFreeAsync(p, c_.stream);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }

  size_t slot_bytes() const { return slot_bytes_; }
  // Appends an item (before or after start); returns its index.
  size_t add(StreamItem it) {
    for (const auto& p : it.pieces)
      if (p.dst_off > slot_bytes_ || p.bytes > slot_bytes_ - p.dst_off) throw Error("stream: an item does not fit its slot");
    items_.push_back(std::move(it));
    return items_.size() - 1;
  }
  size_t items() const { return items_.size(); }
  // Queues the first copies (up to one per slot).
  void start() { pump(); }

  // The slot holding the next item, once its copy is done (the compute stream waits for it).
  void* acquire() {
    if (next_use_ >= items_.size()) throw Error("stream: no item left");
    pump();
    const size_t s = next_use_ % buf_.size();
    cudaEvent_t w0 = new_event(true), w1 = new_event(true);
    KC_CHECK(cudaEventRecord(w0, c_.stream));
    KC_CHECK(cudaStreamWaitEvent(c_.stream, copied_[s], 0));
    KC_CHECK(cudaEventRecord(w1, c_.stream));
    waits_.push_back({w0, w1});
    return buf_[s];
  }
  // The compute stream is done with the slot of the item acquired last.
  void release() {
    const size_t s = next_use_ % buf_.size();
    KC_CHECK(cudaEventRecord(used_[s], c_.stream));
    next_use_++;
    pump();
  }

  size_t bytes_copied() const { return bytes_; }
  // Call once the compute stream has passed its last release (events complete).
  float copy_ms() const { return sum(copies_); }
  float wait_ms(size_t from = 0) const { return sum(waits_, from); }
  // The waits so far (wait_ms(from) then counts only the later ones).
  size_t waits() const { return waits_.size(); }

 private:
  cudaEvent_t new_event(bool timing) {
    cudaEvent_t e;
    KC_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    events_.push_back(e);
    return e;
  }
  void pump() {
    while (next_copy_ < items_.size() && next_copy_ < next_use_ + buf_.size()) {
      const size_t s = next_copy_ % buf_.size();
      if (next_copy_ >= buf_.size()) KC_CHECK(cudaStreamWaitEvent(cs_, used_[s], 0));
      cudaEvent_t a = new_event(true), b = new_event(true);
      KC_CHECK(cudaEventRecord(a, cs_));
      for (const auto& p : items_[next_copy_].pieces) {
        if (p.bytes)
          KC_CHECK(cudaMemcpyAsync(static_cast<uint8_t*>(buf_[s]) + p.dst_off, p.src, p.bytes, cudaMemcpyHostToDevice, cs_));
        bytes_ += p.bytes;
      }
      KC_CHECK(cudaEventRecord(b, cs_));
      KC_CHECK(cudaEventRecord(copied_[s], cs_));
      copies_.push_back({a, b});
      next_copy_++;
    }
  }
  static float sum(const std::vector<std::pair<cudaEvent_t, cudaEvent_t>>& v, size_t from = 0) {
    float t = 0;
    for (size_t i = from; i < v.size(); i++) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, v[i].first, v[i].second) == cudaSuccess) t += ms;
    }
    return t;
  }

  Ctx& c_;
  cudaStream_t cs_;
  size_t slot_bytes_;
  std::vector<void*> buf_;
  std::vector<cudaEvent_t> copied_, used_, events_;
  std::vector<StreamItem> items_;
  size_t next_copy_ = 0, next_use_ = 0, bytes_ = 0;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> copies_, waits_;
};

}  // namespace cuda
}  // namespace kiln
