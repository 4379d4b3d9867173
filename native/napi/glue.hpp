// The N-API glue shared by the two addons (native/src/addon.cpp: the CPU backend, built by
// node-gyp; native/cuda/addon.cpp: the CUDA backend, built by scripts/device/build-cuda.sh), on
// node-addon-api (header only; compiled with NAPI_CPP_EXCEPTIONS and
// NODE_ADDON_API_CPP_EXCEPTIONS_ALL, so any C++ exception thrown on the JS thread becomes a JS error;
// and NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: a call that completes while its worker thread is being
// terminated cannot throw into JS any more, and without it node-addon-api rethrows, which aborts the
// whole process — the daemon terminates shape-compile workers on close and cancellation).
//
//   - argument helpers: typed checks that throw TypeError / RangeError naming the argument
//   - Call: the async-job pattern. A Promise-returning AsyncWorker on libuv's thread pool (the one
//     pool of the process, shared by every call of both addons) that keeps its input buffers alive
//     and pins the native memory under them; FnCall for calls written as two lambdas
//   - the native memory registry: buffers handed to JS as ArrayBuffers (alloc / release) with pins
//     held by calls in flight, so that release() during a call defers the free until it is done
//   - handles: native objects handed to JS as tagged externals (freed explicitly or by the GC)
//   - the export table
#pragma once
#include <napi.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {
namespace glue {

// ---------------------------------------------------------------------------------------------
// Native memory: blocks handed to JS as ArrayBuffers, with pins held by in-flight calls.

struct Block {
  uint8_t* mem = nullptr;
  size_t len = 0;    // bytes visible to JS
  size_t extra = 0;  // the allocator's own (e.g. the mmap'd length)
  void (*dealloc)(uint8_t* mem, size_t len, size_t extra) = nullptr;
  bool external = false;    // reported to V8 as external memory while JS holds it
  int pins = 0;
  bool js_dropped = false;  // released, or finalized by the GC
  bool finalized = false;   // the GC finalizer ran: the Block itself may go once unpinned
};

class Registry {
 public:
  void add(Block* b) {
    std::lock_guard<std::mutex> g(m_);
    blocks_[uintptr_t(b->mem)] = b;
  }
  // The block containing p (or null). Pins it when found.
  Block* pin(const void* p) {
    if (!p) return nullptr;
    std::lock_guard<std::mutex> g(m_);
    Block* b = find_locked(uintptr_t(p));
    if (b) b->pins++;
    return b;
  }
  void unpin(Block* b) {
    std::lock_guard<std::mutex> g(m_);
    b->pins--;
    settle_locked(b);
  }
  // release(): when p is the start of a live block, drops it and returns its length and whether it
  // was reported as external memory; {false, …} otherwise.
  struct Dropped {
    bool found = false;
    size_t len = 0;
    bool external = false;
  };
  Dropped drop(const void* p) {
    std::lock_guard<std::mutex> g(m_);
    auto it = blocks_.find(uintptr_t(p));
    if (it == blocks_.end()) return {};
    Block* b = it->second;
    blocks_.erase(it);
    b->js_dropped = true;
    const Dropped d{true, b->len, b->external};
    settle_locked(b);
    return d;
  }
  // The ArrayBuffer's finalizer. Returns whether JS still held the block (not released).
  bool finalize(Block* b) {
    std::lock_guard<std::mutex> g(m_);
    const bool held = !b->js_dropped;
    if (held) {
      b->js_dropped = true;
      blocks_.erase(uintptr_t(b->mem));
    }
    b->finalized = true;
    settle_locked(b);
    return held;
  }
  void forget(Block* b) {
    std::lock_guard<std::mutex> g(m_);
    blocks_.erase(uintptr_t(b->mem));
  }

 private:
  Block* find_locked(uintptr_t p) {
    auto it = blocks_.upper_bound(p);
    if (it == blocks_.begin()) return nullptr;
    --it;
    Block* b = it->second;
    return p < it->first + b->len ? b : nullptr;
  }
  static void settle_locked(Block* b) {
    if (b->js_dropped && b->pins == 0 && b->mem) {
      b->dealloc(b->mem, b->len, b->extra);
      b->mem = nullptr;
    }
    if (b->finalized && b->pins == 0) delete b;
  }
  std::mutex m_;
  std::map<uintptr_t, Block*> blocks_;
};

inline Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

// Hands `mem` (len bytes, from the addon's allocator) to JS as an ArrayBuffer. `external`: report it
// to V8 as external memory (so the GC sees the pressure of large native buffers) until release() or
// the finalizer. The memory is freed by dealloc(mem, len, extra) once released (or collected) and no
// call in flight holds it.
inline Napi::ArrayBuffer block_buffer(Napi::Env env, uint8_t* mem, size_t len, size_t extra,
                                      void (*dealloc)(uint8_t*, size_t, size_t), bool external,
                                      const char* fn) {
  Block* b = new Block();
  b->mem = mem;
  b->len = len;
  b->extra = extra;
  b->dealloc = dealloc;
  b->external = external;
  registry().add(b);
  Napi::ArrayBuffer ab;
  try {
    ab = Napi::ArrayBuffer::New(env, mem, len, [](Napi::Env e, void*, Block* blk) {
      const bool ext = blk->external;
      const size_t n = blk->len;
      if (registry().finalize(blk) && ext) Napi::MemoryManagement::AdjustExternalMemory(e, -(int64_t)n);
    }, b);
  } catch (const Napi::Error&) {
    registry().forget(b);
    dealloc(mem, len, extra);
    delete b;
    throw Napi::Error::New(env, std::string(fn) + ": external ArrayBuffers are not supported by this Node");
  }
  if (external) Napi::MemoryManagement::AdjustExternalMemory(env, (int64_t)len);
  return ab;
}

// release(): drops the block that `ab` starts (true), detaching the buffer; false when `ab` is not
// one of ours. The memory goes when no call in flight holds it.
inline bool release_buffer(Napi::Env env, Napi::ArrayBuffer ab) {
  void* data = ab.Data();
  if (!data) return false;
  const Registry::Dropped d = registry().drop(data);
  if (!d.found) return false;
  if (d.external) Napi::MemoryManagement::AdjustExternalMemory(env, -(int64_t)d.len);
  ab.Detach();
  return true;
}

// The ArrayBuffer under a buffer argument (an ArrayBuffer or a view of one), or an empty value.
inline Napi::ArrayBuffer buffer_of(const Napi::Value& v) {
  if (v.IsArrayBuffer()) return v.As<Napi::ArrayBuffer>();
  if (v.IsTypedArray()) return v.As<Napi::TypedArray>().ArrayBuffer();
  if (v.IsDataView()) return v.As<Napi::DataView>().ArrayBuffer();
  return Napi::ArrayBuffer();
}

// ---------------------------------------------------------------------------------------------
// Argument helpers. `what` names the argument in the message ("msmG1: scalars must be …").

[[noreturn]] inline void throw_type(Napi::Env env, const std::string& msg) { throw Napi::TypeError::New(env, msg); }
[[noreturn]] inline void throw_range(Napi::Env env, const std::string& msg) { throw Napi::RangeError::New(env, msg); }

struct Bytes {
  uint8_t* data = nullptr;
  size_t len = 0;
  Napi::Object obj;
};

// The bytes of any TypedArray or an ArrayBuffer (not a DataView).
inline Bytes view_bytes(Napi::Env env, const Napi::Value& v, const char* what) {
  Bytes b;
  if (v.IsTypedArray()) {
    Napi::TypedArray ta = v.As<Napi::TypedArray>();
    b.data = static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
    b.len = ta.ByteLength();
    b.obj = ta;
    return b;
  }
  if (v.IsArrayBuffer()) {
    Napi::ArrayBuffer ab = v.As<Napi::ArrayBuffer>();
    b.data = static_cast<uint8_t*>(ab.Data());
    b.len = ab.ByteLength();
    b.obj = ab;
    return b;
  }
  throw_type(env, std::string(what) + " must be a Uint8Array or ArrayBuffer");
}

// A Uint8Array or an ArrayBuffer.
inline Bytes u8_arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  Napi::Value v = info[i];
  const bool u8 = v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array;
  if (!u8 && !v.IsArrayBuffer()) throw_type(info.Env(), std::string(what) + " must be a Uint8Array");
  return view_bytes(info.Env(), v, what);
}
inline Bytes bytes_arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (i >= info.Length()) throw_type(info.Env(), std::string(what) + " is missing");
  return view_bytes(info.Env(), info[i], what);
}

struct U32s {
  const uint32_t* data = nullptr;
  size_t len = 0;
  Napi::Object obj;
};

inline U32s u32_view(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    throw_type(env, std::string(what) + " must be a Uint32Array");
  Napi::Uint32Array a = v.As<Napi::Uint32Array>();
  U32s r;
  r.data = a.Data();
  r.len = a.ElementLength();
  r.obj = a;
  return r;
}
inline U32s u32_arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  return u32_view(info.Env(), info[i], what);
}

inline double number_of(Napi::Env env, const Napi::Value& v, const char* what) {
  if (!v.IsNumber()) throw_type(env, std::string(what) + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}
inline double number_arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  return number_of(info.Env(), info[i], what);
}

// An integer in [0, max].
inline size_t count_arg(const Napi::CallbackInfo& info, size_t i, const char* what, double max) {
  const double d = number_arg(info, i, what);
  if (!(d >= 0) || d != (double)(uint64_t)d || d > max)
    throw_range(info.Env(), std::string(what) + " must be an integer in [0, " + std::to_string((uint64_t)max) + "]");
  return (size_t)d;
}

inline bool bool_arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  Napi::Value v = info[i];
  if (!v.IsBoolean()) throw_type(info.Env(), std::string(what) + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

inline std::string string_arg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  Napi::Value v = info[i];
  if (!v.IsString()) throw_type(info.Env(), std::string(what) + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

// Whether argument i is given (not undefined or null).
inline bool present(const Napi::CallbackInfo& info, size_t i) {
  return i < info.Length() && !info[i].IsUndefined() && !info[i].IsNull();
}

// Property k of an options object (undefined when absent; TypeError when `o` is not an object).
inline Napi::Value prop(Napi::Env env, const Napi::Value& o, const char* k) {
  if (!o.IsObject()) throw_type(env, std::string("property ") + k + " is missing");
  return o.As<Napi::Object>().Get(k);
}

// Element count of a packed vector; throws unless the byte length is a multiple of `elem`.
inline size_t elems(Napi::Env env, const Bytes& b, size_t elem, const char* what) {
  if (b.len % elem != 0)
    throw_range(env, std::string(what) + ": byte length " + std::to_string(b.len) + " is not a multiple of " +
                         std::to_string(elem));
  return b.len / elem;
}

inline bool overlaps(const Bytes& a, const Bytes& b) {
  if (a.len == 0 || b.len == 0) return false;
  return a.data < b.data + b.len && b.data < a.data + a.len;
}

// Typed pointer over JS memory; if the memory is not aligned for T, works on an aligned copy
// (copy_back() writes it back for in-place outputs). Layout is little-endian u64 limbs either way.
template <class T>
class Span {
  using M = typename std::remove_const<T>::type;

 public:
  Span() = default;
  Span(const Bytes& b) : raw_(b.data), n_(b.len / sizeof(T)) {
    if (reinterpret_cast<uintptr_t>(raw_) % alignof(T) != 0 && n_ > 0) {
      copy_.reset(new M[n_]);
      std::memcpy(static_cast<void*>(copy_.get()), raw_, n_ * sizeof(T));
      ptr_ = copy_.get();
    } else {
      ptr_ = reinterpret_cast<T*>(raw_);
    }
  }
  T* get() const { return ptr_; }
  size_t size() const { return n_; }
  void copy_back() const {
    if (copy_) std::memcpy(raw_, static_cast<const void*>(copy_.get()), n_ * sizeof(T));
  }

 private:
  uint8_t* raw_ = nullptr;
  T* ptr_ = nullptr;
  size_t n_ = 0;
  std::unique_ptr<M[]> copy_;
};

// Results.
inline Napi::Uint8Array new_u8(Napi::Env env, size_t len) { return Napi::Uint8Array::New(env, len); }
inline Napi::Uint8Array u8_copy(Napi::Env env, const void* p, size_t len) {
  Napi::Uint8Array a = Napi::Uint8Array::New(env, len);
  if (len) std::memcpy(a.Data(), p, len);
  return a;
}

// ---------------------------------------------------------------------------------------------
// Async calls: a Promise-returning AsyncWorker that keeps its inputs alive and pinned.

enum class ErrKind { Generic, Type, Range };

// Thrown by run() (worker thread) or result() (JS thread): rejects with a TypeError / RangeError /
// Error. Any other std::exception rejects with an Error; std::bad_alloc with RangeError "out of memory".
struct KilnError : std::runtime_error {
  ErrKind kind;
  KilnError(ErrKind k, const std::string& m) : std::runtime_error(m), kind(k) {}
};

class Call : public Napi::AsyncWorker {
 public:
  Call(Napi::Env env, const char* name)
      : Napi::AsyncWorker(env, name), name_(name), deferred_(Napi::Promise::Deferred::New(env)) {}
  ~Call() override {
    for (Block* b : pins_) registry().unpin(b);
  }
  Napi::Promise start() {
    Queue();
    return deferred_.Promise();
  }

  // Keeps a JS buffer alive for the duration of the call and pins native memory under it.
  void hold(const Napi::Object& obj, const void* data) {
    refs_.emplace_back(Napi::Persistent(obj));
    if (Block* b = registry().pin(data)) pins_.push_back(b);
  }
  void hold(const Bytes& b) { hold(b.obj, b.data); }
  void hold(const U32s& u) { hold(u.obj, u.data); }
  // Any argument: objects are kept alive, buffers (and views) pinned; other values are ignored.
  void hold(const Napi::Value& v) {
    if (v.IsTypedArray()) {
      Napi::TypedArray ta = v.As<Napi::TypedArray>();
      hold(ta, static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset());
    } else if (v.IsArrayBuffer()) {
      hold(v.As<Napi::Object>(), v.As<Napi::ArrayBuffer>().Data());
    } else if (v.IsObject()) {
      refs_.emplace_back(Napi::Persistent(v.As<Napi::Object>()));
    }
  }

 protected:
  virtual void run() = 0;
  virtual Napi::Value result(Napi::Env env) { return env.Undefined(); }
  // Adds properties to the rejection's error object (e.g. the index of a bad point).
  virtual void decorate(Napi::Env, Napi::Object) {}

 private:
  void Execute() final {
    try {
      run();
    } catch (const KilnError& e) {
      kind_ = e.kind;
      fail(e.what());
    } catch (const std::bad_alloc&) {
      kind_ = ErrKind::Range;
      fail("out of memory");
    } catch (const std::exception& e) {
      fail(e.what());
    } catch (...) {
      fail("");
    }
  }
  void fail(const std::string& msg) { SetError(msg.empty() ? name_ + ": unknown error" : msg); }
  Napi::Value error_value(ErrKind kind, const std::string& msg) {
    return kind == ErrKind::Range  ? Napi::RangeError::New(Env(), msg).Value()
           : kind == ErrKind::Type ? Napi::TypeError::New(Env(), msg).Value()
                                   : Napi::Error::New(Env(), msg).Value();
  }
  void OnOK() final {
    Napi::HandleScope scope(Env());
    Napi::Value v;
    try {
      v = result(Env());
    } catch (const KilnError& e) {
      deferred_.Reject(error_value(e.kind, e.what()));
      return;
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
      return;
    }
    deferred_.Resolve(v.IsEmpty() ? Env().Undefined() : v);
  }
  void OnError(const Napi::Error& e) final {
    Napi::HandleScope scope(Env());
    Napi::Value err = error_value(kind_, e.Message());
    decorate(Env(), err.As<Napi::Object>());
    deferred_.Reject(err);
  }

  std::string name_;
  Napi::Promise::Deferred deferred_;
  std::vector<Napi::ObjectReference> refs_;
  std::vector<Block*> pins_;
  ErrKind kind_ = ErrKind::Generic;
};

// A call written as two lambdas: run() on the worker, done(env) → the resolved value on the JS
// thread. Hold its inputs, then start():
//   auto* c = fn_call(env, "kiln.x", [=] { … }, [=](Napi::Env e) { return …; });
//   c->hold(info[1]);
//   return c->start();
template <class Run, class Done>
class FnCall : public Call {
 public:
  FnCall(Napi::Env env, const char* name, Run run, Done done)
      : Call(env, name), run_(std::move(run)), done_(std::move(done)) {}

 protected:
  void run() override { run_(); }
  Napi::Value result(Napi::Env env) override { return done_(env); }

 private:
  Run run_;
  Done done_;
};
template <class Run, class Done>
FnCall<Run, Done>* fn_call(Napi::Env env, const char* name, Run run, Done done) {
  return new FnCall<Run, Done>(env, name, std::move(run), std::move(done));
}

// Starts a call class W constructed from the arguments (W(info) parses them and holds its inputs).
template <class W>
Napi::Value Start(const Napi::CallbackInfo& info) {
  return (new W(info))->start();
}

// ---------------------------------------------------------------------------------------------
// Handles: native objects handed to JS as externals. The kind tags the external (a handle of one
// kind passed where another is expected is a TypeError) and names it in the errors:
// "<name> must be a handle from <maker>", "<name> handle was freed".

struct HandleKind {
  const char* name;
  const char* maker;
};

struct Handle {
  const HandleKind* kind;
  void* p;                // null once freed
  int meta;               // the addon's own (e.g. the curve of a bases handle)
  void (*free)(void* p);  // may throw (freeBases reports it); the GC's finalizer ignores it
};

inline Napi::External<Handle> make_handle(Napi::Env env, const HandleKind& kind, void* p, int meta,
                                          void (*free)(void*)) {
  auto* h = new Handle{&kind, p, meta, free};
  return Napi::External<Handle>::New(env, h, [](Napi::Env, Handle* hh) {
    try {
      if (hh->p) hh->free(hh->p);
    } catch (...) {
    }
    delete hh;
  });
}

// The live handle of `kind` in v.
inline Handle* handle_of(Napi::Env env, const Napi::Value& v, const HandleKind& kind) {
  Handle* h = v.IsExternal() ? v.As<Napi::External<Handle>>().Data() : nullptr;
  if (!h || h->kind != &kind)
    throw_type(env, std::string(kind.name) + " must be a handle from " + kind.maker);
  if (!h->p) throw Napi::Error::New(env, std::string(kind.name) + " handle was freed");
  return h;
}

// Frees the handle's object now (freeBases, freeCircuit); the GC then has nothing left to free.
inline void free_handle(Handle* h) {
  h->free(h->p);
  h->p = nullptr;
}

// ---------------------------------------------------------------------------------------------
// The export table: one line per function, { "name", Fn }.

struct Export {
  const char* name;
  Napi::Value (*fn)(const Napi::CallbackInfo&);
};

template <size_t N>
Napi::Object export_all(Napi::Env env, Napi::Object exports, const Export (&table)[N]) {
  for (const Export& e : table) exports.Set(e.name, Napi::Function::New(env, e.fn, e.name));
  return exports;
}

}  // namespace glue
}  // namespace kiln
