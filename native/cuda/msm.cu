// MSM entry points that move the inputs: resident bases (the SRS), scalars uploaded per call, and
// the window model and diagnostics knobs. The drivers are msm_impl.cuh (msm_g1.cu, msm_g2.cu).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

#include "ctx.cuh"
#include "field.cuh"
#include "msm_run.hpp"
#include "stream.cuh"

namespace kiln {
namespace cuda {

// Window width: minimises W·(m + 25K): a mixed addition per point per window, and a per-bucket cost
// (chunk sums, two running-sum additions, the segment's share of lo·T, bucket memory) fitted on the
// H200 sweeps of 2026-11-30 (G1 2^24: c = 15/16/17/18/20 → 378/353/369/402/497 ms; G1 2^22: c =
// 14/15/16/17 → 109/107/108/132 ms). Picks 14 at 2^20, 16 at 2^22 and 2^24, 19 at 2^26. c ≤ 20.
// Over `copies` precomputed copies the per-bucket cost is paid by ⌈W/copies⌉ windows, not W, and c may
// reach 22 (pre_window).
static unsigned window_model(size_t m, unsigned copies, unsigned cmax) {
  unsigned best = 4;
  double best_cost = 1e300;
  for (unsigned c = 4; c <= cmax; c++) {
    const unsigned W = (256 + c - 1) / c, wc = (W + copies - 1) / copies;
    const double cost = (double)W * (double)m + 25.0 * double(1u << (c - 1)) * wc;
    if (cost < best_cost) best_cost = cost, best = c;
  }
  return best;
}
unsigned pick_window(size_t m) { return window_model(m, 1, 20); }

// ---- the chunked runs' model (msm_run.hpp) -----------------------------------------------------------
static size_t xyzz_bytes(int curve) { return curve == 1 ? 4 * 48 : 4 * 96; }

size_t msm_chunk_scratch(int curve, size_t points, unsigned cbits, unsigned wgroup, size_t batch, unsigned copies,
                         unsigned wins) {
  const size_t X = xyzz_bytes(curve);
  // classify: ones, others' index and scalar; the ones' sum (two rows of per-thread partials)
  size_t b = 40 * points + 2 * 80000 * X + (size_t(32) << 20);
  if (cbits) {
    const size_t Wall = wins ? wins : (256 + cbits - 1) / cbits;
    const size_t W = wgroup ? std::min<size_t>(wgroup, Wall) : Wall;  // windows of one pass
    const size_t nb = W << (cbits - 1);
    const size_t total = std::min(points, batch) * W * std::max(1u, copies);  // the digits of one batch
    b += 16 * total + total / 8;                  // keys, values (double-buffered sort), sort scratch
    b += 20 * nb;                                 // bucket bounds, chunk counts and offsets
    b += (total / 64 + total / 1024 + 2 * nb) * X;  // bucket chunks and the next level of their tree
  }
  return b;
}

size_t msm_persistent(int curve, unsigned cbits, unsigned wins) {
  const size_t X = xyzz_bytes(curve);
  if (!cbits) return 2 * X;
  const size_t W = wins ? wins : (256 + cbits - 1) / cbits, nb = W << (cbits - 1);
  return nb * X + nb * X / 8 + 2 * X;  // the buckets, the window segments at the end
}

// What a pass of `digits` digits adds when the batch-affine levels take it (msm_impl.cuh ba_reduce): the padded
// value array (4 B per padded digit, ≤ 1.125 per digit) is made while the sort's buffers are still held, and after
// they are freed the last level's points and one slice must fit (6 B per digit lets 4 … 6 levels of G2 run in
// ≤ 64 slices). Without it a pass sized to fill a tight budget leaves the levels no room and they fall back to
// the XYZZ chunks (WindowPoSt's G2 B MSM under an 80 GB card's plan, 2026-12-07).
static size_t levels_reserve(size_t digits) { return 6 * digits; }

MsmShape msm_shape(int curve, size_t n, size_t others, size_t budget, size_t max_chunk, MsmPre pre) {
  const bool pc = pre.copies > 1;
  MsmShape best;
  const size_t cap = std::max<size_t>(1, std::min(max_chunk, std::max<size_t>(n, 1)));
  const size_t floor_pts = std::min<size_t>(cap, 1u << 12);
  double best_cost = 1e300;
  const unsigned forced = g_msm_window.load();
  const unsigned top = others ? std::max(pc ? pre.c : 20u, forced) : 0u;  // setMsmWindow may force up to 24
  for (unsigned c = others ? 4 : 0; c <= top; c++) {
    if (pc && others && c != pre.c) continue;  // precomputed bases: their window
    if (!pc && forced && others && c != forced) continue;
    const unsigned cp = pc && c ? pre.copies : 1u;
    const size_t P = msm_persistent(curve, c, pc && c ? pre.wc : 0);
    if (P >= budget) continue;
    const size_t W = c ? (pc ? pre.wc : (256 + c - 1) / c) : 0;  // windows of buckets
    const size_t Dg = W * cp;                                    // digits per point
    // A chunk's full-width points go to Pippenger in batches: about twice the chunk's expected share
    // of them (plus slack), all of them for a dense MSM; a chunk holding more runs more batches.
    auto batch_of = [&](size_t nc) -> size_t {
      if (others >= n) return nc;
      const double share = n ? (double)others * (double)nc / (double)n : 0.0;
      return std::min<size_t>(nc, (size_t)(2.0 * share) + 65536);
    };
    // the most windows per pass that fit with nc points (0 when not even one does); `levels`: with the batch-affine
    // levels' room beside each pass
    auto group = [&](size_t nc, bool levels) -> unsigned {
      if (!W) return msm_chunk_scratch(curve, nc, 0) <= budget - P ? 1u : 0u;
      const size_t bt = batch_of(nc);
      for (unsigned g = (unsigned)W; g >= 1; g--) {
        const size_t digits = bt * g * cp;
        if (digits < (size_t(1) << 32) &&
            msm_chunk_scratch(curve, nc, c, g, bt, cp, (unsigned)W) + (levels ? levels_reserve(digits) : 0) <= budget - P)
          return g;
      }
      return 0;
    };
    size_t nc = cap;
    while (nc > floor_pts && !group(nc, false)) nc = std::max(floor_pts, nc / 2);
    unsigned g = group(nc, false);
    if (!g) continue;
    // where the levels may run, fewer windows per pass if that leaves them their room (spare, below)
    if (W && levels_may_run(acc_variant(), curve))
      if (const unsigned gl = group(nc, true)) g = gl;
    const double chunks = std::ceil((double)std::max<size_t>(n, 1) / nc);
    const double passes = W ? chunks * std::ceil((double)W / g) : 0;
    const double K = c ? double(1u << (c - 1)) : 0;
    // per chunk: classify, the ones' sum, a bucket-sum pass over the run's buckets; per Pippenger
    // pass: ~15 launches and a host round trip (~0.25 ms ≈ 600,000 additions' time)
    const double cost = Dg * (double)others + 25.0 * K * W + chunks * (W * K + 240000.0) + passes * 600000.0;
    if (cost < best_cost) {
      best_cost = cost;
      best.cbits = c;
      best.copies = cp;
      best.wc = cp > 1 ? (unsigned)W : 0;
      best.wgroup = W ? g : 0;
      best.chunk = nc;
      best.batch = batch_of(nc);
      best.persistent = P;
      best.per_chunk = msm_chunk_scratch(curve, nc, c, g, best.batch, cp, (unsigned)W);
      best.spare = budget - std::min(budget, P + best.per_chunk);
    }
  }
  // Diagnostics: set_msm_batch caps the Pippenger batch (tests run a chunk's others in several)
  const size_t batch_cap = g_msm_batch.load();
  if (batch_cap && best.chunk) best.batch = std::max<size_t>(1, std::min<size_t>(best.batch, batch_cap));
  if (!best.chunk)
    throw Error("msm: " + std::to_string(budget >> 20) + " MiB of scratch cannot hold a pass of " +
                std::to_string(floor_pts) + " points");
  return best;
}

int acc_variant() { return g_msm_acc.load(); }

void set_msm_window(unsigned c) { g_msm_window.store(c); }
void set_msm_threads(unsigned t) { g_msm_threads.store(t); }
void set_msm_affine_pairs(unsigned n) { g_ba_pairs.store(n); }
void set_msm_batch(size_t n) { g_msm_batch.store(n); }
void set_msm_acc(int v) { g_msm_acc.store(v); }

Bases* bases_upload(int dev, int curve, const void* host, size_t n) {
  Guard g(dev);
  auto* b = new Bases{dev, curve, n, nullptr};
  try {
    KC_CHECK(cudaMalloc(&b->d, std::max<size_t>(n * point_bytes(curve), 16)));
    if (n) KC_CHECK(cudaMemcpyAsync(b->d, host, n * point_bytes(curve), cudaMemcpyHostToDevice, g.c.stream));
    KC_CHECK(cudaStreamSynchronize(g.c.stream));
  } catch (...) {
    if (b->d) cudaFree(b->d);
    delete b;
    throw;
  }
  return b;
}
void bases_free(Bases* b) {
  if (!b) return;
  if (b->d) {
    Guard g(b->dev);
    cudaFree(b->d);
  }
  if (b->on_free) b->on_free();
  delete b;
}
size_t bases_count(const Bases* b) { return b->n; }
size_t bases_bytes(const Bases* b) { return b->n * point_bytes(b->curve) * b->copies; }

BasesPre bases_precompute(Bases* b, unsigned copies, unsigned cbits) {
  if (cbits < 4 || cbits > 24) throw Error("precompute: window " + std::to_string(cbits) + " out of range (4 … 24)");
  if (copies < 1) throw Error("precompute: copies must be at least 1");
  Guard g(b->dev);
  const auto t0 = std::chrono::steady_clock::now();
  if (b->curve == 1) precompute_g1(g.c, b, copies, cbits);
  else precompute_g2(g.c, b, copies, cbits);
  BasesPre r;
  r.copies = b->copies;
  r.window = b->copies > 1 ? b->pre_c : 0;
  r.windows = b->copies > 1 ? b->pre_wc : 0;
  r.bytes = bases_bytes(b);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

unsigned pre_window(size_t n, unsigned copies) { return window_model(n, std::max(1u, copies), 22); }

// Points [p0, p0 + k) of host bases as stream pieces at offset 0 of a slot (they may span pieces).
std::vector<StreamPiece> host_range(const Bases* b, size_t p0, size_t k) {
  const size_t pb = point_bytes(b->curve);
  std::vector<StreamPiece> out;
  size_t first = 0, off = 0;
  for (const HostPiece& hp : b->host) {
    const size_t lo = std::max(p0, first), hi = std::min(p0 + k, first + hp.points);
    if (lo < hi) {
      out.push_back({hp.p + (lo - first) * pb, (hi - lo) * pb, off});
      off += (hi - lo) * pb;
    }
    first += hp.points;
  }
  if (off != k * pb) throw Error("msm: host bases hold fewer points than the range asked");
  return out;
}

// One MSM over resident or host bases within the device's scratch budget (setMemoryPlan): chunks of
// the runner's size, host ones streamed through the device's staging slots.
void msm_chunked(Ctx& c, Bases* b, const void* d_sc, const uint32_t* d_sidx, void* out, MsmTimes& t) {
  const size_t n = b->n, pb = point_bytes(b->curve);
  const bool host = !b->d;
  Events ev(2);
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  const size_t others = msm_count_others(c, d_sc, d_sidx, n);
  const size_t budget = c.msm_budget ? c.msm_budget : ~size_t(0) >> 2;
  const MsmShape s =
      msm_shape(b->curve, n, others, budget, host ? std::max<size_t>(1, c.slot_bytes / pb) : n, msm_pre_of(b));
  std::unique_ptr<Streamer> st;
  if (host) {
    st = std::make_unique<Streamer>(c, c.slots, s.chunk * pb);
    for (size_t p0 = 0; p0 < n; p0 += s.chunk) st->add({host_range(b, p0, std::min(s.chunk, n - p0))});
    st->start();
  }
  auto r = b->curve == 1 ? msm_runner_g1(c, n, d_sc, d_sidx, s, t) : msm_runner_g2(c, n, d_sc, d_sidx, s, t);
  for (size_t p0 = 0; p0 < n; p0 += s.chunk) {
    const size_t k = std::min(s.chunk, n - p0);
    if (host) {
      void* slot = st->acquire();
      r->chunk(slot, p0, k);
      st->release();
    } else {
      r->chunk(static_cast<const uint8_t*>(b->d) + p0 * pb, p0, k);
    }
  }
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
  r->finish(out);
  t.msm = ev.ms(0, 1) - t.classify - t.batch_add;
}

void set_memory_plan(int dev, size_t msm_budget, size_t slot_bytes, unsigned slots) {
  Guard g(dev);
  g.c.msm_budget = msm_budget;
  if (slot_bytes) g.c.slot_bytes = slot_bytes;
  if (slots) g.c.slots = slots;
}

void pool_trim(int dev) {
  Guard g(dev);
  KC_CHECK(cudaStreamSynchronize(g.c.stream));
  cudaMemPool_t pool;
  KC_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  KC_CHECK(cudaMemPoolTrimTo(pool, 0));
}

void msm(Bases* b, const void* scalars, size_t nscalars, const uint32_t* sidx, void* out, MsmTimes& t) {
  Guard g(b->dev);
  Ctx& c = g.c;
  void* d_sc = dalloc<DFr>(c, nscalars);
  uint32_t* d_sidx = nullptr;
  if (nscalars) KC_CHECK(cudaMemcpyAsync(d_sc, scalars, nscalars * 32, cudaMemcpyHostToDevice, c.stream));
  if (sidx) {
    d_sidx = dalloc<uint32_t>(c, b->n);
    KC_CHECK(cudaMemcpyAsync(d_sidx, sidx, b->n * 4, cudaMemcpyHostToDevice, c.stream));
  }
  try {
    if (b->d && !c.msm_budget) {
      if (b->curve == 1) msm_g1(c, b, d_sc, d_sidx, out, t);
      else msm_g2(c, b, d_sc, d_sidx, out, t);
    } else {
      msm_chunked(c, b, d_sc, d_sidx, out, t);
    }
  } catch (...) {
    dfree(c, d_sc);
    dfree(c, d_sidx);
    throw;
  }
  dfree(c, d_sc);
  dfree(c, d_sidx);
}

void batch_add(Bases* b, const uint32_t* idx, size_t n, void* out, float& ms) {
  Guard g(b->dev);
  Ctx& c = g.c;
  const auto t0 = std::chrono::steady_clock::now();
  uint32_t* d_idx = dalloc<uint32_t>(c, n);
  if (n) KC_CHECK(cudaMemcpyAsync(d_idx, idx, n * 4, cudaMemcpyHostToDevice, c.stream));
  batch_add_g1(c, b, d_idx, n, out);
  dfree(c, d_idx);
  ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace cuda
}  // namespace kiln
