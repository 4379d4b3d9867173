// G2 entry points: instantiates the MSM, batch addition and fixed-base templates over Fq2.
#include "kernels.hpp"
#include "msm/fixed_base.hpp"
#include "msm/lincomb.hpp"

namespace kiln {

G2Affine g2_table_form(const G2Affine& p) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return g2_to_m52(p);
#endif
  return p;
}

G2Affine msm_g2(const G2Affine* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return msm_g2_ifma(bases, nb, scalars, sidx, tm);
#endif
  return msm<Fq2>(bases, nb, scalars, sidx, pool(), tm);
}

void msm_precompute_g2(const G2Affine* bases, size_t n, unsigned c, G2Affine* table) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return msm_precompute_g2_ifma(bases, n, c, table);
#endif
  msm_precompute<Fq2>(bases, n, c, table, pool());
}

G2Affine msm_precomputed_g2(const G2Affine* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                            MsmTimings& tm) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return msm_precomputed_g2_ifma(table, c, nb, scalars, sidx, tm);
#endif
  return msm_precomputed<Fq2>(table, c, nb, scalars, sidx, pool(), tm);
}

G2Affine batch_add_g2(const G2Affine* bases, const u32* idx, size_t n) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return batch_add_g2_ifma(bases, idx, n);
#endif
  return batch_sum<Fq2>(bases, idx, n, pool()).to_affine();
}

void fixed_base_mul_g2(const G2Affine& base, const Fr* scalars, size_t n, G2Affine* out) {
  fixed_base_mul<Fq2>(base, scalars, n, out, pool());
}

G2Affine g2_add(const G2Affine& a, const G2Affine& b) {
  return G2Xyzz::from_affine(a).add_affine(b).to_affine();
}

G2Affine g2_dbl(const G2Affine& a) { return G2Xyzz::dbl_affine(a).to_affine(); }

G2Affine g2_mul(const G2Affine& a, const Fr& k) {
  u64 c[4];
  k.to_canonical(c);
  return scalar_mul<Fq2>(a, c, 4).to_affine();
}

G2Affine lincomb_g2(const G2Affine* bases, const Fr* scalars, size_t n) {
  return lincomb<Fq2>(bases, scalars, n).to_affine();
}

DecodeFault decode_g2_uncompressed(const uint8_t* src, uint8_t* dst, size_t n, int check) {
  return zcash::decode<zcash::G2Wire>(src, dst, n, check, pool());
}

void encode_g2_uncompressed(const uint8_t* src, uint8_t* dst, size_t n) {
  zcash::encode<zcash::G2Wire>(src, dst, n, pool());
}

}  // namespace kiln
