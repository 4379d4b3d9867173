// The calls of the CUDA addon (build/cuda/kiln_cuda.node), over the shared N-API glue
// (native/napi/glue.hpp, node-addon-api; header only, so it is needed where the addon is compiled,
// not where it runs). No CUDA headers here: the drivers' interface is kiln_cuda.hpp / partition.hpp.
// Every heavy call: arguments parsed and checked on the JS thread, work on a libuv worker (one
// operation per device at a time, see ctx.cuh), result converted on the JS thread. The CPU addon
// never links any of this. Functions are registered in the table at the end.
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../napi/glue.hpp"
#include "kiln_cuda.hpp"
#include "partition.hpp"
#include "setup.hpp"
#include "upload.hpp"
#include "warm.hpp"

using namespace kiln::cuda;
using namespace kiln::glue;

namespace {

using Info = Napi::CallbackInfo;

// Starts fn_call(run, done) holding the arguments at `keep` (buffers pinned, objects kept alive).
template <class Run, class Done>
Napi::Value start(const Info& info, std::initializer_list<size_t> keep, Run run, Done done) {
  auto* c = fn_call(info.Env(), "kiln_cuda", std::move(run), std::move(done));
  for (size_t i : keep)
    if (i < info.Length()) c->hold(info[i]);
  return c->start();
}

Napi::Object timings(Napi::Env env, const MsmTimes& t) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("classify", t.classify);
  o.Set("batchAdd", t.batch_add);
  o.Set("msm", t.msm);
  Napi::Object ph = Napi::Object::New(env);
  ph.Set("sort", t.sort);
  ph.Set("accumulate", t.accumulate);
  ph.Set("buckets", t.buckets);
  ph.Set("windows", t.windows);
  ph.Set("affineLevels", t.ba_levels);
  ph.Set("affinePasses", (double)t.ba_passes);
  ph.Set("affineSlices", (double)t.ba_slices);
  ph.Set("passes", (double)t.passes);
  o.Set("pippenger", ph);
  return o;
}

int device_arg(const Info& info, size_t i) {
  const double d = number_arg(info, i, "device");
  if (d < 0 || d != (int)d) throw_range(info.Env(), "device must be a non-negative integer");
  return (int)d;
}

unsigned log2_exact(Napi::Env env, size_t n, const char* fn) {
  if (n == 0 || (n & (n - 1))) throw_range(env, std::string(fn) + ": length must be a power of two");
  unsigned l = 0;
  while ((size_t(1) << l) < n) l++;
  if (l > 31) throw_range(env, std::string(fn) + ": at most 2^31 elements");
  return l;
}

// ---- handles: resident bases and circuits ---------------------------------------------------------
const HandleKind kBases{"bases", "uploadBases or createBases"};
const HandleKind kCircuit{"circuit", "uploadCircuit"};

Handle* bases_handle(const Info& info, size_t i) { return handle_of(info.Env(), info[i], kBases); }
Bases* bases_of(Napi::Env env, const Napi::Value& v) { return static_cast<Bases*>(handle_of(env, v, kBases)->p); }
Circuit* circuit_of(Napi::Env env, const Napi::Value& v) {
  return static_cast<Circuit*>(handle_of(env, v, kCircuit)->p);
}

// ---- devices ----------------------------------------------------------------------------------------
Napi::Value js_probe(const Info& info) {
  Napi::Env env = info.Env();
  std::vector<GpuInfo> gpus;
  std::string why;
  const int n = probe(gpus, why);
  Napi::Object o = Napi::Object::New(env);
  Napi::Array arr = Napi::Array::New(env, gpus.size());
  for (size_t i = 0; i < gpus.size(); i++) {
    Napi::Object g = Napi::Object::New(env);
    g.Set("ordinal", gpus[i].ordinal);
    g.Set("name", gpus[i].name);
    g.Set("memoryBytes", (double)gpus[i].memoryBytes);
    g.Set("computeCapability", std::to_string(gpus[i].major) + "." + std::to_string(gpus[i].minor));
    g.Set("multiprocessors", gpus[i].sms);
    arr.Set((uint32_t)i, g);
  }
  o.Set("cuda", n > 0);
  o.Set("gpus", arr);
  o.Set("runtime", runtime_version());
  if (n == 0) o.Set("error", why);
  return o;
}

Napi::Value js_version(const Info& info) { return Napi::String::New(info.Env(), "0.1.0"); }

// memInfo(device) → { freeBytes, totalBytes }: the device's memory now (the daemon's GetStatus).
Napi::Value js_mem_info(const Info& info) {
  Napi::Env env = info.Env();
  const DeviceMemory m = mem_info(device_arg(info, 0));
  Napi::Object o = Napi::Object::New(env);
  o.Set("freeBytes", (double)m.free_bytes);
  o.Set("totalBytes", (double)m.total_bytes);
  return o;
}

// ---- MSM --------------------------------------------------------------------------------------------
Napi::Value js_upload_bases(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  const double curve = number_arg(info, 1, "curve");
  if (curve != 1 && curve != 2) throw_range(env, "uploadBases: curve must be 1 (G1) or 2 (G2)");
  Bytes b = bytes_arg(info, 2, "bases");
  const size_t pb = curve == 1 ? 96 : 192;
  if (b.len % pb) throw_range(env, "uploadBases: bases length is not a multiple of the point size");
  Bases* d = bases_upload(dev, (int)curve, b.data, b.len / pb);
  return make_handle(env, kBases, d, (int)curve, [](void* p) { bases_free(static_cast<Bases*>(p)); });
}

// createBases(device, curve, count) → a bases handle over `count` device points, contents undefined
// until writeBases fills them: the chunked SRS upload of the native parameter loader.
Napi::Value js_create_bases(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  const double curve = number_arg(info, 1, "curve");
  if (curve != 1 && curve != 2) throw_range(env, "createBases: curve must be 1 (G1) or 2 (G2)");
  const size_t n = count_arg(info, 2, "createBases: count", 4294967295.0);
  Bases* d = bases_alloc(dev, (int)curve, n);
  return make_handle(env, kBases, d, (int)curve, [](void* p) { bases_free(static_cast<Bases*>(p)); });
}

// writeBases(handle, firstPoint, bytes) → Promise<void>: copies whole points (native layout; pinned
// memory from alloc for full speed) to points [firstPoint, …) on the device's upload stream.
Napi::Value js_write_bases(const Info& info) {
  Napi::Env env = info.Env();
  Handle* h = bases_handle(info, 0);
  Bases* b = static_cast<Bases*>(h->p);
  const size_t first = count_arg(info, 1, "writeBases: firstPoint", 9007199254740991.0);
  Bytes src = bytes_arg(info, 2, "bytes");
  const size_t pb = h->meta == 1 ? 96 : 192;
  if (src.len % pb)
    throw_range(env, "writeBases: bytes length " + std::to_string(src.len) + " is not a multiple of the point size " + std::to_string(pb));
  const size_t n = src.len / pb, total = bases_count(b);
  if (first > total || n > total - first)
    throw_range(env, "writeBases: points [" + std::to_string(first) + ", " + std::to_string(first + n) + ") out of range (" +
                         std::to_string(total) + " points)");
  const uint8_t* p = src.data;
  return start(info, {0, 2}, [=] { bases_write(b, first, p, n); }, [](Napi::Env e) { return e.Undefined(); });
}

// hostBases(device, curve, chunks: Uint8Array[]) → a bases handle over points that stay in host
// memory (an SRS section a small GPU cannot hold), streamed to the device in chunks by msm
// and provePartition. The chunks (from alloc: pinned) are pinned here until the handle is freed.
Napi::Value js_host_bases(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  const double curve = number_arg(info, 1, "curve");
  if (curve != 1 && curve != 2) throw_range(env, "hostBases: curve must be 1 (G1) or 2 (G2)");
  if (!present(info, 2) || !info[2].IsArray()) throw_type(env, "hostBases: chunks must be an array of Uint8Arrays");
  Napi::Array arr = info[2].As<Napi::Array>();
  std::vector<std::pair<const uint8_t*, size_t>> pieces;
  auto pins = std::make_shared<std::vector<Block*>>();
  auto unpin = [pins] {
    for (Block* b : *pins) registry().unpin(b);
  };
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Bytes b = view_bytes(env, arr.Get(i), "hostBases: chunk");
    if (b.len == 0) continue;
    Block* blk = registry().pin(b.data);
    if (!blk) {
      unpin();
      throw_type(env, "hostBases: chunk " + std::to_string(i) + " was not allocated by this addon's alloc (pinned memory)");
    }
    pins->push_back(blk);
    pieces.push_back({b.data, b.len});
  }
  Bases* d = nullptr;
  try {
    d = bases_host(dev, (int)curve, pieces, unpin);
  } catch (...) {
    unpin();
    throw;
  }
  return make_handle(env, kBases, d, (int)curve, [](void* p) { bases_free(static_cast<Bases*>(p)); });
}

// setMemoryPlan(device, msmBudgetBytes, slotBytes, slots): the standalone msm's plan (0 budget: as
// the MSM needs; 0 slot bytes / slots: unchanged).
Napi::Value js_set_memory_plan(const Info& info) {
  const int dev = device_arg(info, 0);
  const size_t budget = count_arg(info, 1, "setMemoryPlan: msmBudgetBytes", 9007199254740991.0);
  const size_t slot = count_arg(info, 2, "setMemoryPlan: slotBytes", 9007199254740991.0);
  const size_t slots = count_arg(info, 3, "setMemoryPlan: slots", 64);
  set_memory_plan(dev, budget, slot, (unsigned)slots);
  return info.Env().Undefined();
}

// trimPool(device): waits for the device and returns its pool's cached memory to the driver.
Napi::Value js_trim_pool(const Info& info) {
  pool_trim(device_arg(info, 0));
  return info.Env().Undefined();
}

Napi::Value js_free_bases(const Info& info) {
  free_handle(bases_handle(info, 0));
  return info.Env().Undefined();
}

Napi::Value js_msm(const Info& info) {
  Napi::Env env = info.Env();
  Handle* h = bases_handle(info, 0);
  Bytes sc = bytes_arg(info, 1, "scalars");
  if (sc.len % 32) throw_range(env, "msm: scalars length is not a multiple of 32");
  Bases* b = static_cast<Bases*>(h->p);
  const size_t ns = sc.len / 32, nb = bases_count(b);
  const uint32_t* sidx = nullptr;
  if (present(info, 2)) {
    U32s ix = u32_arg(info, 2, "scalarIndex");
    if (ix.len != nb) throw_range(env, "msm: scalarIndex length must equal the base count");
    for (size_t k = 0; k < ix.len; k++)
      if (ix.data[k] >= ns) throw_range(env, "msm: scalarIndex entry out of range");
    sidx = ix.data;
  } else if (ns != nb) {
    throw_range(env, "msm: scalar count (" + std::to_string(ns) + ") != base count (" + std::to_string(nb) + ")");
  }
  struct R {
    uint8_t point[192];
    MsmTimes t;
  };
  auto r = std::make_shared<R>();
  const size_t pb = h->meta == 1 ? 96 : 192;
  const uint8_t* scalars = sc.data;
  return start(
      info, {0, 1, 2}, [=] { msm(b, scalars, ns, sidx, r->point, r->t); },
      [=](Napi::Env e) {
        Napi::Object o = Napi::Object::New(e);
        o.Set("point", u8_copy(e, r->point, pb));
        o.Set("timings", timings(e, r->t));
        o.Set("window", r->t.window);
        o.Set("ones", (double)r->t.ones);
        o.Set("others", (double)r->t.others);
        return o;
      });
}

Napi::Object pre_object(Napi::Env e, const BasesPre& p) {
  Napi::Object o = Napi::Object::New(e);
  o.Set("copies", p.copies);
  o.Set("window", p.window);
  o.Set("windows", p.windows);
  o.Set("bytes", (double)p.bytes);
  o.Set("ms", p.ms);
  return o;
}

// precomputeBases(handle, copies, window?) → Promise<{copies, window, windows, bytes, ms}>: precomputed
// multiples of resident bases (up to `copies` copies, copy j = 2^(j·window·windows)·P, made on the
// device), which every later msm over the handle uses: `windows` windows of buckets instead of
// ⌈256/window⌉. window absent or 0: the cost model's for this many points. The bases then take
// copies × their bytes; provePartition still reads copy 0 (the bases as they were).
Napi::Value js_precompute_bases(const Info& info) {
  Napi::Env env = info.Env();
  Handle* h = bases_handle(info, 0);
  Bases* b = static_cast<Bases*>(h->p);
  const unsigned copies = (unsigned)count_arg(info, 1, "precomputeBases: copies", 64);
  if (copies < 1) throw_range(env, "precomputeBases: copies must be at least 1");
  unsigned w = present(info, 2) ? (unsigned)count_arg(info, 2, "precomputeBases: window", 24) : 0;
  if (w && w < 4) throw_range(env, "precomputeBases: window must be 4 … 24 (or 0: the cost model's)");
  if (!w) w = pre_window(bases_count(b), copies);
  auto r = std::make_shared<BasesPre>();
  return start(info, {0}, [=] { *r = bases_precompute(b, copies, w); }, [=](Napi::Env e) { return pre_object(e, *r); });
}

Napi::Value js_batch_add(const Info& info) {
  Napi::Env env = info.Env();
  Handle* h = bases_handle(info, 0);
  if (h->meta != 1) throw_type(env, "batchAddG1: bases are not G1");
  U32s ix = u32_arg(info, 1, "indices");
  Bases* b = static_cast<Bases*>(h->p);
  const size_t nb = bases_count(b);
  for (size_t k = 0; k < ix.len; k++)
    if (ix.data[k] >= nb) throw_range(env, "batchAddG1: index out of range");
  auto out = std::make_shared<std::vector<uint8_t>>(96);
  auto ms = std::make_shared<float>(0);
  const uint32_t* idx = ix.data;
  const size_t n = ix.len;
  return start(info, {0, 1}, [=] { batch_add(b, idx, n, out->data(), *ms); },
               [=](Napi::Env e) { return u8_copy(e, out->data(), 96); });
}

Napi::Value js_set_msm_window(const Info& info) {
  const double c = number_arg(info, 0, "window");
  if (c != 0 && (c < 4 || c > 24 || c != (int)c)) throw_range(info.Env(), "setMsmWindow: 0 or an integer in 4 … 24");
  set_msm_window((unsigned)c);
  return info.Env().Undefined();
}

Napi::Value js_set_msm_threads(const Info& info) {
  const double t = number_arg(info, 0, "threads");
  if (t < 32 || t > 1024 || t != (int)t || ((int)t % 32) != 0)
    throw_range(info.Env(), "setMsmThreads: a multiple of 32 in 32 … 1024");
  set_msm_threads((unsigned)t);
  return info.Env().Undefined();
}

Napi::Value js_set_msm_affine_pairs(const Info& info) {
  const double n = number_arg(info, 0, "pairs");
  if (n < 8 || n > 4096 || n != (int)n || ((int)n & ((int)n - 1)) != 0)
    throw_range(info.Env(), "setMsmAffinePairs: a power of two in 8 … 4096");
  set_msm_affine_pairs((unsigned)n);
  return info.Env().Undefined();
}

// setMsmBatch(n) / setMsmAcc(v): the edge's KILN_MSM_BATCH / KILN_MSM_ACC (src/util/tuning.ts), passed by
// CudaBackend's constructor; nothing in the addon reads the environment.
Napi::Value js_set_msm_batch(const Info& info) {
  const double n = number_arg(info, 0, "n");
  if (n < 0 || n > 4294967295.0 || n != (double)(uint64_t)n)
    throw_range(info.Env(), "setMsmBatch: 0 (the cost model's batch) or a positive integer up to 2^32 - 1");
  set_msm_batch((size_t)n);
  return info.Env().Undefined();
}

Napi::Value js_set_msm_acc(const Info& info) {
  const double v = number_arg(info, 0, "variant");
  if (v != 0 && v != 1 && v != 2 && v != 3 && v != 4 && v != 5)
    throw_range(info.Env(), "setMsmAcc: 0, 1, 2, 3, 4 or 5 (the default)");
  set_msm_acc((int)v);
  return info.Env().Undefined();
}

// setNttFused(0 | 1) → the previous value: the inverse transforms' scalings in their last stage group (1) or
// a pass of their own (0); process-wide, read per call (A/B, KILN_NTT_FUSED at the edges).
Napi::Value js_set_ntt_fused(const Info& info) {
  const double v = number_arg(info, 0, "fused");
  if (v != 0 && v != 1) throw_range(info.Env(), "setNttFused: 0 or 1");
  const int prev = ntt_fused();
  set_ntt_fused((int)v);
  return Napi::Number::New(info.Env(), prev);
}

// ---- NTT, quotient, CSR -----------------------------------------------------------------------------
Napi::Value js_ntt(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  Bytes v = bytes_arg(info, 1, "values");
  if (v.len % 32) throw_range(env, "ntt: values length is not a multiple of 32");
  const unsigned l = log2_exact(env, v.len / 32, "ntt");
  const bool inv = bool_arg(info, 2, "inverse"), coset = bool_arg(info, 3, "coset");
  auto ms = std::make_shared<float>(0);
  uint8_t* p = v.data;
  return start(info, {1}, [=] { ntt(dev, p, l, inv, coset, *ms); },
               [=](Napi::Env e) { return Napi::Number::New(e, *ms); });
}

Napi::Value js_quotient(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  Bytes a = bytes_arg(info, 1, "a"), b = bytes_arg(info, 2, "b"), c = bytes_arg(info, 3, "c");
  if (a.len != b.len || a.len != c.len || a.len % 32)
    throw_range(env, "quotient: a, b, c must have the same length (a multiple of 32)");
  const unsigned l = log2_exact(env, a.len / 32, "quotient");
  if (overlaps(a, b) || overlaps(a, c) || overlaps(b, c)) throw_range(env, "quotient: a, b, c overlap");
  auto ms = std::make_shared<float>(0);
  uint8_t *pa = a.data, *pb = b.data, *pc = c.data;
  return start(info, {1, 2, 3}, [=] { quotient(dev, pa, pb, pc, l, *ms); },
               [=](Napi::Env e) { return Napi::Number::New(e, *ms); });
}

Napi::Value js_csr(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  const double rows = number_arg(info, 1, "rows"), cols = number_arg(info, 2, "cols");
  if (rows < 0 || cols < 0 || rows > 4294967295.0 || cols > 4294967295.0) throw_range(env, "csrMatVec: bad rows/cols");
  U32s rp = u32_arg(info, 3, "rowPtr"), ci = u32_arg(info, 4, "colIdx"), ki = u32_arg(info, 5, "coeffIdx");
  Bytes co = bytes_arg(info, 6, "coeffs"), w = bytes_arg(info, 7, "w"), out = bytes_arg(info, 8, "out");
  const uint32_t R = (uint32_t)rows, C = (uint32_t)cols;
  if (rp.len != (size_t)R + 1) throw_range(env, "csrMatVec: rowPtr must have rows + 1 entries");
  if (ci.len != ki.len) throw_range(env, "csrMatVec: colIdx and coeffIdx lengths differ");
  if (co.len % 32) throw_range(env, "csrMatVec: coeffs length is not a multiple of 32");
  if (w.len != (size_t)C * 32) throw_range(env, "csrMatVec: w must have cols elements");
  if (out.len != (size_t)R * 32) throw_range(env, "csrMatVec: out must have rows elements");
  auto err = std::make_shared<unsigned>(0);
  auto ms = std::make_shared<float>(0);
  const uint32_t *prp = rp.data, *pci = ci.data, *pki = ki.data;
  const size_t nnz = ci.len, ncoeffs = co.len / 32;
  const uint8_t *pco = co.data, *pw = w.data;
  uint8_t* pout = out.data;
  return start(
      info, {3, 4, 5, 6, 7, 8},
      [=] { *err = csr_mat_vec(dev, R, C, prp, pci, pki, nnz, pco, ncoeffs, pw, pout, *ms); },
      [=](Napi::Env e) {
        if (*err) {
          std::string m = "csrMatVec: ";
          if (*err & 1) m += "rowPtr is not non-decreasing from 0; ";
          if (*err & 8) m += "rowPtr[rows] exceeds colIdx.length; ";
          if (*err & 2) m += "column index out of range; ";
          if (*err & 4) m += "coefficient index out of range; ";
          throw KilnError(ErrKind::Range, m);
        }
        return Napi::Number::New(e, *ms);
      });
}

// ---- pinned host memory -----------------------------------------------------------------------------
// The registry's tokens (glue.hpp Block), not addresses, decide what release() and the finalizer
// free: cudaHostAlloc may hand a released address out again to a newer buffer.
Napi::Value js_alloc(const Info& info) {
  const double bytes = number_arg(info, 0, "bytes");
  if (bytes < 0 || bytes != (double)(size_t)bytes)
    throw_range(info.Env(), "alloc: bytes must be a non-negative integer");
  void* p = host_alloc((size_t)bytes);
  return block_buffer(info.Env(), static_cast<uint8_t*>(p), (size_t)bytes, 0,
                      [](uint8_t* m, size_t, size_t) { host_free(m); }, false, "alloc");
}

// allocAsync(bytes) → Promise<ArrayBuffer>: alloc on a thread of the pool (cudaHostAlloc of a 32 GiB
// partition's 4.2 GB witness takes ~1.6 s, which held the event loop).
Napi::Value js_alloc_async(const Info& info) {
  const double bytes = number_arg(info, 0, "bytes");
  if (bytes < 0 || bytes != (double)(size_t)bytes)
    throw_range(info.Env(), "alloc: bytes must be a non-negative integer");
  const size_t n = (size_t)bytes;
  auto p = std::make_shared<void*>(nullptr);
  return start(
      info, {}, [=] { *p = host_alloc(n); },
      [=](Napi::Env e) {
        return block_buffer(e, static_cast<uint8_t*>(*p), n, 0, [](uint8_t* m, size_t, size_t) { host_free(m); },
                            false, "alloc");
      });
}

// warmDevice(device, logN, vectors) → Promise<void>: warm.hpp.
Napi::Value js_warm_device(const Info& info) {
  const int dev = device_arg(info, 0);
  const double log_n = number_arg(info, 1, "logN");
  const double vectors = number_arg(info, 2, "vectors");
  if (log_n < 0 || log_n > 32 || log_n != (double)(unsigned)log_n) throw_range(info.Env(), "warmDevice: logN must be an integer in [0, 32]");
  if (vectors < 0 || vectors > 8 || vectors != (double)(unsigned)vectors) throw_range(info.Env(), "warmDevice: vectors must be an integer in [0, 8]");
  const unsigned ln = (unsigned)log_n, nv = (unsigned)vectors;
  return start(info, {}, [=] { warm_device(dev, ln, nv); }, [](Napi::Env e) { return e.Undefined(); });
}

// release(buf): true when the buffer was ours (freed and detached), false otherwise.
Napi::Value js_release(const Info& info) {
  Napi::Value v = info[0];
  if (!v.IsArrayBuffer() && !v.IsTypedArray()) return Napi::Boolean::New(info.Env(), false);
  return Napi::Boolean::New(info.Env(), release_buffer(info.Env(), buffer_of(v)));
}

// ---- benches ------------------------------------------------------------------------------------------
Napi::Value js_bench_msm(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  const int curve = (int)number_arg(info, 1, "curve");
  const unsigned l = (unsigned)number_arg(info, 2, "logN");
  Bytes g = bytes_arg(info, 3, "generator");
  if (g.len != (curve == 1 ? 96u : 192u)) throw_range(env, "benchMsm: generator has the wrong size");
  const int iters = (int)number_arg(info, 4, "iterations");
  const unsigned copies = present(info, 5) ? (unsigned)count_arg(info, 5, "benchMsm: preCopies", 64) : 0;
  const unsigned pw = present(info, 6) ? (unsigned)count_arg(info, 6, "benchMsm: preWindow", 24) : 0;
  auto gen = std::make_shared<std::vector<uint8_t>>(g.data, g.data + g.len);
  auto r = std::make_shared<BenchResult>();
  return start(info, {}, [=] { *r = bench_msm(dev, curve, l, gen->data(), iters, copies, pw); },
               [=](Napi::Env e) {
                 Napi::Object o = Napi::Object::New(e);
                 if (r->pre.copies > 1) o.Set("pre", pre_object(e, r->pre));
                 o.Set("medianMs", r->median_ms);
                 o.Set("minMs", r->min_ms);
                 o.Set("window", r->last.window);
                 o.Set("timings", timings(e, r->last));
                 o.Set("point", u8_copy(e, r->point.data(), r->point.size()));
                 return o;
               });
}

// benchNtt / benchQuotient(device, logN, iterations) → Promise<{medianMs, minMs}>: the forward NTT, or the
// quotient on device buffers (bench.cu), over random values.
Napi::Value bench_timed(const Info& info, BenchResult (*fn)(int, unsigned, int)) {
  const int dev = device_arg(info, 0);
  const unsigned l = (unsigned)count_arg(info, 1, "logN", 28);
  const int iters = (int)count_arg(info, 2, "iterations", 1000);
  auto r = std::make_shared<BenchResult>();
  return start(info, {}, [=] { *r = fn(dev, l, iters); },
               [=](Napi::Env e) {
                 Napi::Object o = Napi::Object::New(e);
                 o.Set("medianMs", r->median_ms);
                 o.Set("minMs", r->min_ms);
                 return o;
               });
}
Napi::Value js_bench_ntt(const Info& info) { return bench_timed(info, bench_ntt); }
Napi::Value js_bench_quotient(const Info& info) { return bench_timed(info, bench_quotient); }

// ---- whole partitions (partition.hpp) ---------------------------------------------------------------
uint32_t u32_prop(Napi::Env env, const Napi::Value& o, const char* k) {
  const double d = number_of(env, prop(env, o, k), k);
  if (d < 0 || d > 4294967295.0 || d != (double)(uint32_t)d)
    throw_range(env, std::string(k) + " must be a 32-bit unsigned integer");
  return (uint32_t)d;
}

CsrHost csr_prop(Napi::Env env, const Napi::Value& o, const char* k, uint32_t rows) {
  Napi::Value m = prop(env, o, k);
  const std::string n(k);
  U32s rp = u32_view(env, prop(env, m, "rowPtr"), (n + ".rowPtr").c_str());
  U32s ci = u32_view(env, prop(env, m, "colIdx"), (n + ".colIdx").c_str());
  U32s ki = u32_view(env, prop(env, m, "coeffIdx"), (n + ".coeffIdx").c_str());
  Bytes co = view_bytes(env, prop(env, m, "coeffs"), (n + ".coeffs").c_str());
  if (rp.len != (size_t)rows + 1)
    throw_range(env, "uploadCircuit: " + n + ".rowPtr must have numConstraints + 1 entries");
  if (ci.len != ki.len) throw_range(env, "uploadCircuit: " + n + ".colIdx and coeffIdx lengths differ");
  if (co.len % 32) throw_range(env, "uploadCircuit: " + n + ".coeffs length is not a multiple of 32");
  CsrHost h;
  h.rowPtr = rp.data;
  h.colIdx = ci.data;
  h.coeffIdx = ki.data;
  h.nnz = ci.len;
  h.coeffs = co.data;
  h.ncoeffs = co.len / 32;
  return h;
}

// uploadCircuit(device, {numConstraints, numInputs, numAux, logN, a, b, c, aIdx, bIdx}) → Promise<handle>
Napi::Value js_upload_circuit(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  if (!present(info, 1)) throw_type(env, "uploadCircuit: circuit description is missing");
  Napi::Value o = info[1];
  auto d = std::make_shared<CircuitDesc>();
  d->numConstraints = u32_prop(env, o, "numConstraints");
  d->numInputs = u32_prop(env, o, "numInputs");
  d->numAux = u32_prop(env, o, "numAux");
  d->logN = u32_prop(env, o, "logN");
  d->a = csr_prop(env, o, "a", d->numConstraints);
  d->b = csr_prop(env, o, "b", d->numConstraints);
  d->c = csr_prop(env, o, "c", d->numConstraints);
  U32s ai = u32_view(env, prop(env, o, "aIdx"), "aIdx"), bi = u32_view(env, prop(env, o, "bIdx"), "bIdx");
  d->aIdx = ai.data;
  d->na = ai.len;
  d->bIdx = bi.data;
  d->nb = bi.len;
  bool streamed = false;
  if (present(info, 2)) {
    Napi::Value sv = prop(env, info[2], "streamed");
    if (!sv.IsUndefined()) {
      if (!sv.IsBoolean()) throw_type(env, "uploadCircuit: options.streamed must be a boolean");
      streamed = sv.As<Napi::Boolean>().Value();
    }
  }
  auto out = std::make_shared<Circuit*>(nullptr);
  return start(info, {1}, [=] { *out = circuit_upload(dev, *d, streamed); },
               [=](Napi::Env e) {
                 return make_handle(e, kCircuit, *out, streamed ? 1 : 0, [](void* p) { circuit_free(static_cast<Circuit*>(p)); });
               });
}

// circuitInfo(handle) → { deviceBytes, hostBytes, streamed }
Napi::Value js_circuit_info(const Info& info) {
  Napi::Env env = info.Env();
  if (!present(info, 0)) throw_type(env, "circuitInfo: circuit handle is missing");
  Circuit* c = circuit_of(env, info[0]);
  Napi::Object o = Napi::Object::New(env);
  o.Set("deviceBytes", (double)circuit_bytes(c));
  o.Set("hostBytes", (double)circuit_host_bytes(c));
  o.Set("streamed", circuit_host_bytes(c) > 0);
  return o;
}

Napi::Value js_free_circuit(const Info& info) {
  if (!present(info, 0)) throw_type(info.Env(), "freeCircuit: handle is missing");
  free_handle(handle_of(info.Env(), info[0], kCircuit));
  return info.Env().Undefined();
}

Napi::Object msm_times(Napi::Env env, const MsmTimes& t) {
  Napi::Object o = timings(env, t);
  o.Set("window", t.window);
  o.Set("ones", (double)t.ones);
  o.Set("others", (double)t.others);
  return o;
}

Napi::Object partition_times(Napi::Env env, const PartitionTimes& t) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("wait", t.wait);
  o.Set("copy", t.copy);
  o.Set("upload", t.upload);
  o.Set("matvec", t.matvec);
  o.Set("ntt", t.ntt);
  o.Set("msmH", t.msm_h);
  o.Set("msmL", t.msm_l);
  o.Set("msmA", t.msm_a);
  o.Set("msmB1", t.msm_b1);
  o.Set("msmB2", t.msm_b2);
  o.Set("total", t.total);
  o.Set("streamedBytes", (double)t.streamed_bytes);
  o.Set("streamCopy", t.stream_copy);
  o.Set("streamWait", t.stream_wait);
  o.Set("quotientBuffers", t.qbufs);
  Napi::Object m = Napi::Object::New(env);
  m.Set("h", msm_times(env, t.h));
  m.Set("l", msm_times(env, t.l));
  m.Set("a", msm_times(env, t.a));
  m.Set("b1", msm_times(env, t.b1));
  m.Set("b2", msm_times(env, t.b2));
  o.Set("msm", m);
  return o;
}

// provePartition(circuit, [h, l, a, bG1, bG2] bases handles, witness) → Promise<{h, l, a, b1, b2, timings}>
Napi::Value js_prove_partition(const Info& info) {
  Napi::Env env = info.Env();
  if (!present(info, 0)) throw_type(env, "provePartition: circuit handle is missing");
  Circuit* c = circuit_of(env, info[0]);
  if (!info[1].IsArray() || info[1].As<Napi::Array>().Length() != 5)
    throw_type(env, "provePartition: srs must be an array of 5 bases handles (h, l, a, b_g1, b_g2)");
  Napi::Array srs_arr = info[1].As<Napi::Array>();
  Bases* b[5];
  for (uint32_t i = 0; i < 5; i++) b[i] = bases_of(env, srs_arr.Get(i));
  Bytes w = bytes_arg(info, 2, "witness");
  if (w.len != circuit_vars(c) * 32)
    throw_range(env, "provePartition: witness has " + std::to_string(w.len) + " bytes, the circuit has " +
                         std::to_string(circuit_vars(c)) + " variables");
  const PartitionSrs srs{b[0], b[1], b[2], b[3], b[4]};
  PartitionPlan plan;
  if (present(info, 3)) {
    Napi::Value po = info[3];
    auto num = [&](const char* k, double lo, double hi, double dflt) {
      Napi::Value v = prop(env, po, k);
      if (v.IsUndefined()) return dflt;
      const double x = number_of(env, v, k);
      if (!(x >= lo && x <= hi) || x != (double)(uint64_t)x)
        throw_range(env, std::string("provePartition: plan.") + k + " out of range");
      return x;
    };
    plan.qbufs = (unsigned)num("quotientBuffers", 2, 4, 4);
    plan.msm_budget = (size_t)num("msmScratchBytes", 0, 9007199254740991.0, 0);
    plan.slot_bytes = (size_t)num("slotBytes", 0, 9007199254740991.0, 0);
    plan.slots = (unsigned)num("slots", 1, 64, 2);
    plan.matrix_slot_bytes = (size_t)num("matrixSlotBytes", 0, 9007199254740991.0, 0);
    Napi::Value pw = prop(env, po, "prefetchWitness");
    if (!pw.IsUndefined()) {
      if (!pw.IsBoolean()) throw_type(env, "provePartition: plan.prefetchWitness must be a boolean");
      plan.prefetch_witness = pw.As<Napi::Boolean>().Value();
    }
    Napi::Value ur = prop(env, po, "urgent");
    if (!ur.IsUndefined()) {
      if (!ur.IsBoolean()) throw_type(env, "provePartition: plan.urgent must be a boolean");
      plan.urgent = ur.As<Napi::Boolean>().Value();
    }
  }
  auto out = std::make_shared<PartitionOut>();
  const uint8_t* wp = w.data;
  return start(info, {0, 1, 2}, [=] { prove_partition(c, srs, wp, *out, plan); },
               [=](Napi::Env e) {
                 Napi::Object o = Napi::Object::New(e);
                 o.Set("h", u8_copy(e, out->h, 96));
                 o.Set("l", u8_copy(e, out->l, 96));
                 o.Set("a", u8_copy(e, out->a, 96));
                 o.Set("b1", u8_copy(e, out->b1, 96));
                 o.Set("b2", u8_copy(e, out->b2, 192));
                 o.Set("timings", partition_times(e, out->t));
                 return o;
               });
}

// benchPartition(device, spec, g1, g2) → Promise<{runs, generateMs, srsBytes, circuitBytes, peakPoolBytes}>
Napi::Value js_bench_partition(const Info& info) {
  Napi::Env env = info.Env();
  const int dev = device_arg(info, 0);
  if (!present(info, 1)) throw_type(env, "benchPartition: spec is missing");
  Napi::Value o = info[1];
  PartitionSpec sp;
  sp.logN = u32_prop(env, o, "logN");
  sp.numConstraints = u32_prop(env, o, "numConstraints");
  sp.numInputs = u32_prop(env, o, "numInputs");
  sp.numAux = u32_prop(env, o, "numAux");
  sp.na = u32_prop(env, o, "na");
  sp.nb = u32_prop(env, o, "nb");
  sp.nnzA = u32_prop(env, o, "nnzA");
  sp.nnzB = u32_prop(env, o, "nnzB");
  sp.nnzC = u32_prop(env, o, "nnzC");
  sp.fracZero = number_of(env, prop(env, o, "fracZero"), "fracZero");
  sp.fracOne = number_of(env, prop(env, o, "fracOne"), "fracOne");
  sp.iters = (int)u32_prop(env, o, "iterations");
  if (!o.As<Napi::Object>().Get("preH").IsUndefined()) sp.preH = u32_prop(env, o, "preH");
  if (!o.As<Napi::Object>().Get("quotientBuffers").IsUndefined()) {
    sp.qbufs = u32_prop(env, o, "quotientBuffers");
    if (sp.qbufs < 2 || sp.qbufs > 4) throw_range(env, "benchPartition: quotientBuffers is 2, 3 or 4");
  }
  if (!o.As<Napi::Object>().Get("msmScratchBytes").IsUndefined()) {
    const double b = number_of(env, prop(env, o, "msmScratchBytes"), "msmScratchBytes");
    if (!(b >= 0) || b != (double)(uint64_t)b) throw_range(env, "benchPartition: msmScratchBytes is a byte count (0: as needed)");
    sp.msmBudget = (size_t)b;
  }
  Bytes g1 = bytes_arg(info, 2, "g1"), g2 = bytes_arg(info, 3, "g2");
  if (g1.len != 96 || g2.len != 192) throw_range(env, "benchPartition: generators must be 96 and 192 bytes");
  auto gens = std::make_shared<std::array<uint8_t, 288>>();
  std::memcpy(gens->data(), g1.data, 96);
  std::memcpy(gens->data() + 96, g2.data, 192);
  auto r = std::make_shared<PartitionBench>();
  return start(info, {}, [=] { *r = bench_partition(dev, sp, gens->data(), gens->data() + 96); },
               [=](Napi::Env e) {
                 Napi::Object res = Napi::Object::New(e);
                 Napi::Array runs = Napi::Array::New(e, r->runs.size());
                 for (size_t i = 0; i < r->runs.size(); i++) runs.Set((uint32_t)i, partition_times(e, r->runs[i]));
                 res.Set("runs", runs);
                 res.Set("generateMs", r->generate_ms);
                 res.Set("srsBytes", (double)r->srs_bytes);
                 res.Set("circuitBytes", (double)r->circuit_bytes);
                 res.Set("peakPoolBytes", (double)r->peak_pool_bytes);
                 if (r->pre_copies > 1) {
                   Napi::Object pre = Napi::Object::New(e);
                   pre.Set("copies", r->pre_copies);
                   pre.Set("window", r->pre_window);
                   pre.Set("ms", r->pre_ms);
                   res.Set("preH", pre);
                 }
                 return res;
               });
}

// ---- INSECURE development setup (setup.hpp) ---------------------------------------------------------
// devSetupInsecure(circuit, {constants (6 × 32 B Montgomery: τ, α, β, 1/γ, 1/δ, Z(τ)/δ), g1, g2, path,
//                  offset, fsync, chunkPoints?, writers?, progress? (Float64Array ≥ 5)})
//   → Promise<{ic, counts, endOffset, longColumns, stagingBytes, devicePeakBytes, timings}>
Napi::Object section_times(Napi::Env env, const DevSetupSection& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("wall", s.wall);
  o.Set("gpu", s.gpu);
  return o;
}

Napi::Value js_dev_setup_insecure(const Info& info) {
  Napi::Env env = info.Env();
  if (!present(info, 0)) throw_type(env, "devSetupInsecure: circuit handle is missing");
  Circuit* c = circuit_of(env, info[0]);
  if (!present(info, 1) || !info[1].IsObject()) throw_type(env, "devSetupInsecure: options are missing");
  Napi::Value o = info[1];
  auto args = std::make_shared<DevSetupArgs>();
  Bytes sc = view_bytes(env, prop(env, o, "constants"), "devSetupInsecure: constants");
  Bytes g1 = view_bytes(env, prop(env, o, "g1"), "devSetupInsecure: g1");
  Bytes g2 = view_bytes(env, prop(env, o, "g2"), "devSetupInsecure: g2");
  if (sc.len != sizeof(DevSetupScalars)) throw_range(env, "devSetupInsecure: constants must be 6 Fr elements (192 bytes)");
  if (g1.len != 96 || g2.len != 192) throw_range(env, "devSetupInsecure: generators must be 96 and 192 bytes");
  std::memcpy(&args->s, sc.data, sizeof(DevSetupScalars));
  std::memcpy(args->g1, g1.data, 96);
  std::memcpy(args->g2, g2.data, 192);
  Napi::Value path = prop(env, o, "path");
  if (!path.IsString()) throw_type(env, "devSetupInsecure: path must be a string");
  args->path = path.As<Napi::String>().Utf8Value();
  const double off = number_of(env, prop(env, o, "offset"), "devSetupInsecure: offset");
  if (!(off >= 0) || off != (double)(uint64_t)off) throw_range(env, "devSetupInsecure: offset must be a non-negative integer");
  args->offset = (uint64_t)off;
  Napi::Value fs = prop(env, o, "fsync");
  if (!fs.IsBoolean()) throw_type(env, "devSetupInsecure: fsync must be a boolean");
  args->fsync = fs.As<Napi::Boolean>().Value();
  Napi::Value ch = prop(env, o, "chunkPoints");
  if (!ch.IsUndefined()) {
    const double v = number_of(env, ch, "devSetupInsecure: chunkPoints");
    if (!(v >= 1) || v > (double)(1u << 24) || v != (double)(size_t)v)
      throw_range(env, "devSetupInsecure: chunkPoints must be an integer in 1 … 2^24");
    args->chunk = (size_t)v;
  }
  Napi::Value wr = prop(env, o, "writers");
  if (!wr.IsUndefined()) {
    const double v = number_of(env, wr, "devSetupInsecure: writers");
    if (!(v >= 1) || v > 64 || v != (double)(unsigned)v) throw_range(env, "devSetupInsecure: writers must be an integer in 1 … 64");
    args->writers = (unsigned)v;
  }
  Napi::Value pr = prop(env, o, "progress");
  const bool has_progress = !pr.IsUndefined() && !pr.IsNull();
  if (has_progress) {
    if (!pr.IsTypedArray() || pr.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
      throw_type(env, "devSetupInsecure: progress must be a Float64Array");
    Napi::Float64Array pa = pr.As<Napi::Float64Array>();
    if (pa.ElementLength() < 5) throw_range(env, "devSetupInsecure: progress must have at least 5 elements");
    args->progress = pa.Data();
  }
  auto out = std::make_shared<DevSetupOut>();
  auto* call = fn_call(env, "kiln_cuda", [=] { dev_setup_insecure(c, *args, *out); },
                       [=](Napi::Env e) {
                         Napi::Object r = Napi::Object::New(e);
                         r.Set("ic", u8_copy(e, out->ic.data(), out->ic.size()));
                         Napi::Array counts = Napi::Array::New(e, 5);
                         for (uint32_t i = 0; i < 5; i++) counts.Set(i, (double)out->counts[i]);
                         r.Set("counts", counts);
                         r.Set("endOffset", (double)out->end_offset);
                         r.Set("longColumns", (double)out->long_columns);
                         r.Set("stagingBytes", (double)out->staging_bytes);
                         r.Set("devicePeakBytes", (double)out->device_peak_bytes);
                         const DevSetupTimes& x = out->t;
                         Napi::Object t = Napi::Object::New(e);
                         t.Set("lagrange", x.lagrange);
                         t.Set("evals", x.evals);
                         t.Set("tables", x.tables);
                         t.Set("h", section_times(e, x.h));
                         t.Set("l", section_times(e, x.l));
                         t.Set("a", section_times(e, x.a));
                         t.Set("b1", section_times(e, x.b1));
                         t.Set("b2", section_times(e, x.b2));
                         t.Set("ic", section_times(e, x.ic));
                         t.Set("writeWait", x.write_wait);
                         t.Set("drain", x.drain);
                         t.Set("fsync", x.fsync);
                         t.Set("total", x.total);
                         r.Set("timings", t);
                         return r;
                       });
  call->hold(info[0]);
  call->hold(info[1]);
  if (has_progress) call->hold(pr);
  return call->start();
}

// The exported functions (src/backend/cuda.ts CudaAddon), one line each.
const Export kExports[] = {
    {"version", js_version},
    {"probe", js_probe},
    {"memInfo", js_mem_info},
    {"uploadBases", js_upload_bases},
    {"freeBases", js_free_bases},
    {"createBases", js_create_bases},
    {"hostBases", js_host_bases},
    {"setMemoryPlan", js_set_memory_plan},
    {"trimPool", js_trim_pool},
    {"circuitInfo", js_circuit_info},
    {"writeBases", js_write_bases},
    {"msm", js_msm},
    {"precomputeBases", js_precompute_bases},
    {"batchAddG1", js_batch_add},
    {"ntt", js_ntt},
    {"quotient", js_quotient},
    {"csrMatVec", js_csr},
    {"alloc", js_alloc},
    {"allocAsync", js_alloc_async},
    {"warmDevice", js_warm_device},
    {"release", js_release},
    {"benchMsm", js_bench_msm},
    {"benchNtt", js_bench_ntt},
    {"benchQuotient", js_bench_quotient},
    {"setMsmWindow", js_set_msm_window},
    {"setMsmThreads", js_set_msm_threads},
    {"setMsmAffinePairs", js_set_msm_affine_pairs},
    {"setMsmBatch", js_set_msm_batch},
    {"setMsmAcc", js_set_msm_acc},
    {"setNttFused", js_set_ntt_fused},
    {"uploadCircuit", js_upload_circuit},
    {"freeCircuit", js_free_circuit},
    {"provePartition", js_prove_partition},
    {"benchPartition", js_bench_partition},
    {"devSetupInsecure", js_dev_setup_insecure},
};

Napi::Object Init(Napi::Env env, Napi::Object exports) { return export_all(env, exports, kExports); }

}  // namespace

NODE_API_MODULE(NODE_GYP_MODULE_NAME, Init)
