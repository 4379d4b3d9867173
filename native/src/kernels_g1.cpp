// G1 entry points: instantiates the MSM, batch addition and fixed-base templates over Fq.
#include "kernels.hpp"
#include "msm/fixed_base.hpp"
#include "msm/lincomb.hpp"

#include <cstdlib>

namespace kiln {

bool cpu_ifma() {
#ifdef KILN_HAVE_IFMA
  static const bool on = [] {
    __builtin_cpu_init();
    const char* off = std::getenv("KILN_NO_IFMA");
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma") &&
           !(off && *off && std::string(off) != "0");
  }();
  return on;
#else
  return false;
#endif
}

G1Affine g1_table_form(const G1Affine& p) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return g1_to_m52(p);
#endif
  return p;
}

G1Affine msm_g1(const G1Affine* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return msm_g1_ifma(bases, nb, scalars, sidx, tm);
#endif
  return msm<Fq>(bases, nb, scalars, sidx, pool(), tm);
}

void msm_precompute_g1(const G1Affine* bases, size_t n, unsigned c, G1Affine* table) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return msm_precompute_g1_ifma(bases, n, c, table);
#endif
  msm_precompute<Fq>(bases, n, c, table, pool());
}

G1Affine msm_precomputed_g1(const G1Affine* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                            MsmTimings& tm) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return msm_precomputed_g1_ifma(table, c, nb, scalars, sidx, tm);
#endif
  return msm_precomputed<Fq>(table, c, nb, scalars, sidx, pool(), tm);
}

G1Affine batch_add_g1(const G1Affine* bases, const u32* idx, size_t n) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return batch_add_g1_ifma(bases, idx, n);
#endif
  return batch_sum<Fq>(bases, idx, n, pool()).to_affine();
}

void fixed_base_mul_g1(const G1Affine& base, const Fr* scalars, size_t n, G1Affine* out) {
  fixed_base_mul<Fq>(base, scalars, n, out, pool());
}

G1Affine g1_add(const G1Affine& a, const G1Affine& b) {
  return G1Xyzz::from_affine(a).add_affine(b).to_affine();
}

G1Affine g1_dbl(const G1Affine& a) { return G1Xyzz::dbl_affine(a).to_affine(); }

G1Affine g1_mul(const G1Affine& a, const Fr& k) {
  u64 c[4];
  k.to_canonical(c);
  return scalar_mul<Fq>(a, c, 4).to_affine();
}

G1Affine lincomb_g1(const G1Affine* bases, const Fr* scalars, size_t n) {
  return lincomb<Fq>(bases, scalars, n).to_affine();
}

DecodeFault decode_g1_uncompressed(const uint8_t* src, uint8_t* dst, size_t n, int check) {
  return zcash::decode<zcash::G1Wire>(src, dst, n, check, pool());
}

void encode_g1_uncompressed(const uint8_t* src, uint8_t* dst, size_t n) {
  zcash::encode<zcash::G1Wire>(src, dst, n, pool());
}

}  // namespace kiln
