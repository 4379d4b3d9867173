// Device-side Fr operations of fr.cu shared with the partition prover (partition.cu). Internal.
#pragma once
#include "ctx.cuh"
#include "field.cuh"

namespace kiln {
namespace cuda {

// The Groth16 quotient on device buffers of n = 2^log_n elements: a, b, c hold the evaluations of
// A·w, B·w, C·w over H; spare is scratch. iNTT, coset NTT, (a·b − c)/Z pointwise, coset iNTT, all
// on c.stream. Returns the buffer holding h; `rest` receives the other three (free them).
DFr* quotient_dev(Ctx& c, DFr* a, DFr* b, DFr* cc, DFr* spare, unsigned log_n, DFr* rest[3]);

}  // namespace cuda
}  // namespace kiln
