// INSECURE development setup on the device (setup.cu): Groth16 parameters for a circuit resident on
// the device (circuit_upload), from toxic waste the caller derived from a public seed. For tests and
// benchmarks ONLY: anyone who knows the seed can forge proofs. Plain C++ types (addon.cpp).
//
// The five query sections of bellperson's .params layout (each a u32 big-endian count, then zcash
// uncompressed points: h, l, a, b_g1 in G1, b_g2 in G2) are written to a file from `offset` on, chunk
// by chunk: computed and encoded on the device, copied to pinned staging buffers on a copy stream
// while the next chunk computes, written by a pool of writer threads (pwrite at computed offsets). No
// section is ever held whole on the host. The verifying key (α, β, γ, δ points and IC) is the
// caller's: the IC points come back in the native layout, and the caller writes the key at offset 0.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "partition.hpp"

namespace kiln {
namespace cuda {

// Montgomery Fr, 32 bytes each, derived once by the caller (src/groth16/setup-constants.ts).
struct DevSetupScalars {
  uint8_t tau[32], alpha[32], beta[32];
  uint8_t gamma_inv[32], delta_inv[32];
  uint8_t h_scale[32];  // Z(τ)/δ = (τ^n − 1)/δ
};

struct DevSetupArgs {
  DevSetupScalars s;
  uint8_t g1[96], g2[192];  // the generators, native affine layout
  std::string path;         // opened for writing (created when absent, never truncated)
  uint64_t offset = 0;      // where the h section's count goes; bytes before it are left alone
  bool fsync = true;        // write back each chunk as it is written (sync_file_range) and fsync at the end
  size_t chunk = 0;         // G1 points per pipeline chunk (G2: half); 0 = the default, 2^21
  unsigned writers = 0;     // writer threads; 0 = the default, 4
  // Optional progress, written while the call runs (8-byte stores; the caller polls it):
  // [0] phase (0 preparing, 1 h, 2 l, 3 a, 4 b_g1, 5 b_g2, 6 ic, 7 fsync, 8 done),
  // [1] points of the phase computed, [2] points of the phase, [3] bytes written, [4] bytes in all.
  double* progress = nullptr;
};

// Milliseconds. lagrange/evals/tables: CUDA events. Per section: `wall` from its first chunk to its
// last chunk handed to the writers (includes waiting for them when the disk is slower), `gpu` the
// kernels' own time (events around each chunk's compute, summed).
struct DevSetupSection {
  double wall = 0, gpu = 0;
};
struct DevSetupTimes {
  float lagrange = 0, evals = 0, tables = 0;
  DevSetupSection h, l, a, b1, b2, ic;
  double write_wait = 0;  // the device side waiting for a free staging buffer (the disk slower than the GPU)
  double drain = 0;       // after the last chunk: waiting for the writers to finish
  double fsync = 0, total = 0;
};

struct DevSetupOut {
  std::vector<uint8_t> ic;  // numInputs G1 affine points, native layout
  uint64_t counts[5] = {0, 0, 0, 0, 0};  // h, l, a, b_g1, b_g2
  uint64_t end_offset = 0;  // file offset after the b_g2 section
  uint64_t long_columns = 0;  // columns with more than kColumnRun terms (summed piecewise)
  uint64_t staging_bytes = 0;  // pinned host memory of the staging buffers
  uint64_t device_peak_bytes = 0;  // the device's memory pool high-water mark after the call
  DevSetupTimes t;
};

void dev_setup_insecure(Circuit* c, const DevSetupArgs& a, DevSetupOut& out);

}  // namespace cuda
}  // namespace kiln
