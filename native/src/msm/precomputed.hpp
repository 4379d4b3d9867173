// MSM over fixed bases with precomputed window shifts (the SRS queries, used by every proof).
//
// Table: T[k·W + j] = 2^(c·j)·P_k for every base k and window j < W = ⌈256/c⌉ (affine, n·W points).
// Then Σ s_k·P_k = Σ_k Σ_j d_{k,j}·T[k·W + j] with the signed digits d_{k,j} of s_k: every
// (point, digit) pair goes into ONE set of 2^(c-1) buckets (no per-window bucket sets, no per-window
// reduction, no doublings between windows), so a larger c pays: at 2^16 c = 16 needs 16 additions
// per scalar against 20 (c = 13) plus 20 bucket reductions on the plain path.
// Parallel over point ranges: one bucket set per task, each reduced on its own, then summed.
//
// Building the table costs (W−1)·c doublings per base, done as batched affine doublings (one shared
// inversion per 1024 points): about 7 multiplications per doubling; a one-time cost per SRS.
#pragma once
#include <algorithm>
#include <memory>
#include <vector>

#include "pippenger.hpp"

namespace kiln {

// Window for a precomputed table over n bases: minimises the wall-clock cost model
// n·W·9/T (batched additions spread over T tasks) + 2^(c-1)·15 (each task reduces its buckets).
// c ≤ 16: with more buckets (> 3 MiB per task) the additions miss the caches (measured at 2^18:
// c = 18 is 20 % slower than c = 16, not faster as the count alone says).
inline unsigned msm_precompute_window(size_t n, size_t threads) {
  unsigned best = 8;
  double best_cost = 1e300;
  const double T = double(std::max<size_t>(1, threads));
  for (unsigned c = 8; c <= 16; c++) {
    const double K = double(size_t(1) << (c - 1));
    const double cost = (double)n * msm_windows(c) * 9.0 / T + K * 15.0;
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

// table[k·W + j] = 2^(c·j)·bases[k] for k < n, j < W.
template <class F>
void msm_precompute(const Affine<F>* bases, size_t n, unsigned c, Affine<F>* table, ThreadPool& tp) {
  const unsigned W = msm_windows(c);
  const size_t CH = 1024;
  const size_t chunks = (n + CH - 1) / CH;
  tp.parallel_for(chunks, [&](size_t ch) {
    const size_t b = ch * CH, m = std::min(CH, n - b);
    std::vector<Affine<F>> cur(bases + b, bases + b + m);
    std::vector<F> prefix(m);
    std::vector<uint8_t> live(m);
    for (size_t i = 0; i < m; i++) table[(b + i) * W] = cur[i];
    for (unsigned j = 1; j < W; j++) {
      for (unsigned d = 0; d < c; d++) {
        // Batched affine doubling: λ = 3x² / 2y; identity and y = 0 (2-torsion) give the identity.
        F acc = F::one();
        for (size_t i = 0; i < m; i++) {
          live[i] = !cur[i].is_identity() && !cur[i].y.is_zero();
          if (!live[i]) {
            cur[i] = Affine<F>::identity();
            continue;
          }
          prefix[i] = acc;
          acc *= cur[i].y.dbl();
        }
        F inv = acc.inverse();
        for (size_t i = m; i-- > 0;) {
          if (!live[i]) continue;
          Affine<F>& p = cur[i];
          const F den = p.y.dbl();
          const F inv_i = inv * prefix[i];
          inv *= den;
          const F x2 = p.x.sqr();
          const F lambda = (x2.dbl() + x2) * inv_i;
          const F x3 = lambda.sqr() - p.x.dbl();
          p.y = lambda * (p.x - x3) - p.y;
          p.x = x3;
        }
      }
      for (size_t i = 0; i < m; i++) table[(b + i) * W + j] = cur[i];
    }
  });
}

// The precomputed-table schedule, shared by the scalar and the AVX-512 IFMA accumulators
// (msm/ifma.hpp): tasks are point ranges with one accumulator of 2^(c−1) buckets each (make_acc);
// add(acc, i, w, d) puts window w's entry of point i's row with signed digit d ≠ 0 into bucket
// |d| − 1 (negated when d < 0); the task sums are added.
template <class X, class MakeAcc, class Add>
X pippenger_precomputed_run(const Scalar256* sc, size_t m, unsigned c, ThreadPool& tp, MakeAcc make_acc, Add add) {
  if (m == 0) return X::identity();
  const unsigned W = msm_windows(c);
  const size_t K = size_t(1) << (c - 1);
  const size_t tasks = std::max<size_t>(1, std::min<size_t>(tp.size(), m / 256));
  std::vector<X> partial(tasks);
  tp.parallel_for(tasks, [&](size_t t) {
    size_t b, e;
    split_range(m, tasks, t, b, e);
    auto acc = make_acc(K);
    for (size_t i = b; i < e; i++) {
      const u64* k = sc[i].v;
      for (unsigned w = 0; w < W; w++) {
        const int d = window_digit(k, w * c, c);
        if (d != 0) add(acc, i, w, d);
      }
    }
    acc.finish();
    acc.reduce_all(K, 1, &partial[t]);
  });
  X r = X::identity();
  for (auto& p : partial) r = r.add(p);
  return r;
}

// Σ sc[i]·P_{k_i} where toff[i] = k_i·W is the offset of the base's row in the table.
template <class F>
Xyzz<F> pippenger_precomputed(const Affine<F>* table, unsigned c, const u32* toff, const Scalar256* sc, size_t m,
                              ThreadPool& tp) {
  return pippenger_precomputed_run<Xyzz<F>>(
      sc, m, c, tp, [](size_t K) { return BucketAcc<F>(K, msm_batch_size(K)); },
      [&](BucketAcc<F>& acc, size_t i, unsigned w, int d) {
        const Affine<F>& p = table[toff[i] + w];
        if (d > 0)
          acc.add(u32(d - 1), p);
        else
          acc.add(u32(-d - 1), Affine<F>{p.x, -p.y});
      });
}

// Below this many non-trivial scalars (neither 0 nor 1) the plain Pippenger over the table's
// window-0 column is cheaper than one set of 2^(c-1) buckets per task (bucket reduction dominates).
inline bool msm_precomputed_pays(size_t m, unsigned c, size_t threads) {
  const double T = double(std::max<size_t>(1, threads));
  const double K = double(size_t(1) << (c - 1));
  const double pre = (double)m * msm_windows(c) * 9.0 / T + K * 15.0;
  const unsigned cp = msm_pick_window(m);
  const double Kp = double(size_t(1) << (cp - 1));
  const double plain = msm_windows(cp) * ((double)m * 9.0 + Kp * 15.0) / T + 8.0 * 256.0;
  return pre < plain;
}

// The query MSM over a precomputed table (n bases, window c): same contract as msm().
template <class F>
Affine<F> msm_precomputed(const Affine<F>* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                          ThreadPool& tp, MsmTimings& tm) {
  return msm_query<F>(
      table, msm_windows(c), nb, scalars, sidx, tp, tm,
      [&](const MsmClassified& cl) { return batch_sum<F>(table, cl.ones.data(), cl.ones.size(), tp); },
      [&](const MsmClassified& cl) {
        tm.precomputed = msm_precomputed_pays(cl.other.size(), c, tp.size());
        return tm.precomputed ? pippenger_precomputed<F>(table, c, cl.other.data(), cl.sc.data(), cl.other.size(), tp)
                              : pippenger<F>(table, cl.other.data(), cl.sc.data(), cl.other.size(), tp);
      });
}

}  // namespace kiln
