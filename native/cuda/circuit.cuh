// A circuit resident on one device (partition.hpp's Circuit): the CSR matrices A, B, C and the
// A/B query indices, as uploadCircuit left them. Shared by the partition prover (partition.cu) and
// the INSECURE development setup (setup.cu), which read the same device arrays. Internal.
#pragma once
#include <vector>

#include "ctx.cuh"
#include "field.cuh"

namespace kiln {
namespace cuda {

struct DevCsr {
  u32* rp = nullptr;
  u32* ci = nullptr;
  u32* ki = nullptr;
  DFr* co = nullptr;
  size_t nnz = 0, ncoeffs = 0;
};

// A streamed matrix: the caller's host arrays (page-locked in place when cudaHostRegister allowed).
struct HostCsr {
  const u32* rp = nullptr;
  const u32* ci = nullptr;
  const u32* ki = nullptr;
  size_t nnz = 0;
};

struct Circuit {
  int dev = 0;
  bool streamed = false;  // A, B, C rows come from host memory each proof (only .co on the device)
  HostCsr hA, hB, hC;
  std::vector<void*> registered;  // host ranges this circuit page-locked (unregistered when freed)
  size_t host_bytes = 0;
  u32 m = 0, ni = 0, naux = 0;
  unsigned log_n = 0;
  DevCsr A, B, C;
  u32* a_idx = nullptr;
  size_t na = 0;
  u32* b_idx = nullptr;
  size_t nb = 0;
  size_t bytes = 0;
  std::vector<void*> allocs;
};

}  // namespace cuda
}  // namespace kiln
