// The scalars of the INSECURE CPU development setup (src/groth16/setup.ts setupScalarsTs is the slow twin,
// byte for byte): for a circuit of m constraints, ni inputs and na aux variables over a domain of n = 2^k ≥ m + ni,
//   L_j(τ) = Z(τ)/n · ω^j / (τ − ω^j)                 j < m + ni (ω = 7^((r−1)/n), Z(τ) = τ^n − 1)
//   A_i(τ) = Σ_rows A[row][i]·L_row(τ) (+ L_{m+i} for an input i), likewise B, C
//   h_i = hScale·τ^i (i < n − 1),  l_j = (β·A + α·B + C)_{ni+j}·δ⁻¹,  ic_i = (β·A + α·B + C)_i·γ⁻¹,
//   a_k = A_{qa[k]}(τ),  b_k = B_{qb[k]}(τ)
// all Montgomery Fr. The field work that took the 2 KiB PoRep setup 24 s of TypeScript bigints.
#pragma once
#include <string>
#include <vector>

#include "../ff/bls12_381.hpp"
#include "../sparse/csr.hpp"
#include "../util/thread_pool.hpp"

namespace kiln {

struct SetupScalarsIn {
  size_t n, m, ni, na;
  CsrView a, b, c;
  const u32* qa;
  size_t qa_len;
  const u32* qb;
  size_t qb_len;
  // τ, α, β, γ⁻¹, δ⁻¹, hScale
  Fr tau, alpha, beta, gamma_inv, delta_inv, h_scale;
};

struct SetupScalarsOut {
  Fr* h;   // n − 1
  Fr* l;   // na
  Fr* ic;  // ni
  Fr* a;   // qa_len
  Fr* b;   // qb_len
};

// Empty when consistent, else what is wrong.
inline std::string setup_scalars_validate(const SetupScalarsIn& in) {
  if (in.n < 2 || (in.n & (in.n - 1)) != 0) return "n must be a power of two ≥ 2";
  if (in.n < in.m + in.ni) return "the domain is smaller than constraints + inputs";
  const CsrView* ms[3] = {&in.a, &in.b, &in.c};
  const char* names[3] = {"A", "B", "C"};
  for (int k = 0; k < 3; k++) {
    if (ms[k]->rows != in.m || ms[k]->cols != in.ni + in.na) return std::string("matrix ") + names[k] + " is not constraints × (inputs + aux)";
    const std::string e = csr_validate(*ms[k]);
    if (!e.empty()) return std::string("matrix ") + names[k] + ": " + e;
  }
  for (size_t k = 0; k < in.qa_len; k++)
    if (in.qa[k] >= in.ni + in.na) return "qa[" + std::to_string(k) + "] out of range";
  for (size_t k = 0; k < in.qb_len; k++)
    if (in.qb[k] >= in.ni + in.na) return "qb[" + std::to_string(k) + "] out of range";
  return "";
}

// (r − 1) / n for n a power of two: r − 1 shifted right by log2 n.
inline void setup_omega_exponent(size_t n, u64 e[4]) {
  for (int i = 0; i < 4; i++) e[i] = FrParams::MOD[i];
  e[0] -= 1;  // r is odd
  unsigned k = 0;
  while ((size_t(1) << k) < n) k++;
  for (unsigned s = 0; s < k; s++) {
    for (int i = 0; i < 4; i++) e[i] = (e[i] >> 1) | (i < 3 ? e[i + 1] << 63 : 0);
  }
}

// Returns "" or the error (τ in the domain).
inline std::string setup_scalars(const SetupScalarsIn& in, const SetupScalarsOut& out, ThreadPool& tp) {
  const size_t n = in.n, count = in.m + in.ni, cols = in.ni + in.na;
  u64 e[4];
  setup_omega_exponent(n, e);
  const Fr omega = Fr::from_u64(7).pow(e);
  const Fr z = in.tau.pow_u64(n) - Fr::one();
  if (z.is_zero()) return "τ lies in the evaluation domain";
  const Fr scale = z * Fr::from_u64(n).inverse();

  // Lagrange basis, in chunks: ω^j from the chunk's first power, batch inversion of τ − ω^j
  std::vector<Fr> lag(count);
  const size_t CH = 1 << 14;
  tp.parallel_for((count + CH - 1) / CH, [&](size_t t) {
    const size_t j0 = t * CH, j1 = std::min(count, j0 + CH);
    std::vector<Fr> w(j1 - j0), d(j1 - j0), prefix(j1 - j0);
    Fr p = omega.pow_u64(j0);
    for (size_t j = j0; j < j1; j++) {
      w[j - j0] = p;
      d[j - j0] = in.tau - p;
      p = p * omega;
    }
    Fr acc = Fr::one();
    for (size_t i = 0; i < d.size(); i++) {
      prefix[i] = acc;
      acc = acc * d[i];
    }
    Fr inv = acc.inverse();
    for (size_t i = d.size(); i-- > 0;) {
      const Fr di = d[i];
      lag[j0 + i] = scale * w[i] * (inv * prefix[i]);
      inv = inv * di;
    }
  });

  // A, B, C at τ: one matrix per task, each column's terms summed in row order
  std::vector<Fr> at(cols, Fr::zero()), bt(cols, Fr::zero()), ct(cols, Fr::zero());
  const CsrView* ms[3] = {&in.a, &in.b, &in.c};
  std::vector<Fr>* vs[3] = {&at, &bt, &ct};
  tp.parallel_for(3, [&](size_t k) {
    const CsrView& mx = *ms[k];
    std::vector<Fr>& v = *vs[k];
    for (size_t row = 0; row < mx.rows; row++) {
      const Fr l = lag[row];
      for (u32 q = mx.row_ptr[row]; q < mx.row_ptr[row + 1]; q++) v[mx.col_idx[q]] = v[mx.col_idx[q]] + mx.coeffs[mx.coeff_idx[q]] * l;
    }
  });
  for (size_t i = 0; i < in.ni; i++) at[i] = at[i] + lag[in.m + i];

  // the query scalars
  auto lc = [&](size_t k) { return in.beta * at[k] + in.alpha * bt[k] + ct[k]; };
  tp.parallel_for((n - 1 + CH - 1) / CH, [&](size_t t) {
    const size_t i0 = t * CH, i1 = std::min(n - 1, i0 + CH);
    Fr p = in.h_scale * in.tau.pow_u64(i0);
    for (size_t i = i0; i < i1; i++) {
      out.h[i] = p;
      p = p * in.tau;
    }
  });
  tp.parallel_for((in.na + CH - 1) / CH, [&](size_t t) {
    const size_t j0 = t * CH, j1 = std::min(in.na, j0 + CH);
    for (size_t j = j0; j < j1; j++) out.l[j] = lc(in.ni + j) * in.delta_inv;
  });
  for (size_t i = 0; i < in.ni; i++) out.ic[i] = lc(i) * in.gamma_inv;
  for (size_t k = 0; k < in.qa_len; k++) out.a[k] = at[in.qa[k]];
  for (size_t k = 0; k < in.qb_len; k++) out.b[k] = bt[in.qb[k]];
  return "";
}

}  // namespace kiln
