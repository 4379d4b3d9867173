// Poseidon over BLS12-381's Fr as Filecoin uses it (neptune, Strength::Standard, x^5 S-box), in its
// optimized form (neptune `hash_optimized_dynamic`: compressed round constants, one dense matrix before
// the partial rounds, one sparse matrix per partial round). The constants are not derived here: the
// caller hands them over once per arity (src/filecoin/hash/poseidon.ts computes them from the Grain LFSR
// and the Cauchy MDS matrix, and its poseidonHash is the slow twin test/native-poseidon.test.ts compares).
#pragma once
#include <cstdint>
#include <vector>

#include "ff/bls12_381.hpp"

namespace kiln {

struct PoseidonOptimized {
  int t = 0;        // width = arity + 1
  int full = 0;     // full rounds (8)
  int partial = 0;  // partial rounds
  std::vector<Fr> crc;         // full·t + partial compressed round constants
  std::vector<Fr> pre_sparse;  // t×t, row-major m[i·t + j]
  std::vector<Fr> mds;         // t×t
  std::vector<Fr> w_hat;       // partial × t
  std::vector<Fr> v_rest;      // partial × (t − 1)
};

inline Fr poseidon_pow5(const Fr& x) {
  const Fr x2 = x * x;
  const Fr x4 = x2 * x2;
  return x4 * x;
}

// state' = state · m (a row vector times the matrix): out[j] = Σ_i state[i]·m[i][j].
inline void poseidon_apply(const std::vector<Fr>& m, Fr* s, int t) {
  Fr out[40];
  for (int j = 0; j < t; j++) out[j] = Fr::zero();
  for (int i = 0; i < t; i++) {
    const Fr si = s[i];
    const Fr* row = &m[(size_t)i * t];
    for (int j = 0; j < t; j++) out[j] += row[j] * si;
  }
  for (int j = 0; j < t; j++) s[j] = out[j];
}

// H(tag ‖ in[0..t−2]): state[1] after the permutation. `in` and `tag` in Montgomery form.
inline Fr poseidon_hash(const PoseidonOptimized& c, const Fr* in, const Fr& tag) {
  const int t = c.t;
  const int half = c.full / 2;
  Fr s[40];
  s[0] = tag;
  for (int i = 1; i < t; i++) s[i] = in[i - 1];
  const Fr* crc = c.crc.data();
  size_t offset = 0;
  int round = 0;
  const int sparse_offset = half - 1;
  auto mix = [&]() {
    if (round == sparse_offset) {
      poseidon_apply(c.pre_sparse, s, t);
    } else if (round > sparse_offset && round < half + c.partial) {
      const int k = round - sparse_offset - 1;
      const Fr* w = &c.w_hat[(size_t)k * t];
      const Fr* v = &c.v_rest[(size_t)k * (t - 1)];
      Fr first = Fr::zero();
      for (int i = 0; i < t; i++) first += w[i] * s[i];
      const Fr s0 = s[0];
      for (int j = 1; j < t; j++) s[j] += v[j - 1] * s0;
      s[0] = first;
    } else {
      poseidon_apply(c.mds, s, t);
    }
    round++;
  };
  auto full_round = [&](bool last) {
    for (int i = 0; i < t; i++) s[i] = last ? poseidon_pow5(s[i]) : poseidon_pow5(s[i]) + crc[offset + i];
    if (!last) offset += t;
    mix();
  };
  for (int i = 0; i < t; i++) s[i] += crc[i];
  offset = t;
  for (int i = 0; i < half; i++) full_round(false);
  for (int i = 0; i < c.partial; i++) {
    s[0] = poseidon_pow5(s[0]) + crc[offset];
    offset++;
    mix();
  }
  for (int i = 1; i < half; i++) full_round(false);
  full_round(true);
  return s[1];
}

}  // namespace kiln
