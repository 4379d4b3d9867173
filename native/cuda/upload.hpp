// The SRS streamed onto a device in chunks (upload.cu), for parameter files whose sections do not
// fit in one host buffer: the native loader (src/groth16/params-native.ts) decodes each section into
// pinned staging buffers and copies them here, so the host never holds a whole section. Plain C++
// types; a header of its own so that the MSM units (which include kiln_cuda.hpp) are not rebuilt.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "kiln_cuda.hpp"

namespace kiln {
namespace cuda {

// Device memory for n points of `curve` (1 = G1, 2 = G2), contents undefined: a Bases like
// bases_upload's (msm, provePartition and bases_free take it), filled by bases_write.
Bases* bases_alloc(int dev, int curve, size_t n);
// Copies n points from `host` (ideally pinned) to points [first, first + n) on the device's upload
// stream, not under the device lock (a proof running on the device does not hold it up); returns
// when the copy is done. The vector must not be freed while a write to it runs.
void bases_write(Bases* b, size_t first, const void* host, size_t n);
// Bases that stay in host memory (an SRS section a small GPU cannot hold): the pieces
// (pointer, bytes; pinned memory from host_alloc for full speed; whole points each) in order, owned by
// the caller, who keeps them alive until the handle is freed (`on_free` runs then). MSMs and proofs
// stream them to the device in chunks.
Bases* bases_host(int dev, int curve, const std::vector<std::pair<const uint8_t*, size_t>>& pieces,
                  std::function<void()> on_free);

}  // namespace cuda
}  // namespace kiln
