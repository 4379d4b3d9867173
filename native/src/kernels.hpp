// Host entry points of the native CPU backend: the curve groups (kernels_ec.cpp, one template for
// G1 and G2), Fr (kernels_fr.cpp) and their AVX-512 IFMA twins (kernels_ifma.cpp,
// kernels_fr_ifma.cpp). addon.cpp is the caller; the CUDA addon (native/cuda/) has its own drivers.
#pragma once
#include <string>
#include <type_traits>

#include "codec/zcash.hpp"
#include "ec/xyzz.hpp"
#include "ff/bls12_381.hpp"
#include "ff/dot.hpp"
#include "msm/pippenger.hpp"
#include "msm/precomputed.hpp"
#include "setup/scalars.hpp"
#include "sparse/csr.hpp"

namespace kiln {

using G1Affine = Affine<Fq>;
using G2Affine = Affine<Fq2>;
using G1Xyzz = Xyzz<Fq>;
using G2Xyzz = Xyzz<Fq2>;

static_assert(sizeof(Fr) == 32 && sizeof(Fq) == 48, "field layout");
static_assert(sizeof(G1Affine) == 96 && sizeof(G2Affine) == 192, "point layout");

// One curve group's entry points, generic over the coordinate field (kernels_ec.cpp, instantiated
// for G1 = Ec<Fq> and G2 = Ec<Fq2>). Points are affine in the native layout (96 / 192 B).
template <class F>
struct Ec {
  using A = Affine<F>;
  static constexpr const char* name = std::is_same<F, Fq>::value ? "G1" : "G2";
  static A msm(const A* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm);
  // Precomputed window shifts of fixed bases (msm/precomputed.hpp): table = n·⌈256/c⌉ points.
  static void msm_precompute(const A* bases, size_t n, unsigned c, A* table);
  static A msm_precomputed(const A* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                           MsmTimings& tm);
  static A batch_add(const A* bases, const u32* idx, size_t n);
  static void fixed_base_mul(const A& base, const Fr* scalars, size_t n, A* out);
  static A add(const A& a, const A& b);
  static A dbl(const A& a);
  static A mul(const A& a, const Fr& k);
  // Σ scalars[i]·bases[i] for a few points, on the calling thread (msm/lincomb.hpp).
  static A lincomb(const A* bases, const Fr* scalars, size_t n);
  // The form a point takes in a precomputed table (M52 when cpu_ifma(), else unchanged).
  static A table_form(const A& p);
  // zcash uncompressed <-> native, n points, on the pool. G1: 96 B both ways; G2: 192 B, the wire
  // has c1 first, the native layout c0 first. `check`: kCheck* bits.
  static DecodeFault decode_uncompressed(const uint8_t* src, uint8_t* dst, size_t n, int check);
  static void encode_uncompressed(const uint8_t* src, uint8_t* dst, size_t n);
};
using G1 = Ec<Fq>;
using G2 = Ec<Fq2>;
extern template struct Ec<Fq>;
extern template struct Ec<Fq2>;

// Named forms of the codec entry points (for callers that are not generic over the group).
inline DecodeFault decode_g1_uncompressed(const uint8_t* s, uint8_t* d, size_t n, int check) {
  return G1::decode_uncompressed(s, d, n, check);
}
inline DecodeFault decode_g2_uncompressed(const uint8_t* s, uint8_t* d, size_t n, int check) {
  return G2::decode_uncompressed(s, d, n, check);
}
inline void encode_g1_uncompressed(const uint8_t* s, uint8_t* d, size_t n) { G1::encode_uncompressed(s, d, n); }
inline void encode_g2_uncompressed(const uint8_t* s, uint8_t* d, size_t n) { G2::encode_uncompressed(s, d, n); }

// Whether the MSMs run on AVX-512 IFMA (kernels_ifma.cpp): built in, the running CPU has it, and
// set_no_ifma(true) was not called before (the addon's setNoIfma: the TypeScript side passes the
// edge's KILN_NO_IFMA; nothing here reads the environment). The first call fixes the choice for the
// process: precomputed tables are then stored in that path's M52 form (msm/ifma.hpp), so they are
// only valid within the process that built them.
bool cpu_ifma();
// What cpu_ifma() answers, or would answer, without fixing the choice (capabilities()).
bool cpu_ifma_peek();
// Keeps the kernels off IFMA (off) or on it where the CPU has it (!off), process-wide. False, and
// nothing changed, when the choice was fixed the other way already (a kernel ran, or an earlier call).
bool set_no_ifma(bool off);
#ifdef KILN_HAVE_IFMA
// The same MSM entry points on AVX-512 IFMA (kernels_ifma.cpp; called when cpu_ifma()).
template <class F>
struct EcIfma {
  using A = Affine<F>;
  static A msm(const A* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm);
  static void msm_precompute(const A* bases, size_t n, unsigned c, A* table);
  static A msm_precomputed(const A* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                           MsmTimings& tm);
  static A batch_add(const A* bases, const u32* idx, size_t n);
  static A to_m52(const A& p);
};
extern template struct EcIfma<Fq>;
extern template struct EcIfma<Fq2>;
#endif

// kernels_fr.cpp
void ntt_fr(Fr* a, unsigned log_n, bool inverse, bool coset);
void quotient_fr(Fr* a, Fr* b, Fr* c, unsigned log_n);
void csr_mat_vec_fr(const CsrView& m, const Fr* w, Fr* out);
// The witness interpreter's linear combinations (ff/dot.hpp): dot_fr_ifma when cpu_ifma(), else the scalar path.
dot::Fn dot_fr();
// The CPU development setup's scalars (setup/scalars.hpp); "" or the error.
std::string setup_scalars_fr(const SetupScalarsIn& in, const SetupScalarsOut& out);
#ifdef KILN_HAVE_IFMA
// kernels_fr_ifma.cpp: the same on AVX-512 IFMA (called when cpu_ifma()).
void ntt_fr_ifma(Fr* a, unsigned log_n, bool inverse, bool coset);
void quotient_fr_ifma(Fr* a, Fr* b, Fr* c, unsigned log_n);
Fr dot_fr_ifma(const Fr* const* xs, const Fr* const* cs, u32 n);
#endif

}  // namespace kiln
