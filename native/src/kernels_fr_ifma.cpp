// Fr entry points on AVX-512 IFMA (NTT and the Groth16 quotient, ntt/ntt_ifma.hpp; the witness's sums, ff/dot.hpp). Compiled into
// the kiln_ifma static library with -mavx512f -mavx512ifma when the building CPU has them;
// kernels_fr.cpp calls these only when cpu_ifma() is true.
#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include "kernels.hpp"
#include "ff/dot.hpp"
#include "ff/fr52.hpp"
#include "ntt/ntt_ifma.hpp"

namespace kiln {

void ntt_fr_ifma(Fr* a, unsigned log_n, bool inverse, bool coset) {
  ntt52::ntt_ifma(a, log_n, inverse, coset, pool());
}

void quotient_fr_ifma(Fr* a, Fr* b, Fr* c, unsigned log_n) { ntt52::quotient_ifma(a, b, c, log_n, pool()); }

// dot::run_scalar's sum with eight products at a time: the terms in 52-bit limbs (lanes = terms), the
// 520-bit products' columns summed exactly per lane (vpmadd52luq/huq into ten 64-bit accumulators: at most
// 10 additions of < 2^52 per batch, eight batches for n ≤ 64, so below 2^59), the lanes added (below 2^62),
// the columns carried into nine limbs, then the same reduction.
Fr dot_fr_ifma(const Fr* const* xs, const Fr* const* cs, u32 n) {
  using r52::V;
  static const Fr zero = Fr::zero();
  const V z = _mm512_setzero_si512();
  V t[10];
  for (int k = 0; k < 10; k++) t[k] = z;
  for (u32 j = 0; j < n; j += 8) {
    const u64* px[8];
    const u64* pc[8];
    for (u32 L = 0; L < 8; L++) {
      const bool in = j + L < n;
      px[L] = in ? xs[j + L]->v : zero.v;
      pc[L] = in ? cs[j + L]->v : zero.v;
    }
    const r52::F5 a = r52::gather8(px), b = r52::gather8(pc);
#pragma GCC unroll 5
    for (int i = 0; i < 5; i++) {
#pragma GCC unroll 5
      for (int k = 0; k < 5; k++) {
        t[i + k] = _mm512_madd52lo_epu64(t[i + k], a.l[i], b.l[k]);
        t[i + k + 1] = _mm512_madd52hi_epu64(t[i + k + 1], a.l[i], b.l[k]);
      }
    }
  }
  u64 T[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 10; k++) {
    // Σ over the lanes of column k (weight 2^(52k)); stored and added here (GCC 12 warns inside _mm512_reduce_add_epi64)
    alignas(64) u64 lanes[8];
    _mm512_store_si512((void*)lanes, t[k]);
    u64 col = 0;
    for (int L = 0; L < 8; L++) col += lanes[L];
    const unsigned bit = 52 * k, limb = bit / 64, sh = bit % 64;
    u64 c = 0;
    T[limb] = adc(T[limb], col << sh, 0, c);
    u64 hi = sh == 0 ? 0 : col >> (64 - sh);
    for (unsigned l = limb + 1; l < 10 && (hi != 0 || c != 0); l++) {
      T[l] = adc(T[l], hi, c, c);
      hi = 0;
    }
  }
  return dot::reduce(T);
}

}  // namespace kiln
#endif
