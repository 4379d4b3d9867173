// Host-side NTT operations on device buffers (ntt.cu), shared by the Fr entry points, the benches
// (bench.cu) and the partition prover (partition.cu). Internal.
#pragma once
#include "ctx.cuh"
#include "field.cuh"

namespace kiln {
namespace cuda {

// Makes c.tw cover transforms of size 2^log_n (grows the table; on c.stream).
void ensure_twiddles(Ctx& c, unsigned log_n);

// Transform of `data` (natural order in and out) on c.stream; the result lands in `scratch` (the
// first stage group gathers out of place). Returns the buffer holding the result. No scaling here.
DFr* ntt_raw(Ctx& c, DFr* data, DFr* scratch, unsigned log_n, bool inverse);

// The Groth16 quotient on device buffers of n = 2^log_n elements: a, b, c hold the evaluations of
// A·w, B·w, C·w over H; spare is scratch. iNTT, coset NTT, (a·b − c)/Z pointwise, coset iNTT, all
// on c.stream. Returns the buffer holding h; `rest` receives the other three (free them).
DFr* quotient_dev(Ctx& c, DFr* a, DFr* b, DFr* cc, DFr* spare, unsigned log_n, DFr* rest[3]);

}  // namespace cuda
}  // namespace kiln
