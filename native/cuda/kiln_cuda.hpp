// Host entry points of the CUDA backend (native/cuda/*.cu, one unit per role), called by the N-API
// glue (native/cuda/addon.cpp). Plain C++ types only: the glue never sees a CUDA header.
// Errors are thrown as kiln::cuda::Error (a std::runtime_error with the CUDA call and file:line).
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln {
namespace cuda {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GpuInfo {
  int ordinal;
  std::string name;
  size_t memoryBytes;
  int major, minor, sms;
};

// device.cu: the GPUs and the runtime.
// Number of usable GPUs; 0 with `why` set when there is no GPU or no driver (never throws).
int probe(std::vector<GpuInfo>& out, std::string& why);
std::string runtime_version();

struct DeviceMemory {
  size_t free_bytes = 0, total_bytes = 0;
};
// host.cpp: free and total memory of device `dev` (cudaMemGetInfo); throws Error when the device
// cannot answer (e.g. after a fault that left its context unusable).
DeviceMemory mem_info(int dev);

struct MsmTimes {
  float classify = 0, batch_add = 0, msm = 0;  // ms, CUDA events
  float sort = 0, accumulate = 0, buckets = 0, windows = 0;  // parts of msm: digits + sort, bucket
                                                             // accumulation, chunk trees, window sums
  unsigned window = 0;                          // Pippenger window (0: no Pippenger)
  size_t ones = 0, others = 0;
  // batch-affine accumulation (KILN_MSM_ACC=4): the most levels of a pass, the passes that took them and
  // their slices (a pass in several slices when the memory for its levels at once is not there)
  unsigned ba_levels = 0;
  size_t ba_passes = 0, ba_slices = 0;
  size_t passes = 0;  // Pippenger passes in all
};

// msm.cu: bases resident on one device (the SRS): uploaded once, kept until bases_free.
struct Bases;
Bases* bases_upload(int dev, int curve, const void* host, size_t n);  // curve 1 = G1, 2 = G2
void bases_free(Bases* b);
size_t bases_count(const Bases* b);
size_t bases_bytes(const Bases* b);  // all copies
// Precomputed multiples of resident bases for MSMs of window `cbits` (msm_impl.cuh precompute_bases):
// up to `copies` copies (fewer when the digits need fewer), made on the device; the bases then take
// copies × their size. Throws for host bases, bases already precomputed, or copies × n ≥ 2^31.
struct BasesPre {
  unsigned copies = 1, window = 0, windows = 0;  // windows of buckets per MSM
  size_t bytes = 0;
  double ms = 0;
};
BasesPre bases_precompute(Bases* b, unsigned copies, unsigned cbits);
// The window the cost model picks for n points over `copies` copies.
unsigned pre_window(size_t n, unsigned copies);

// Σ scalars[sidx?[k] ?? k]·bases[k] → affine point (96 / 192 bytes) in `out`.
void msm(Bases* b, const void* scalars, size_t nscalars, const uint32_t* sidx, void* out, MsmTimes& t);
void batch_add(Bases* b, const uint32_t* idx, size_t n, void* out, float& ms);

// ntt.cu
// Diagnostics / A/B: the inverse transforms' scalings fused into their last stage group (1) or a pass of
// their own (0). Process-wide, read per call.
void set_ntt_fused(int v);
int ntt_fused();
void ntt(int dev, void* data, unsigned log_n, bool inverse, bool coset, float& ms);
void quotient(int dev, void* a, void* b, void* c, unsigned log_n, float& ms);
// csr.cu. Returns 0, or error bits: 1 rowPtr not monotone, 2 column out of range, 4 coefficient index
// out of range, 8 rowPtr[rows] > nnz.
unsigned csr_mat_vec(int dev, uint32_t rows, uint32_t cols, const uint32_t* rowPtr, const uint32_t* colIdx,
                     const uint32_t* coeffIdx, size_t nnz, const void* coeffs, size_t ncoeffs, const void* w,
                     void* out, float& ms);

// msm.cu. Diagnostics: force the Pippenger window width (4 … 24; 0 = automatic). Process-wide.
void set_msm_window(unsigned c);
// Diagnostics: threads per block of the accumulation kernels (32 … 1024, a multiple of 32). Process-wide.
void set_msm_threads(unsigned t);
// Diagnostics: fewest pairs per thread of a batch-affine level (a power of two, 8 … 4096; 128 by default).
void set_msm_affine_pairs(unsigned n);
// Diagnostics: the most scalars of one Pippenger batch (0 = the cost model's). Process-wide.
void set_msm_batch(size_t n);
// Diagnostics: the accumulation kernel, 0 (general), 1 (default, k_accumulate_hot), 2 (G1's Fq
// multiplication inlined) or 3 (k_accumulate_hot with G1's dedicated squaring). Process-wide, read per call.
void set_msm_acc(int v);

// msm.cu: the memory plan of the standalone msm (0: unchanged / as needed) and the pool's trim
// (after an out-of-memory failure, before a smaller plan is tried).
void set_memory_plan(int dev, size_t msm_budget, size_t slot_bytes, unsigned slots);
void pool_trim(int dev);

// pinned.cu
void* host_alloc(size_t bytes);  // pinned, zeroed
void host_free(void* p);

struct BenchResult {
  double median_ms = 0, min_ms = 0;
  MsmTimes last;
  std::vector<uint8_t> point;  // MSM result (affine)
  BasesPre pre;                // the bases' precomputed copies (MSM bench)
};
// bench.cu. Random bases [k_i]·gen and random scalars generated on the device; `iters` timed runs.
// pre_copies > 1: the bases precomputed first (bases_precompute; window pre_c, 0: pre_window's).
BenchResult bench_msm(int dev, int curve, unsigned log_n, const void* gen, int iters, unsigned pre_copies = 0,
                      unsigned pre_c = 0);
BenchResult bench_ntt(int dev, unsigned log_n, int iters);
BenchResult bench_quotient(int dev, unsigned log_n, int iters);  // quotient_dev on device buffers

// host.cpp (CPU arithmetic from native/src): Fr constants and the final window combination.
struct FrConsts {
  uint8_t omega[32];  // primitive 2^log_n-th root of unity
  uint8_t n_inv[32], g[32], g_inv[32], z_inv[32];  // g = 7; z_inv = (g^n − 1)^−1
};
FrConsts fr_consts(unsigned log_n);
// out = ones + Σ_w 2^(w·c)·windows[w] (XYZZ inputs in device layout), affine.
void finish_msm(int curve, const void* windows, unsigned W, unsigned c, const void* ones, void* out);

}  // namespace cuda
}  // namespace kiln
