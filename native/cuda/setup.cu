// INSECURE development setup on the device (setup.hpp): the same parameters as the CPU twin
// (src/groth16/setup.ts setupWithToxicWaste), byte for byte, for tests and benchmarks ONLY.
//
//   1. Lagrange basis at τ: L = iNTT([τ^0, τ^1, …, τ^(n−1)]) (L_j(τ) = (1/n)·Σ_i τ^i·ω^(−ij)), with
//      the prover's NTT (ntt_ops.cuh).
//   2. A_i(τ), B_i(τ), C_i(τ) per variable from the resident CSR matrices: the terms of a matrix are
//      sorted by column (cub radix sort of the column indices, values = term numbers), then one
//      thread sums a column's coeff·L_row products; columns of more than kColumnRun terms (ONE, for
//      instance, in tens of millions of rows at 32 GiB) are cut into pieces of kPiece terms summed
//      by one block each, then the pieces of a column. The input constraints add L_(m+i) to A_i.
//   3. Scalars per section, chunk by chunk: h_i = τ^i·Z(τ)/δ (i < n − 1), l_j = (β·A + α·B + C)/δ
//      over the aux variables, a = A over the A-query indices, b = B over the B-query indices,
//      ic = (β·A + α·B + C)/γ over the inputs.
//   4. Fixed-base multiplication: windows of kW bits, a table T[j][d − 1] = d·2^(kW·j)·G per group
//      (built on the device; 8.6 MB in G1, 17 MB in G2: both stay in L2), kNW mixed additions per
//      point, no doublings; runs of kRun points share one inversion (Montgomery's trick) to reach
//      affine; then the zcash uncompressed big-endian encoding on the device, in place.
//   5. The pipeline: chunk j computes on the context's stream into one of two device buffers while
//      chunk j − 1 is copied to a pinned staging buffer on a copy stream; a host function at the end
//      of each copy hands the staging buffer to the writer threads (pwrite at the chunk's offset,
//      sync_file_range to start the write-back). The host thread only waits for a free staging
//      buffer, so the GPU, PCIe and the disk overlap.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include <cub/cub.cuh>

#include "../src/ec/xyzz.hpp"
#include "circuit.cuh"
#include "ntt.cuh"
#include "normalize.cuh"
#include "ntt_ops.cuh"
#include "setup.hpp"
#include "setup_writer.cuh"

namespace kiln {
namespace cuda {

namespace {

constexpr unsigned kW = 12;                    // window bits of the fixed-base tables
constexpr unsigned kNW = (255 + kW - 1) / kW;  // windows covering a canonical scalar (< 2^255): 22
constexpr unsigned kTD = (1u << kW) - 1;       // table entries per window (digits 1 … 2^kW − 1)
constexpr unsigned kColumnRun = 256;           // longer columns are summed piecewise
constexpr unsigned kPiece = 8192;              // terms per piece of a long column (one block)
constexpr size_t kChunk = size_t(1) << 21;     // G1 points per pipeline chunk (G2: half)
constexpr unsigned kWriters = 4;               // writer threads

using setup_io::clk;
using setup_io::ms_since;

DFr dfr_of(const uint8_t* b) {
  DFr r;
  std::memcpy(r.w, b, 32);
  return r;
}


// ---- kernels: field vectors ------------------------------------------------------------------------

// out[j] = f·g^(i0 + j), j < k; each thread a run of 32 from one power.
__global__ void k_powers(DFr* __restrict__ out, u64 i0, u64 k, DFr f, DFr g) {
  const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  const u64 j0 = t * 32;
  if (j0 >= k) return;
  DFr x = f * g.pow_u64(i0 + j0);
  const u64 j1 = j0 + 32 < k ? j0 + 32 : k;
  for (u64 j = j0; j < j1; j++) {
    out[j] = x;
    x *= g;
  }
}

// out[j] = (β·A[b + j] + α·B[b + j] + C[b + j])·f
__global__ void k_lcomb(DFr* __restrict__ out, const DFr* __restrict__ A, const DFr* __restrict__ B,
                        const DFr* __restrict__ C, u64 b, u64 k, DFr alpha, DFr beta, DFr f) {
  const u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= k) return;
  out[j] = (beta * A[b + j] + alpha * B[b + j] + C[b + j]) * f;
}

// out[j] = src[idx[j]]
__global__ void k_gather(DFr* __restrict__ out, const DFr* __restrict__ src, const u32* __restrict__ idx, u64 k) {
  const u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (j < k) out[j] = src[idx[j]];
}

// a[i] += b[i]
__global__ void k_add_into(DFr* __restrict__ a, const DFr* __restrict__ b, u64 n) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += b[i];
}

// ---- kernels: column sums of a CSR matrix ------------------------------------------------------------

__global__ void k_row_of(const u32* __restrict__ rp, u32 rows, u32* __restrict__ row_of) {
  const u32 r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  for (u32 k = rp[r]; k < rp[r + 1]; k++) row_of[k] = r;
}

__global__ void k_iota(u32* __restrict__ v, u64 n) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = (u32)i;
}

// start/end of every column's run in the sorted keys (both zeroed before: an absent column is 0…0).
__global__ void k_col_bounds(const u32* __restrict__ keys, u64 total, u32* __restrict__ start, u32* __restrict__ end) {
  const u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= total) return;
  const u32 k = keys[p];
  if (p == 0 || keys[p - 1] != k) start[k] = (u32)p;
  if (p + 1 == total || keys[p + 1] != k) end[k] = (u32)(p + 1);
}

__device__ __forceinline__ DFr term(u32 v, const u32* __restrict__ row_of, const u32* __restrict__ ki,
                                    const DFr* __restrict__ co, const DFr* __restrict__ L) {
  return co[ki[v]] * L[row_of[v]];
}

// out[col] = Σ coeff·L_row over the column's terms; columns longer than kColumnRun are listed in
// long_list for the piecewise sums instead.
__global__ void k_col_sums(const u32* __restrict__ start, const u32* __restrict__ end, u32 cols,
                           const u32* __restrict__ vals, const u32* __restrict__ row_of, const u32* __restrict__ ki,
                           const DFr* __restrict__ co, const DFr* __restrict__ L, DFr* __restrict__ out,
                           u32* __restrict__ long_list, u32* __restrict__ long_count) {
  const u32 col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols) return;
  const u32 s = start[col], e = end[col];
  if (e - s > kColumnRun) {
    long_list[atomicAdd(long_count, 1u)] = col;
    return;
  }
  DFr acc = DFr::zero();
  for (u32 p = s; p < e; p++) acc += term(vals[p], row_of, ki, co, L);
  out[col] = acc;
}

// Block-wide sum of one value per thread (blockDim.x = 256).
__device__ DFr block_sum(DFr acc) {
  __shared__ DFr sh[256];
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (u32 s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] = sh[threadIdx.x] + sh[threadIdx.x + s];
    __syncthreads();
  }
  return sh[0];
}

// One block per piece [pb[i], pe[i]) of the sorted terms: partial[i] = its sum.
__global__ void k_piece_sums(const u32* __restrict__ pb, const u32* __restrict__ pe, const u32* __restrict__ vals,
                             const u32* __restrict__ row_of, const u32* __restrict__ ki, const DFr* __restrict__ co,
                             const DFr* __restrict__ L, DFr* __restrict__ partial) {
  const u32 i = blockIdx.x;
  DFr acc = DFr::zero();
  for (u32 p = pb[i] + threadIdx.x; p < pe[i]; p += blockDim.x) acc += term(vals[p], row_of, ki, co, L);
  const DFr s = block_sum(acc);
  if (threadIdx.x == 0) partial[i] = s;
}

// One block per long column: out[cols[j]] = Σ partial[first[j] … first[j + 1]).
__global__ void k_piece_finish(const u32* __restrict__ cols, const u32* __restrict__ first,
                               const DFr* __restrict__ partial, DFr* __restrict__ out) {
  const u32 j = blockIdx.x;
  DFr acc = DFr::zero();
  for (u32 p = first[j] + threadIdx.x; p < first[j + 1]; p += blockDim.x) acc += partial[p];
  const DFr s = block_sum(acc);
  if (threadIdx.x == 0) out[cols[j]] = s;
}

// ---- kernels: fixed-base multiplication ----------------------------------------------------------------

// T[j·kTD + d − 1] = d·2^(kW·j)·G, one entry per thread (double-and-add over 5 limbs: the last
// window reaches past bit 255).
template <class F>
__global__ void k_table(const Affine<F>* __restrict__ g, Affine<F>* __restrict__ T) {
  const u32 e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= kNW * kTD) return;
  const u32 j = e / kTD, d = e % kTD + 1;
  u64 k[5] = {0, 0, 0, 0, 0};
  const u32 bit = j * kW, limb = bit / 64, sh = bit % 64;
  k[limb] = (u64)d << sh;
  if (sh + kW > 64) k[limb + 1] = (u64)d >> (64 - sh);
  T[e] = scalar_mul(*g, k, 5).to_affine();
}


template <class F>
__global__ void k_fixed_base(const Affine<F>* __restrict__ T, const DFr* __restrict__ sc, u64 k,
                             Xyzz<F>* __restrict__ out) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= k) return;
  const DFr s = sc[i].from_mont();
  Xyzz<F> acc = Xyzz<F>::identity();
  for (u32 j = 0; j < kNW; j++) {
    const u32 d = scalar_bits(s.w, j * kW, kW);
    if (d) acc = acc.add_affine(T[j * kTD + d - 1]);
  }
  out[i] = acc;
}

// 48 big-endian bytes of a Montgomery Fq as 12 words in memory order.
__device__ __forceinline__ void be48(const DFq& v, u32* out) {
  const DFq c = v.from_mont();
#pragma unroll
  for (int q = 0; q < 12; q++) out[q] = __byte_perm(c.w[11 - q], 0, 0x0123);
}

// zcash uncompressed, in place over the affine points (each thread reads its whole point first):
// G1 x ‖ y, G2 x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0; the identity is the infinity flag (0x40 in the first
// byte) and zeros.
__global__ void k_encode_g1(Affine<DFq>* pts, u64 k) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= k) return;
  const Affine<DFq> p = pts[i];
  u32* o = reinterpret_cast<u32*>(pts + i);
  if (p.is_identity()) {
    o[0] = 0x40;
    for (int q = 1; q < 24; q++) o[q] = 0;
    return;
  }
  u32 w[24];
  be48(p.x, w);
  be48(p.y, w + 12);
#pragma unroll
  for (int q = 0; q < 24; q++) o[q] = w[q];
}

__global__ void k_encode_g2(Affine<DFq2>* pts, u64 k) {
  const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= k) return;
  const Affine<DFq2> p = pts[i];
  u32* o = reinterpret_cast<u32*>(pts + i);
  if (p.is_identity()) {
    o[0] = 0x40;
    for (int q = 1; q < 48; q++) o[q] = 0;
    return;
  }
  u32 w[48];
  be48(p.x.c1, w);
  be48(p.x.c0, w + 12);
  be48(p.y.c1, w + 24);
  be48(p.y.c0, w + 36);
#pragma unroll
  for (int q = 0; q < 48; q++) o[q] = w[q];
}

// ---- the writers: setup_writer.cuh ------------------------------------------------------------------

using setup_io::Fd;
using setup_io::Writer;

// ---- the chunk pipeline --------------------------------------------------------------------------------

// Two device output buffers (chunk j computes into one while chunk j − 1 is copied from the other),
// a copy stream, and the events that order them. The destructor synchronises both streams (host
// functions still pending reference the Writer, which must outlive this).
class Pipeline {
 public:
  Pipeline(Ctx& c, Scratch& h, Writer& w, size_t chunk_bytes, size_t max_points)
      : c_(c), w_(w) {
    KC_CHECK(cudaStreamCreateWithFlags(&cs_, cudaStreamNonBlocking));
    for (int s = 0; s < 2; s++) {
      out_[s] = h.get<uint8_t>(chunk_bytes);
      KC_CHECK(cudaEventCreate(&start_[s]));
      KC_CHECK(cudaEventCreate(&ready_[s]));
      KC_CHECK(cudaEventCreateWithFlags(&copied_[s], cudaEventDisableTiming));
    }
    sc = h.get<DFr>(max_points);
    scratch_bytes_ = max_points * 192;  // XYZZ (G1 144 B, G2 384 B at half the points)
    xyzz = h.get<uint8_t>(scratch_bytes_);
    pre = h.get<uint8_t>(max_points * 48);
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline() {
    if (cs_) cudaStreamSynchronize(cs_);
    cudaStreamSynchronize(c_.stream);
    for (int s = 0; s < 2; s++) {
      if (start_[s]) cudaEventDestroy(start_[s]);
      if (ready_[s]) cudaEventDestroy(ready_[s]);
      if (copied_[s]) cudaEventDestroy(copied_[s]);
    }
    if (cs_) cudaStreamDestroy(cs_);
  }

  // The device buffer chunk j computes into; waits (on the device) until its previous copy is done,
  // and collects the kernel time of the chunk that used it last.
  uint8_t* begin(double& gpu_ms) {
    const int s = cur_;
    if (pending_[s]) gpu_ms += collect(s);
    if (used_[s]) KC_CHECK(cudaStreamWaitEvent(c_.stream, copied_[s], 0));
    KC_CHECK(cudaEventRecord(start_[s], c_.stream));
    return out_[s];
  }
  // Chunk computed (kernels queued on c.stream): copy its `n` bytes to a staging buffer and hand
  // that to the writers at file offset `off`.
  void submit(uint64_t off, size_t n, double& waited) {
    const int s = cur_;
    KC_CHECK(cudaEventRecord(ready_[s], c_.stream));
    pending_[s] = true;
    const int slot = w_.acquire(waited, [this] { check(); });
    KC_CHECK(cudaStreamWaitEvent(cs_, ready_[s], 0));
    KC_CHECK(cudaMemcpyAsync(w_.ptr(slot), out_[s], n, cudaMemcpyDeviceToHost, cs_));
    KC_CHECK(cudaEventRecord(copied_[s], cs_));
    KC_CHECK(cudaLaunchHostFunc(cs_, &Writer::on_copied, w_.arm(slot, off, n)));
    used_[s] = true;
    cur_ ^= 1;
  }
  // Chunk computed into host memory `dst` instead (the IC points), synchronously.
  void copy_out(void* dst, size_t n) {
    const int s = cur_;
    KC_CHECK(cudaEventRecord(ready_[s], c_.stream));
    pending_[s] = true;
    KC_CHECK(cudaMemcpyAsync(dst, out_[s], n, cudaMemcpyDeviceToHost, c_.stream));
    KC_CHECK(cudaStreamSynchronize(c_.stream));
  }
  // The kernel time of chunks not yet collected; every copy done and handed to the writers.
  double finish() {
    double ms = 0;
    for (int s = 0; s < 2; s++)
      if (pending_[s]) ms += collect(s);
    KC_CHECK(cudaStreamSynchronize(cs_));
    return ms;
  }

  DFr* sc = nullptr;
  uint8_t* xyzz = nullptr;
  uint8_t* pre = nullptr;

 private:
  double collect(int s) {
    KC_CHECK(cudaEventSynchronize(ready_[s]));
    pending_[s] = false;
    float v = 0;
    KC_CHECK(cudaEventElapsedTime(&v, start_[s], ready_[s]));
    return v;
  }
  void check() {
    for (cudaStream_t st : {c_.stream, cs_}) {
      const cudaError_t e = cudaStreamQuery(st);
      if (e != cudaSuccess && e != cudaErrorNotReady) KC_CHECK(e);
    }
  }
  Ctx& c_;
  Writer& w_;
  cudaStream_t cs_ = nullptr;
  uint8_t* out_[2] = {nullptr, nullptr};
  cudaEvent_t start_[2] = {nullptr, nullptr}, ready_[2] = {nullptr, nullptr}, copied_[2] = {nullptr, nullptr};
  bool used_[2] = {false, false}, pending_[2] = {false, false};
  int cur_ = 0;
  size_t scratch_bytes_ = 0;
};

// ---- driver pieces ---------------------------------------------------------------------------------------

template <class T>
T* upload(Scratch& h, Ctx& c, const std::vector<T>& v) {
  T* d = h.get<T>(v.size());
  if (!v.empty()) KC_CHECK(cudaMemcpyAsync(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, c.stream));
  return d;
}

__global__ void k_gather_u32(const u32* __restrict__ src, const u32* __restrict__ idx, u32 n, u32* __restrict__ out) {
  const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = src[idx[i]];
}

// out[col] = Σ_rows M[row][col]·L[row] for every column (out zeroed here). Returns the number of
// long columns.
unsigned long eval_matrix(Ctx& c, const DevCsr& M, u32 rows, u32 cols, const DFr* L, DFr* out) {
  KC_CHECK(cudaMemsetAsync(out, 0, (size_t)cols * 32, c.stream));
  if (M.nnz == 0 || rows == 0 || cols == 0) return 0;
  const size_t nnz = M.nnz;
  Scratch h(c);
  u32* row_of = h.get<u32>(nnz);
  k_row_of<<<blocks_for(rows, 256), 256, 0, c.stream>>>(M.rp, rows, row_of);
  KC_LAUNCHED();
  u32* keys = h.get<u32>(nnz);
  u32* keys2 = h.get<u32>(nnz);
  u32* vals = h.get<u32>(nnz);
  u32* vals2 = h.get<u32>(nnz);
  KC_CHECK(cudaMemcpyAsync(keys, M.ci, nnz * 4, cudaMemcpyDeviceToDevice, c.stream));
  k_iota<<<blocks_for(nnz, 256), 256, 0, c.stream>>>(vals, nnz);
  KC_LAUNCHED();
  int end_bit = 1;
  while (end_bit < 32 && (u64(1) << end_bit) < cols) end_bit++;
  cub::DoubleBuffer<u32> dk(keys, keys2), dv(vals, vals2);
  size_t tmp_bytes = 0;
  KC_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, dk, dv, nnz, 0, end_bit, c.stream));
  void* tmp = h.get<uint8_t>(tmp_bytes);
  KC_CHECK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, dk, dv, nnz, 0, end_bit, c.stream));
  h.free(tmp);
  const u32* sk = dk.Current();
  const u32* sv = dv.Current();
  h.free(dk.Alternate());
  h.free(dv.Alternate());
  u32* start = h.get<u32>(cols);
  u32* end = h.get<u32>(cols);
  KC_CHECK(cudaMemsetAsync(start, 0, (size_t)cols * 4, c.stream));
  KC_CHECK(cudaMemsetAsync(end, 0, (size_t)cols * 4, c.stream));
  k_col_bounds<<<blocks_for(nnz, 256), 256, 0, c.stream>>>(sk, nnz, start, end);
  KC_LAUNCHED();
  const size_t max_long = std::min<size_t>(cols, nnz / (kColumnRun + 1) + 1);
  u32* long_list = h.get<u32>(max_long);
  u32* long_count = h.get<u32>(1);
  KC_CHECK(cudaMemsetAsync(long_count, 0, 4, c.stream));
  k_col_sums<<<blocks_for(cols, 128), 128, 0, c.stream>>>(start, end, cols, sv, row_of, M.ki, M.co, L, out, long_list,
                                                         long_count);
  KC_LAUNCHED();
  u32 nlong = 0;
  KC_CHECK(cudaMemcpyAsync(&nlong, long_count, 4, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaStreamSynchronize(c.stream));
  if (!nlong) return 0;
  // The long columns' bounds on the host: cut them into pieces of kPiece terms.
  std::vector<u32> lcols(nlong), ls(nlong), le(nlong);
  u32* d_ls = h.get<u32>(nlong);
  u32* d_le = h.get<u32>(nlong);
  k_gather_u32<<<blocks_for(nlong, 256), 256, 0, c.stream>>>(start, long_list, nlong, d_ls);
  k_gather_u32<<<blocks_for(nlong, 256), 256, 0, c.stream>>>(end, long_list, nlong, d_le);
  KC_LAUNCHED();
  KC_CHECK(cudaMemcpyAsync(lcols.data(), long_list, nlong * 4, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaMemcpyAsync(ls.data(), d_ls, nlong * 4, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaMemcpyAsync(le.data(), d_le, nlong * 4, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaStreamSynchronize(c.stream));
  std::vector<u32> pb, pe, first(nlong + 1);
  for (u32 j = 0; j < nlong; j++) {
    first[j] = (u32)pb.size();
    for (u64 p = ls[j]; p < le[j]; p += kPiece) {
      pb.push_back((u32)p);
      pe.push_back((u32)std::min<u64>(p + kPiece, le[j]));
    }
  }
  first[nlong] = (u32)pb.size();
  const u32 npieces = (u32)pb.size();
  u32* d_pb = upload(h, c, pb);
  u32* d_pe = upload(h, c, pe);
  u32* d_first = upload(h, c, first);
  u32* d_cols = upload(h, c, lcols);
  DFr* partial = h.get<DFr>(npieces);
  k_piece_sums<<<npieces, 256, 0, c.stream>>>(d_pb, d_pe, sv, row_of, M.ki, M.co, L, partial);
  KC_LAUNCHED();
  k_piece_finish<<<nlong, 256, 0, c.stream>>>(d_cols, d_first, partial, out);
  KC_LAUNCHED();
  // the host vectors are read by the copies above before they go out of scope
  KC_CHECK(cudaStreamSynchronize(c.stream));
  return nlong;
}

template <class F>
Affine<F>* build_table(Ctx& c, Scratch& h, const void* gen_host) {
  Affine<F>* g = h.get<Affine<F>>(1);
  KC_CHECK(cudaMemcpyAsync(g, gen_host, sizeof(Affine<F>), cudaMemcpyHostToDevice, c.stream));
  Affine<F>* T = h.get<Affine<F>>((size_t)kNW * kTD);
  k_table<F><<<blocks_for((size_t)kNW * kTD, 64), 64, 0, c.stream>>>(g, T);
  KC_LAUNCHED();
  return T;
}

// Progress: phase, points of the phase done and in all.
void report(double* p, int phase, u64 done, u64 total) {
  if (!p) return;
  p[0] = phase;
  p[1] = (double)done;
  p[2] = (double)total;
}

// One section through the pipeline: scalars (by `gen`, into pl.sc for points i0 … i0 + k), the
// fixed-base multiplication, normalisation, then the wire encoding written to the file at `off`
// (advanced); or, with `native` set, the affine points copied there (the IC).
template <class F>
void run_section(Ctx& c, Pipeline& pl, Writer* w, const Affine<F>* T, uint64_t count, size_t chunk,
                 const std::function<void(DFr*, u64, u64)>& gen, uint64_t& off, double& waited, uint8_t* native,
                 DevSetupSection& t, int phase, double* progress) {
  const auto t0 = clk::now();
  const size_t pb = sizeof(Affine<F>);  // the uncompressed encoding has the native size
  report(progress, phase, 0, count);
  if (!native) {
    if (count > 0xffffffffull) throw Error("devSetupInsecure: a section has more than 2^32 − 1 points");
    const uint8_t be[4] = {(uint8_t)(count >> 24), (uint8_t)(count >> 16), (uint8_t)(count >> 8), (uint8_t)count};
    w->write_now(be, 4, off);
    off += 4;
  }
  Xyzz<F>* xyzz = reinterpret_cast<Xyzz<F>*>(pl.xyzz);
  F* pre = reinterpret_cast<F*>(pl.pre);
  for (uint64_t i0 = 0; i0 < count; i0 += chunk) {
    const u64 k = std::min<uint64_t>(chunk, count - i0);
    Affine<F>* aff = reinterpret_cast<Affine<F>*>(pl.begin(t.gpu));
    gen(pl.sc, i0, k);
    k_fixed_base<F><<<blocks_for(k, 128), 128, 0, c.stream>>>(T, pl.sc, k, xyzz);
    KC_LAUNCHED();
    const u64 S = (k + kRun - 1) / kRun;
    k_normalize<F><<<blocks_for(S, 128), 128, 0, c.stream>>>(xyzz, k, S, aff, pre);
    KC_LAUNCHED();
    if (native) {
      pl.copy_out(native + i0 * pb, k * pb);
    } else {
      if constexpr (sizeof(F) == 48) k_encode_g1<<<blocks_for(k, 256), 256, 0, c.stream>>>(aff, k);
      else k_encode_g2<<<blocks_for(k, 256), 256, 0, c.stream>>>(aff, k);
      KC_LAUNCHED();
      pl.submit(off, k * pb, waited);
      off += k * pb;
    }
    report(progress, phase, i0 + k, count);
  }
  t.gpu += pl.finish();
  t.wall = ms_since(t0);
}

}  // namespace

void dev_setup_insecure(Circuit* cc, const DevSetupArgs& args, DevSetupOut& out) {
  const size_t chunk = args.chunk ? args.chunk : kChunk;
  const size_t chunk2 = std::max<size_t>(chunk / 2, 1);  // G2 points per chunk
  const unsigned writers = args.writers ? args.writers : kWriters;
  const auto t_start = clk::now();
  const unsigned log_n = cc->log_n;
  const size_t n = size_t(1) << log_n;
  const u32 m = cc->m, ni = cc->ni, naux = cc->naux;
  const size_t nv = (size_t)ni + naux;
  double* progress = args.progress;
  if ((size_t)m + ni > n) throw Error("devSetupInsecure: the domain is smaller than the constraints + inputs");
  out = DevSetupOut{};
  out.counts[0] = n - 1;
  out.counts[1] = naux;
  out.counts[2] = cc->na;
  out.counts[3] = cc->nb;
  out.counts[4] = cc->nb;
  out.ic.assign((size_t)ni * sizeof(Affine<DFq>), 0);
  const uint64_t total_bytes = 5 * 4 + (out.counts[0] + out.counts[1] + out.counts[2] + out.counts[3]) * 96 + out.counts[4] * 192;
  report(progress, 0, 0, 0);
  if (progress) {
    progress[3] = 0;
    progress[4] = (double)total_bytes;
  }

  Fd fd;
  fd.fd = ::open(args.path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd.fd < 0) throw Error("devSetupInsecure: cannot open " + args.path + ": " + std::strerror(errno));

  Guard g(cc->dev);
  Ctx& c = g.c;
  cudaMemPool_t pool;
  KC_CHECK(cudaDeviceGetDefaultMemPool(&pool, cc->dev));
  {
    uint64_t zero = 0;  // measure this call's high-water mark
    KC_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
  }
  // The pool keeps what it reserved (release threshold unlimited, ctx.cuh): give this call's tens
  // of GB back when it ends, so that the SRS and the circuit (cudaMalloc) find room afterwards.
  struct Trim {
    Ctx& c;
    cudaMemPool_t pool;
    ~Trim() {
      cudaStreamSynchronize(c.stream);
      cudaMemPoolTrimTo(pool, 0);
    }
  } trim{c, pool};
  Scratch h(c);
  Events ev(4);
  const DFr tau = dfr_of(args.s.tau), alpha = dfr_of(args.s.alpha), beta = dfr_of(args.s.beta);
  const DFr gamma_inv = dfr_of(args.s.gamma_inv), delta_inv = dfr_of(args.s.delta_inv), h_scale = dfr_of(args.s.h_scale);
  const FrConsts k = fr_consts(log_n);
  const DFr one = dfr_of(fr_consts(0).n_inv);  // 1/1 = 1 (Montgomery)

  // 1. Lagrange basis at τ: iNTT of the powers, then ·1/n.
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  DFr* L;
  {
    DFr* P = h.get<DFr>(n);
    DFr* Q = h.get<DFr>(n);
    k_powers<<<blocks_for((n + 31) / 32, 128), 128, 0, c.stream>>>(P, 0, n, one, tau);
    KC_LAUNCHED();
    L = ntt_raw(c, P, Q, log_n, true);
    k_scale_powers<<<blocks_for((n + 31) / 32, 128), 128, 0, c.stream>>>(L, n, dfr_of(k.n_inv), one, false);
    KC_LAUNCHED();
    h.free(L == P ? Q : P);
  }
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));

  // 2. A, B, C at τ per variable; the input constraints put L_(m+i) into A_i.
  DFr* at = h.get<DFr>(nv);
  DFr* bt = h.get<DFr>(nv);
  DFr* ct = h.get<DFr>(nv);
  out.long_columns += eval_matrix(c, cc->A, m, (u32)nv, L, at);
  out.long_columns += eval_matrix(c, cc->B, m, (u32)nv, L, bt);
  out.long_columns += eval_matrix(c, cc->C, m, (u32)nv, L, ct);
  if (ni) {
    k_add_into<<<blocks_for(ni, 128), 128, 0, c.stream>>>(at, L + m, ni);
    KC_LAUNCHED();
  }
  KC_CHECK(cudaEventRecord(ev.e[2], c.stream));
  h.free(L);

  // 3. The tables.
  Affine<DFq>* T1 = build_table<DFq>(c, h, args.g1);
  Affine<DFq2>* T2 = build_table<DFq2>(c, h, args.g2);
  KC_CHECK(cudaEventRecord(ev.e[3], c.stream));
  KC_CHECK(cudaEventSynchronize(ev.e[3]));
  out.t.lagrange = ev.ms(0, 1);
  out.t.evals = ev.ms(1, 2);
  out.t.tables = ev.ms(2, 3);

  // 4. The sections in file order, then IC. A staging buffer holds one chunk of either group.
  const uint64_t most = std::max<uint64_t>({n - 1, naux, cc->na, cc->nb, 1});
  const size_t g1_points = (size_t)std::min<uint64_t>(chunk, most);
  const size_t g2_points = (size_t)std::min<uint64_t>(chunk2, std::max<uint64_t>(cc->nb, 1));
  const size_t chunk_bytes = std::max(g1_points * sizeof(Affine<DFq>), g2_points * sizeof(Affine<DFq2>));
  const size_t scratch_points = std::max<size_t>({g1_points, 2 * g2_points, (size_t)ni, 1});
  Writer w(fd.fd, chunk_bytes, writers + 2, writers, args.fsync, progress);
  out.staging_bytes = w.staging_bytes();
  uint64_t off = args.offset;
  double& waited = out.t.write_wait;
  {
    Pipeline pl(c, h, w, std::max(chunk_bytes, (size_t)ni * sizeof(Affine<DFq>)), scratch_points);
    const unsigned th = 256;
    run_section<DFq>(c, pl, &w, T1, n - 1, chunk, [&](DFr* o, u64 i0, u64 kk) {
      k_powers<<<blocks_for((kk + 31) / 32, 128), 128, 0, c.stream>>>(o, i0, kk, h_scale, tau);
      KC_LAUNCHED();
    }, off, waited, nullptr, out.t.h, 1, progress);
    run_section<DFq>(c, pl, &w, T1, naux, chunk, [&](DFr* o, u64 i0, u64 kk) {
      k_lcomb<<<blocks_for(kk, th), th, 0, c.stream>>>(o, at, bt, ct, ni + i0, kk, alpha, beta, delta_inv);
      KC_LAUNCHED();
    }, off, waited, nullptr, out.t.l, 2, progress);
    run_section<DFq>(c, pl, &w, T1, cc->na, chunk, [&](DFr* o, u64 i0, u64 kk) {
      k_gather<<<blocks_for(kk, th), th, 0, c.stream>>>(o, at, cc->a_idx + i0, kk);
      KC_LAUNCHED();
    }, off, waited, nullptr, out.t.a, 3, progress);
    auto gen_b = [&](DFr* o, u64 i0, u64 kk) {
      k_gather<<<blocks_for(kk, th), th, 0, c.stream>>>(o, bt, cc->b_idx + i0, kk);
      KC_LAUNCHED();
    };
    run_section<DFq>(c, pl, &w, T1, cc->nb, chunk, gen_b, off, waited, nullptr, out.t.b1, 4, progress);
    run_section<DFq2>(c, pl, &w, T2, cc->nb, chunk2, gen_b, off, waited, nullptr, out.t.b2, 5, progress);
    run_section<DFq>(c, pl, nullptr, T1, ni, std::max<size_t>(ni, 1), [&](DFr* o, u64 i0, u64 kk) {
      k_lcomb<<<blocks_for(kk, th), th, 0, c.stream>>>(o, at, bt, ct, i0, kk, alpha, beta, gamma_inv);
      KC_LAUNCHED();
    }, off, waited, out.ic.data(), out.t.ic, 6, progress);
  }
  w.drain(out.t.drain);
  out.end_offset = off;
  if (args.fsync) {
    report(progress, 7, 0, 0);
    const auto t0 = clk::now();
    if (::fsync(fd.fd) != 0 && errno != EINVAL && errno != EROFS)
      throw Error("devSetupInsecure: fsync of " + args.path + " failed: " + std::strerror(errno));
    out.t.fsync = ms_since(t0);
  }
  KC_CHECK(cudaStreamSynchronize(c.stream));
  {
    uint64_t high = 0;
    KC_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &high));
    out.device_peak_bytes = high;
  }
  report(progress, 8, 0, 0);
  out.t.total = ms_since(t_start);
}

}  // namespace cuda
}  // namespace kiln
