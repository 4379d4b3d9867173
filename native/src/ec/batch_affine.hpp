// Batched affine addition: n independent additions dst_i += src_i sharing one field inversion
// (Montgomery's trick). Per addition: 3M for the shared inversion, then 2M + 1S, i.e. about 6M
// against 8M+2S for a mixed XYZZ addition.
//
// Edge cases are resolved per lane, so callers may pass anything:
//   src = O        -> no-op            dst = O          -> dst = src
//   dst =  src     -> doubling (λ = 3x^2 / 2y)
//   dst = -src     -> dst = O          (and y = 0 doubling -> O)
// The dst of every lane must be a distinct object; src may be any other object.
#pragma once
#include "xyzz.hpp"

namespace kiln {

enum : uint8_t { kLaneSkip = 0, kLaneAdd = 1, kLaneDbl = 2 };

// prefix: scratch of n field elements; kind: scratch of n bytes.
template <class F, class DstAt, class SrcAt>
inline void batch_add_affine(size_t n, DstAt dst_at, SrcAt src_at, F* prefix, uint8_t* kind) {
  F acc = F::one();
  size_t live = 0;
  for (size_t i = 0; i < n; i++) {
    Affine<F>& d = dst_at(i);
    const Affine<F>& s = src_at(i);
    kind[i] = kLaneSkip;
    if (s.is_identity()) continue;
    if (d.is_identity()) {
      d = s;
      continue;
    }
    F den;
    if (d.x == s.x) {
      if (d.y != s.y || d.y.is_zero()) {  // P + (-P), or a 2-torsion doubling
        d = Affine<F>::identity();
        continue;
      }
      kind[i] = kLaneDbl;
      den = d.y.dbl();
    } else {
      kind[i] = kLaneAdd;
      den = s.x - d.x;
    }
    prefix[i] = acc;
    acc *= den;
    live++;
  }
  if (live == 0) return;
  F inv = acc.inverse();
  for (size_t i = n; i-- > 0;) {
    if (kind[i] == kLaneSkip) continue;
    Affine<F>& d = dst_at(i);
    const Affine<F>& s = src_at(i);
    F lambda;
    if (kind[i] == kLaneAdd) {
      const F den = s.x - d.x;
      const F inv_i = inv * prefix[i];
      inv *= den;
      lambda = (s.y - d.y) * inv_i;
    } else {
      const F den = d.y.dbl();
      const F inv_i = inv * prefix[i];
      inv *= den;
      const F x2 = d.x.sqr();
      lambda = (x2.dbl() + x2) * inv_i;
    }
    const F x3 = lambda.sqr() - d.x - s.x;
    d.y = lambda * (d.x - x3) - d.y;
    d.x = x3;
  }
}

// Batch normalisation: out[i] = in[i] as affine, one inversion for the whole range.
// scratch: n field elements.
template <class F>
inline void batch_to_affine(const Xyzz<F>* in, Affine<F>* out, size_t n, F* scratch) {
  F acc = F::one();
  for (size_t i = 0; i < n; i++) {
    scratch[i] = acc;
    if (!in[i].is_identity()) acc *= in[i].ZZZ;
  }
  F inv = acc.inverse();
  for (size_t i = n; i-- > 0;) {
    if (in[i].is_identity()) {
      out[i] = Affine<F>::identity();
      continue;
    }
    const F izzz = inv * scratch[i];
    inv *= in[i].ZZZ;
    out[i] = in[i].to_affine_with(izzz);
  }
}

}  // namespace kiln
