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
#include "msm_run.hpp"
#include "ntt_ops.cuh"
#include "partition.hpp"
#include "stream.cuh"

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
  for (void* p : c->registered) cudaHostUnregister(p);
  delete c;
}

// Allocates the device arrays of a circuit (contents undefined). The caller holds the Guard.
Circuit* circuit_alloc(int dev, u32 m, u32 ni, u32 naux, unsigned log_n, const size_t nnz[3], const size_t ncoeffs[3],
                       size_t na, size_t nb, bool streamed = false) {
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
    c->streamed = streamed;
    for (int i = 0; i < 3; i++) {
      if (!streamed) {
        mats[i]->rp = cmalloc<u32>(*c, (size_t)m + 1);
        mats[i]->ci = cmalloc<u32>(*c, nnz[i]);
        mats[i]->ki = cmalloc<u32>(*c, nnz[i]);
      }
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


void check_bases(const Bases* b, const char* name, int dev, int curve, size_t n) {
  if (!b) throw Error(std::string("provePartition: SRS vector ") + name + " is missing");
  if (b->dev != dev) throw Error(std::string("provePartition: SRS vector ") + name + " is on another device");
  if (b->curve != curve) throw Error(std::string("provePartition: SRS vector ") + name + " is on the wrong curve");
  if (b->n != n)
    throw Error(std::string("provePartition: SRS vector ") + name + " has " + std::to_string(b->n) +
                " bases, the circuit needs " + std::to_string(n));
}

}  // namespace

// Page-locks [p, p + bytes) in place when the driver allows it (a range it already knows, or one it
// refuses, stays pageable: its copies are then slower, not wrong).
static void register_host(Circuit* c, const void* p, size_t bytes) {
  if (!bytes) return;
  void* q = const_cast<void*>(p);
  if (cudaHostRegister(q, bytes, cudaHostRegisterPortable) == cudaSuccess) c->registered.push_back(q);
  else cudaGetLastError();  // clear it
}

// The checks uploadCircuit's kernels make, on the host, over the matrices a streamed circuit keeps
// there (rowPtr non-decreasing, columns and coefficient indices in range).
static void check_host_csr(const CsrHost& h, uint32_t rows, size_t nv, const char* name) {
  for (uint32_t i = 0; i < rows; i++)
    if (h.rowPtr[i] > h.rowPtr[i + 1]) throw Error(std::string("uploadCircuit: ") + name + ": rowPtr is not non-decreasing;");
  for (size_t k = 0; k < h.nnz; k++) {
    if (h.colIdx[k] >= nv) throw Error(std::string("uploadCircuit: ") + name + ": column index out of range;");
    if (h.coeffIdx[k] >= h.ncoeffs) throw Error(std::string("uploadCircuit: ") + name + ": coefficient index out of range;");
  }
}

Circuit* circuit_upload(int dev, const CircuitDesc& d) { return circuit_upload(dev, d, false); }

Circuit* circuit_upload(int dev, const CircuitDesc& d, bool streamed) {
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
  if (streamed)
    for (int i = 0; i < 3; i++) check_host_csr(*hm[i], d.numConstraints, nv, names[i]);
  Guard g(dev);
  Ctx& c = g.c;
  const size_t nnz[3] = {d.a.nnz, d.b.nnz, d.c.nnz};
  const size_t nco[3] = {d.a.ncoeffs, d.b.ncoeffs, d.c.ncoeffs};
  Circuit* cc = circuit_alloc(dev, d.numConstraints, d.numInputs, d.numAux, d.logN, nnz, nco, d.na, d.nb, streamed);
  try {
    DevCsr* dm[3] = {&cc->A, &cc->B, &cc->C};
    if (streamed) {
      HostCsr* hc[3] = {&cc->hA, &cc->hB, &cc->hC};
      for (int i = 0; i < 3; i++) {
        hc[i]->rp = hm[i]->rowPtr;
        hc[i]->ci = hm[i]->colIdx;
        hc[i]->ki = hm[i]->coeffIdx;
        hc[i]->nnz = hm[i]->nnz;
        register_host(cc, hm[i]->rowPtr, ((size_t)d.numConstraints + 1) * 4);
        register_host(cc, hm[i]->colIdx, hm[i]->nnz * 4);
        register_host(cc, hm[i]->coeffIdx, hm[i]->nnz * 4);
        cc->host_bytes += ((size_t)d.numConstraints + 1) * 4 + hm[i]->nnz * 8;
        if (hm[i]->ncoeffs)
          KC_CHECK(cudaMemcpyAsync(dm[i]->co, hm[i]->coeffs, hm[i]->ncoeffs * 32, cudaMemcpyHostToDevice, c.stream));
      }
    }
    u32* err = dalloc<u32>(c, 3);
    KC_CHECK(cudaMemsetAsync(err, 0, 12, c.stream));
    for (int i = 0; i < 3 && !streamed; i++) {
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
size_t circuit_host_bytes(const Circuit* c) { return c->host_bytes; }
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

namespace {

constexpr size_t kAlign = 256;
size_t align_up(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Rows [r0, r1) of a host matrix as one stream item: rowPtr[r0 … r1] at 0, the columns and the
// coefficient indices of their terms after it.
StreamItem csr_item(const HostCsr& h, u32 r0, u32 r1, size_t& off_ci, size_t& off_ki) {
  const size_t t0 = h.rp[r0], nt = (size_t)h.rp[r1] - t0;
  off_ci = align_up(((size_t)r1 - r0 + 1) * 4);
  off_ki = off_ci + align_up(nt * 4);
  StreamItem it;
  it.pieces.push_back({h.rp + r0, ((size_t)r1 - r0 + 1) * 4, 0});
  it.pieces.push_back({h.ci + t0, nt * 4, off_ci});
  it.pieces.push_back({h.ki + t0, nt * 4, off_ki});
  return it;
}

// Row chunks of a host matrix that fit a slot (each at least one row: a row longer than a slot is an
// error the plan should have prevented).
std::vector<std::pair<u32, u32>> csr_chunks(const HostCsr& h, u32 rows, size_t slot) {
  std::vector<std::pair<u32, u32>> out;
  auto fits = [&](u32 r0, u32 r1) {
    const size_t nt = (size_t)h.rp[r1] - h.rp[r0];
    return align_up(((size_t)r1 - r0 + 1) * 4) + align_up(nt * 4) + nt * 4 <= slot;
  };
  for (u32 r0 = 0; r0 < rows;) {
    if (!fits(r0, r0 + 1)) throw Error("provePartition: a matrix row does not fit a staging slot");
    u32 lo = r0 + 1, hi = rows;  // the largest r1 in [lo, hi] that fits
    while (lo < hi) {
      const u32 mid = lo + (hi - lo + 1) / 2;
      if (fits(r0, mid)) lo = mid;
      else hi = mid - 1;
    }
    out.push_back({r0, lo});
    r0 = lo;
  }
  return out;
}

// One of the five query MSMs of a partition, run in chunks that interleave with the others'.
struct QueryMsm {
  const char* name;
  Bases* b;
  const DFr* scalars;
  const u32* sidx;
  MsmTimes* t;
  float* ms;
  uint8_t* out;
  MsmShape shape;
  std::unique_ptr<MsmRunner> run;
  size_t chunks = 0;
};

}  // namespace

void prove_partition(Circuit* cc, const PartitionSrs& srs, const void* witness, PartitionOut& out, const PartitionPlan& plan) {
  const size_t n = size_t(1) << cc->log_n;
  const size_t nv = (size_t)cc->ni + cc->naux;
  check_bases(srs.h, "h", cc->dev, 1, n - 1);
  check_bases(srs.l, "l", cc->dev, 1, cc->naux);
  check_bases(srs.a, "a", cc->dev, 1, cc->na);
  check_bases(srs.b1, "b_g1", cc->dev, 1, cc->nb);
  check_bases(srs.b2, "b_g2", cc->dev, 2, cc->nb);
  if (plan.qbufs < 2 || plan.qbufs > 4) throw Error("provePartition: the quotient takes 2, 3 or 4 buffers");
  PartitionTimes& t = out.t;
  t = PartitionTimes{};
  t.qbufs = plan.qbufs;
  Events ev(11);
  Ctx& c = ctx(cc->dev);
  KC_CHECK(cudaSetDevice(cc->dev));
  const cudaStream_t cs = copy_stream(cc->dev);
  DFr* w = nullptr;
  if (plan.prefetch_witness) {
    // Stage the witness on the copy stream before taking the device (pool allocation and copy are
    // stream-ordered and thread-safe; the compute stream waits on ev[10] below).
    KC_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&w), std::max<size_t>(nv, 1) * 32, cs));
    KC_CHECK(cudaEventRecord(ev.e[9], cs));
    KC_CHECK(cudaMemcpyAsync(w, witness, nv * 32, cudaMemcpyHostToDevice, cs));
    KC_CHECK(cudaEventRecord(ev.e[10], cs));
  }
  Scratch s(c);
  if (w) s.held.push_back(w);  // freed on the compute stream, after it waited for the copy
  const auto wait0 = std::chrono::steady_clock::now();
  Guard g(cc->dev, plan.urgent);
  const float waited = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - wait0).count();
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  if (w) {
    KC_CHECK(cudaStreamWaitEvent(c.stream, ev.e[10], 0));
  } else {
    // no second witness on the device: allocated and copied now, on the compute stream
    w = s.get<DFr>(nv);
    KC_CHECK(cudaEventRecord(ev.e[9], c.stream));
    KC_CHECK(cudaMemcpyAsync(w, witness, nv * 32, cudaMemcpyHostToDevice, c.stream));
    KC_CHECK(cudaEventRecord(ev.e[10], c.stream));
  }
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));

  // The five MSMs: shapes first (the scratch budget, a streamed section's chunks fit a slot), so
  // that their streamed chunks are known before anything runs and the copies start now.
  const size_t slot = plan.slot_bytes ? plan.slot_bytes : size_t(256) << 20;
  const size_t budget = plan.msm_budget ? plan.msm_budget : ~size_t(0) >> 2;
  QueryMsm q[5] = {{"h", srs.h, nullptr, nullptr, &t.h, &t.msm_h, out.h},
                   {"l", srs.l, w + cc->ni, nullptr, &t.l, &t.msm_l, out.l},
                   {"a", srs.a, w, cc->a_idx, &t.a, &t.msm_a, out.a},
                   {"b_g1", srs.b1, w, cc->b_idx, &t.b1, &t.msm_b1, out.b1},
                   {"b_g2", srs.b2, w, cc->b_idx, &t.b2, &t.msm_b2, out.b2}};
  size_t others[5], cap[5];
  for (int k = 0; k < 5; k++) {
    QueryMsm& m = q[k];
    // h is dense (full-width scalars); the others are counted (mostly 0 and 1)
    others[k] = m.scalars ? msm_count_others(c, m.scalars, m.sidx, m.b->n) : m.b->n;
    cap[k] = m.b->d ? m.b->n : std::max<size_t>(1, slot / point_bytes(m.b->curve));
  }
  // The five runs' buckets live together, one chunk's scratch at a time: each run is shaped with
  // the budget less the others' buckets (two rounds: the second with the first round's buckets).
  size_t held[5] = {0, 0, 0, 0, 0};
  for (int round = 0; round < 3; round++) {
    size_t total = 0;
    for (size_t x : held) total += x;
    MsmShape sh[5];
    for (int k = 0; k < 5; k++) {
      const size_t rest = total - held[k];
      if (rest >= budget) throw Error("provePartition: the MSM scratch budget cannot hold the five runs' buckets");
      // bases with precomputed copies (precomputeBases) take their window and spread the digits over them
      sh[k] = msm_shape(q[k].b->curve, q[k].b->n, others[k], budget - rest, cap[k], msm_pre_of(q[k].b));
    }
    size_t need = 0, most = 0;
    for (int k = 0; k < 5; k++) {
      q[k].shape = sh[k];
      need += sh[k].persistent;
      most = std::max(most, sh[k].per_chunk);
      held[k] = sh[k].persistent;
    }
    if (need + most <= budget) break;
    if (round == 2) throw Error("provePartition: the MSM scratch budget is too small for this partition");
  }
  for (auto& m : q) m.chunks = m.b->n ? (m.b->n + m.shape.chunk - 1) / m.shape.chunk : 0;
  // The chunks in the order they run: merged by progress ((i + ½)/chunks of each MSM), so that the
  // copies of one MSM's streamed bases overlap the compute of the others.
  struct Step {
    int k;
    size_t i;
    double key;
  };
  std::vector<Step> steps;
  for (int k = 0; k < 5; k++)
    for (size_t i = 0; i < q[k].chunks; i++) steps.push_back({k, i, (i + 0.5) / q[k].chunks});
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.key < b.key; });

  // Streamed data comes through two sets of staging slots: the matrices' rows while a, b and c are
  // formed (small slots, beside the quotient's buffers), then the SRS chunks while the MSMs run
  // (the plan's slots, once the quotient's buffers are back in the pool).
  std::unique_ptr<Streamer> mst, st;
  std::vector<std::pair<u32, u32>> rows[3];
  size_t off_ci = 0, off_ki = 0;
  const HostCsr* hmats[3] = {&cc->hA, &cc->hB, &cc->hC};
  size_t streamed = 0;
  float stream_copy = 0;
  auto done_with = [&](std::unique_ptr<Streamer>& x) {
    if (!x) return;
    streamed += x->bytes_copied();
    stream_copy += x->copy_ms();
    x.reset();
  };
  if (cc->streamed) {
    const size_t mslot = plan.matrix_slot_bytes ? plan.matrix_slot_bytes : slot;
    mst = std::make_unique<Streamer>(c, 2, mslot);
    for (int i = 0; i < 3; i++) {
      rows[i] = csr_chunks(*hmats[i], cc->m, mslot);
      for (const auto& [r0, r1] : rows[i]) mst->add(csr_item(*hmats[i], r0, r1, off_ci, off_ki));
    }
    mst->start();
  }

  // a, b, c over the domain: circuit rows, the input constraints (a[m + i] = w[i]), zeros.
  const DevCsr* mats[3] = {&cc->A, &cc->B, &cc->C};
  auto matvec = [&](int i, DFr* v) {
    const size_t tail = i == 0 ? (size_t)cc->m + cc->ni : cc->m;
    KC_CHECK(cudaMemsetAsync(v + tail, 0, (n - tail) * 32, c.stream));
    if (cc->m) {
      if (!cc->streamed) {
        k_csr_matvec<<<blocks_for(cc->m, 128), 128, 0, c.stream>>>(mats[i]->rp, cc->m, mats[i]->ci, mats[i]->ki,
                                                                   mats[i]->co, w, v);
        KC_LAUNCHED();
      } else {
        for (const auto& [r0, r1] : rows[i]) {
          size_t oc = 0, ok = 0;
          csr_item(*hmats[i], r0, r1, oc, ok);  // the offsets of this chunk's pieces
          const uint8_t* sl = static_cast<const uint8_t*>(mst->acquire());
          k_csr_matvec_rows<<<blocks_for(r1 - r0, 128), 128, 0, c.stream>>>(
              reinterpret_cast<const u32*>(sl), r1 - r0, reinterpret_cast<const u32*>(sl + oc),
              reinterpret_cast<const u32*>(sl + ok), mats[i]->co, w, v + r0);
          KC_LAUNCHED();
          mst->release();
        }
      }
    }
    if (i == 0 && cc->ni) KC_CHECK(cudaMemcpyAsync(v + cc->m, w, (size_t)cc->ni * 32, cudaMemcpyDeviceToDevice, c.stream));
  };

  DFr* h = nullptr;
  float matvec_ms = 0;
  if (plan.qbufs == 4) {
    DFr* v[4];
    for (auto& p : v) p = s.get<DFr>(n);
    for (int i = 0; i < 3; i++) matvec(i, v[i]);
    done_with(mst);
    KC_CHECK(cudaEventRecord(ev.e[2], c.stream));
    DFr* rest[3];
    h = quotient_dev(c, v[0], v[1], v[2], v[3], cc->log_n, rest);
    for (DFr* p : rest) s.free(p);
  } else {
    // one vector at a time: ab ← coset(A·w); b ← coset(B·w); ab ·= b; c ← coset(C·w) into b's
    // buffer; ab ← (ab − c)/Z; h ← iNTT(ab). Three buffers: transforms out of place; two: in place.
    DFr* ab = s.get<DFr>(n);
    DFr* v = s.get<DFr>(n);
    DFr* scratch = plan.qbufs == 3 ? s.get<DFr>(n) : nullptr;
    Events mv(6);
    KC_CHECK(cudaEventRecord(mv.e[0], c.stream));
    matvec(0, ab);
    KC_CHECK(cudaEventRecord(mv.e[1], c.stream));
    ab = coset_evals(c, ab, scratch, cc->log_n);
    KC_CHECK(cudaEventRecord(mv.e[2], c.stream));
    matvec(1, v);
    KC_CHECK(cudaEventRecord(mv.e[3], c.stream));
    v = coset_evals(c, v, scratch, cc->log_n);
    quotient_mul(c, ab, v, cc->log_n);
    KC_CHECK(cudaEventRecord(mv.e[4], c.stream));
    matvec(2, v);
    KC_CHECK(cudaEventRecord(mv.e[5], c.stream));
    done_with(mst);
    v = coset_evals(c, v, scratch, cc->log_n);
    quotient_sub(c, ab, v, cc->log_n);
    h = quotient_h(c, ab, scratch, cc->log_n);
    for (DFr* p : {ab, v, scratch})
      if (p && p != h) s.free(p);
    KC_CHECK(cudaEventRecord(ev.e[2], c.stream));  // (the matvec time is summed below)
    KC_CHECK(cudaEventSynchronize(mv.e[5]));
    matvec_ms = mv.ms(0, 1) + mv.ms(2, 3) + mv.ms(4, 5);
  }
  KC_CHECK(cudaEventRecord(ev.e[3], c.stream));
  q[0].scalars = h;

  // The MSMs, chunk by chunk in the merged order; each chunk's kernels timed (events) for its MSM.
  // (The mat-vec's waits for streamed rows are inside its own time; stream_wait counts the MSMs'.)
  bool host_sections = false;
  for (const auto& m : q) host_sections |= !m.b->d;
  if (host_sections) {
    st = std::make_unique<Streamer>(c, plan.slots, slot);
    for (const Step& sp : steps) {
      const QueryMsm& m = q[sp.k];
      if (m.b->d) continue;
      const size_t p0 = sp.i * m.shape.chunk;
      st->add({host_range(m.b, p0, std::min(m.shape.chunk, m.b->n - p0))});
    }
    st->start();
  }
  for (auto& m : q) {
    m.run = m.b->curve == 1 ? msm_runner_g1(c, m.b->n, m.scalars, m.sidx, m.shape, *m.t)
                            : msm_runner_g2(c, m.b->n, m.scalars, m.sidx, m.shape, *m.t);
  }
  for (const Step& sp : steps) {
    QueryMsm& m = q[sp.k];
    const size_t pb = point_bytes(m.b->curve), p0 = sp.i * m.shape.chunk, k = std::min(m.shape.chunk, m.b->n - p0);
    const void* bases = m.b->d ? static_cast<const uint8_t*>(m.b->d) + p0 * pb : st->acquire();
    Events e(2);
    KC_CHECK(cudaEventRecord(e.e[0], c.stream));
    m.run->chunk(bases, p0, k);
    KC_CHECK(cudaEventRecord(e.e[1], c.stream));
    if (!m.b->d) st->release();
    KC_CHECK(cudaEventSynchronize(e.e[1]));
    *m.ms += e.ms(0, 1);
  }
  for (auto& m : q) {
    Events e(2);
    KC_CHECK(cudaEventRecord(e.e[0], c.stream));
    m.run->finish(m.out);
    KC_CHECK(cudaEventRecord(e.e[1], c.stream));
    KC_CHECK(cudaEventSynchronize(e.e[1]));
    *m.ms += e.ms(0, 1);
    m.run.reset();
  }
  s.free(h);
  KC_CHECK(cudaEventRecord(ev.e[8], c.stream));
  s.free(w);
  KC_CHECK(cudaEventSynchronize(ev.e[8]));
  if (st) t.stream_wait = st->wait_ms();
  done_with(st);
  t.streamed_bytes = streamed;
  t.stream_copy = stream_copy;
  t.wait = waited;
  t.copy = ev.ms(9, 10);
  t.upload = ev.ms(0, 1);
  t.matvec = plan.qbufs == 4 ? ev.ms(1, 2) : matvec_ms;
  t.ntt = plan.qbufs == 4 ? ev.ms(2, 3) : ev.ms(1, 3) - matvec_ms;
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
      if (sp.preH > 1) {
        const auto p0 = std::chrono::steady_clock::now();
        precompute_g1(c, srs.h, sp.preH, pre_window(srs.h->n, sp.preH));
        res.pre_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count();
        res.pre_copies = srs.h->copies;
        res.pre_window = srs.h->pre_c;
        res.srs_bytes += (size_t)(srs.h->copies - 1) * srs.h->n * 96;
      }
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
    PartitionPlan plan;
    if (sp.qbufs) plan.qbufs = sp.qbufs;
    plan.msm_budget = sp.msmBudget;
    for (int it = -1; it < sp.iters; it++) {
      prove_partition(cc, srs, hw, out, plan);
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
