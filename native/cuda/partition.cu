// A whole partition proof on the device (partition.hpp): the circuit (CSR A, B, C and the query
// indices) and the SRS stay resident; a proof uploads the witness, computes a, b, c = A·w, B·w,
// C·w, the quotient h, and the five MSMs without leaving the device, then returns 576 bytes.
// Scratch comes from the device's stream-ordered pool (cudaMallocAsync/cudaFreeAsync: no
// synchronous frees on the hot path). Also the synthetic-partition bench (random data generated on
// the device).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "circuit.cuh"
#include "csr.cuh"
#include "msm.cuh"
#include "ntt_ops.cuh"
#include "partition.hpp"

namespace kiln {
namespace cuda {

namespace {

template <class T>
T* cmalloc(Circuit& c, size_t count) {
  void* p = nullptr;
  const size_t bytes = std::max<size_t>(count, 1) * sizeof(T);
  KC_CHECK(cudaMalloc(&p, bytes));
  c.allocs.push_back(p);
  c.bytes += bytes;
  return static_cast<T*>(p);
}

void release(Circuit* c) {
  for (void* p : c->allocs) cudaFree(p);
  delete c;
}

// Allocates the device arrays of a circuit (contents undefined). The caller holds the Guard.
Circuit* circuit_alloc(int dev, u32 m, u32 ni, u32 naux, unsigned log_n, const size_t nnz[3], const size_t ncoeffs[3],
                       size_t na, size_t nb) {
  auto* c = new Circuit;
  c->dev = dev;
  c->m = m;
  c->ni = ni;
  c->naux = naux;
  c->log_n = log_n;
  c->na = na;
  c->nb = nb;
  try {
    DevCsr* mats[3] = {&c->A, &c->B, &c->C};
    for (int i = 0; i < 3; i++) {
      mats[i]->rp = cmalloc<u32>(*c, (size_t)m + 1);
      mats[i]->ci = cmalloc<u32>(*c, nnz[i]);
      mats[i]->ki = cmalloc<u32>(*c, nnz[i]);
      mats[i]->co = cmalloc<DFr>(*c, ncoeffs[i]);
      mats[i]->nnz = nnz[i];
      mats[i]->ncoeffs = ncoeffs[i];
    }
    c->a_idx = cmalloc<u32>(*c, na);
    c->b_idx = cmalloc<u32>(*c, nb);
  } catch (...) {
    release(c);
    throw;
  }
  return c;
}

static __global__ void k_index_check(const u32* __restrict__ idx, size_t n, u32 limit, u32* err) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && idx[i] >= limit) atomicOr(err, 16u);
}

// Frees what it holds at scope exit (also on exceptions); free() returns a buffer early.
struct Scratch {
  Ctx& c;
  std::vector<void*> held;
  explicit Scratch(Ctx& cx) : c(cx) {}
  template <class T>
  T* get(size_t count) {
    T* p = dalloc<T>(c, count);
    held.push_back(p);
    return p;
  }
  void free(void* p) {
    auto it = std::find(held.begin(), held.end(), p);
    if (it != held.end()) {
      held.erase(it);
      dfree(c, p);
    }
  }
  ~Scratch() {
    for (void* p : held) cudaFreeAsync(p, c.stream);
  }
};

void check_bases(const Bases* b, const char* name, int dev, int curve, size_t n) {
  if (!b) throw Error(std::string("provePartition: SRS vector ") + name + " is missing");
  if (b->dev != dev) throw Error(std::string("provePartition: SRS vector ") + name + " is on another device");
  if (b->curve != curve) throw Error(std::string("provePartition: SRS vector ") + name + " is on the wrong curve");
  if (b->n != n)
    throw Error(std::string("provePartition: SRS vector ") + name + " has " + std::to_string(b->n) +
                " bases, the circuit needs " + std::to_string(n));
}

}  // namespace

Circuit* circuit_upload(int dev, const CircuitDesc& d) {
  const size_t nv = (size_t)d.numInputs + d.numAux;
  if (d.logN > 31 || (size_t(1) << d.logN) < (size_t)d.numConstraints + d.numInputs)
    throw Error("uploadCircuit: the domain 2^" + std::to_string(d.logN) + " is smaller than the constraints + inputs");
  if (nv >= (size_t(1) << 32)) throw Error("uploadCircuit: too many variables");
  const CsrHost* hm[3] = {&d.a, &d.b, &d.c};
  const char* names[3] = {"A", "B", "C"};
  for (int i = 0; i < 3; i++) {
    if (hm[i]->rowPtr[0] != 0) throw Error(std::string("uploadCircuit: ") + names[i] + ": rowPtr[0] is not 0");
    if (hm[i]->rowPtr[d.numConstraints] != hm[i]->nnz)
      throw Error(std::string("uploadCircuit: ") + names[i] + ": rowPtr[rows] differs from the term count");
  }
  Guard g(dev);
  Ctx& c = g.c;
  const size_t nnz[3] = {d.a.nnz, d.b.nnz, d.c.nnz};
  const size_t nco[3] = {d.a.ncoeffs, d.b.ncoeffs, d.c.ncoeffs};
  Circuit* cc = circuit_alloc(dev, d.numConstraints, d.numInputs, d.numAux, d.logN, nnz, nco, d.na, d.nb);
  try {
    DevCsr* dm[3] = {&cc->A, &cc->B, &cc->C};
    u32* err = dalloc<u32>(c, 3);
    KC_CHECK(cudaMemsetAsync(err, 0, 12, c.stream));
    for (int i = 0; i < 3; i++) {
      KC_CHECK(cudaMemcpyAsync(dm[i]->rp, hm[i]->rowPtr, ((size_t)d.numConstraints + 1) * 4, cudaMemcpyHostToDevice, c.stream));
      if (hm[i]->nnz) {
        KC_CHECK(cudaMemcpyAsync(dm[i]->ci, hm[i]->colIdx, hm[i]->nnz * 4, cudaMemcpyHostToDevice, c.stream));
        KC_CHECK(cudaMemcpyAsync(dm[i]->ki, hm[i]->coeffIdx, hm[i]->nnz * 4, cudaMemcpyHostToDevice, c.stream));
      }
      if (hm[i]->ncoeffs)
        KC_CHECK(cudaMemcpyAsync(dm[i]->co, hm[i]->coeffs, hm[i]->ncoeffs * 32, cudaMemcpyHostToDevice, c.stream));
      const size_t span = std::max<size_t>(d.numConstraints, hm[i]->nnz);
      if (span) {
        k_csr_check<<<blocks_for(span, 256), 256, 0, c.stream>>>(dm[i]->rp, d.numConstraints, dm[i]->ci, dm[i]->ki,
                                                                hm[i]->nnz, (u32)nv, (u32)hm[i]->ncoeffs, err + i);
        KC_LAUNCHED();
      }
    }
    if (d.na) KC_CHECK(cudaMemcpyAsync(cc->a_idx, d.aIdx, d.na * 4, cudaMemcpyHostToDevice, c.stream));
    if (d.nb) KC_CHECK(cudaMemcpyAsync(cc->b_idx, d.bIdx, d.nb * 4, cudaMemcpyHostToDevice, c.stream));
    if (d.na) k_index_check<<<blocks_for(d.na, 256), 256, 0, c.stream>>>(cc->a_idx, d.na, (u32)nv, err);
    if (d.nb) k_index_check<<<blocks_for(d.nb, 256), 256, 0, c.stream>>>(cc->b_idx, d.nb, (u32)nv, err + 1);
    KC_LAUNCHED();
    u32 h_err[3];
    KC_CHECK(cudaMemcpyAsync(h_err, err, 12, cudaMemcpyDeviceToHost, c.stream));
    dfree(c, err);
    KC_CHECK(cudaStreamSynchronize(c.stream));
    for (int i = 0; i < 3; i++) {
      const u32 e = h_err[i];
      if (!e) continue;
      std::string m = std::string("uploadCircuit: ") + names[i] + ":";
      if (e & 1) m += " rowPtr is not non-decreasing;";
      if (e & 2) m += " column index out of range;";
      if (e & 4) m += " coefficient index out of range;";
      if (e & 16) m += std::string(" ") + (i == 0 ? "A" : "B") + "-query index out of range;";
      throw Error(m);
    }
  } catch (...) {
    release(cc);
    throw;
  }
  return cc;
}

void circuit_free(Circuit* c) {
  if (!c) return;
  Guard g(c->dev);
  KC_CHECK(cudaStreamSynchronize(g.c.stream));
  release(c);
}

size_t circuit_bytes(const Circuit* c) { return c->bytes; }
size_t circuit_vars(const Circuit* c) { return (size_t)c->ni + c->naux; }
int circuit_device(const Circuit* c) { return c->dev; }

// The device's copy stream (created on first use): witness uploads run there, outside the device
// lock, so that the next proof's upload overlaps the current proof's compute.
static cudaStream_t copy_stream(int dev) {
  static std::mutex mu;
  static std::map<int, cudaStream_t> streams;
  std::lock_guard<std::mutex> lock(mu);
  cudaStream_t& st = streams[dev];
  if (!st) {
    KC_CHECK(cudaSetDevice(dev));
    KC_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  }
  return st;
}

void prove_partition(Circuit* cc, const PartitionSrs& srs, const void* witness, PartitionOut& out) {
  const size_t n = size_t(1) << cc->log_n;
  const size_t nv = (size_t)cc->ni + cc->naux;
  check_bases(srs.h, "h", cc->dev, 1, n - 1);
  check_bases(srs.l, "l", cc->dev, 1, cc->naux);
  check_bases(srs.a, "a", cc->dev, 1, cc->na);
  check_bases(srs.b1, "b_g1", cc->dev, 1, cc->nb);
  check_bases(srs.b2, "b_g2", cc->dev, 2, cc->nb);
  PartitionTimes& t = out.t;
  t = PartitionTimes{};
  Events ev(11);
  // Stage the witness on the copy stream before taking the device (pool allocation and copy are
  // stream-ordered and thread-safe; the compute stream waits on ev[10] below).
  Ctx& c = ctx(cc->dev);
  KC_CHECK(cudaSetDevice(cc->dev));
  const cudaStream_t cs = copy_stream(cc->dev);
  DFr* w = nullptr;
  KC_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&w), std::max<size_t>(nv, 1) * 32, cs));
  Scratch s(c);
  s.held.push_back(w);  // freed on the compute stream, after it waited for the copy
  KC_CHECK(cudaEventRecord(ev.e[9], cs));
  KC_CHECK(cudaMemcpyAsync(w, witness, nv * 32, cudaMemcpyHostToDevice, cs));
  KC_CHECK(cudaEventRecord(ev.e[10], cs));
  const auto wait0 = std::chrono::steady_clock::now();
  Guard g(cc->dev);
  const float waited = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - wait0).count();
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  KC_CHECK(cudaStreamWaitEvent(c.stream, ev.e[10], 0));
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));

  // a, b, c over the domain: circuit rows, the input constraints (a[m + i] = w[i]), zeros.
  DFr* v[4];
  for (auto& p : v) p = s.get<DFr>(n);
  const DevCsr* mats[3] = {&cc->A, &cc->B, &cc->C};
  for (int i = 0; i < 3; i++) {
    const size_t tail = i == 0 ? (size_t)cc->m + cc->ni : cc->m;
    KC_CHECK(cudaMemsetAsync(v[i] + tail, 0, (n - tail) * 32, c.stream));
    if (cc->m) {
      k_csr_matvec<<<blocks_for(cc->m, 128), 128, 0, c.stream>>>(mats[i]->rp, cc->m, mats[i]->ci, mats[i]->ki,
                                                                 mats[i]->co, w, v[i]);
      KC_LAUNCHED();
    }
  }
  if (cc->ni) KC_CHECK(cudaMemcpyAsync(v[0] + cc->m, w, (size_t)cc->ni * 32, cudaMemcpyDeviceToDevice, c.stream));
  KC_CHECK(cudaEventRecord(ev.e[2], c.stream));

  DFr* rest[3];
  DFr* h = quotient_dev(c, v[0], v[1], v[2], v[3], cc->log_n, rest);
  KC_CHECK(cudaEventRecord(ev.e[3], c.stream));
  for (DFr* p : rest) s.free(p);

  msm_g1(c, srs.h, h, nullptr, out.h, t.h);
  KC_CHECK(cudaEventRecord(ev.e[4], c.stream));
  s.free(h);
  msm_g1(c, srs.l, w + cc->ni, nullptr, out.l, t.l);
  KC_CHECK(cudaEventRecord(ev.e[5], c.stream));
  msm_g1(c, srs.a, w, cc->a_idx, out.a, t.a);
  KC_CHECK(cudaEventRecord(ev.e[6], c.stream));
  msm_g1(c, srs.b1, w, cc->b_idx, out.b1, t.b1);
  KC_CHECK(cudaEventRecord(ev.e[7], c.stream));
  msm_g2(c, srs.b2, w, cc->b_idx, out.b2, t.b2);
  KC_CHECK(cudaEventRecord(ev.e[8], c.stream));
  s.free(w);
  KC_CHECK(cudaEventSynchronize(ev.e[8]));
  t.wait = waited;
  t.copy = ev.ms(9, 10);
  t.upload = ev.ms(0, 1);
  t.matvec = ev.ms(1, 2);
  t.ntt = ev.ms(2, 3);
  t.msm_h = ev.ms(3, 4);
  t.msm_l = ev.ms(4, 5);
  t.msm_a = ev.ms(5, 6);
  t.msm_b1 = ev.ms(6, 7);
  t.msm_b2 = ev.ms(7, 8);
  t.total = ev.ms(0, 8);
}

// ---- the synthetic partition (bench) -------------------------------------------------------------
namespace {

__device__ __forceinline__ void pick_pair(size_t i, u64 seed, u32 mask, u32& a, u32& b) {
  const u64 h = mix64(seed ^ (i * 0x9e3779b97f4a7c15ULL));
  a = (u32)h & mask;
  b = (u32)(h >> 32) & mask;
  if (b == a) b = (a + 1) & mask;
}

// out[i] = T[a_i] + T[b_i] (affine; a_i ≠ b_i random): runs of kRun points share one inversion
// (Montgomery's trick, prefix products kept in out[].x until the backward pass overwrites them).
template <class F>
__global__ void k_pair_points(const Affine<F>* __restrict__ T, u32 mask, Affine<F>* __restrict__ out, size_t n,
                              u64 seed) {
  constexpr size_t kRun = 16;
  const size_t i0 = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * kRun;
  if (i0 >= n) return;
  const size_t i1 = i0 + kRun < n ? i0 + kRun : n;
  F acc = F::one();
  for (size_t i = i0; i < i1; i++) {
    u32 a, b;
    pick_pair(i, seed, mask, a, b);
    acc = acc * (T[b].x - T[a].x);
    out[i].x = acc;
  }
  F inv = acc.inverse();
  for (size_t i = i1; i-- > i0;) {
    u32 a, b;
    pick_pair(i, seed, mask, a, b);
    const Affine<F> p = T[a], q = T[b];
    const F d = q.x - p.x;
    const F dinv = i > i0 ? inv * out[i - 1].x : inv;
    inv = inv * d;
    const F lam = (q.y - p.y) * dinv;
    const F x3 = lam * lam - p.x - q.x;
    out[i].y = lam * (p.x - x3) - p.y;
    out[i].x = x3;
  }
}

static __global__ void k_gen_rows(u32* rp, u32 rows, u32 k) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= rows) rp[i] = (u32)(i * k);
}

static __global__ void k_gen_terms(u32* ci, u32* ki, size_t nnz, u32 cols, u32 ncoeffs, u64 seed) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nnz) return;
  const u64 h = mix64(seed ^ (i * 0xd1b54a32d192ed03ULL));
  ci[i] = (u32)(((h & 0xffffffffULL) * cols) >> 32);
  ki[i] = (u32)((h >> 32) % ncoeffs);
}

static __global__ void k_gen_index(u32* idx, size_t count, u32 vars) {
  const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) idx[k] = (u32)((u64)k * vars / count);
}

// w[0] = 1; then 0 with probability zeroThr/2^32, 1 up to oneThr/2^32, else a random value.
static __global__ void k_gen_witness(DFr* w, size_t n, u32 zeroThr, u32 oneThr, u64 seed) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u64 h = mix64(seed ^ (i * 0x9e3779b97f4a7c15ULL));
  const u32 r = (u32)h;
  if (i == 0 || (r >= zeroThr && r < oneThr)) {
    w[i] = DFr::one();
  } else if (r < zeroThr) {
    w[i] = DFr::zero();
  } else {
    DFr s;
    u64 x = h;
#pragma unroll
    for (int k = 0; k < 4; k++) {
      x = mix64(x + k + 1);
      s.w[2 * k] = (u32)x;
      s.w[2 * k + 1] = (u32)(x >> 32);
    }
    s.w[7] &= 0x3fffffff;
    w[i] = s;
  }
}

template <class F>
Bases* synth_bases(Ctx& c, int curve, const Affine<F>* table, u32 mask, size_t n, u64 seed, std::vector<Bases*>& keep) {
  auto* b = new Bases{c.dev, curve, n, nullptr};
  keep.push_back(b);
  KC_CHECK(cudaMalloc(&b->d, std::max<size_t>(n, 1) * sizeof(Affine<F>)));
  const size_t runs = (n + 15) / 16;
  if (n) k_pair_points<F><<<blocks_for(runs, 128), 128, 0, c.stream>>>(table, mask, static_cast<Affine<F>*>(b->d), n, seed);
  KC_LAUNCHED();
  return b;
}

}  // namespace

PartitionBench bench_partition(int dev, const PartitionSpec& sp, const void* g1, const void* g2) {
  const size_t n = size_t(1) << sp.logN;
  const size_t nv = (size_t)sp.numInputs + sp.numAux;
  if (sp.logN > 31 || n < (size_t)sp.numConstraints + sp.numInputs) throw Error("benchPartition: domain too small");
  if (sp.nnzA == 0 || sp.nnzB == 0 || sp.nnzC == 0) throw Error("benchPartition: every matrix needs terms per row");
  if ((u64)sp.numConstraints * std::max({sp.nnzA, sp.nnzB, sp.nnzC}) >= (u64(1) << 32)) throw Error("benchPartition: too many terms");
  PartitionBench res;
  std::vector<Bases*> keep;
  Circuit* cc = nullptr;
  void* hw = nullptr;
  auto cleanup = [&] {
    for (Bases* b : keep) {
      cudaFree(b->d);
      delete b;
    }
    if (cc) release(cc);
    if (hw) host_free(hw);
  };
  try {
    const auto t0 = std::chrono::steady_clock::now();
    PartitionSrs srs{};
    {
      Guard g(dev);
      Ctx& c = g.c;
      const size_t nnz[3] = {(size_t)sp.numConstraints * sp.nnzA, (size_t)sp.numConstraints * sp.nnzB,
                             (size_t)sp.numConstraints * sp.nnzC};
      const size_t nco[3] = {4, 4, 4};
      cc = circuit_alloc(dev, sp.numConstraints, sp.numInputs, sp.numAux, sp.logN, nnz, nco, sp.na, sp.nb);
      DevCsr* mats[3] = {&cc->A, &cc->B, &cc->C};
      const unsigned per[3] = {sp.nnzA, sp.nnzB, sp.nnzC};
      for (int i = 0; i < 3; i++) {
        k_gen_rows<<<blocks_for((size_t)sp.numConstraints + 1, 256), 256, 0, c.stream>>>(mats[i]->rp, sp.numConstraints, per[i]);
        k_gen_terms<<<blocks_for(nnz[i], 256), 256, 0, c.stream>>>(mats[i]->ci, mats[i]->ki, nnz[i], (u32)nv, 4, 0x51 + i);
        k_random_scalars<<<1, 32, 0, c.stream>>>(mats[i]->co, 4, 0x77 + i);
        KC_LAUNCHED();
      }
      if (sp.na) k_gen_index<<<blocks_for(sp.na, 256), 256, 0, c.stream>>>(cc->a_idx, sp.na, (u32)nv);
      if (sp.nb) k_gen_index<<<blocks_for(sp.nb, 256), 256, 0, c.stream>>>(cc->b_idx, sp.nb, (u32)nv);
      KC_LAUNCHED();
      // SRS: sums of two points of a table of 2^18 random multiples of the generators.
      const unsigned tlog = 18;
      const size_t tn = size_t(1) << tlog;
      Affine<DFq>* gen1 = dalloc<Affine<DFq>>(c, 1);
      Affine<DFq2>* gen2 = dalloc<Affine<DFq2>>(c, 1);
      KC_CHECK(cudaMemcpyAsync(gen1, g1, sizeof(Affine<DFq>), cudaMemcpyHostToDevice, c.stream));
      KC_CHECK(cudaMemcpyAsync(gen2, g2, sizeof(Affine<DFq2>), cudaMemcpyHostToDevice, c.stream));
      Affine<DFq>* t1 = dalloc<Affine<DFq>>(c, tn);
      Affine<DFq2>* t2 = dalloc<Affine<DFq2>>(c, tn);
      k_random_points<DFq><<<blocks_for(tn, 128), 128, 0, c.stream>>>(gen1, t1, tn, 0xa1);
      k_random_points<DFq2><<<blocks_for(tn, 128), 128, 0, c.stream>>>(gen2, t2, tn, 0xa2);
      KC_LAUNCHED();
      const u32 mask = (u32)(tn - 1);
      srs.h = synth_bases<DFq>(c, 1, t1, mask, n - 1, 0xb1, keep);
      srs.l = synth_bases<DFq>(c, 1, t1, mask, sp.numAux, 0xb2, keep);
      srs.a = synth_bases<DFq>(c, 1, t1, mask, sp.na, 0xb3, keep);
      srs.b1 = synth_bases<DFq>(c, 1, t1, mask, sp.nb, 0xb4, keep);
      srs.b2 = synth_bases<DFq2>(c, 2, t2, mask, sp.nb, 0xb5, keep);
      for (Bases* b : keep) res.srs_bytes += b->n * (b->curve == 1 ? 96 : 192);
      res.circuit_bytes = cc->bytes;
      // The witness, generated here and copied to pinned host memory (proofs upload it from there).
      DFr* dw = dalloc<DFr>(c, nv);
      const double z = std::clamp(sp.fracZero, 0.0, 1.0), o = std::clamp(sp.fracOne, 0.0, 1.0 - z);
      const u32 zt = (u32)std::min(4294967295.0, z * 4294967296.0);
      const u32 ot = (u32)std::min(4294967295.0, (z + o) * 4294967296.0);
      k_gen_witness<<<blocks_for(nv, 256), 256, 0, c.stream>>>(dw, nv, zt, ot, 0xc1);
      KC_LAUNCHED();
      hw = host_alloc(nv * 32);
      KC_CHECK(cudaMemcpyAsync(hw, dw, nv * 32, cudaMemcpyDeviceToHost, c.stream));
      for (void* p : {(void*)gen1, (void*)gen2, (void*)t1, (void*)t2, (void*)dw}) dfree(c, p);
      KC_CHECK(cudaStreamSynchronize(c.stream));
    }
    res.generate_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    PartitionOut out;
    for (int it = -1; it < sp.iters; it++) {
      prove_partition(cc, srs, hw, out);
      if (it >= 0) res.runs.push_back(out.t);
    }
    {
      Guard g(dev);
      cudaMemPool_t pool;
      KC_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
      uint64_t high = 0;
      KC_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &high));
      res.peak_pool_bytes = high;
    }
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
  return res;
}

}  // namespace cuda
}  // namespace kiln
