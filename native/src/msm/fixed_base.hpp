// Fixed-base multiplication of one point by many scalars (the dev setup's hot loop).
//
// Table T[w][j] = (j+1)·2^{wc}·P (affine, signed digits → 2^(c-1) entries per window); each
// scalar is then the sum of W table entries. The sums of a chunk of scalars are accumulated
// window by window with batched affine additions (the chunk's accumulators are distinct, so there
// are no conflicts), which also leaves the results affine: no final normalisation.
#pragma once
#include "pippenger.hpp"

namespace kiln {

inline unsigned fixed_base_pick_window(size_t n, size_t point_bytes) {
  unsigned best = 2;
  double best_cost = 1e300;
  for (unsigned c = 2; c <= 16; c++) {
    const double K = double(size_t(1) << (c - 1));
    const unsigned W = msm_windows(c);
    if (W * K * (double)point_bytes > 96.0 * 1024 * 1024) break;  // table memory cap
    const double cost = W * ((double)n * 7.0 + K * 16.0);
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

template <class F>
void fixed_base_mul(const Affine<F>& base, const Fr* scalars, size_t n, Affine<F>* out, ThreadPool& tp) {
  if (n == 0) return;
  if (base.is_identity()) {
    for (size_t i = 0; i < n; i++) out[i] = Affine<F>::identity();
    return;
  }
  const unsigned c = fixed_base_pick_window(n, sizeof(Affine<F>));
  const unsigned W = msm_windows(c);
  const size_t K = size_t(1) << (c - 1);

  // Window bases 2^{wc}·P.
  std::vector<Xyzz<F>> wb(W);
  std::vector<Affine<F>> wba(W);
  std::vector<F> scratch(std::max<size_t>(W, 1));
  wb[0] = Xyzz<F>::from_affine(base);
  for (unsigned w = 1; w < W; w++) {
    Xyzz<F> q = wb[w - 1];
    for (unsigned j = 0; j < c; j++) q = q.dbl();
    wb[w] = q;
  }
  batch_to_affine<F>(wb.data(), wba.data(), W, scratch.data());

  std::unique_ptr<Affine<F>[]> table(new Affine<F>[W * K]);
  const size_t tchunk = 1024;
  const size_t per_w = (K + tchunk - 1) / tchunk;
  tp.parallel_for(W * per_w, [&](size_t t) {
    const size_t w = t / per_w;
    const size_t j0 = (t % per_w) * tchunk, j1 = std::min(K, j0 + tchunk);
    std::vector<Xyzz<F>> pts(j1 - j0);
    std::vector<F> sc(j1 - j0);
    // (j0+1)·B_w by double-and-add, then successive mixed additions.
    u64 k[4] = {u64(j0 + 1), 0, 0, 0};
    Xyzz<F> q = scalar_mul<F>(wba[w], k, 1);
    for (size_t j = j0; j < j1; j++) {
      pts[j - j0] = q;
      q = q.add_affine(wba[w]);
    }
    batch_to_affine<F>(pts.data(), table.get() + w * K + j0, j1 - j0, sc.data());
  });

  const size_t CH = 1024;
  const size_t chunks = (n + CH - 1) / CH;
  tp.parallel_for(chunks, [&](size_t ch) {
    const size_t b = ch * CH, m = std::min(CH, n - b);
    std::vector<Scalar256> k(m);
    std::vector<Affine<F>> src(m);
    std::vector<F> prefix(m);
    std::vector<uint8_t> kind(m);
    Affine<F>* acc = out + b;
    for (size_t i = 0; i < m; i++) {
      scalars[b + i].to_canonical(k[i].v);
      acc[i] = Affine<F>::identity();
    }
    for (unsigned w = 0; w < W; w++) {
      const Affine<F>* tw = table.get() + w * K;
      for (size_t i = 0; i < m; i++) {
        const int d = window_digit(k[i].v, w * c, c);
        if (d > 0)
          src[i] = tw[d - 1];
        else if (d < 0)
          src[i] = Affine<F>{tw[-d - 1].x, -tw[-d - 1].y};
        else
          src[i] = Affine<F>::identity();
      }
      batch_add_affine<F>(
          m, [&](size_t i) -> Affine<F>& { return acc[i]; },
          [&](size_t i) -> const Affine<F>& { return src[i]; }, prefix.data(), kind.data());
    }
  });
}

}  // namespace kiln
