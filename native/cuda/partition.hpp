// A whole Groth16 partition proof on one device (partition.cu): witness in, the five MSM sums out.
// The circuit's matrices and query indices are uploaded once (circuit_upload) and the SRS vectors
// are resident Bases (bases_upload), so a proof moves only the witness (from pinned memory when
// the caller allocated it with host_alloc) and 576 bytes back. Plain C++ types (addon.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kiln_cuda.hpp"

namespace kiln {
namespace cuda {

struct CsrHost {
  const uint32_t* rowPtr;  // rows + 1
  const uint32_t* colIdx;  // nnz
  const uint32_t* coeffIdx;
  size_t nnz;
  const void* coeffs;  // ncoeffs Montgomery Fr
  size_t ncoeffs;
};

struct CircuitDesc {
  uint32_t numConstraints, numInputs, numAux;
  unsigned logN;  // domain 2^logN ≥ numConstraints + numInputs
  CsrHost a, b, c;
  const uint32_t* aIdx;  // variable of each A-query base
  size_t na;
  const uint32_t* bIdx;  // variable of each B-query base (G1 and G2)
  size_t nb;
};

struct Circuit;
// Uploads and checks the matrices (streamed == false), or (streamed == true) keeps them in host
// memory — the caller's arrays, page-locked in place with cudaHostRegister, which must outlive the
// circuit — checked on the host, with only the coefficient tables and query indices on the device:
// each proof then streams the matrices' rows in chunks (a GPU of 16 GiB cannot hold a
// 32 GiB circuit's 6.9 GiB of matrices beside the witness and the quotient).
Circuit* circuit_upload(int dev, const CircuitDesc& d, bool streamed);
// Uploads and checks the matrices (rowPtr monotone from 0, columns < numInputs + numAux,
// coefficient indices < ncoeffs, query indices < numInputs + numAux); throws Error naming the fault.
Circuit* circuit_upload(int dev, const CircuitDesc& d);
void circuit_free(Circuit* c);
size_t circuit_bytes(const Circuit* c);     // device bytes
size_t circuit_host_bytes(const Circuit* c);  // the streamed matrices' bytes (0 when resident)
size_t circuit_vars(const Circuit* c);  // numInputs + numAux
int circuit_device(const Circuit* c);

// How a proof uses the device's memory (src/backend/device-plan.ts decides; the default is the
// whole-GPU behaviour): the quotient's buffers of the domain's size (4: a, b, c formed first, as on
// a big GPU; 3: one vector at a time, transforms out of place; 2: one at a time, in place), the
// MSMs' scratch budget (0: as they need), the staging slots of streamed data, and whether the
// witness is copied before the proof takes the device (its copy overlaps the previous proof's
// compute, at the cost of a second witness on the device).
struct PartitionPlan {
  unsigned qbufs = 4;
  size_t msm_budget = 0;
  size_t slot_bytes = 0;         // the SRS chunks' staging slots (0: 256 MiB)
  unsigned slots = 2;
  size_t matrix_slot_bytes = 0;  // the streamed matrices' two slots (0: slot_bytes)
  bool prefetch_witness = true;
  bool urgent = false;  // take the device before ordinary callers waiting for it (ctx.cuh DeviceLock)
};

struct PartitionSrs {
  Bases *h, *l, *a, *b1, *b2;  // h: 2^logN − 1, l: numAux, a: na, b1/b2: nb bases
};

// GPU milliseconds (CUDA events) per phase; each MSM's own split in its MsmTimes. The witness is
// copied on the device's copy stream before the proof takes the device (so it overlaps another
// proof's compute): `copy` is the copy's own duration, `upload` what the compute stream still
// waited for it. `total` runs from taking the device to the last MSM.
struct PartitionTimes {
  float wait = 0;  // host wall ms waiting for the device (another proof holding it), not an event
  float copy = 0, upload = 0, matvec = 0, ntt = 0;
  MsmTimes h, l, a, b1, b2;
  float msm_h = 0, msm_l = 0, msm_a = 0, msm_b1 = 0, msm_b2 = 0;  // each MSM's own kernels (events)
  float total = 0;
  // streamed data (SRS sections and matrices from host memory): bytes copied, the copy stream's
  // busy ms, and the ms the compute stream waited for a copy (not hidden under compute)
  size_t streamed_bytes = 0;
  float stream_copy = 0, stream_wait = 0;
  unsigned qbufs = 0;  // the quotient's buffers used
};

struct PartitionOut {
  uint8_t h[96], l[96], a[96], b1[96], b2[192];  // affine, native layout
  PartitionTimes t;
};

// witness: (numInputs + numAux) Montgomery Fr, ONE first.
void prove_partition(Circuit* c, const PartitionSrs& srs, const void* witness, PartitionOut& out,
                     const PartitionPlan& plan = PartitionPlan{});

// A synthetic partition generated on the device (random SRS points, random CSR rows with fixed
// term counts, a witness with the given shares of 0, 1 and full-width values), proved `iters`
// times after one warm-up. For timing only: the SRS is not a real setup, so there is no proof.
struct PartitionSpec {
  unsigned logN;
  uint32_t numConstraints, numInputs, numAux, na, nb;
  unsigned nnzA, nnzB, nnzC;
  double fracZero, fracOne;  // the rest full-width
  int iters;
  unsigned preH = 0;  // > 1: the h section with precomputed copies (bases_precompute; the cost model's window)
  // the proofs' plan: quotient buffers (0: 4) and MSM scratch budget (0: as needed), so that a card smaller
  // than the whole-GPU plan needs (an 80 GB one at 32 GiB) runs the shape under a plan as the daemon's would
  unsigned qbufs = 0;
  size_t msmBudget = 0;
};
struct PartitionBench {
  std::vector<PartitionTimes> runs;  // timed runs (warm-up excluded)
  double generate_ms = 0;
  size_t srs_bytes = 0, circuit_bytes = 0, peak_pool_bytes = 0;
  unsigned pre_copies = 1, pre_window = 0;  // what preH made of the h section
  double pre_ms = 0;
};
PartitionBench bench_partition(int dev, const PartitionSpec& s, const void* g1, const void* g2);

}  // namespace cuda
}  // namespace kiln
