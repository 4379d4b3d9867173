// Short Weierstrass curves y^2 = x^3 + b (a = 0) over a field F (Fq for G1, Fq2 for G2).
//
//  Affine<F>: (x, y); the identity is (0, 0), which is never on these curves (b != 0). This
//             matches the byte layout (identity = all zero bytes), so buffers are cast directly.
//  Xyzz<F>:   extended Jacobian (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; identity
//             has ZZ = 0. Formulas from the EFD ("xyzz" coordinates): add-2008-s (12M+2S),
//             madd-2008-s (8M+2S), dbl-2008-s-1 (6M+3S). Mixed addition is what bucket reduction
//             and fixed-base tables need; every function handles the identity and P = ±Q.
#pragma once
#include "../util/hd.hpp"

namespace kiln {

template <class F>
struct Affine {
  F x, y;
  KILN_HD static KILN_INLINE Affine identity() { return {F::zero(), F::zero()}; }
  KILN_HD KILN_INLINE bool is_identity() const { return x.is_zero() && y.is_zero(); }
  KILN_HD KILN_INLINE Affine neg() const {
    return is_identity() ? *this : Affine{x, -y};
  }
  KILN_HD KILN_INLINE bool operator==(const Affine& o) const { return x == o.x && y == o.y; }
};

template <class F>
struct Xyzz {
  F X, Y, ZZ, ZZZ;

  KILN_HD static KILN_INLINE Xyzz identity() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
  KILN_HD KILN_INLINE bool is_identity() const { return ZZ.is_zero(); }
  KILN_HD static KILN_INLINE Xyzz from_affine(const Affine<F>& a) {
    if (a.is_identity()) return identity();
    return {a.x, a.y, F::one(), F::one()};
  }
  KILN_HD KILN_INLINE Xyzz neg() const { return {X, -Y, ZZ, ZZZ}; }

  // dbl-2008-s-1 with a = 0.
  KILN_HD Xyzz dbl() const {
    if (is_identity() || Y.is_zero()) return identity();
    const F U = Y.dbl();
    const F V = U.sqr();
    const F W = U * V;
    const F S = X * V;
    const F X2 = X.sqr();
    const F M = X2.dbl() + X2;
    Xyzz r;
    r.X = M.sqr() - S.dbl();
    r.Y = M * (S - r.X) - W * Y;
    r.ZZ = V * ZZ;
    r.ZZZ = W * ZZZ;
    return r;
  }

  // Doubling of an affine point (mdbl-2008-s-1).
  KILN_HD static Xyzz dbl_affine(const Affine<F>& a) {
    if (a.is_identity() || a.y.is_zero()) return identity();
    const F U = a.y.dbl();
    const F V = U.sqr();
    const F W = U * V;
    const F S = a.x * V;
    const F X2 = a.x.sqr();
    const F M = X2.dbl() + X2;
    Xyzz r;
    r.X = M.sqr() - S.dbl();
    r.Y = M * (S - r.X) - W * a.y;
    r.ZZ = V;
    r.ZZZ = W;
    return r;
  }

  // this + q, q affine (madd-2008-s).
  KILN_HD Xyzz add_affine(const Affine<F>& q) const {
    if (q.is_identity()) return *this;
    if (is_identity()) return from_affine(q);
    const F U2 = q.x * ZZ;
    const F S2 = q.y * ZZZ;
    const F P = U2 - X;
    const F R = S2 - Y;
    if (P.is_zero()) {
      if (R.is_zero()) return dbl_affine(q);
      return identity();
    }
    const F PP = P.sqr();
    const F PPP = P * PP;
    const F Q = X * PP;
    Xyzz r;
    r.X = R.sqr() - PPP - Q.dbl();
    r.Y = R * (Q - r.X) - Y * PPP;
    r.ZZ = ZZ * PP;
    r.ZZZ = ZZZ * PPP;
    return r;
  }

  // this + q (add-2008-s).
  KILN_HD Xyzz add(const Xyzz& q) const {
    if (q.is_identity()) return *this;
    if (is_identity()) return q;
    const F U1 = X * q.ZZ;
    const F U2 = q.X * ZZ;
    const F S1 = Y * q.ZZZ;
    const F S2 = q.Y * ZZZ;
    const F P = U2 - U1;
    const F R = S2 - S1;
    if (P.is_zero()) {
      if (R.is_zero()) return dbl();
      return identity();
    }
    const F PP = P.sqr();
    const F PPP = P * PP;
    const F Q = U1 * PP;
    Xyzz r;
    r.X = R.sqr() - PPP - Q.dbl();
    r.Y = R * (Q - r.X) - S1 * PPP;
    r.ZZ = ZZ * q.ZZ * PP;
    r.ZZZ = ZZZ * q.ZZZ * PPP;
    return r;
  }

  // x = X / ZZ, y = Y / ZZZ with one inversion: 1/ZZ = (ZZ / ZZZ)^2 because ZZ^3 = ZZZ^2.
  KILN_HD Affine<F> to_affine() const {
    if (is_identity()) return Affine<F>::identity();
    const F izzz = ZZZ.inverse();
    return to_affine_with(izzz);
  }
  // Same, given 1/ZZZ (for batch normalisation).
  KILN_HD KILN_INLINE Affine<F> to_affine_with(const F& izzz) const {
    const F s = ZZ * izzz;  // 1/Z
    return {X * s.sqr(), Y * izzz};
  }
};

// Double-and-add, variable time; k is a canonical little-endian integer of `limbs` u64 limbs.
template <class F>
KILN_HD Xyzz<F> scalar_mul(const Affine<F>& p, const u64* k, int limbs) {
  Xyzz<F> acc = Xyzz<F>::identity();
  for (int i = limbs * 64 - 1; i >= 0; i--) {
    acc = acc.dbl();
    if ((k[i >> 6] >> (i & 63)) & 1) acc = acc.add_affine(p);
  }
  return acc;
}

}  // namespace kiln
