// MSM driver (host side of msm.cuh), templated on the coordinate field; msm_g1.cu and msm_g2.cu
// instantiate it (two translation units so they compile in parallel).
#pragma once
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ctx.cuh"
#include "msm.cuh"

namespace kiln {
namespace cuda {

constexpr unsigned kChunk = 64;  // points per accumulation thread (a bucket's run is split in these)
constexpr unsigned kFan = 16;    // partials per thread in the tree over a bucket's chunks

// Accumulation kernel variant (msm.cu acc_variant: KILN_MSM_ACC, read per call, for A/B
// measurements): 0 k_accumulate (general additions), 1 (default) k_accumulate_hot, 2 k_accumulate
// with G1's Fq multiplication inlined (DFp variant 1; G2 takes k_accumulate). Capping registers at
// 128 (__launch_bounds__(32, 16)) was measured and dropped: spills, G1 2^24 127 → 132 ms, G2 2^22
// 122 → 484 ms.
template <class F>
void accumulate(Ctx& c, unsigned blocks, unsigned threads, const Affine<F>* bases, const u32* sv, const u32* start,
                const u32* end, const u32* choff, u32 nb, Xyzz<F>* partial) {
  const int v = acc_variant();
  if (v == 1) {
    k_accumulate_hot<F><<<blocks, threads, 0, c.stream>>>(bases, sv, start, end, choff, nb, kChunk, partial);
  } else {
    if constexpr (std::is_same_v<F, DFq>) {
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

// Pippenger over m points (base indices d_idx, canonical scalars d_sc) → W window sums on the host.
template <class F>
void pippenger(Ctx& c, const Affine<F>* bases, const u32* d_idx, const DFr* d_sc, size_t m, unsigned& cw,
               std::vector<Xyzz<F>>& windows, MsmTimes& tm) {
  Events ev(5);
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  const unsigned forced = g_msm_window.load();
  const unsigned cbits = forced ? forced : pick_window(m);
  const u32 W = (256 + cbits - 1) / cbits;
  const u32 K = 1u << (cbits - 1);
  const u32 nb = W * K;
  const u32 sentinel = nb;
  const int end_bit = 32 - __builtin_clz(sentinel);
  const size_t total = m * W;
  if (total >= (size_t(1) << 32)) throw Error("msm: too many points for one call (m·W ≥ 2^32)");
  cw = cbits;

  u32* keys = dalloc<u32>(c, total);
  u32* vals = dalloc<u32>(c, total);
  u32* keys2 = dalloc<u32>(c, total);
  u32* vals2 = dalloc<u32>(c, total);
  k_digits<<<blocks_for(m, 256), 256, 0, c.stream>>>(d_sc, d_idx, m, cbits, W, sentinel, keys, vals);
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
  k_chunk_counts<<<blocks_for(nb, 256), 256, 0, c.stream>>>(start, end, nb, kChunk, cc);
  KC_LAUNCHED();
  tmp_bytes = 0;
  KC_CHECK(cub::DeviceScan::InclusiveSum(nullptr, tmp_bytes, cc, choff + 1, nb, c.stream));
  tmp = dalloc<uint8_t>(c, tmp_bytes);
  KC_CHECK(cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, cc, choff + 1, nb, c.stream));
  dfree(c, tmp);

  const size_t max_chunks = total / kChunk + nb;
  Xyzz<F>* partial = dalloc<Xyzz<F>>(c, max_chunks);
  const unsigned at = g_msm_threads.load();
  accumulate<F>(c, blocks_for(max_chunks, at), at, bases, sv, start, end, choff, nb, partial);
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
  Xyzz<F>* buckets = dalloc<Xyzz<F>>(c, nb);
  k_bucket_sum<F><<<blocks_for(nb, at), at, 0, c.stream>>>(partial, choff, nb, buckets);
  KC_LAUNCHED();
  KC_CHECK(cudaEventRecord(ev.e[3], c.stream));
  dfree(c, partial);
  dfree(c, keys);
  dfree(c, vals);
  dfree(c, keys2);
  dfree(c, vals2);
  dfree(c, start);
  dfree(c, end);
  dfree(c, cc);
  dfree(c, choff);

  const u32 G = std::min<u32>(16, K);
  const u32 S = K / G;
  Xyzz<F>* seg = dalloc<Xyzz<F>>(c, (size_t)W * S);
  Xyzz<F>* seg2 = dalloc<Xyzz<F>>(c, (size_t)W * S);
  k_window_segments<F><<<blocks_for((size_t)W * S, 64), 64, 0, c.stream>>>(buckets, W, K, G, seg);
  KC_LAUNCHED();
  Xyzz<F>* ws = reduce_to_groups<F>(c, seg, seg2, W, S);
  windows.resize(W);
  KC_CHECK(cudaMemcpyAsync(windows.data(), ws, W * sizeof(Xyzz<F>), cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaEventRecord(ev.e[4], c.stream));
  dfree(c, buckets);
  dfree(c, seg);
  dfree(c, seg2);
  KC_CHECK(cudaEventSynchronize(ev.e[4]));
  float* out[4] = {&tm.sort, &tm.accumulate, &tm.buckets, &tm.windows};
  for (int i = 0; i < 4; i++) *out[i] = ev.ms(i, i + 1);
}

template <class F>
void msm_impl(Ctx& c, Bases* b, const void* d_scalars, const u32* d_sidx, void* out, MsmTimes& t, int curve) {
  const size_t n = b->n;
  const Affine<F>* bases = static_cast<const Affine<F>*>(b->d);
  Events ev(4);
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  u32* cnt = dalloc<u32>(c, 2);
  u32* ones = dalloc<u32>(c, n);
  u32* oth_idx = dalloc<u32>(c, n);
  DFr* oth_sc = dalloc<DFr>(c, n);
  KC_CHECK(cudaMemsetAsync(cnt, 0, 2 * sizeof(u32), c.stream));
  if (n) {
    const unsigned blocks = std::max(1u, std::min<unsigned>(blocks_for(n, 256), (unsigned)c.sms * 8));
    k_classify<F><<<blocks, 256, 0, c.stream>>>(bases, n, static_cast<const DFr*>(d_scalars), d_sidx, ones, oth_idx,
                                                oth_sc, cnt);
    KC_LAUNCHED();
  }
  u32 h_cnt[2];
  KC_CHECK(cudaMemcpyAsync(h_cnt, cnt, sizeof h_cnt, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
  KC_CHECK(cudaStreamSynchronize(c.stream));
  t.ones = h_cnt[0];
  t.others = h_cnt[1];

  Xyzz<F>* d_ones = dalloc<Xyzz<F>>(c, 1);
  KC_CHECK(cudaMemsetAsync(d_ones, 0, sizeof(Xyzz<F>), c.stream));
  if (h_cnt[0]) sum_points<F>(c, bases, ones, h_cnt[0], d_ones);
  Xyzz<F> h_ones;
  KC_CHECK(cudaMemcpyAsync(&h_ones, d_ones, sizeof h_ones, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaEventRecord(ev.e[2], c.stream));

  std::vector<Xyzz<F>> windows;
  unsigned cw = 0;
  if (h_cnt[1]) pippenger<F>(c, bases, oth_idx, oth_sc, h_cnt[1], cw, windows, t);
  KC_CHECK(cudaEventRecord(ev.e[3], c.stream));
  dfree(c, cnt);
  dfree(c, ones);
  dfree(c, oth_idx);
  dfree(c, oth_sc);
  dfree(c, d_ones);
  KC_CHECK(cudaStreamSynchronize(c.stream));
  t.classify = ev.ms(0, 1);
  t.batch_add = ev.ms(1, 2);
  t.msm = ev.ms(2, 3);
  t.window = cw;
  finish_msm(curve, windows.data(), (unsigned)windows.size(), cw, &h_ones, out);
}

}  // namespace cuda
}  // namespace kiln
