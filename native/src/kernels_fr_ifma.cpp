// Fr entry points on AVX-512 IFMA (NTT and the Groth16 quotient, ntt/ntt_ifma.hpp). Compiled into
// the kiln_ifma static library with -mavx512f -mavx512ifma when the building CPU has them;
// kernels_fr.cpp calls these only when cpu_ifma() is true.
#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include "kernels.hpp"
#include "ntt/ntt_ifma.hpp"

namespace kiln {

void ntt_fr_ifma(Fr* a, unsigned log_n, bool inverse, bool coset) {
  ntt52::ntt_ifma(a, log_n, inverse, coset, pool());
}

void quotient_fr_ifma(Fr* a, Fr* b, Fr* c, unsigned log_n) { ntt52::quotient_ifma(a, b, c, log_n, pool()); }

}  // namespace kiln
#endif
