// Sparse matrix × vector over Fr in CSR form with a shared coefficient table:
//   out[row] = Σ_{k ∈ rowPtr[row] .. rowPtr[row+1]} coeffs[coeffIdx[k]] · w[colIdx[k]].
// Coefficients equal to 1 or -1 (most of an R1CS) become an addition or a subtraction, and so do
// other coefficients times a witness value 0 or 1 (bits: most of a PoRep witness).
#pragma once
#include <string>
#include <vector>

#include "../ff/bls12_381.hpp"
#include "../util/thread_pool.hpp"

namespace kiln {

struct CsrView {
  size_t rows, cols, nnz, n_coeffs;
  const u32* row_ptr;  // rows + 1
  const u32* col_idx;  // nnz
  const u32* coeff_idx;
  const Fr* coeffs;
};

// Returns an empty string when the indices are consistent, else a description of the first
// problem (checked off the JS thread: O(nnz)).
inline std::string csr_validate(const CsrView& m) {
  std::string msg;
  if (m.row_ptr[0] != 0) return "rowPtr[0] must be 0";
  for (size_t r = 0; r < m.rows; r++)
    if (m.row_ptr[r + 1] < m.row_ptr[r]) {
      msg = "rowPtr must be non-decreasing (row " + std::to_string(r) + ")";
      return msg;
    }
  if (m.row_ptr[m.rows] > m.nnz) {
    msg = "rowPtr[rows] = " + std::to_string(m.row_ptr[m.rows]) + " exceeds colIdx.length = " +
          std::to_string(m.nnz);
    return msg;
  }
  const size_t used = m.row_ptr[m.rows];
  for (size_t k = 0; k < used; k++) {
    if (m.col_idx[k] >= m.cols) {
      msg = "colIdx[" + std::to_string(k) + "] = " + std::to_string(m.col_idx[k]) + " out of range (cols = " +
            std::to_string(m.cols) + ")";
      return msg;
    }
    if (m.coeff_idx[k] >= m.n_coeffs) {
      msg = "coeffIdx[" + std::to_string(k) + "] = " + std::to_string(m.coeff_idx[k]) +
            " out of range (coefficient table has " + std::to_string(m.n_coeffs) + ")";
      return msg;
    }
  }
  return msg;
}

inline void csr_mat_vec(const CsrView& m, const Fr* w, Fr* out, ThreadPool& tp) {
  enum : uint8_t { kZero, kOne, kMinusOne, kOther };
  std::vector<uint8_t> cls(m.n_coeffs);
  const Fr one = Fr::one(), minus_one = -Fr::one();
  for (size_t i = 0; i < m.n_coeffs; i++) {
    const Fr& c = m.coeffs[i];
    cls[i] = c.is_zero() ? kZero : c == one ? kOne : c == minus_one ? kMinusOne : kOther;
  }
  const size_t T = tp.size();
  const size_t tasks = std::max<size_t>(1, std::min<size_t>(16 * T, m.rows / 256));
  tp.parallel_for(tasks, [&](size_t t) {
    size_t b, e;
    split_range(m.rows, tasks, t, b, e);
    for (size_t r = b; r < e; r++) {
      Fr acc = Fr::zero();
      for (u32 k = m.row_ptr[r]; k < m.row_ptr[r + 1]; k++) {
        const u32 ci = m.coeff_idx[k];
        const Fr& x = w[m.col_idx[k]];
        switch (cls[ci]) {
          case kOne: acc += x; break;
          case kMinusOne: acc -= x; break;
          case kOther:
            // Witnesses are mostly bits: c·0 and c·1 need no multiplication.
            if (x.is_zero()) break;
            acc += x == one ? m.coeffs[ci] : m.coeffs[ci] * x;
            break;
          default: break;
        }
      }
      out[r] = acc;
    }
  });
}

}  // namespace kiln
