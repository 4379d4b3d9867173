// Fr entry points: NTT, the Groth16 quotient and the CSR matrix-vector product.
#include "kernels.hpp"
#include "ntt/ntt.hpp"

namespace kiln {

void ntt_fr(Fr* a, unsigned log_n, bool inverse, bool coset) { ntt(a, log_n, inverse, coset, pool()); }

void quotient_fr(Fr* a, Fr* b, Fr* c, unsigned log_n) { quotient(a, b, c, log_n, pool()); }

void csr_mat_vec_fr(const CsrView& m, const Fr* w, Fr* out) { csr_mat_vec(m, w, out, pool()); }

}  // namespace kiln
