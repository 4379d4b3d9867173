// Host entry points of the native CPU backend (non-template, one translation unit per group so
// the build compiles them in parallel). addon.cpp is the only caller; a CUDA build will add the
// same entry points for the device next to these (native/cuda/*.cu) and dispatch between them.
#pragma once
#include <string>

#include "codec/zcash.hpp"
#include "ec/xyzz.hpp"
#include "ff/bls12_381.hpp"
#include "msm/pippenger.hpp"
#include "msm/precomputed.hpp"
#include "sparse/csr.hpp"

namespace kiln {

using G1Affine = Affine<Fq>;
using G2Affine = Affine<Fq2>;
using G1Xyzz = Xyzz<Fq>;
using G2Xyzz = Xyzz<Fq2>;

static_assert(sizeof(Fr) == 32 && sizeof(Fq) == 48, "field layout");
static_assert(sizeof(G1Affine) == 96 && sizeof(G2Affine) == 192, "point layout");

// kernels_g1.cpp
G1Affine msm_g1(const G1Affine* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm);
// Precomputed window shifts of fixed bases (msm/precomputed.hpp): table = n·⌈256/c⌉ points.
void msm_precompute_g1(const G1Affine* bases, size_t n, unsigned c, G1Affine* table);
G1Affine msm_precomputed_g1(const G1Affine* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                            MsmTimings& tm);
G1Affine batch_add_g1(const G1Affine* bases, const u32* idx, size_t n);
void fixed_base_mul_g1(const G1Affine& base, const Fr* scalars, size_t n, G1Affine* out);
G1Affine g1_add(const G1Affine& a, const G1Affine& b);
G1Affine g1_dbl(const G1Affine& a);
G1Affine g1_mul(const G1Affine& a, const Fr& k);
// Σ scalars[i]·bases[i] for a few points, on the calling thread (msm/lincomb.hpp).
G1Affine lincomb_g1(const G1Affine* bases, const Fr* scalars, size_t n);
// zcash uncompressed (96 B) <-> native (96 B), n points, on the pool. `check`: kCheck* bits.
DecodeFault decode_g1_uncompressed(const uint8_t* src, uint8_t* dst, size_t n, int check);
void encode_g1_uncompressed(const uint8_t* src, uint8_t* dst, size_t n);

// Whether the MSMs run on AVX-512 IFMA (kernels_ifma.cpp): built in, the running CPU has it,
// and KILN_NO_IFMA is not set (read once). Precomputed tables are then stored in that path's M52
// form (msm/ifma.hpp), so they are only valid within the process that built them.
bool cpu_ifma();
// The form a point takes in a precomputed table (M52 when cpu_ifma(), else unchanged).
G1Affine g1_table_form(const G1Affine& p);
G2Affine g2_table_form(const G2Affine& p);
#ifdef KILN_HAVE_IFMA
G1Affine msm_g1_ifma(const G1Affine* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm);
void msm_precompute_g1_ifma(const G1Affine* bases, size_t n, unsigned c, G1Affine* table);
G1Affine msm_precomputed_g1_ifma(const G1Affine* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                                 MsmTimings& tm);
G1Affine batch_add_g1_ifma(const G1Affine* bases, const u32* idx, size_t n);
G1Affine g1_to_m52(const G1Affine& p);
G2Affine msm_g2_ifma(const G2Affine* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm);
void msm_precompute_g2_ifma(const G2Affine* bases, size_t n, unsigned c, G2Affine* table);
G2Affine msm_precomputed_g2_ifma(const G2Affine* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                                 MsmTimings& tm);
G2Affine batch_add_g2_ifma(const G2Affine* bases, const u32* idx, size_t n);
G2Affine g2_to_m52(const G2Affine& p);
#endif

// kernels_g2.cpp
G2Affine msm_g2(const G2Affine* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm);
void msm_precompute_g2(const G2Affine* bases, size_t n, unsigned c, G2Affine* table);
G2Affine msm_precomputed_g2(const G2Affine* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                            MsmTimings& tm);
G2Affine batch_add_g2(const G2Affine* bases, const u32* idx, size_t n);
void fixed_base_mul_g2(const G2Affine& base, const Fr* scalars, size_t n, G2Affine* out);
G2Affine g2_add(const G2Affine& a, const G2Affine& b);
G2Affine g2_dbl(const G2Affine& a);
G2Affine g2_mul(const G2Affine& a, const Fr& k);
G2Affine lincomb_g2(const G2Affine* bases, const Fr* scalars, size_t n);
// zcash uncompressed (192 B, c1 first) <-> native (192 B, c0 first).
DecodeFault decode_g2_uncompressed(const uint8_t* src, uint8_t* dst, size_t n, int check);
void encode_g2_uncompressed(const uint8_t* src, uint8_t* dst, size_t n);

// kernels_fr.cpp
void ntt_fr(Fr* a, unsigned log_n, bool inverse, bool coset);
void quotient_fr(Fr* a, Fr* b, Fr* c, unsigned log_n);
void csr_mat_vec_fr(const CsrView& m, const Fr* w, Fr* out);
#ifdef KILN_HAVE_IFMA
// kernels_fr_ifma.cpp: the same on AVX-512 IFMA (called when cpu_ifma()).
void ntt_fr_ifma(Fr* a, unsigned log_n, bool inverse, bool coset);
void quotient_fr_ifma(Fr* a, Fr* b, Fr* c, unsigned log_n);
#endif

}  // namespace kiln
