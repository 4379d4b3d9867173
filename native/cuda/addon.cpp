// N-API glue of the CUDA addon (build/cuda/kiln_cuda.node). Plain C N-API (node_api.h only: the
// GPU machine has no node-addon-api), no CUDA headers here. Every heavy call: arguments parsed and
// checked on the JS thread, work on a libuv worker (one operation per device at a time, see ctx.cuh),
// result converted on the JS thread. The CPU addon never links any of this.
#include <node_api.h>

#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln_cuda.hpp"
#include "partition.hpp"

using namespace kiln::cuda;

namespace {

struct JsError {
  const char* kind;  // "TypeError" | "RangeError" | "Error"
  std::string msg;
};

#define NAPI_OK(call)                                                  \
  do {                                                                 \
    if ((call) != napi_ok) throw JsError{"Error", "N-API call failed: " #call}; \
  } while (0)

void throw_js(napi_env env, const JsError& e) {
  if (!std::strcmp(e.kind, "TypeError")) napi_throw_type_error(env, nullptr, e.msg.c_str());
  else if (!std::strcmp(e.kind, "RangeError")) napi_throw_range_error(env, nullptr, e.msg.c_str());
  else napi_throw_error(env, nullptr, e.msg.c_str());
}

// Bytes of a TypedArray / DataView / ArrayBuffer.
std::pair<uint8_t*, size_t> bytes_of(napi_env env, napi_value v, const char* what) {
  bool is;
  napi_is_typedarray(env, v, &is);
  if (is) {
    napi_typedarray_type t;
    size_t len, off;
    void* data;
    napi_value ab;
    NAPI_OK(napi_get_typedarray_info(env, v, &t, &len, &data, &ab, &off));
    size_t el = 1;
    switch (t) {
      case napi_int16_array: case napi_uint16_array: el = 2; break;
      case napi_int32_array: case napi_uint32_array: case napi_float32_array: el = 4; break;
      case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: el = 8; break;
      default: el = 1;
    }
    return {static_cast<uint8_t*>(data), len * el};
  }
  napi_is_arraybuffer(env, v, &is);
  if (is) {
    void* data;
    size_t len;
    NAPI_OK(napi_get_arraybuffer_info(env, v, &data, &len));
    return {static_cast<uint8_t*>(data), len};
  }
  throw JsError{"TypeError", std::string(what) + " must be a Uint8Array or ArrayBuffer"};
}

std::pair<uint32_t*, size_t> u32s_of(napi_env env, napi_value v, const char* what) {
  bool is = false;
  napi_is_typedarray(env, v, &is);
  napi_typedarray_type t = napi_int8_array;
  size_t len = 0, off;
  void* data = nullptr;
  napi_value ab;
  if (is) NAPI_OK(napi_get_typedarray_info(env, v, &t, &len, &data, &ab, &off));
  if (!is || t != napi_uint32_array) throw JsError{"TypeError", std::string(what) + " must be a Uint32Array"};
  return {static_cast<uint32_t*>(data), len};
}

napi_value prop(napi_env env, napi_value o, const char* k) {
  napi_valuetype t;
  napi_value v;
  if (napi_typeof(env, o, &t) != napi_ok || t != napi_object || napi_get_named_property(env, o, k, &v) != napi_ok)
    throw JsError{"TypeError", std::string("property ") + k + " is missing"};
  return v;
}

double num_of(napi_env env, napi_value v, const char* what) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok) throw JsError{"TypeError", std::string(what) + " must be a number"};
  return d;
}

struct Args {
  napi_env env;
  size_t argc = 12;
  napi_value argv[12];
  explicit Args(napi_env e, napi_callback_info info) : env(e) {
    NAPI_OK(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  }
  bool present(size_t i) const {
    if (i >= argc) return false;
    napi_valuetype t;
    napi_typeof(env, argv[i], &t);
    return t != napi_undefined && t != napi_null;
  }
  double num(size_t i, const char* what) const {
    double v;
    if (i >= argc || napi_get_value_double(env, argv[i], &v) != napi_ok) throw JsError{"TypeError", std::string(what) + " must be a number"};
    return v;
  }
  bool boolean(size_t i, const char* what) const {
    bool v;
    if (i >= argc || napi_get_value_bool(env, argv[i], &v) != napi_ok) throw JsError{"TypeError", std::string(what) + " must be a boolean"};
    return v;
  }
  std::pair<uint8_t*, size_t> bytes(size_t i, const char* what) const {
    if (i >= argc) throw JsError{"TypeError", std::string(what) + " is missing"};
    return bytes_of(env, argv[i], what);
  }
  std::pair<uint32_t*, size_t> u32s(size_t i, const char* what) const {
    if (i >= argc) throw JsError{"TypeError", std::string(what) + " must be a Uint32Array"};
    return u32s_of(env, argv[i], what);
  }
};

// ---- async jobs ---------------------------------------------------------------------------------
struct Job {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  std::vector<napi_ref> refs;  // keep the input buffers alive
  std::function<void()> run;
  std::function<napi_value(napi_env)> done;
  std::string err;
};

void reject(napi_env env, napi_deferred d, const char* kind, const std::string& text) {
  napi_value msg, err;
  napi_create_string_utf8(env, text.c_str(), NAPI_AUTO_LENGTH, &msg);
  if (!std::strcmp(kind, "RangeError")) napi_create_range_error(env, nullptr, msg, &err);
  else if (!std::strcmp(kind, "TypeError")) napi_create_type_error(env, nullptr, msg, &err);
  else napi_create_error(env, nullptr, msg, &err);
  napi_reject_deferred(env, d, err);
}

napi_value start(napi_env env, Args& a, std::initializer_list<size_t> keep, std::function<void()> run,
                 std::function<napi_value(napi_env)> done) {
  auto* job = new Job;
  job->run = std::move(run);
  job->done = std::move(done);
  for (size_t i : keep) {
    if (i >= a.argc) continue;
    napi_valuetype t;
    napi_typeof(env, a.argv[i], &t);
    if (t != napi_object) continue;
    napi_ref r;
    if (napi_create_reference(env, a.argv[i], 1, &r) == napi_ok) job->refs.push_back(r);
  }
  napi_value promise, name;
  NAPI_OK(napi_create_promise(env, &job->deferred, &promise));
  NAPI_OK(napi_create_string_utf8(env, "kiln_cuda", NAPI_AUTO_LENGTH, &name));
  NAPI_OK(napi_create_async_work(
      env, nullptr, name,
      [](napi_env, void* data) {
        auto* j = static_cast<Job*>(data);
        try {
          j->run();
        } catch (const std::exception& e) {
          j->err = e.what();
          if (j->err.empty()) j->err = "kiln_cuda: unknown error";
        } catch (...) {
          j->err = "kiln_cuda: unknown error";
        }
      },
      [](napi_env env, napi_status, void* data) {
        std::unique_ptr<Job> j(static_cast<Job*>(data));
        for (auto r : j->refs) napi_delete_reference(env, r);
        if (!j->err.empty()) {
          reject(env, j->deferred, "Error", j->err);
        } else {
          napi_value v = nullptr;
          try {
            v = j->done(env);
          } catch (const JsError& e) {
            reject(env, j->deferred, e.kind, e.msg);
            napi_delete_async_work(env, j->work);
            return;
          }
          if (!v) napi_get_undefined(env, &v);
          napi_resolve_deferred(env, j->deferred, v);
        }
        napi_delete_async_work(env, j->work);
      },
      job, &job->work));
  NAPI_OK(napi_queue_async_work(env, job->work));
  return promise;
}

napi_value wrap(napi_env env, napi_callback_info info, napi_value (*fn)(napi_env, Args&)) {
  try {
    Args a(env, info);
    return fn(env, a);
  } catch (const JsError& e) {
    throw_js(env, e);
  } catch (const std::exception& e) {
    napi_throw_error(env, nullptr, e.what());
  }
  return nullptr;
}

// ---- small value helpers ------------------------------------------------------------------------
napi_value num(napi_env env, double v) {
  napi_value r;
  napi_create_double(env, v, &r);
  return r;
}
napi_value str(napi_env env, const std::string& s) {
  napi_value r;
  napi_create_string_utf8(env, s.c_str(), s.size(), &r);
  return r;
}
napi_value boolean(napi_env env, bool b) {
  napi_value r;
  napi_get_boolean(env, b, &r);
  return r;
}
void set(napi_env env, napi_value o, const char* k, napi_value v) { napi_set_named_property(env, o, k, v); }
napi_value obj(napi_env env) {
  napi_value o;
  napi_create_object(env, &o);
  return o;
}
napi_value u8(napi_env env, const void* p, size_t n) {
  void* data;
  napi_value ab, arr;
  napi_create_arraybuffer(env, n, &data, &ab);
  std::memcpy(data, p, n);
  napi_create_typedarray(env, napi_uint8_array, n, ab, 0, &arr);
  return arr;
}
napi_value timings(napi_env env, const MsmTimes& t) {
  napi_value o = obj(env);
  set(env, o, "classify", num(env, t.classify));
  set(env, o, "batchAdd", num(env, t.batch_add));
  set(env, o, "msm", num(env, t.msm));
  napi_value ph = obj(env);
  set(env, ph, "sort", num(env, t.sort));
  set(env, ph, "accumulate", num(env, t.accumulate));
  set(env, ph, "buckets", num(env, t.buckets));
  set(env, ph, "windows", num(env, t.windows));
  set(env, o, "pippenger", ph);
  return o;
}

int device_arg(Args& a, size_t i) {
  const double d = a.num(i, "device");
  if (d < 0 || d != (int)d) throw JsError{"RangeError", "device must be a non-negative integer"};
  return (int)d;
}

unsigned log2_exact(size_t n, const char* fn) {
  if (n == 0 || (n & (n - 1))) throw JsError{"RangeError", std::string(fn) + ": length must be a power of two"};
  unsigned l = 0;
  while ((size_t(1) << l) < n) l++;
  if (l > 31) throw JsError{"RangeError", std::string(fn) + ": at most 2^31 elements"};
  return l;
}

// ---- bases handles --------------------------------------------------------------------------------
struct Holder {
  Bases* b = nullptr;
  int curve = 0;
};

Holder* holder_of(napi_env env, napi_value v) {
  void* p = nullptr;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external || napi_get_value_external(env, v, &p) != napi_ok || !p)
    throw JsError{"TypeError", "bases must be a handle from uploadBases"};
  auto* h = static_cast<Holder*>(p);
  if (!h->b) throw JsError{"Error", "bases handle was freed"};
  return h;
}

Holder* holder(napi_env env, Args& a, size_t i) {
  if (i >= a.argc) throw JsError{"TypeError", "bases must be a handle from uploadBases"};
  return holder_of(env, a.argv[i]);
}

// ---- pinned host memory ---------------------------------------------------------------------------
// One token per allocation: release() frees the memory and marks the token; the ArrayBuffer's
// finalizer (GC, possibly much later) frees only what release() did not. Tokens, not addresses,
// decide: cudaHostAlloc may hand a released address out again to a newer buffer.
struct Pinned {
  void* p;
  bool freed;
};
std::mutex g_pinned_mu;
std::unordered_map<void*, Pinned*> g_pinned;  // live allocations by address

napi_value js_probe(napi_env env, Args&) {
  std::vector<GpuInfo> gpus;
  std::string why;
  const int n = probe(gpus, why);
  napi_value o = obj(env), arr;
  napi_create_array_with_length(env, gpus.size(), &arr);
  for (size_t i = 0; i < gpus.size(); i++) {
    napi_value g = obj(env);
    set(env, g, "ordinal", num(env, gpus[i].ordinal));
    set(env, g, "name", str(env, gpus[i].name));
    set(env, g, "memoryBytes", num(env, (double)gpus[i].memoryBytes));
    set(env, g, "computeCapability", str(env, std::to_string(gpus[i].major) + "." + std::to_string(gpus[i].minor)));
    set(env, g, "multiprocessors", num(env, gpus[i].sms));
    napi_set_element(env, arr, (uint32_t)i, g);
  }
  set(env, o, "cuda", boolean(env, n > 0));
  set(env, o, "gpus", arr);
  set(env, o, "runtime", str(env, runtime_version()));
  if (n == 0) set(env, o, "error", str(env, why));
  return o;
}

napi_value js_version(napi_env env, Args&) { return str(env, "0.1.0"); }

napi_value js_upload_bases(napi_env env, Args& a) {
  const int dev = device_arg(a, 0);
  const double curve = a.num(1, "curve");
  if (curve != 1 && curve != 2) throw JsError{"RangeError", "uploadBases: curve must be 1 (G1) or 2 (G2)"};
  auto [p, len] = a.bytes(2, "bases");
  const size_t pb = curve == 1 ? 96 : 192;
  if (len % pb) throw JsError{"RangeError", "uploadBases: bases length is not a multiple of the point size"};
  auto* h = new Holder;
  h->curve = (int)curve;
  try {
    h->b = bases_upload(dev, (int)curve, p, len / pb);
  } catch (...) {
    delete h;
    throw;
  }
  napi_value ext;
  NAPI_OK(napi_create_external(
      env, h,
      [](napi_env, void* data, void*) {
        auto* hh = static_cast<Holder*>(data);
        try {
          bases_free(hh->b);
        } catch (...) {
        }
        delete hh;
      },
      nullptr, &ext));
  return ext;
}

napi_value js_free_bases(napi_env env, Args& a) {
  Holder* h = holder(env, a, 0);
  bases_free(h->b);
  h->b = nullptr;
  return nullptr;
}

napi_value js_msm(napi_env env, Args& a) {
  Holder* h = holder(env, a, 0);
  auto [sc, slen] = a.bytes(1, "scalars");
  if (slen % 32) throw JsError{"RangeError", "msm: scalars length is not a multiple of 32"};
  const size_t ns = slen / 32, nb = bases_count(h->b);
  const uint32_t* sidx = nullptr;
  if (a.present(2)) {
    auto [ix, ilen] = a.u32s(2, "scalarIndex");
    if (ilen != nb) throw JsError{"RangeError", "msm: scalarIndex length must equal the base count"};
    for (size_t k = 0; k < ilen; k++)
      if (ix[k] >= ns) throw JsError{"RangeError", "msm: scalarIndex entry out of range"};
    sidx = ix;
  } else if (ns != nb) {
    throw JsError{"RangeError", "msm: scalar count (" + std::to_string(ns) + ") != base count (" + std::to_string(nb) + ")"};
  }
  struct R {
    uint8_t point[192];
    MsmTimes t;
  };
  auto r = std::make_shared<R>();
  Bases* b = h->b;
  const size_t pb = h->curve == 1 ? 96 : 192;
  return start(
      env, a, {0, 1, 2}, [=] { msm(b, sc, ns, sidx, r->point, r->t); },
      [=](napi_env e) {
        napi_value o = obj(e);
        set(e, o, "point", u8(e, r->point, pb));
        set(e, o, "timings", timings(e, r->t));
        set(e, o, "window", num(e, r->t.window));
        set(e, o, "ones", num(e, (double)r->t.ones));
        set(e, o, "others", num(e, (double)r->t.others));
        return o;
      });
}

napi_value js_batch_add(napi_env env, Args& a) {
  Holder* h = holder(env, a, 0);
  if (h->curve != 1) throw JsError{"TypeError", "batchAddG1: bases are not G1"};
  auto [ix, n] = a.u32s(1, "indices");
  const size_t nb = bases_count(h->b);
  for (size_t k = 0; k < n; k++)
    if (ix[k] >= nb) throw JsError{"RangeError", "batchAddG1: index out of range"};
  auto out = std::make_shared<std::vector<uint8_t>>(96);
  auto ms = std::make_shared<float>(0);
  Bases* b = h->b;
  return start(env, a, {0, 1}, [=] { batch_add(b, ix, n, out->data(), *ms); },
               [=](napi_env e) { return u8(e, out->data(), 96); });
}

napi_value js_ntt(napi_env env, Args& a) {
  const int dev = device_arg(a, 0);
  auto [p, len] = a.bytes(1, "values");
  if (len % 32) throw JsError{"RangeError", "ntt: values length is not a multiple of 32"};
  const unsigned l = log2_exact(len / 32, "ntt");
  const bool inv = a.boolean(2, "inverse"), coset = a.boolean(3, "coset");
  auto ms = std::make_shared<float>(0);
  return start(env, a, {1}, [=] { ntt(dev, p, l, inv, coset, *ms); }, [=](napi_env e) { return num(e, *ms); });
}

napi_value js_quotient(napi_env env, Args& a) {
  const int dev = device_arg(a, 0);
  auto [pa, la] = a.bytes(1, "a");
  auto [pb, lb] = a.bytes(2, "b");
  auto [pc, lc] = a.bytes(3, "c");
  if (la != lb || la != lc || la % 32) throw JsError{"RangeError", "quotient: a, b, c must have the same length (a multiple of 32)"};
  const unsigned l = log2_exact(la / 32, "quotient");
  auto overlap = [](uint8_t* x, uint8_t* y, size_t n) { return x < y + n && y < x + n; };
  if (overlap(pa, pb, la) || overlap(pa, pc, la) || overlap(pb, pc, la)) throw JsError{"RangeError", "quotient: a, b, c overlap"};
  auto ms = std::make_shared<float>(0);
  return start(env, a, {1, 2, 3}, [=] { quotient(dev, pa, pb, pc, l, *ms); }, [=](napi_env e) { return num(e, *ms); });
}

napi_value js_csr(napi_env env, Args& a) {
  const int dev = device_arg(a, 0);
  const double rows = a.num(1, "rows"), cols = a.num(2, "cols");
  if (rows < 0 || cols < 0 || rows > 4294967295.0 || cols > 4294967295.0) throw JsError{"RangeError", "csrMatVec: bad rows/cols"};
  auto [rp, nrp] = a.u32s(3, "rowPtr");
  auto [ci, nci] = a.u32s(4, "colIdx");
  auto [ki, nki] = a.u32s(5, "coeffIdx");
  auto [co, lco] = a.bytes(6, "coeffs");
  auto [w, lw] = a.bytes(7, "w");
  auto [out, lout] = a.bytes(8, "out");
  const uint32_t R = (uint32_t)rows, C = (uint32_t)cols;
  if (nrp != (size_t)R + 1) throw JsError{"RangeError", "csrMatVec: rowPtr must have rows + 1 entries"};
  if (nci != nki) throw JsError{"RangeError", "csrMatVec: colIdx and coeffIdx lengths differ"};
  if (lco % 32) throw JsError{"RangeError", "csrMatVec: coeffs length is not a multiple of 32"};
  if (lw != (size_t)C * 32) throw JsError{"RangeError", "csrMatVec: w must have cols elements"};
  if (lout != (size_t)R * 32) throw JsError{"RangeError", "csrMatVec: out must have rows elements"};
  auto err = std::make_shared<unsigned>(0);
  auto ms = std::make_shared<float>(0);
  return start(
      env, a, {3, 4, 5, 6, 7, 8}, [=] { *err = csr_mat_vec(dev, R, C, rp, ci, ki, nci, co, lco / 32, w, out, *ms); },
      [=](napi_env e) -> napi_value {
        if (*err) {
          std::string m = "csrMatVec: ";
          if (*err & 1) m += "rowPtr is not non-decreasing from 0; ";
          if (*err & 8) m += "rowPtr[rows] exceeds colIdx.length; ";
          if (*err & 2) m += "column index out of range; ";
          if (*err & 4) m += "coefficient index out of range; ";
          throw JsError{"RangeError", m};
        }
        return num(e, *ms);
      });
}

napi_value js_alloc(napi_env env, Args& a) {
  const double bytes = a.num(0, "bytes");
  if (bytes < 0 || bytes != (double)(size_t)bytes) throw JsError{"RangeError", "alloc: bytes must be a non-negative integer"};
  void* p = host_alloc((size_t)bytes);
  auto* tok = new Pinned{p, false};
  {
    std::lock_guard<std::mutex> l(g_pinned_mu);
    g_pinned[p] = tok;
  }
  napi_value ab;
  const napi_status st = napi_create_external_arraybuffer(
      env, p, (size_t)bytes,
      [](napi_env, void*, void* hint) {
        auto* t = static_cast<Pinned*>(hint);
        {
          std::lock_guard<std::mutex> l(g_pinned_mu);
          if (!t->freed) {
            g_pinned.erase(t->p);
            host_free(t->p);
          }
        }
        delete t;
      },
      tok, &ab);
  if (st != napi_ok) {
    std::lock_guard<std::mutex> l(g_pinned_mu);
    g_pinned.erase(p);
    host_free(p);
    delete tok;
    throw JsError{"Error", "alloc: external ArrayBuffers are not supported by this Node"};
  }
  return ab;
}

// release(buf): true when the buffer was ours (freed and detached), false otherwise.
napi_value js_release(napi_env env, Args& a) {
  napi_value abv = a.argv[0];
  bool is = false;
  napi_is_typedarray(env, abv, &is);
  if (is) {
    napi_typedarray_type t;
    size_t len, off;
    void* data;
    NAPI_OK(napi_get_typedarray_info(env, a.argv[0], &t, &len, &data, &abv, &off));
  }
  napi_is_arraybuffer(env, abv, &is);
  if (!is) return boolean(env, false);
  void* data;
  size_t len;
  NAPI_OK(napi_get_arraybuffer_info(env, abv, &data, &len));
  {
    std::lock_guard<std::mutex> l(g_pinned_mu);
    auto it = data ? g_pinned.find(data) : g_pinned.end();
    if (it == g_pinned.end()) return boolean(env, false);
    it->second->freed = true;  // the token itself is deleted by the finalizer
    g_pinned.erase(it);
  }
  napi_detach_arraybuffer(env, abv);
  host_free(data);
  return boolean(env, true);
}

napi_value js_bench_msm(napi_env env, Args& a) {
  const int dev = device_arg(a, 0);
  const int curve = (int)a.num(1, "curve");
  const unsigned l = (unsigned)a.num(2, "logN");
  auto [g, gl] = a.bytes(3, "generator");
  if (gl != (curve == 1 ? 96u : 192u)) throw JsError{"RangeError", "benchMsm: generator has the wrong size"};
  const int iters = (int)a.num(4, "iterations");
  auto gen = std::make_shared<std::vector<uint8_t>>(g, g + gl);
  auto r = std::make_shared<BenchResult>();
  return start(env, a, {}, [=] { *r = bench_msm(dev, curve, l, gen->data(), iters); },
               [=](napi_env e) {
                 napi_value o = obj(e);
                 set(e, o, "medianMs", num(e, r->median_ms));
                 set(e, o, "minMs", num(e, r->min_ms));
                 set(e, o, "window", num(e, r->last.window));
                 set(e, o, "timings", timings(e, r->last));
                 set(e, o, "point", u8(e, r->point.data(), r->point.size()));
                 return o;
               });
}

napi_value js_set_msm_window(napi_env env, Args& a) {
  const double c = a.num(0, "window");
  if (c != 0 && (c < 4 || c > 24 || c != (int)c)) throw JsError{"RangeError", "setMsmWindow: 0 or an integer in 4 … 24"};
  set_msm_window((unsigned)c);
  return nullptr;
}

napi_value js_set_msm_threads(napi_env env, Args& a) {
  const double t = a.num(0, "threads");
  if (t < 32 || t > 1024 || t != (int)t || ((int)t % 32) != 0) throw JsError{"RangeError", "setMsmThreads: a multiple of 32 in 32 … 1024"};
  set_msm_threads((unsigned)t);
  return nullptr;
}

napi_value js_bench_ntt(napi_env env, Args& a) {
  const int dev = device_arg(a, 0);
  const unsigned l = (unsigned)a.num(1, "logN");
  const int iters = (int)a.num(2, "iterations");
  auto r = std::make_shared<BenchResult>();
  return start(env, a, {}, [=] { *r = bench_ntt(dev, l, iters); },
               [=](napi_env e) {
                 napi_value o = obj(e);
                 set(e, o, "medianMs", num(e, r->median_ms));
                 set(e, o, "minMs", num(e, r->min_ms));
                 return o;
               });
}

// ---- whole partitions (partition.hpp) ---------------------------------------------------------------
struct CircuitHolder {
  Circuit* c = nullptr;
};

CircuitHolder* circuit_holder(napi_env env, napi_value v) {
  void* p = nullptr;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external || napi_get_value_external(env, v, &p) != napi_ok || !p)
    throw JsError{"TypeError", "circuit must be a handle from uploadCircuit"};
  auto* h = static_cast<CircuitHolder*>(p);
  if (!h->c) throw JsError{"Error", "circuit handle was freed"};
  return h;
}

uint32_t u32_prop(napi_env env, napi_value o, const char* k) {
  const double d = num_of(env, prop(env, o, k), k);
  if (d < 0 || d > 4294967295.0 || d != (double)(uint32_t)d) throw JsError{"RangeError", std::string(k) + " must be a 32-bit unsigned integer"};
  return (uint32_t)d;
}

CsrHost csr_prop(napi_env env, napi_value o, const char* k, uint32_t rows) {
  napi_value m = prop(env, o, k);
  CsrHost h;
  const std::string n(k);
  auto [rp, nrp] = u32s_of(env, prop(env, m, "rowPtr"), (n + ".rowPtr").c_str());
  auto [ci, nci] = u32s_of(env, prop(env, m, "colIdx"), (n + ".colIdx").c_str());
  auto [ki, nki] = u32s_of(env, prop(env, m, "coeffIdx"), (n + ".coeffIdx").c_str());
  auto [co, lco] = bytes_of(env, prop(env, m, "coeffs"), (n + ".coeffs").c_str());
  if (nrp != (size_t)rows + 1) throw JsError{"RangeError", "uploadCircuit: " + n + ".rowPtr must have numConstraints + 1 entries"};
  if (nci != nki) throw JsError{"RangeError", "uploadCircuit: " + n + ".colIdx and coeffIdx lengths differ"};
  if (lco % 32) throw JsError{"RangeError", "uploadCircuit: " + n + ".coeffs length is not a multiple of 32"};
  h.rowPtr = rp;
  h.colIdx = ci;
  h.coeffIdx = ki;
  h.nnz = nci;
  h.coeffs = co;
  h.ncoeffs = lco / 32;
  return h;
}

napi_value external_circuit(napi_env env, Circuit* c) {
  auto* h = new CircuitHolder{c};
  napi_value ext;
  NAPI_OK(napi_create_external(
      env, h,
      [](napi_env, void* data, void*) {
        auto* hh = static_cast<CircuitHolder*>(data);
        try {
          circuit_free(hh->c);
        } catch (...) {
        }
        delete hh;
      },
      nullptr, &ext));
  return ext;
}

// uploadCircuit(device, {numConstraints, numInputs, numAux, logN, a, b, c, aIdx, bIdx}) → Promise<handle>
napi_value js_upload_circuit(napi_env env, Args& a) {
  const int dev = device_arg(a, 0);
  if (!a.present(1)) throw JsError{"TypeError", "uploadCircuit: circuit description is missing"};
  napi_value o = a.argv[1];
  auto d = std::make_shared<CircuitDesc>();
  d->numConstraints = u32_prop(env, o, "numConstraints");
  d->numInputs = u32_prop(env, o, "numInputs");
  d->numAux = u32_prop(env, o, "numAux");
  d->logN = u32_prop(env, o, "logN");
  d->a = csr_prop(env, o, "a", d->numConstraints);
  d->b = csr_prop(env, o, "b", d->numConstraints);
  d->c = csr_prop(env, o, "c", d->numConstraints);
  auto [ai, na] = u32s_of(env, prop(env, o, "aIdx"), "aIdx");
  auto [bi, nb] = u32s_of(env, prop(env, o, "bIdx"), "bIdx");
  d->aIdx = ai;
  d->na = na;
  d->bIdx = bi;
  d->nb = nb;
  auto out = std::make_shared<Circuit*>(nullptr);
  return start(env, a, {1}, [=] { *out = circuit_upload(dev, *d); },
               [=](napi_env e) { return external_circuit(e, *out); });
}

napi_value js_free_circuit(napi_env env, Args& a) {
  if (!a.present(0)) throw JsError{"TypeError", "freeCircuit: handle is missing"};
  CircuitHolder* h = circuit_holder(env, a.argv[0]);
  circuit_free(h->c);
  h->c = nullptr;
  return nullptr;
}

napi_value msm_times(napi_env env, const MsmTimes& t) {
  napi_value o = timings(env, t);
  set(env, o, "window", num(env, t.window));
  set(env, o, "ones", num(env, (double)t.ones));
  set(env, o, "others", num(env, (double)t.others));
  return o;
}

napi_value partition_times(napi_env env, const PartitionTimes& t) {
  napi_value o = obj(env);
  set(env, o, "copy", num(env, t.copy));
  set(env, o, "upload", num(env, t.upload));
  set(env, o, "matvec", num(env, t.matvec));
  set(env, o, "ntt", num(env, t.ntt));
  set(env, o, "msmH", num(env, t.msm_h));
  set(env, o, "msmL", num(env, t.msm_l));
  set(env, o, "msmA", num(env, t.msm_a));
  set(env, o, "msmB1", num(env, t.msm_b1));
  set(env, o, "msmB2", num(env, t.msm_b2));
  set(env, o, "total", num(env, t.total));
  napi_value m = obj(env);
  set(env, m, "h", msm_times(env, t.h));
  set(env, m, "l", msm_times(env, t.l));
  set(env, m, "a", msm_times(env, t.a));
  set(env, m, "b1", msm_times(env, t.b1));
  set(env, m, "b2", msm_times(env, t.b2));
  set(env, o, "msm", m);
  return o;
}

// provePartition(circuit, [h, l, a, bG1, bG2] bases handles, witness) → Promise<{h, l, a, b1, b2, timings}>
napi_value js_prove_partition(napi_env env, Args& a) {
  if (!a.present(0)) throw JsError{"TypeError", "provePartition: circuit handle is missing"};
  Circuit* c = circuit_holder(env, a.argv[0])->c;
  bool is_arr = false;
  if (a.argc > 1) napi_is_array(env, a.argv[1], &is_arr);
  uint32_t len = 0;
  if (is_arr) napi_get_array_length(env, a.argv[1], &len);
  if (!is_arr || len != 5) throw JsError{"TypeError", "provePartition: srs must be an array of 5 bases handles (h, l, a, b_g1, b_g2)"};
  Bases* b[5];
  for (uint32_t i = 0; i < 5; i++) {
    napi_value v;
    NAPI_OK(napi_get_element(env, a.argv[1], i, &v));
    b[i] = holder_of(env, v)->b;
  }
  auto [w, lw] = a.bytes(2, "witness");
  if (lw != circuit_vars(c) * 32)
    throw JsError{"RangeError", "provePartition: witness has " + std::to_string(lw) + " bytes, the circuit has " +
                                    std::to_string(circuit_vars(c)) + " variables"};
  const PartitionSrs srs{b[0], b[1], b[2], b[3], b[4]};
  auto out = std::make_shared<PartitionOut>();
  return start(env, a, {0, 1, 2}, [=] { prove_partition(c, srs, w, *out); },
               [=](napi_env e) {
                 napi_value o = obj(e);
                 set(e, o, "h", u8(e, out->h, 96));
                 set(e, o, "l", u8(e, out->l, 96));
                 set(e, o, "a", u8(e, out->a, 96));
                 set(e, o, "b1", u8(e, out->b1, 96));
                 set(e, o, "b2", u8(e, out->b2, 192));
                 set(e, o, "timings", partition_times(e, out->t));
                 return o;
               });
}

// benchPartition(device, spec, g1, g2) → Promise<{runs, generateMs, srsBytes, circuitBytes, peakPoolBytes}>
napi_value js_bench_partition(napi_env env, Args& a) {
  const int dev = device_arg(a, 0);
  if (!a.present(1)) throw JsError{"TypeError", "benchPartition: spec is missing"};
  napi_value o = a.argv[1];
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
  sp.fracZero = num_of(env, prop(env, o, "fracZero"), "fracZero");
  sp.fracOne = num_of(env, prop(env, o, "fracOne"), "fracOne");
  sp.iters = (int)u32_prop(env, o, "iterations");
  auto [g1, l1] = a.bytes(2, "g1");
  auto [g2, l2] = a.bytes(3, "g2");
  if (l1 != 96 || l2 != 192) throw JsError{"RangeError", "benchPartition: generators must be 96 and 192 bytes"};
  auto gens = std::make_shared<std::array<uint8_t, 288>>();
  std::memcpy(gens->data(), g1, 96);
  std::memcpy(gens->data() + 96, g2, 192);
  auto r = std::make_shared<PartitionBench>();
  return start(env, a, {}, [=] { *r = bench_partition(dev, sp, gens->data(), gens->data() + 96); },
               [=](napi_env e) {
                 napi_value res = obj(e), runs;
                 napi_create_array_with_length(e, r->runs.size(), &runs);
                 for (size_t i = 0; i < r->runs.size(); i++) napi_set_element(e, runs, (uint32_t)i, partition_times(e, r->runs[i]));
                 set(e, res, "runs", runs);
                 set(e, res, "generateMs", num(e, r->generate_ms));
                 set(e, res, "srsBytes", num(e, (double)r->srs_bytes));
                 set(e, res, "circuitBytes", num(e, (double)r->circuit_bytes));
                 set(e, res, "peakPoolBytes", num(e, (double)r->peak_pool_bytes));
                 return res;
               });
}

#define FN(name, impl) \
  {name, nullptr, [](napi_env e, napi_callback_info i) { return wrap(e, i, impl); }, nullptr, nullptr, nullptr, napi_default, nullptr}

napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      FN("version", js_version),
      FN("probe", js_probe),
      FN("uploadBases", js_upload_bases),
      FN("freeBases", js_free_bases),
      FN("msm", js_msm),
      FN("batchAddG1", js_batch_add),
      FN("ntt", js_ntt),
      FN("quotient", js_quotient),
      FN("csrMatVec", js_csr),
      FN("alloc", js_alloc),
      FN("release", js_release),
      FN("benchMsm", js_bench_msm),
      FN("benchNtt", js_bench_ntt),
      FN("setMsmWindow", js_set_msm_window),
      FN("setMsmThreads", js_set_msm_threads),
      FN("uploadCircuit", js_upload_circuit),
      FN("freeCircuit", js_free_circuit),
      FN("provePartition", js_prove_partition),
      FN("benchPartition", js_bench_partition),
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
