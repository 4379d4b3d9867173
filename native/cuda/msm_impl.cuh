// MSM driver (host side of msm.cuh), templated on the coordinate field; msm_g1.cu and msm_g2.cu
// instantiate it (two translation units so they compile in parallel).
#pragma once
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ctx.cuh"
#include "msm.cuh"
#include "msm_affine.cuh"
#include "msm_run.hpp"
#include "normalize.cuh"

namespace kiln {
namespace cuda {

constexpr unsigned kChunk = 64;  // points per accumulation thread (a bucket's run is split in these)
constexpr unsigned kFan = 16;    // partials per thread in the tree over a bucket's chunks

// Accumulation kernel variant (msm.cu acc_variant: set_msm_acc, the addon's setMsmAcc, read per
// call, for A/B measurements; the edges pass KILN_MSM_ACC): 0 k_accumulate (general additions), 1 (default) k_accumulate_hot, 2 k_accumulate
// with G1's Fq multiplication inlined (DFp variant 1; G2 takes k_accumulate), 3 k_accumulate_hot with G1's
// squarings by the dedicated squaring (DFp variant 2; G2 takes k_accumulate, as with 2), 4 the batch-affine
// levels (msm_affine.cuh) wherever the runs are long and their memory is there, else 1; 5 (the default) the
// levels in G2 passes of at least 1024 digits per resident thread of theirs (the measured win was G2 2^22, 67 M
// digits; the partitions' sparse G2 MSMs stay on 1), else 1. Measured (H100, 2026-12-07): the levels win in G2 (2^24: 374 → 292 ms; over 7
// precomputed copies 335 → 251 ms) and lose in G1 (2^24: 125 → 136 ms), whose cheaper multiplication leaves
// the levels' traffic (both points read twice, the sum written) in front. Capping registers at
// 128 (__launch_bounds__(32, 16)) was measured and dropped: spills, G1 2^24 127 → 132 ms, G2 2^22
// 122 → 484 ms.
template <class F>
void accumulate(Ctx& c, unsigned blocks, unsigned threads, const Affine<F>* bases, const u32* sv, const u32* start,
                const u32* end, const u32* choff, u32 nb, Xyzz<F>* partial) {
  const int v = acc_variant();
  if (v == 1 || v == 4 || v == 5) {  // 4 and 5 where their levels did not run: the XYZZ kernel
    k_accumulate_hot<F><<<blocks, threads, 0, c.stream>>>(bases, sv, start, end, choff, nb, kChunk, partial);
  } else {
    if constexpr (std::is_same_v<F, DFq>) {
      if (v == 3) {
        using G = DFp<FqP, 2>;  // k_accumulate_hot with the dedicated squaring
        k_accumulate_hot<G><<<blocks, threads, 0, c.stream>>>(reinterpret_cast<const Affine<G>*>(bases), sv, start, end,
                                                            choff, nb, kChunk, reinterpret_cast<Xyzz<G>*>(partial));
        KC_LAUNCHED();
        return;
      }
      if (v == 2) {
        using G = DFp<FqP, 1>;
        k_accumulate<G><<<blocks, threads, 0, c.stream>>>(reinterpret_cast<const Affine<G>*>(bases), sv, start, end, choff,
                                                        nb, kChunk, reinterpret_cast<Xyzz<G>*>(partial));
        KC_LAUNCHED();
        return;
      }
    }
    k_accumulate<F><<<blocks, threads, 0, c.stream>>>(bases, sv, start, end, choff, nb, kChunk, partial);
  }
  KC_LAUNCHED();
}

// Reduces groups×S XYZZ points (in `a`, scratch `b` as large) to groups points; returns where.
template <class F>
Xyzz<F>* reduce_to_groups(Ctx& c, Xyzz<F>* a, Xyzz<F>* b, u32 groups, u32 S) {
  while (S > 1) {
    const u32 fan = 8;
    const u32 S2 = (S + fan - 1) / fan;
    k_reduce_groups<F><<<blocks_for((size_t)groups * S2, 128), 128, 0, c.stream>>>(a, groups, S, fan, b);
    KC_LAUNCHED();
    std::swap(a, b);
    S = S2;
  }
  return a;
}

// Σ bases[idx[k]] (idx on the device; nullptr = 0..n−1) → one XYZZ point at d_out.
template <class F>
void sum_points(Ctx& c, const Affine<F>* bases, const u32* d_idx, size_t n, Xyzz<F>* d_out) {
  const unsigned threads = g_msm_threads.load();
  size_t T = std::min<size_t>((size_t)c.sms * 512, std::max<size_t>(n, 1));
  T = (T + threads - 1) / threads * threads;
  Xyzz<F>* p = dalloc<Xyzz<F>>(c, T);
  Xyzz<F>* q = dalloc<Xyzz<F>>(c, T);
  k_sum_points<F><<<(unsigned)(T / threads), threads, 0, c.stream>>>(bases, d_idx, n, p);
  KC_LAUNCHED();
  Xyzz<F>* r = reduce_to_groups<F>(c, p, q, 1, (u32)T);
  KC_CHECK(cudaMemcpyAsync(d_out, r, sizeof(Xyzz<F>), cudaMemcpyDeviceToDevice, c.stream));
  dfree(c, p);
  dfree(c, q);
}

// The buckets of one MSM run, kept across chunks: W windows of K = 2^(c−1) buckets (signed digits).
// Over precomputed bases (copies > 1) the W = wc windows take the digits of every copy: base index
// j·stride + i is copy j of base i.
template <class F>
struct Buckets {
  unsigned cbits = 0;
  u32 W = 0, K = 0, nb = 0;
  u32 copies = 1, stride = 0;
  size_t spare = 0;      // device bytes a pass may take beyond its modelled scratch (the batch-affine levels)
  Xyzz<F>* b = nullptr;  // nb, the identity (all zero bytes) at the start
};

// Device memory free for this pass: the device's free bytes and what the stream-ordered pool holds unused.
inline size_t device_free_bytes(Ctx& c) {
  size_t fr = 0, tot = 0;
  KC_CHECK(cudaMemGetInfo(&fr, &tot));
  cudaMemPool_t pool;
  KC_CHECK(cudaDeviceGetDefaultMemPool(&pool, c.dev));
  uint64_t reserved = 0, used = 0;
  KC_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  KC_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  return fr + (reserved > used ? (size_t)(reserved - used) : 0);
}

constexpr unsigned kBaThreads = 128; // block size of the level kernels

// Levels of a pass of `total` digits over nb buckets: the most (≤ 6) with the mean run ≥ 4·2^levels (the
// padding ≤ a quarter of the points) and ≥ g_ba_pairs pairs at the last level; 0 (the XYZZ path) below 2 or
// under `least` digits (the default's 1024 per resident level thread: in a smaller pass a level's few threads
// each walk a long chain of dependent multiplications; the 2 KiB partition's sparse MSMs took 3.8 → 11.8 ms
// with the levels everywhere).
inline unsigned ba_levels(size_t total, u32 nb, size_t least) {
  if (total < least) return 0;
  unsigned lv = 0;
  const size_t pairs = g_ba_pairs.load();
  while (lv < 6 && (size_t(4) << (lv + 1)) * nb <= total && (total >> (lv + 1)) >= pairs) lv++;
  return lv >= 2 ? lv : 0;
}

// Resident threads of the level kernels (a full level's grid).
template <class F>
size_t ba_resident(Ctx& c) {
  static std::atomic<size_t> known{0};  // per field; one device kind per process
  if (const size_t k = known.load()) return k;
  int b1 = 0, b2 = 0;
  KC_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b1, k_ba_level<F, true>, kBaThreads, 0));
  KC_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b2, k_ba_level<F, false>, kBaThreads, 0));
  const size_t r = (size_t)std::max(1, std::min(b1, b2)) * (size_t)c.sms * kBaThreads;
  known.store(r);
  return r;
}

// The batch-affine levels over a sorted pass (keys sk, values sv, bucket runs start/end): the padded runs'
// offsets foff (nb + 1, in last-level points), the values scattered into their padded runs, the sort's
// buffers freed (sortbufs, set to null), then `lv` levels slice by slice into fin (ftot points). Returns
// false, having freed and changed nothing, when the memory for a slice of at least a level's worth of
// pairs per resident thread is not there.
template <class F>
bool ba_reduce(Ctx& c, unsigned lv, const Affine<F>* bases, const u32* sk, const u32* sv, size_t total, u32 nb,
               u32 sentinel, const u32* start, const u32* end, size_t spare, u32* (&sortbufs)[4], Affine<F>*& fin,
               u32*& foff, size_t& ftot, MsmTimes& tm) {
  const u32 M = 1u << lv;
  const size_t T = ba_resident<F>(c), pairs = g_ba_pairs.load();
  u32* cc = dalloc<u32>(c, nb);
  u32* off = dalloc<u32>(c, (size_t)nb + 1);
  KC_CHECK(cudaMemsetAsync(off, 0, sizeof(u32), c.stream));
  k_ba_counts<<<blocks_for(nb, 256), 256, 0, c.stream>>>(start, end, nb, M, cc);
  KC_LAUNCHED();
  size_t tmp_bytes = 0;
  KC_CHECK(cub::DeviceScan::InclusiveSum(nullptr, tmp_bytes, cc, off + 1, nb, c.stream));
  void* tmp = dalloc<uint8_t>(c, tmp_bytes);
  KC_CHECK(cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, cc, off + 1, nb, c.stream));
  dfree(c, tmp);
  dfree(c, cc);
  u32 h_ftot = 0;
  KC_CHECK(cudaMemcpyAsync(&h_ftot, off + nb, 4, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaStreamSynchronize(c.stream));
  const size_t P = (size_t)h_ftot * M;  // padded digits
  const size_t pb = sizeof(Affine<F>);
  // the budget's spare and what the device has (less a margin), plus the sort's buffers, freed first
  const size_t margin = size_t(256) << 20, dev_free = device_free_bytes(c);
  const size_t room = std::min(spare, dev_free > margin ? dev_free - margin : 0);
  // the padded value array is made while the sort's buffers are still held (it is scattered from them)
  if (4 * P > room) {
    dfree(c, off);
    return false;
  }
  const size_t avail = room + 16 * total;
  const size_t fixed = 4 * P + (size_t)h_ftot * pb;
  size_t S = avail > fixed ? (avail - fixed) / (pb * 3 / 4) : 0;  // a slice: S/2 + S/4 points of levels
  S = std::min(S, P) / M * M;
  // at most 64 slices (each is lv launches) and none below 2^16 digits, else the XYZZ chunks
  if (S == 0 || S < std::min(P, std::max<size_t>(size_t(1) << 16, P / 64))) {
    dfree(c, off);
    return false;
  }
  u32* pv = dalloc<u32>(c, P);
  KC_CHECK(cudaMemsetAsync(pv, 0xFF, P * sizeof(u32), c.stream));
  k_ba_scatter<<<blocks_for(total, 256), 256, 0, c.stream>>>(sk, sv, total, sentinel, start, off, M, pv);
  KC_LAUNCHED();
  for (u32*& p : sortbufs) {
    dfree(c, p);
    p = nullptr;
  }
  fin = dalloc<Affine<F>>(c, h_ftot);
  Affine<F>* buf[2] = {dalloc<Affine<F>>(c, S / 2), lv > 2 ? dalloc<Affine<F>>(c, S / 4) : nullptr};
  tm.ba_levels = std::max(tm.ba_levels, lv);
  tm.ba_passes++;
  for (size_t s0 = 0; s0 < P; s0 += S) {
    tm.ba_slices++;
    const size_t n = std::min(S, P - s0);
    const Affine<F>* src = bases;
    for (unsigned l = 1; l <= lv; l++) {
      const size_t np = n >> l;
      Affine<F>* dst = l == lv ? fin + s0 / M : buf[(l - 1) & 1];
      const size_t Tl = std::min(T, std::max<size_t>(1, np / pairs));
      const unsigned grid = (unsigned)((Tl + kBaThreads - 1) / kBaThreads);
      if (l == 1)
        k_ba_level<F, true><<<grid, kBaThreads, 0, c.stream>>>(bases, pv + s0, np, (u32)Tl, dst);
      else
        k_ba_level<F, false><<<grid, kBaThreads, 0, c.stream>>>(src, nullptr, np, (u32)Tl, dst);
      KC_LAUNCHED();
      src = dst;
    }
  }
  dfree(c, pv);
  dfree(c, buf[0]);
  dfree(c, buf[1]);
  foff = off;
  ftot = h_ftot;
  return true;
}

// Adds m points (base indices d_idx into `bases`, canonical scalars d_sc) into the buckets, `wg`
// windows per pass (wg = W: one pass, as a single MSM; fewer: the sort's memory is that of wg
// windows). Each pass: digits, sort, bucket runs in chunks of ≤ kChunk points, chunk trees, then
// each bucket's sum added to the bucket kept across calls. Times add up into tm.
template <class F>
void pippenger_pass(Ctx& c, Buckets<F>& bk, u32 w0, u32 W, const Affine<F>* bases, const u32* d_idx, const DFr* d_sc,
                    size_t m, MsmTimes& tm);

template <class F>
void pippenger_add(Ctx& c, Buckets<F>& bk, const Affine<F>* bases, const u32* d_idx, const DFr* d_sc, size_t m,
                   unsigned wg, MsmTimes& tm) {
  const u32 g = std::max(1u, std::min<u32>(wg ? wg : bk.W, bk.W));
  for (u32 w0 = 0; w0 < bk.W; w0 += g) pippenger_pass<F>(c, bk, w0, std::min(g, bk.W - w0), bases, d_idx, d_sc, m, tm);
}

template <class F>
void pippenger_pass(Ctx& c, Buckets<F>& bk, u32 w0, u32 W, const Affine<F>* bases, const u32* d_idx, const DFr* d_sc,
                    size_t m, MsmTimes& tm) {
  Events ev(4);
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  tm.passes++;
  const unsigned cbits = bk.cbits;
  const u32 nb = W * bk.K;  // this pass's buckets: windows w0 … w0 + W − 1
  const u32 sentinel = nb;
  const int end_bit = 32 - __builtin_clz(sentinel);
  const size_t total = m * W * bk.copies;
  if (total >= (size_t(1) << 32)) throw Error("msm: too many points for one pass (m·W·copies ≥ 2^32)");

  u32* sortbufs[4] = {dalloc<u32>(c, total), dalloc<u32>(c, total), dalloc<u32>(c, total), dalloc<u32>(c, total)};
  u32 *keys = sortbufs[0], *vals = sortbufs[1], *keys2 = sortbufs[2], *vals2 = sortbufs[3];
  if (bk.copies > 1)
    k_digits_pre<<<blocks_for(m, 256), 256, 0, c.stream>>>(d_sc, d_idx, m, cbits, w0, W, bk.W, bk.copies, bk.stride,
                                                           sentinel, keys, vals);
  else
    k_digits<<<blocks_for(m, 256), 256, 0, c.stream>>>(d_sc, d_idx, m, cbits, w0, W, sentinel, keys, vals);
  KC_LAUNCHED();
  cub::DoubleBuffer<u32> dk(keys, keys2), dv(vals, vals2);
  size_t tmp_bytes = 0;
  KC_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, dk, dv, total, 0, end_bit, c.stream));
  void* tmp = dalloc<uint8_t>(c, tmp_bytes);
  KC_CHECK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, dk, dv, total, 0, end_bit, c.stream));
  dfree(c, tmp);
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
  const u32* sk = dk.Current();
  const u32* sv = dv.Current();

  u32* start = dalloc<u32>(c, nb);
  u32* end = dalloc<u32>(c, nb);
  u32* cc = dalloc<u32>(c, nb);
  u32* choff = dalloc<u32>(c, (size_t)nb + 1);
  KC_CHECK(cudaMemsetAsync(start, 0, nb * sizeof(u32), c.stream));
  KC_CHECK(cudaMemsetAsync(end, 0, nb * sizeof(u32), c.stream));
  KC_CHECK(cudaMemsetAsync(choff, 0, sizeof(u32), c.stream));
  k_bounds<<<blocks_for(total, 256), 256, 0, c.stream>>>(sk, total, sentinel, start, end);
  KC_LAUNCHED();
  // Variant 4: the batch-affine levels first where they pay; the XYZZ chunks then sum each bucket's
  // ⌈run / 2^levels⌉ points of the last level (start = foff, end = foff + 1, no value array).
  const int av = acc_variant();
  const bool want = levels_may_run(av, std::is_same_v<F, DFq2> ? 2 : 1);
  const unsigned lv = want ? ba_levels(total, nb, av == 5 ? 1024 * ba_resident<F>(c) : 0) : 0;
  Affine<F>* fin = nullptr;
  u32* foff = nullptr;
  size_t ftot = 0;
  const bool affine = lv && ba_reduce<F>(c, lv, bases, sk, sv, total, nb, sentinel, start, end, bk.spare, sortbufs,
                                         fin, foff, ftot, tm);
  const Affine<F>* pts = affine ? fin : bases;
  const u32* pvals = affine ? nullptr : sv;
  const u32* st = affine ? foff : start;
  const u32* en = affine ? foff + 1 : end;
  const size_t ptotal = affine ? ftot : total;
  k_chunk_counts<<<blocks_for(nb, 256), 256, 0, c.stream>>>(st, en, nb, kChunk, cc);
  KC_LAUNCHED();
  tmp_bytes = 0;
  KC_CHECK(cub::DeviceScan::InclusiveSum(nullptr, tmp_bytes, cc, choff + 1, nb, c.stream));
  tmp = dalloc<uint8_t>(c, tmp_bytes);
  KC_CHECK(cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, cc, choff + 1, nb, c.stream));
  dfree(c, tmp);

  const size_t max_chunks = ptotal / kChunk + nb;
  Xyzz<F>* partial = dalloc<Xyzz<F>>(c, max_chunks);
  const unsigned at = g_msm_threads.load();
  if (affine) {  // a last level's point may be the identity (P + (−P)): the general additions
    k_accumulate<F><<<blocks_for(max_chunks, at), at, 0, c.stream>>>(pts, pvals, st, en, choff, nb, kChunk, partial);
    KC_LAUNCHED();
  } else {
    accumulate<F>(c, blocks_for(max_chunks, at), at, pts, pvals, st, en, choff, nb, partial);
  }
  KC_CHECK(cudaEventRecord(ev.e[2], c.stream));
  // Buckets with many chunks (equal scalars, or the few buckets of a short top window) are reduced
  // in a tree of fan kFan, level by level, so no thread sums more than kFan partials.
  {
    u32* d_max = dalloc<u32>(c, 1);
    tmp_bytes = 0;
    KC_CHECK(cub::DeviceReduce::Max(nullptr, tmp_bytes, cc, d_max, nb, c.stream));
    tmp = dalloc<uint8_t>(c, tmp_bytes);
    KC_CHECK(cub::DeviceReduce::Max(tmp, tmp_bytes, cc, d_max, nb, c.stream));
    dfree(c, tmp);
    u32 maxc = 0;
    KC_CHECK(cudaMemcpyAsync(&maxc, d_max, 4, cudaMemcpyDeviceToHost, c.stream));
    KC_CHECK(cudaStreamSynchronize(c.stream));
    dfree(c, d_max);
    size_t cur_total = max_chunks;
    u32* off2 = nullptr;
    while (maxc > 1) {
      const u32 fan = kFan;
      k_chunk_counts_off<<<blocks_for(nb, 256), 256, 0, c.stream>>>(choff, nb, fan, cc);
      KC_LAUNCHED();
      if (!off2) {
        off2 = dalloc<u32>(c, (size_t)nb + 1);
        KC_CHECK(cudaMemsetAsync(off2, 0, sizeof(u32), c.stream));
      }
      tmp_bytes = 0;
      KC_CHECK(cub::DeviceScan::InclusiveSum(nullptr, tmp_bytes, cc, off2 + 1, nb, c.stream));
      tmp = dalloc<uint8_t>(c, tmp_bytes);
      KC_CHECK(cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, cc, off2 + 1, nb, c.stream));
      dfree(c, tmp);
      const size_t next_total = cur_total / fan + nb;
      Xyzz<F>* next = dalloc<Xyzz<F>>(c, next_total);
      k_reduce_chunks<F><<<blocks_for(next_total, at), at, 0, c.stream>>>(partial, choff, off2, nb, fan, next);
      KC_LAUNCHED();
      dfree(c, partial);
      partial = next;
      std::swap(choff, off2);
      cur_total = next_total;
      maxc = (maxc + fan - 1) / fan;
    }
    dfree(c, off2);
  }
  k_bucket_sum<F><<<blocks_for(nb, at), at, 0, c.stream>>>(partial, choff, nb, bk.b + (size_t)w0 * bk.K);
  KC_LAUNCHED();
  KC_CHECK(cudaEventRecord(ev.e[3], c.stream));
  dfree(c, partial);
  for (u32* p : sortbufs) dfree(c, p);
  dfree(c, fin);
  dfree(c, foff);
  dfree(c, start);
  dfree(c, end);
  dfree(c, cc);
  dfree(c, choff);
  KC_CHECK(cudaEventSynchronize(ev.e[3]));
  tm.sort += ev.ms(0, 1);
  tm.accumulate += ev.ms(1, 2);
  tm.buckets += ev.ms(2, 3);
}

// The window sums of the buckets (segments of 16 buckets by running sums, a tree over the
// segments) → W points on the host.
template <class F>
void pippenger_windows(Ctx& c, const Buckets<F>& bk, std::vector<Xyzz<F>>& windows, MsmTimes& tm) {
  Events ev(2);
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  const u32 W = bk.W, K = bk.K;
  const u32 G = std::min<u32>(16, K);
  const u32 S = K / G;
  Xyzz<F>* seg = dalloc<Xyzz<F>>(c, (size_t)W * S);
  Xyzz<F>* seg2 = dalloc<Xyzz<F>>(c, (size_t)W * S);
  k_window_segments<F><<<blocks_for((size_t)W * S, 64), 64, 0, c.stream>>>(bk.b, W, K, G, seg);
  KC_LAUNCHED();
  Xyzz<F>* ws = reduce_to_groups<F>(c, seg, seg2, W, S);
  windows.resize(W);
  KC_CHECK(cudaMemcpyAsync(windows.data(), ws, W * sizeof(Xyzz<F>), cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
  dfree(c, seg);
  dfree(c, seg2);
  KC_CHECK(cudaEventSynchronize(ev.e[1]));
  tm.windows += ev.ms(0, 1);
}

// One MSM run over chunks (msm_run.hpp): classify each chunk (0 and identity bases dropped, 1 → the
// ones, summed into one point kept across chunks; the rest → Pippenger into the kept buckets), then
// the windows and Horner on the host at finish. Identical sums to a single pass: the same point.
template <class F>
class MsmRunnerT final : public MsmRunner {
 public:
  MsmRunnerT(Ctx& c, size_t n, const void* d_scalars, const u32* d_sidx, const MsmShape& s, MsmTimes& t, int curve)
      : c_(c), n_(n), sc_(static_cast<const DFr*>(d_scalars)), sidx_(d_sidx), s_(s), t_(t), curve_(curve) {
    ones_ = dalloc<Xyzz<F>>(c_, 1);
    KC_CHECK(cudaMemsetAsync(ones_, 0, sizeof(Xyzz<F>), c_.stream));
    if (s_.cbits) {
      bk_.cbits = s_.cbits;
      bk_.W = s_.copies > 1 ? s_.wc : (256 + s_.cbits - 1) / s_.cbits;
      bk_.copies = s_.copies;
      bk_.stride = (u32)n;
      bk_.spare = s_.spare;
      if (s_.copies > 1 && (size_t)s_.copies * n >= kSignBit) throw Error("msm: copies × bases ≥ 2^31");
      bk_.K = 1u << (s_.cbits - 1);
      bk_.nb = bk_.W * bk_.K;
      bk_.b = dalloc<Xyzz<F>>(c_, bk_.nb);
      KC_CHECK(cudaMemsetAsync(bk_.b, 0, (size_t)bk_.nb * sizeof(Xyzz<F>), c_.stream));
    }
  }
  ~MsmRunnerT() override {
    cudaFreeAsync(ones_, c_.stream);
    if (bk_.b) cudaFreeAsync(bk_.b, c_.stream);
  }
  const MsmShape& shape() const override { return s_; }

  void chunk(const void* d_bases, size_t p0, size_t nc) override {
    if (nc == 0) return;
    if (nc > s_.chunk || p0 > n_ || nc > n_ - p0) throw Error("msm: chunk out of range");
    const Affine<F>* bases = static_cast<const Affine<F>*>(d_bases);
    Events ev(3);
    KC_CHECK(cudaEventRecord(ev.e[0], c_.stream));
    u32* cnt = dalloc<u32>(c_, 2);
    u32* ones = dalloc<u32>(c_, nc);
    u32* oth_idx = dalloc<u32>(c_, nc);
    DFr* oth_sc = dalloc<DFr>(c_, nc);
    KC_CHECK(cudaMemsetAsync(cnt, 0, 2 * sizeof(u32), c_.stream));
    // base i of the chunk ↔ scalar sidx[p0 + i] (or p0 + i)
    const DFr* sc = sidx_ ? sc_ : sc_ + p0;
    const u32* sidx = sidx_ ? sidx_ + p0 : nullptr;
    const unsigned blocks = std::max(1u, std::min<unsigned>(blocks_for(nc, 256), (unsigned)c_.sms * 8));
    k_classify<F><<<blocks, 256, 0, c_.stream>>>(bases, nc, sc, sidx, ones, oth_idx, oth_sc, cnt);
    KC_LAUNCHED();
    u32 h_cnt[2];
    KC_CHECK(cudaMemcpyAsync(h_cnt, cnt, sizeof h_cnt, cudaMemcpyDeviceToHost, c_.stream));
    KC_CHECK(cudaEventRecord(ev.e[1], c_.stream));
    KC_CHECK(cudaStreamSynchronize(c_.stream));
    t_.ones += h_cnt[0];
    t_.others += h_cnt[1];
    if (h_cnt[0]) {
      Xyzz<F>* part = dalloc<Xyzz<F>>(c_, 1);
      sum_points<F>(c_, bases, ones, h_cnt[0], part);
      k_add_into<F><<<1, 1, 0, c_.stream>>>(ones_, part);
      KC_LAUNCHED();
      dfree(c_, part);
    }
    KC_CHECK(cudaEventRecord(ev.e[2], c_.stream));
    if (h_cnt[1]) {
      if (!s_.cbits) throw Error("msm: the run was planned for scalars 0 and 1 only");
      // in batches of the planned size (a chunk with more full-width scalars than expected runs more)
      const size_t bt = s_.batch ? s_.batch : h_cnt[1];
      for (size_t off = 0; off < h_cnt[1]; off += bt)
        pippenger_add<F>(c_, bk_, bases, oth_idx + off, oth_sc + off, std::min<size_t>(bt, h_cnt[1] - off), s_.wgroup, t_);
    }
    dfree(c_, cnt);
    dfree(c_, ones);
    dfree(c_, oth_idx);
    dfree(c_, oth_sc);
    KC_CHECK(cudaEventSynchronize(ev.e[2]));
    t_.classify += ev.ms(0, 1);
    t_.batch_add += ev.ms(1, 2);
  }

  void finish(void* out) override {
    std::vector<Xyzz<F>> windows;
    if (bk_.b && t_.others) pippenger_windows<F>(c_, bk_, windows, t_);
    Xyzz<F> h_ones;
    KC_CHECK(cudaMemcpyAsync(&h_ones, ones_, sizeof h_ones, cudaMemcpyDeviceToHost, c_.stream));
    KC_CHECK(cudaStreamSynchronize(c_.stream));
    t_.window = windows.empty() ? 0 : bk_.cbits;
    finish_msm(curve_, windows.data(), (unsigned)windows.size(), bk_.cbits, &h_ones, out);
  }

 private:
  Ctx& c_;
  size_t n_;
  const DFr* sc_;
  const u32* sidx_;
  MsmShape s_;
  MsmTimes& t_;
  int curve_;
  Xyzz<F>* ones_ = nullptr;
  Buckets<F> bk_;
};

// The single-call MSM over resident bases (the msm entry point, benches): one run with the whole
// section as one chunk when the pool allows it, as before the chunked runs.
template <class F>
void msm_impl(Ctx& c, Bases* b, const void* d_scalars, const u32* d_sidx, void* out, MsmTimes& t, int curve) {
  const size_t n = b->n;
  Events ev(2);
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  const size_t others = msm_count_others(c, d_scalars, d_sidx, n);
  const MsmShape s = msm_shape(curve, n, others, ~size_t(0) >> 1, n, msm_pre_of(b));
  MsmRunnerT<F> r(c, n, d_scalars, d_sidx, s, t, curve);
  const size_t pb = sizeof(Affine<F>);
  for (size_t p0 = 0; p0 < n; p0 += s.chunk) r.chunk(static_cast<const uint8_t*>(b->d) + p0 * pb, p0, std::min(s.chunk, n - p0));
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
  r.finish(out);
  t.msm = ev.ms(0, 1) - t.classify - t.batch_add;
}

// Precomputed multiples of resident bases, made once on the device: the D = ⌈256/c⌉ digits of a scalar
// spread over `copies` copies of the bases, wc = ⌈D/copies⌉ windows of buckets each, copy j = 2^(j·c·wc)·P
// (c·wc doublings of the copy before, then affine by one inversion per kRun points). With copies = D
// an MSM is one window of buckets: no per-window bucket sums, and a window as wide as the buckets'
// memory allows. The new table (copies·n points, copy 0 the bases as they were) replaces b->d, so
// every other use of the bases (the partition's MSMs) reads copy 0 unchanged. Peak device memory
// while it runs: the old and the new table, plus 2^22 points of scratch.
template <class F>
void precompute_bases(Ctx& c, Bases* b, unsigned copies, unsigned cbits) {
  if (!b->d) throw Error("precompute: the bases live in host memory (hostBases)");
  if (b->copies > 1) throw Error("precompute: the bases already have precomputed copies");
  const size_t n = b->n;
  const unsigned D = (256 + cbits - 1) / cbits;
  const unsigned wc = (D + std::min(copies, D) - 1) / std::min(copies, D);
  copies = (D + wc - 1) / wc;  // no copy without a digit
  if (copies < 2 || n == 0) return;
  if ((size_t)copies * n >= kSignBit) throw Error("precompute: copies × bases ≥ 2^31");
  const size_t pb = sizeof(Affine<F>);
  Affine<F>* tab = nullptr;
  KC_CHECK(cudaMalloc(&tab, (size_t)copies * n * pb));
  try {
    KC_CHECK(cudaMemcpyAsync(tab, b->d, n * pb, cudaMemcpyDeviceToDevice, c.stream));
    const size_t chunk = std::min<size_t>(n, size_t(1) << 22);
    Xyzz<F>* x = dalloc<Xyzz<F>>(c, chunk);
    F* pre = dalloc<F>(c, chunk);
    for (unsigned j = 1; j < copies; j++) {
      for (size_t i0 = 0; i0 < n; i0 += chunk) {
        const size_t k = std::min(chunk, n - i0);
        k_pre_double<F><<<blocks_for(k, 128), 128, 0, c.stream>>>(tab + (j - 1) * n + i0, k, cbits * wc, x);
        KC_LAUNCHED();
        const u64 S = (k + kRun - 1) / kRun;
        k_normalize<F><<<blocks_for(S, 128), 128, 0, c.stream>>>(x, k, S, tab + j * n + i0, pre);
        KC_LAUNCHED();
      }
    }
    dfree(c, x);
    dfree(c, pre);
    KC_CHECK(cudaStreamSynchronize(c.stream));
  } catch (...) {
    cudaStreamSynchronize(c.stream);
    cudaFree(tab);
    throw;
  }
  KC_CHECK(cudaFree(b->d));
  b->d = tab;
  b->copies = copies;
  b->pre_c = cbits;
  b->pre_wc = wc;
}

}  // namespace cuda
}  // namespace kiln
