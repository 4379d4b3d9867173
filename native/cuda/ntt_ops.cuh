// Host-side NTT operations on device buffers (ntt.cu), shared by the Fr entry points, the benches
// (bench.cu) and the partition prover (partition.cu). Internal.
#pragma once
#include "ctx.cuh"
#include "field.cuh"

namespace kiln {
namespace cuda {

// Makes c.tw cover transforms of size 2^log_n (grows the table; on c.stream).
void ensure_twiddles(Ctx& c, unsigned log_n);

// The scaling x_i ·= c·g^i as two tables the last stage group reads (ntt.cuh k_ntt_group): lo[i mod 2^slog] and
// hi[i >> slog], about 2·2^(log_n/2) elements in all (768 KiB at 2^27), allocated on c.stream and freed there.
struct ScaleTables {
  DFr* lo = nullptr;
  DFr* hi = nullptr;
  unsigned slog = 0;
};
// The inverse transforms' scalings (1/n, the coset shift: four passes over the domain per partition) in their last
// stage group (set_ntt_fused(1), the addon's setNttFused, KILN_NTT_FUSED=1 at the edges) or a pass of their own (0).
// KILN_CUDA_FUSED_SCALE is the default at build time.
#ifndef KILN_CUDA_FUSED_SCALE
#define KILN_CUDA_FUSED_SCALE 1
#endif
ScaleTables scale_tables(Ctx& c, unsigned log_n, const uint8_t* factor, const uint8_t* g);
void free_scale_tables(Ctx& c, ScaleTables& t);

// Transform of `data` (natural order in and out) on c.stream; the result lands in `scratch` (the
// first stage group gathers out of place). Returns the buffer holding the result. Scaled by `sc` when
// given (the last stage group's stores), else not at all.
DFr* ntt_raw(Ctx& c, DFr* data, DFr* scratch, unsigned log_n, bool inverse, const ScaleTables* sc = nullptr);

// The same transform in place (scratch == nullptr: a bit-reversal pass, then every stage group in
// place), or out of place into scratch as ntt_raw. Returns the buffer holding the result.
DFr* ntt_any(Ctx& c, DFr* data, DFr* scratch, unsigned log_n, bool inverse, const ScaleTables* sc = nullptr);

// The quotient one vector at a time (partition.cu's smaller memory plans: a, b and c are formed
// one after the other, so two or three buffers of the domain's size suffice instead of four):
//   x ← evaluations of x's polynomial on the coset g·H (iNTT, ·(1/n)·g^i, NTT); returns where
//   ab ← ab·b;  ab ← (ab − c)·Z(g)^−1;  h ← the coefficients of ab's polynomial (iNTT on the coset).
// scratch == nullptr: in place.
DFr* coset_evals(Ctx& c, DFr* x, DFr* scratch, unsigned log_n);
void quotient_mul(Ctx& c, DFr* ab, const DFr* b, unsigned log_n);
void quotient_sub(Ctx& c, DFr* ab, const DFr* cc, unsigned log_n);
DFr* quotient_h(Ctx& c, DFr* ab, DFr* scratch, unsigned log_n);

// The Groth16 quotient on device buffers of n = 2^log_n elements: a, b, c hold the evaluations of
// A·w, B·w, C·w over H; spare is scratch. iNTT, coset NTT, (a·b − c)/Z pointwise, coset iNTT, all
// on c.stream. Returns the buffer holding h; `rest` receives the other three (free them).
DFr* quotient_dev(Ctx& c, DFr* a, DFr* b, DFr* cc, DFr* spare, unsigned log_n, DFr* rest[3]);

}  // namespace cuda
}  // namespace kiln
