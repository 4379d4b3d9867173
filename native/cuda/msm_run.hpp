// A chunked MSM: Σ scalar·base over n bases taken in chunks of points, with the bucket
// sums kept across chunks (one window reduction at the end), so that the bases can come from the
// device (resident SRS) or be streamed from pinned host memory one chunk at a time, and the scratch
// stays within a byte budget whatever n is. Several runners may be alive at once (the partition
// prover interleaves the chunks of its five MSMs so that copies of streamed bases overlap the
// compute of the others). Internal (msm_impl.cuh implements it; msm_g1.cu / msm_g2.cu instantiate).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ctx.cuh"

namespace kiln {
namespace cuda {

// The shape of one MSM's run: the window width, the largest chunk the scratch allows, and the bytes
// it takes (persistent: the buckets kept across chunks; per chunk: the sort and accumulation scratch).
struct MsmShape {
  unsigned cbits = 0;      // Pippenger window (0: no Pippenger, every scalar 0 or 1)
  unsigned copies = 1;     // copies of the bases (precomputed multiples; 1: the bases only)
  unsigned wc = 0;         // windows of buckets with copies > 1 (the D digits spread over the copies)
  unsigned wgroup = 0;     // windows per Pippenger pass (all: one pass)
  size_t chunk = 0;        // most points per chunk
  size_t batch = 0;        // most full-width points per Pippenger batch (a chunk's others in batches)
  size_t persistent = 0;   // bytes held from begin to finish
  size_t per_chunk = 0;    // bytes of one chunk's scratch at `chunk` points
  size_t spare = 0;        // budget − persistent − per_chunk: what a pass may add (the batch-affine levels)
};

// Chooses the window and chunk for an MSM of n bases whose scalars hold about `others` values that
// are neither 0 nor 1: the cost model of pick_window (a mixed addition per point per window, a
// per-bucket cost) plus each chunk's bucket-sum pass, with persistent + per_chunk ≤ budget and
// chunk ≤ max_chunk (a streamed section's staging slot). Throws Error when even the smallest chunk
// does not fit.
// Over precomputed bases (`pre`, from Bases: copies > 1) the window is theirs and a point makes a digit
// per window of buckets in every copy.
struct MsmPre {
  unsigned c = 0, wc = 0, copies = 1;
};
MsmShape msm_shape(int curve, size_t n, size_t others, size_t budget, size_t max_chunk, MsmPre pre = {});
inline MsmPre msm_pre_of(const Bases* b) { return b && b->copies > 1 ? MsmPre{b->pre_c, b->pre_wc, b->copies} : MsmPre{}; }
// Bytes of scratch one chunk of `points` takes with window c, `wgroup` windows per pass (0: all; the
// budget's model; the pool may add rounding); `copies` digits per window with precomputed bases,
// `wins` windows in all (0: ⌈256/c⌉).
size_t msm_chunk_scratch(int curve, size_t points, unsigned cbits, unsigned wgroup = 0, size_t batch = ~size_t(0),
                         unsigned copies = 1, unsigned wins = 0);
size_t msm_persistent(int curve, unsigned cbits, unsigned wins = 0);

class MsmRunner {
 public:
  virtual ~MsmRunner() = default;
  // Bases of points [p0, p0 + nc) (device memory, the curve's affine layout); nc ≤ shape.chunk.
  virtual void chunk(const void* d_bases, size_t p0, size_t nc) = 0;
  // The sum (affine, native layout) into out; frees the buckets. Call once.
  virtual void finish(void* out) = 0;
  virtual const MsmShape& shape() const = 0;
};

// scalars: d_scalars[sidx ? sidx[i] : i] for base i (device pointers; sidx indexes the scalars of
// base i, resident for the whole run). Allocates the buckets on c.stream. Timings add up into t.
std::unique_ptr<MsmRunner> msm_runner_g1(Ctx& c, size_t n, const void* d_scalars, const uint32_t* d_sidx,
                                         const MsmShape& s, MsmTimes& t);
std::unique_ptr<MsmRunner> msm_runner_g2(Ctx& c, size_t n, const void* d_scalars, const uint32_t* d_sidx,
                                         const MsmShape& s, MsmTimes& t);

// One MSM over resident or host bases (msm.cu, the msm entry point under a memory plan): chunks of
// the scratch budget's size (Ctx::msm_budget), host bases streamed through Ctx::slots slots.
void msm_chunked(Ctx& c, Bases* b, const void* d_sc, const uint32_t* d_sidx, void* out, MsmTimes& t);

// Values that are neither 0 nor 1 among d_scalars[sidx ? sidx[i] : i], i < n (one kernel and a read
// back; the bases are not looked at, so identity bases count).
size_t msm_count_others(Ctx& c, const void* d_scalars, const uint32_t* d_sidx, size_t n);

}  // namespace cuda
}  // namespace kiln
