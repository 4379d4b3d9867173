// Fr entry points: NTT, the Groth16 quotient and the CSR matrix-vector product.
#include "kernels.hpp"
#include "ntt/ntt.hpp"
#include "setup/scalars.hpp"

namespace kiln {

// Both run on AVX-512 IFMA when cpu_ifma() (kernels_fr_ifma.cpp, ntt/ntt_ifma.hpp): same bytes.
void ntt_fr(Fr* a, unsigned log_n, bool inverse, bool coset) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return ntt_fr_ifma(a, log_n, inverse, coset);
#endif
  ntt(a, log_n, inverse, coset, pool());
}

void quotient_fr(Fr* a, Fr* b, Fr* c, unsigned log_n) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return quotient_fr_ifma(a, b, c, log_n);
#endif
  quotient(a, b, c, log_n, pool());
}

dot::Fn dot_fr() {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return dot_fr_ifma;
#endif
  return dot::run_scalar;
}

void csr_mat_vec_fr(const CsrView& m, const Fr* w, Fr* out) { csr_mat_vec(m, w, out, pool()); }

std::string setup_scalars_fr(const SetupScalarsIn& in, const SetupScalarsOut& out) { return setup_scalars(in, out, pool()); }

}  // namespace kiln
