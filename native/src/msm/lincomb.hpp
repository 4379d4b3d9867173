// Linear combination of a few points, Σ k_i·P_i (the proof's assembly: r·δ, s·A, r·B1, r·s·δ, …),
// on the calling thread. Straus/Shamir: one shared chain of doublings, and per point a signed
// 4-bit window table of 8 affine multiples (one batch normalisation for all points), so a full
// 255-bit scalar costs ~64 mixed additions on top of the shared 256 doublings. Scalars 0 and
// identity points are skipped; scalars equal to 1 are plain additions. Variable time.
#pragma once
#include <memory>
#include <vector>

#include "pippenger.hpp"

namespace kiln {

template <class F>
Xyzz<F> lincomb(const Affine<F>* bases, const Fr* scalars, size_t n) {
  constexpr unsigned c = 4;                 // window
  constexpr size_t T = size_t(1) << (c - 1);  // 8 multiples: 1P … 8P
  Xyzz<F> ones = Xyzz<F>::identity();
  std::vector<size_t> idx;
  std::vector<Scalar256> ks;
  for (size_t i = 0; i < n; i++) {
    if (bases[i].is_identity() || scalars[i].is_zero()) continue;
    if (scalars[i].is_one()) {
      ones = ones.add_affine(bases[i]);
      continue;
    }
    Scalar256 k;
    scalars[i].to_canonical(k.v);
    idx.push_back(i);
    ks.push_back(k);
  }
  const size_t m = idx.size();
  if (m == 0) return ones;
  // tables: j·P for j = 1..8, normalised together.
  std::vector<Xyzz<F>> proj(m * T);
  std::vector<Affine<F>> tab(m * T);
  std::vector<F> scratch(m * T);
  for (size_t i = 0; i < m; i++) {
    const Affine<F>& p = bases[idx[i]];
    Xyzz<F>* t = &proj[i * T];
    t[0] = Xyzz<F>::from_affine(p);
    t[1] = Xyzz<F>::dbl_affine(p);
    for (size_t j = 2; j < T; j++) t[j] = t[j - 1].add_affine(p);
  }
  batch_to_affine<F>(proj.data(), tab.data(), m * T, scratch.data());
  const unsigned W = msm_windows(c);  // 64 windows: W·c = 256 > 255 bits, so the top carry is 0
  Xyzz<F> acc = Xyzz<F>::identity();
  for (unsigned w = W; w-- > 0;) {
    for (unsigned b = 0; b < c; b++) acc = acc.dbl();
    for (size_t i = 0; i < m; i++) {
      const int d = window_digit(ks[i].v, w * c, c);
      if (d > 0) {
        acc = acc.add_affine(tab[i * T + size_t(d - 1)]);
      } else if (d < 0) {
        const Affine<F>& q = tab[i * T + size_t(-d - 1)];
        acc = acc.add_affine(q.neg());
      }
    }
  }
  return acc.add(ones);
}

}  // namespace kiln
