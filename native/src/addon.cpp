// The calls of the native CPU backend (see native/API.md), over the shared N-API glue
// (native/napi/glue.hpp). Every call follows the same three steps: parse and validate the arguments
// on the JS thread (TypeError / RangeError on bad input), compute on a libuv worker that fans out to
// the process-wide pool, convert the result on the JS thread. Input buffers are kept alive by
// references held by the call, and buffers from alloc() are pinned so that release() during a call
// defers the free until the call is done. Functions are registered in the table at the end.
#include <napi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <type_traits>
#include <thread>
#include <vector>

#include "../napi/glue.hpp"
#include "kernels.hpp"
#include "params/reader.hpp"
#include "witness/interp.hpp"
#include "hash/poseidon.hpp"

#ifndef KILN_VERSION
#define KILN_VERSION "0.1.0"
#endif

namespace kiln {
namespace {

using namespace glue;

// The calls below are templated on the curve group C = G1 or G2 (kernels.hpp: Ec<Fq>, Ec<Fq2>).

// ---------------------------------------------------------------------------------------------
// MSM.

// msmG1(bases, scalars, scalarIndex?) and, over a precomputed table (msm/precomputed.hpp),
// msmPrecomputedG1(table, c, scalars, scalarIndex?): the table holds n·⌈256/c⌉ points, n = bases.
template <class C>
class MsmCall : public Call {
 public:
  MsmCall(const Napi::CallbackInfo& info, bool precomputed = false) : Call(info.Env(), "kiln.msm") {
    Napi::Env env = info.Env();
    const std::string fn = std::string(precomputed ? "msmPrecomputed" : "msm") + C::name;
    size_t a = 0;
    Bytes bases = u8_arg(info, a++, (fn + (precomputed ? ": table" : ": bases")).c_str());
    if (precomputed) {
      c_ = unsigned(count_arg(info, a++, (fn + ": c").c_str(), 20));
      if (c_ < 2) throw_range(env, fn + ": c must be in [2, 20]");
    }
    Bytes scalars = u8_arg(info, a++, (fn + ": scalars").c_str());
    const size_t rows = elems(env, bases, sizeof(typename C::A), (fn + ": bases").c_str());
    if (precomputed) {
      const size_t W = msm_windows(c_);
      if (rows % W != 0)
        throw_range(env, fn + ": table has " + std::to_string(rows) + " points, not a multiple of " +
                             std::to_string(W) + " windows (c = " + std::to_string(c_) + ")");
      nb_ = rows / W;
    } else {
      nb_ = rows;
    }
    const size_t ns = elems(env, scalars, sizeof(Fr), (fn + ": scalars").c_str());
    if (rows > 0xffffffffu) throw_range(env, fn + ": too many bases (max 2^32 - 1 points)");
    if (info.Length() > a && !info[a].IsUndefined() && !info[a].IsNull()) {
      U32s idx = u32_arg(info, a, (fn + ": scalarIndex").c_str());
      if (idx.len != nb_)
        throw_range(env, fn + ": scalarIndex has " + std::to_string(idx.len) + " entries for " +
                             std::to_string(nb_) + " bases");
      for (size_t k = 0; k < idx.len; k++)
        if (idx.data[k] >= ns)
          throw_range(env, fn + ": scalarIndex[" + std::to_string(k) + "] = " + std::to_string(idx.data[k]) +
                               " out of range (" + std::to_string(ns) + " scalars)");
      idx_ = idx.data;
      hold(idx);
    } else if (nb_ != ns) {
      throw_range(env, fn + ": " + std::to_string(nb_) + " bases but " + std::to_string(ns) +
                           " scalars (pass scalarIndex to select a subset)");
    }
    bases_ = Span<const typename C::A>(bases);
    scalars_ = Span<const Fr>(scalars);
    hold(bases);
    hold(scalars);
  }
  void run() override {
    if (c_)
      point_ = C::msm_precomputed(bases_.get(), c_, nb_, scalars_.get(), idx_, tm_);
    else
      point_ = C::msm(bases_.get(), nb_, scalars_.get(), idx_, tm_);
  }
  Napi::Value result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    Napi::Uint8Array p = new_u8(env, sizeof(point_));
    std::memcpy(p.Data(), &point_, sizeof(point_));
    Napi::Object t = Napi::Object::New(env);
    t.Set("classify", tm_.classify);
    t.Set("batchAdd", tm_.batch_add);
    t.Set("msm", tm_.msm);
    t.Set("ones", (double)tm_.ones);
    t.Set("others", (double)tm_.others);
    t.Set("precomputed", tm_.precomputed);
    o.Set("point", p);
    o.Set("timings", t);
    return o;
  }

 private:
  Span<const typename C::A> bases_;
  Span<const Fr> scalars_;
  const u32* idx_ = nullptr;
  size_t nb_ = 0;
  unsigned c_ = 0;  // > 0: precomputed table with window c
  typename C::A point_;
  MsmTimings tm_;
};

template <class C>
class MsmPrecomputedCall : public MsmCall<C> {
 public:
  MsmPrecomputedCall(const Napi::CallbackInfo& info) : MsmCall<C>(info, true) {}
};

// msmPrecomputeG1(bases, c, table): table (n·⌈256/c⌉ points, e.g. from alloc) ← 2^(c·j)·bases[k].
template <class C>
class PrecomputeCall : public Call {
 public:
  PrecomputeCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.msmPrecompute") {
    Napi::Env env = info.Env();
    const std::string fn = std::string("msmPrecompute") + C::name;
    bases_ = u8_arg(info, 0, (fn + ": bases").c_str());
    c_ = unsigned(count_arg(info, 1, (fn + ": c").c_str(), 20));
    if (c_ < 2) throw_range(env, fn + ": c must be in [2, 20]");
    table_ = u8_arg(info, 2, (fn + ": table").c_str());
    n_ = elems(env, bases_, sizeof(typename C::A), (fn + ": bases").c_str());
    const size_t W = msm_windows(c_);
    if (table_.len != n_ * W * sizeof(typename C::A))
      throw_range(env, fn + ": table has " + std::to_string(table_.len) + " bytes, expected " + std::to_string(n_) +
                           " bases * " + std::to_string(W) + " windows * " +
                           std::to_string(sizeof(typename C::A)) + " = " +
                           std::to_string(n_ * W * sizeof(typename C::A)));
    if (n_ * W > 0xffffffffu) throw_range(env, fn + ": table too large (max 2^32 - 1 points)");
    if (overlaps(bases_, table_)) throw_range(env, fn + ": bases and table must not overlap");
    hold(bases_);
    hold(table_);
  }
  void run() override {
    Span<const typename C::A> b(bases_);
    Span<typename C::A> t(table_);
    C::msm_precompute(b.get(), n_, c_, t.get());
    t.copy_back();
  }

 private:
  Bytes bases_, table_;
  unsigned c_ = 0;
  size_t n_ = 0;
};

// msmPrecomputeWindow(n): the window c for a precomputed table over n bases (threads of the pool).
Napi::Value MsmPrecomputeWindow(const Napi::CallbackInfo& info) {
  const size_t n = count_arg(info, 0, "msmPrecomputeWindow: n", 4294967295.0);
  return Napi::Number::New(info.Env(), msm_precompute_window(n, pool().size()));
}

// msmPrecomputePays(n, others): whether a table over n bases would run its own path (not the plain
// fallback) for an MSM with `others` scalars neither 0 nor 1.
Napi::Value MsmPrecomputePays(const Napi::CallbackInfo& info) {
  const size_t n = count_arg(info, 0, "msmPrecomputePays: n", 4294967295.0);
  const size_t m = count_arg(info, 1, "msmPrecomputePays: others", 4294967295.0);
  const size_t T = pool().size();
  return Napi::Boolean::New(info.Env(), m > 0 && msm_precomputed_pays(m, msm_precompute_window(n, T), T));
}

class BatchAddCall : public Call {
 public:
  BatchAddCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.batchAddG1") {
    Napi::Env env = info.Env();
    Bytes bases = u8_arg(info, 0, "batchAddG1: bases");
    U32s idx = u32_arg(info, 1, "batchAddG1: indices");
    const size_t nb = elems(env, bases, sizeof(G1Affine), "batchAddG1: bases");
    for (size_t k = 0; k < idx.len; k++)
      if (idx.data[k] >= nb)
        throw_range(env, "batchAddG1: indices[" + std::to_string(k) + "] = " + std::to_string(idx.data[k]) +
                             " out of range (" + std::to_string(nb) + " bases)");
    bases_ = Span<const G1Affine>(bases);
    idx_ = idx.data;
    n_ = idx.len;
    hold(bases);
    hold(idx);
  }
  void run() override { point_ = G1::batch_add(bases_.get(), idx_, n_); }
  Napi::Value result(Napi::Env env) override {
    Napi::Uint8Array p = new_u8(env, sizeof(point_));
    std::memcpy(p.Data(), &point_, sizeof(point_));
    return p;
  }

 private:
  Span<const G1Affine> bases_;
  const u32* idx_ = nullptr;
  size_t n_ = 0;
  G1Affine point_;
};

// ---------------------------------------------------------------------------------------------
// NTT and quotient.

unsigned log2_len(Napi::Env env, size_t n, const char* what) {
  if (n == 0 || (n & (n - 1)) != 0)
    throw_range(env, std::string(what) + ": length " + std::to_string(n) + " is not a power of two");
  unsigned k = 0;
  while ((size_t(1) << k) < n) k++;
  if (k > (unsigned)FrParams::TWO_ADICITY)
    throw_range(env, std::string(what) + ": length 2^" + std::to_string(k) + " exceeds the 2-adicity of Fr (2^32)");
  return k;
}

class NttCall : public Call {
 public:
  NttCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.ntt") {
    Napi::Env env = info.Env();
    Bytes v = u8_arg(info, 0, "ntt: values");
    inverse_ = bool_arg(info, 1, "ntt: inverse");
    coset_ = bool_arg(info, 2, "ntt: coset");
    log_n_ = log2_len(env, elems(env, v, sizeof(Fr), "ntt: values"), "ntt");
    bytes_ = v;
    hold(v);
  }
  void run() override {
    Span<Fr> a(bytes_);
    ntt_fr(a.get(), log_n_, inverse_, coset_);
    a.copy_back();
  }

 private:
  Bytes bytes_;
  bool inverse_ = false, coset_ = false;
  unsigned log_n_ = 0;
};

class QuotientCall : public Call {
 public:
  QuotientCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.quotient") {
    Napi::Env env = info.Env();
    a_ = u8_arg(info, 0, "quotient: a");
    b_ = u8_arg(info, 1, "quotient: b");
    c_ = u8_arg(info, 2, "quotient: c");
    const size_t n = elems(env, a_, sizeof(Fr), "quotient: a");
    if (b_.len != a_.len || c_.len != a_.len)
      throw_range(env, "quotient: a, b and c must have the same length (" + std::to_string(a_.len) + ", " +
                           std::to_string(b_.len) + ", " + std::to_string(c_.len) + " bytes)");
    if (overlaps(a_, b_) || overlaps(a_, c_) || overlaps(b_, c_))
      throw_range(env, "quotient: a, b and c must not overlap");
    log_n_ = log2_len(env, n, "quotient");
    hold(a_);
    hold(b_);
    hold(c_);
  }
  void run() override {
    Span<Fr> a(a_), b(b_), c(c_);
    quotient_fr(a.get(), b.get(), c.get(), log_n_);
    a.copy_back();
    b.copy_back();
    c.copy_back();
  }

 private:
  Bytes a_, b_, c_;
  unsigned log_n_ = 0;
};

// ---------------------------------------------------------------------------------------------
// CSR matrix-vector product: csrMatVec(rows, cols, rowPtr, colIdx, coeffIdx, coeffs, w, out).

// A CSR matrix's four arguments from `at` (rowPtr, colIdx, coeffIdx, coeffs) into `m`, whose rows and cols are set:
// lengths checked (the indices are checked off the JS thread, csr_validate), the buffers held by `call`, the
// coefficients aligned in `coeffs` (which must outlive the call). Returns the coefficients' bytes.
Bytes csr_args(Call& call, const Napi::CallbackInfo& info, size_t at, const std::string& fn, CsrView& m, Span<const Fr>& coeffs) {
  Napi::Env env = info.Env();
  U32s row_ptr = u32_arg(info, at, (fn + ": rowPtr").c_str());
  U32s col_idx = u32_arg(info, at + 1, (fn + ": colIdx").c_str());
  U32s coeff_idx = u32_arg(info, at + 2, (fn + ": coeffIdx").c_str());
  Bytes c = u8_arg(info, at + 3, (fn + ": coeffs").c_str());
  if (row_ptr.len != m.rows + 1)
    throw_range(env, fn + ": rowPtr has " + std::to_string(row_ptr.len) + " entries, expected rows + 1 = " + std::to_string(m.rows + 1));
  if (col_idx.len != coeff_idx.len)
    throw_range(env, fn + ": colIdx and coeffIdx lengths differ (" + std::to_string(col_idx.len) + " vs " + std::to_string(coeff_idx.len) + ")");
  m.n_coeffs = elems(env, c, sizeof(Fr), (fn + ": coeffs").c_str());
  m.nnz = col_idx.len;
  m.row_ptr = row_ptr.data;
  m.col_idx = col_idx.data;
  m.coeff_idx = coeff_idx.data;
  coeffs = Span<const Fr>(c);
  m.coeffs = coeffs.get();
  call.hold(row_ptr);
  call.hold(col_idx);
  call.hold(coeff_idx);
  call.hold(c);
  return c;
}

class CsrCall : public Call {
 public:
  CsrCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.csrMatVec") {
    Napi::Env env = info.Env();
    m_.rows = count_arg(info, 0, "csrMatVec: rows", 4294967295.0);
    m_.cols = count_arg(info, 1, "csrMatVec: cols", 4294967295.0);
    const Bytes coeffs = csr_args(*this, info, 2, "csrMatVec", m_, coeffs_);
    w_ = u8_arg(info, 6, "csrMatVec: w");
    out_ = u8_arg(info, 7, "csrMatVec: out");
    if (w_.len != m_.cols * sizeof(Fr))
      throw_range(env, "csrMatVec: w has " + std::to_string(w_.len) + " bytes, expected cols * 32 = " +
                           std::to_string(m_.cols * sizeof(Fr)));
    if (out_.len != m_.rows * sizeof(Fr))
      throw_range(env, "csrMatVec: out has " + std::to_string(out_.len) + " bytes, expected rows * 32 = " +
                           std::to_string(m_.rows * sizeof(Fr)));
    if (overlaps(out_, w_) || overlaps(out_, coeffs)) throw_range(env, "csrMatVec: out must not overlap w or coeffs");
    hold(w_);
    hold(out_);
  }
  void run() override {
    const std::string err = csr_validate(m_);
    if (!err.empty()) throw KilnError(ErrKind::Range, "csrMatVec: " + err);
    Span<const Fr> w(w_);
    Span<Fr> out(out_);
    csr_mat_vec_fr(m_, w.get(), out.get());
    out.copy_back();
  }

 private:
  CsrView m_{};
  Span<const Fr> coeffs_;
  Bytes w_, out_;
};

// ---------------------------------------------------------------------------------------------
// devSetupScalars(n, m, ni, na, A rowPtr colIdx coeffIdx coeffs, B …, C …, qa, qb, consts, h, l, ic, a, b): the CPU
// development setup's scalars (setup/scalars.hpp) into the five Montgomery Fr outputs; consts = τ, α, β, γ⁻¹, δ⁻¹,
// hScale (6 Montgomery Fr).

class SetupScalarsCall : public Call {
 public:
  SetupScalarsCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.devSetupScalars") {
    Napi::Env env = info.Env();
    in_.n = count_arg(info, 0, "devSetupScalars: n", 4294967296.0);
    in_.m = count_arg(info, 1, "devSetupScalars: constraints", 4294967295.0);
    in_.ni = count_arg(info, 2, "devSetupScalars: inputs", 4294967295.0);
    in_.na = count_arg(info, 3, "devSetupScalars: aux", 4294967295.0);
    const size_t cols = in_.ni + in_.na;
    CsrView* ms[3] = {&in_.a, &in_.b, &in_.c};
    for (int k = 0; k < 3; k++) {
      ms[k]->rows = in_.m;
      ms[k]->cols = cols;
      csr_args(*this, info, 4 + 4 * k, "devSetupScalars", *ms[k], coeffs_[k]);
    }
    U32s qa = u32_arg(info, 16, "devSetupScalars: qa");
    U32s qb = u32_arg(info, 17, "devSetupScalars: qb");
    in_.qa = qa.data;
    in_.qa_len = qa.len;
    in_.qb = qb.data;
    in_.qb_len = qb.len;
    hold(qa);
    hold(qb);
    Bytes k = u8_arg(info, 18, "devSetupScalars: consts");
    if (k.len != 6 * sizeof(Fr)) throw_range(env, "devSetupScalars: consts must be 6 Fr elements (192 bytes)");
    Fr c[6];
    std::memcpy(static_cast<void*>(c), k.data, sizeof(c));
    in_.tau = c[0];
    in_.alpha = c[1];
    in_.beta = c[2];
    in_.gamma_inv = c[3];
    in_.delta_inv = c[4];
    in_.h_scale = c[5];
    const size_t want[5] = {in_.n - 1, in_.na, in_.ni, in_.qa_len, in_.qb_len};
    const char* names[5] = {"h", "l", "ic", "a", "b"};
    for (int j = 0; j < 5; j++) {
      out_[j] = u8_arg(info, 19 + j, "devSetupScalars: output");
      if (out_[j].len != want[j] * sizeof(Fr))
        throw_range(env, std::string("devSetupScalars: ") + names[j] + " must be " + std::to_string(want[j]) + " Fr elements");
      hold(out_[j]);
    }
  }
  void run() override {
    const std::string err = setup_scalars_validate(in_);
    if (!err.empty()) throw KilnError(ErrKind::Range, "devSetupScalars: " + err);
    Span<Fr> o[5] = {Span<Fr>(out_[0]), Span<Fr>(out_[1]), Span<Fr>(out_[2]), Span<Fr>(out_[3]), Span<Fr>(out_[4])};
    const std::string e = setup_scalars_fr(in_, SetupScalarsOut{o[0].get(), o[1].get(), o[2].get(), o[3].get(), o[4].get()});
    if (!e.empty()) throw KilnError(ErrKind::Range, "devSetupScalars: " + e);
    for (auto& x : o) x.copy_back();
  }

 private:
  SetupScalarsIn in_{};
  Span<const Fr> coeffs_[3];
  Bytes out_[5];
};

// ---------------------------------------------------------------------------------------------
// Witness programs: witnessRun(blocks, segments, coeffs, numInputs, numAux, tape, out).

class WitnessCall : public Call {
 public:
  WitnessCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.witnessRun") {
    Napi::Env env = info.Env();
    if (!info[0].IsArray()) throw_type(env, "witnessRun: blocks must be an array of Uint32Array");
    Napi::Array blocks = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < blocks.Length(); i++) {
      Napi::Value v = blocks.Get(i);
      if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
        throw_type(env, "witnessRun: blocks[" + std::to_string(i) + "] must be a Uint32Array");
      Napi::Uint32Array a = v.As<Napi::Uint32Array>();
      p_.blocks.push_back({a.Data(), a.ElementLength()});
      hold(a, a.Data());
    }
    U32s seg = u32_arg(info, 1, "witnessRun: segments");
    if (seg.len == 0 || seg.len % 4 != 0) throw_range(env, "witnessRun: segments must hold 4 u32 per segment (at least one)");
    for (size_t i = 0; i < seg.len; i += 4)
      p_.segments.push_back({seg.data[i], seg.data[i + 1], seg.data[i + 2], seg.data[i + 3]});
    Bytes coeffs = u8_arg(info, 2, "witnessRun: coeffs");
    p_.n_coeffs = elems(env, coeffs, sizeof(Fr), "witnessRun: coeffs");
    p_.num_inputs = count_arg(info, 3, "witnessRun: numInputs", 536870911.0);
    p_.num_aux = count_arg(info, 4, "witnessRun: numAux", 536870911.0);
    tape_ = u8_arg(info, 5, "witnessRun: tape");
    p_.num_slots = elems(env, tape_, sizeof(Fr), "witnessRun: tape");
    out_ = u8_arg(info, 6, "witnessRun: out");
    if (out_.len != (p_.num_inputs + p_.num_aux) * sizeof(Fr))
      throw_range(env, "witnessRun: out has " + std::to_string(out_.len) + " bytes, expected (numInputs + numAux) * 32 = " +
                           std::to_string((p_.num_inputs + p_.num_aux) * sizeof(Fr)));
    if (overlaps(out_, tape_) || overlaps(out_, coeffs)) throw_range(env, "witnessRun: out must not overlap tape or coeffs");
    coeffs_ = Span<const Fr>(coeffs);
    p_.coeffs = coeffs_.get();
    hold(seg);
    hold(coeffs);
    hold(tape_);
    hold(out_);
  }
  void run() override {
    const auto t0 = std::chrono::steady_clock::now();
    Span<const Fr> tape(tape_);
    Span<Fr> out(out_);
    const std::string err = witness::run(p_, tape.get(), out.get(), dot_fr());
    if (!err.empty()) throw KilnError(ErrKind::Generic, "witnessRun: " + err);
    out.copy_back();
    ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  Napi::Value result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("ms", Napi::Number::New(env, ms_));
    o.Set("segments", Napi::Number::New(env, (double)p_.segments.size()));
    return o;
  }

 private:
  witness::Program p_;
  Span<const Fr> coeffs_;
  Bytes tape_, out_;
  double ms_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Fixed-base multiplication.

template <class C>
class FixedBaseCall : public Call {
 public:
  FixedBaseCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.fixedBaseMul") {
    Napi::Env env = info.Env();
    const std::string fn = std::string("fixedBaseMul") + C::name;
    Bytes base = u8_arg(info, 0, (fn + ": base").c_str());
    Bytes scalars = u8_arg(info, 1, (fn + ": scalars").c_str());
    if (base.len != sizeof(typename C::A))
      throw_range(env, fn + ": base must be " + std::to_string(sizeof(typename C::A)) + " bytes, got " +
                           std::to_string(base.len));
    std::memcpy(static_cast<void*>(&base_), base.data, sizeof(base_));
    n_ = elems(env, scalars, sizeof(Fr), (fn + ": scalars").c_str());
    scalars_ = Span<const Fr>(scalars);
    Napi::Uint8Array out = new_u8(env, n_ * sizeof(typename C::A));
    out_bytes_.data = out.Data();
    out_bytes_.len = out.ByteLength();
    out_ref_ = Napi::Persistent(out.As<Napi::Object>());
    hold(scalars);
  }
  void run() override {
    Span<typename C::A> out(out_bytes_);
    C::fixed_base_mul(base_, scalars_.get(), n_, out.get());
    out.copy_back();
  }
  Napi::Value result(Napi::Env) override { return out_ref_.Value(); }

 private:
  typename C::A base_;
  Span<const Fr> scalars_;
  size_t n_ = 0;
  Bytes out_bytes_;
  Napi::ObjectReference out_ref_;
};

// ---------------------------------------------------------------------------------------------
// zcash uncompressed points <-> native layout (the .params codec; native/src/codec/zcash.hpp).
//   decodeG1Uncompressed(src, dst, checkOnCurve, checkSubgroup?) / decodeG2Uncompressed
//   encodeG1Uncompressed(src, dst) / encodeG2Uncompressed
// A bad point rejects with an Error carrying `code: 'KILN_BAD_POINT'`, `pointIndex` (the first bad
// point of the call) and `reason` (the same wording as src/curve/codec.ts).

// Names of the coordinates of a point on the wire, in order (the fault's `coord`).
template <class C>
const char* wire_coord(int k) {
  static const char* g1[] = {"x", "y"};
  static const char* g2[] = {"x.c1", "x.c0", "y.c1", "y.c0"};
  return std::is_same<C, G1>::value ? g1[k & 1] : g2[k & 3];
}

template <class C>
std::string fault_reason(const DecodeFault& f) {
  switch (f.fault) {
    case PointFault::Compressed: return "compression flag set in an uncompressed point";
    case PointFault::Sort: return "sort flag set in an uncompressed point";
    case PointFault::InfinityNonZero: return "infinity flag set but the coordinates are not zero";
    case PointFault::NonCanonical: return std::string(wire_coord<C>(f.coord)) + " is not a canonical field element (\u2265 p)";
    case PointFault::ZeroZero: return "(0, 0) without the infinity flag";
    case PointFault::NotOnCurve: return std::string("not a valid ") + C::name + " point (not on the curve)";
    case PointFault::NotInSubgroup: return std::string("not a valid ") + C::name + " point (not in the prime-order subgroup)";
    default: return "bad point";
  }
}

template <class C>
class DecodePointsCall : public Call {
 public:
  DecodePointsCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.decodeUncompressed") {
    Napi::Env env = info.Env();
    fn_ = std::string("decode") + C::name + "Uncompressed";
    src_ = u8_arg(info, 0, (fn_ + ": src").c_str());
    dst_ = u8_arg(info, 1, (fn_ + ": dst").c_str());
    const bool curve = bool_arg(info, 2, (fn_ + ": checkOnCurve").c_str());
    bool subgroup = false;
    if (info.Length() > 3 && !info[3].IsUndefined()) subgroup = bool_arg(info, 3, (fn_ + ": checkSubgroup").c_str());
    check_ = (curve ? kCheckCurve : 0) | (subgroup ? kCheckSubgroup : 0);
    n_ = elems(env, src_, sizeof(typename C::A), (fn_ + ": src").c_str());
    if (dst_.len != n_ * sizeof(typename C::A))
      throw_range(env, fn_ + ": dst has " + std::to_string(dst_.len) + " bytes, expected " + std::to_string(n_) +
                           " points * " + std::to_string(sizeof(typename C::A)) + " = " + std::to_string(n_ * sizeof(typename C::A)));
    if (overlaps(src_, dst_)) throw_range(env, fn_ + ": src and dst must not overlap");
    hold(src_);
    hold(dst_);
  }
  void run() override {
    fault_ = C::decode_uncompressed(src_.data, dst_.data, n_, check_);
    if (fault_.index != SIZE_MAX)
      throw KilnError(ErrKind::Generic, fn_ + ": point " + std::to_string(fault_.index) + ": " + fault_reason<C>(fault_));
  }
  void decorate(Napi::Env env, Napi::Object err) override {
    if (fault_.index == SIZE_MAX) return;
    err.Set("code", Napi::String::New(env, "KILN_BAD_POINT"));
    err.Set("pointIndex", Napi::Number::New(env, (double)fault_.index));
    err.Set("reason", Napi::String::New(env, fault_reason<C>(fault_)));
  }

 private:
  std::string fn_;
  Bytes src_, dst_;
  size_t n_ = 0;
  int check_ = 0;
  DecodeFault fault_;
};

template <class C>
class EncodePointsCall : public Call {
 public:
  EncodePointsCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.encodeUncompressed") {
    Napi::Env env = info.Env();
    const std::string fn = std::string("encode") + C::name + "Uncompressed";
    src_ = u8_arg(info, 0, (fn + ": src").c_str());
    dst_ = u8_arg(info, 1, (fn + ": dst").c_str());
    n_ = elems(env, src_, sizeof(typename C::A), (fn + ": src").c_str());
    if (dst_.len != n_ * sizeof(typename C::A))
      throw_range(env, fn + ": dst has " + std::to_string(dst_.len) + " bytes, expected " + std::to_string(n_) +
                           " points * " + std::to_string(sizeof(typename C::A)) + " = " + std::to_string(n_ * sizeof(typename C::A)));
    if (overlaps(src_, dst_)) throw_range(env, fn + ": src and dst must not overlap");
    hold(src_);
    hold(dst_);
  }
  void run() override { C::encode_uncompressed(src_.data, dst_.data, n_); }

 private:
  Bytes src_, dst_;
  size_t n_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Parameter files (native/src/params/reader.hpp): a .params file of any size read into native memory.
//   paramsInspect(path) → Promise<{size, vk, icCount, sections: [{name, group, count, offset}]}>
//   paramsDecode(path, size, section, group, offset, count, dst, checkOnCurve, checkSubgroup?) → Promise<void>
// A malformed file rejects with an Error carrying `code: 'KILN_PARAMS_FORMAT'`, `section` and `detail`;
// a bad point with `code: 'KILN_BAD_POINT'`, `section`, `pointIndex` (within the call) and `reason`.

// Runs f(); a params::FormatError becomes a KilnError "<path>: section <s>: <detail>" and is kept
// in `section` / `detail` for decorate().
template <class Fn>
void params_guard(const std::string& path, std::string& section, std::string& detail, Fn&& f) {
  try {
    f();
  } catch (const params::FormatError& e) {
    section = e.section;
    detail = e.what();
    throw KilnError(ErrKind::Generic, path + ": section " + section + ": " + detail);
  }
}

void decorate_format(Napi::Env env, Napi::Object err, const std::string& section, const std::string& detail) {
  if (section.empty()) return;
  err.Set("code", Napi::String::New(env, "KILN_PARAMS_FORMAT"));
  err.Set("section", Napi::String::New(env, section));
  err.Set("detail", Napi::String::New(env, detail));
}

class ParamsInspectCall : public Call {
 public:
  ParamsInspectCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.paramsInspect") {
    path_ = string_arg(info, 0, "paramsInspect: path");
  }
  void run() override {
    params_guard(path_, section_, detail_, [&] { layout_ = params::inspect(path_); });
  }
  Napi::Value result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("size", Napi::Number::New(env, (double)layout_.size));
    o.Set("vk", u8_copy(env, layout_.vk.data(), layout_.vk.size()));
    o.Set("icCount", Napi::Number::New(env, (double)layout_.ic));
    Napi::Array secs = Napi::Array::New(env, 5);
    for (uint32_t k = 0; k < 5; k++) {
      const params::SectionInfo& si = layout_.sections[k];
      Napi::Object x = Napi::Object::New(env);
      x.Set("name", si.name);
      x.Set("group", si.group == 1 ? "G1" : "G2");
      x.Set("count", Napi::Number::New(env, (double)si.count));
      x.Set("offset", Napi::Number::New(env, (double)si.offset));
      secs.Set(k, x);
    }
    o.Set("sections", secs);
    return o;
  }
  void decorate(Napi::Env env, Napi::Object err) override { decorate_format(env, err, section_, detail_); }

 private:
  std::string path_, section_, detail_;
  params::Layout layout_;
};

class ParamsDecodeCall : public Call {
 public:
  ParamsDecodeCall(const Napi::CallbackInfo& info) : Call(info.Env(), "kiln.paramsDecode") {
    Napi::Env env = info.Env();
    path_ = string_arg(info, 0, "paramsDecode: path");
    size_ = count_arg(info, 1, "paramsDecode: size", 9007199254740991.0);
    name_ = string_arg(info, 2, "paramsDecode: section");
    const std::string g = string_arg(info, 3, "paramsDecode: group");
    if (g != "G1" && g != "G2") throw_range(env, "paramsDecode: group must be 'G1' or 'G2', got '" + g + "'");
    group_ = g == "G1" ? 1 : 2;
    offset_ = count_arg(info, 4, "paramsDecode: offset", 9007199254740991.0);
    count_ = count_arg(info, 5, "paramsDecode: count", 9007199254740991.0);
    dst_ = u8_arg(info, 6, "paramsDecode: dst");
    const size_t pb = group_ == 1 ? params::kG1Wire : params::kG2Wire;
    if (count_ > dst_.len / pb || dst_.len != count_ * pb)
      throw_range(env, "paramsDecode: dst has " + std::to_string(dst_.len) + " bytes, " + std::to_string(count_) + " " + g +
                           " points need " + std::to_string(count_ * pb));
    const bool curve = bool_arg(info, 7, "paramsDecode: checkOnCurve");
    const bool subgroup = present(info, 8) ? bool_arg(info, 8, "paramsDecode: checkSubgroup") : false;
    check_ = (curve ? kCheckCurve : 0) | (subgroup ? kCheckSubgroup : 0);
    hold(dst_);
  }
  void run() override {
    params_guard(path_, section_, detail_, [&] {
      fault_ = params::read_points(path_, size_, name_, group_, offset_, count_, dst_.data, check_);
    });
    if (fault_.index != SIZE_MAX)
      throw KilnError(ErrKind::Generic, path_ + ": section " + name_ + ": point " + std::to_string(fault_.index) + ": " + reason());
  }
  void decorate(Napi::Env env, Napi::Object err) override {
    decorate_format(env, err, section_, detail_);
    if (fault_.index == SIZE_MAX) return;
    err.Set("code", Napi::String::New(env, "KILN_BAD_POINT"));
    err.Set("section", Napi::String::New(env, name_));
    err.Set("pointIndex", Napi::Number::New(env, (double)fault_.index));
    err.Set("reason", Napi::String::New(env, reason()));
  }

 private:
  std::string reason() const { return group_ == 1 ? fault_reason<G1>(fault_) : fault_reason<G2>(fault_); }
  std::string path_, name_, section_, detail_;
  size_t size_ = 0, offset_ = 0, count_ = 0;
  int group_ = 1, check_ = 0;
  Bytes dst_;
  DecodeFault fault_;
};

// ---------------------------------------------------------------------------------------------
// Synchronous helpers (small inputs, JS thread): fieldOp, g1Op, g2Op.

template <class F, class Op>
void field_map(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n, Op op) {
  for (size_t i = 0; i < n; i++) {
    F x, y = F::zero();
    std::memcpy(static_cast<void*>(&x), a + i * sizeof(F), sizeof(F));
    if (b) std::memcpy(static_cast<void*>(&y), b + i * sizeof(F), sizeof(F));
    const F r = op(x, y);
    std::memcpy(out + i * sizeof(F), static_cast<const void*>(&r), sizeof(F));
  }
}

template <class F>
void field_op(const std::string& op, const uint8_t* a, const uint8_t* b, uint8_t* out, size_t n) {
  if (op == "add") field_map<F>(a, b, out, n, [](const F& x, const F& y) { return x + y; });
  else if (op == "sub") field_map<F>(a, b, out, n, [](const F& x, const F& y) { return x - y; });
  else if (op == "mul") field_map<F>(a, b, out, n, [](const F& x, const F& y) { return x * y; });
  else if (op == "sqr") field_map<F>(a, b, out, n, [](const F& x, const F&) { return x.sqr(); });
  else if (op == "neg") field_map<F>(a, b, out, n, [](const F& x, const F&) { return -x; });
  else field_map<F>(a, b, out, n, [](const F& x, const F&) { return x.inverse(); });  // inv(0) = 0
}

// Diagnostics: nanoseconds per operation of a dependent chain of `iters` operations.
Napi::Value MicroBench(const Napi::CallbackInfo& info) {
  const std::string what = string_arg(info, 0, "microBench: op");
  const size_t iters = count_arg(info, 1, "microBench: iterations", 1e9);
  auto t0 = std::chrono::steady_clock::now();
  u64 sink = 0;
  if (what == "fq_mul") {
    Fq a = Fq::from_u64(3), b = Fq::from_u64(5);
    for (size_t i = 0; i < iters; i++) a = a * b;
    sink = a.v[0];
  } else if (what == "fq_sqr") {
    Fq a = Fq::from_u64(3);
    for (size_t i = 0; i < iters; i++) a = a.sqr();
    sink = a.v[0];
  } else if (what == "fr_mul") {
    Fr a = Fr::from_u64(3), b = Fr::from_u64(5);
    for (size_t i = 0; i < iters; i++) a = a * b;
    sink = a.v[0];
  } else if (what == "fq_add") {
    Fq a = Fq::from_u64(3), b = Fq::from_u64(5);
    for (size_t i = 0; i < iters; i++) a = a + b;
    sink = a.v[0];
  } else if (what == "fq_inv") {
    Fq a = Fq::from_u64(3);
    for (size_t i = 0; i < iters; i++) a = a.inverse();
    sink = a.v[0];
  } else if (what == "fq2_mul") {
    Fq2 a = {Fq::from_u64(3), Fq::from_u64(4)}, b = {Fq::from_u64(5), Fq::from_u64(6)};
    for (size_t i = 0; i < iters; i++) a = a * b;
    sink = a.c0.v[0];
  } else {
    throw_range(info.Env(), "microBench: unknown op '" + what + "'");
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  volatile u64 keep = sink;
  (void)keep;
  return Napi::Number::New(info.Env(), iters ? ns / (double)iters : 0);
}

Napi::Value FieldOp(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string field = string_arg(info, 0, "fieldOp: field");
  const std::string op = string_arg(info, 1, "fieldOp: op");
  size_t size;
  if (field == "fr") size = sizeof(Fr);
  else if (field == "fq") size = sizeof(Fq);
  else if (field == "fq2") size = sizeof(Fq2);
  else throw_range(env, "fieldOp: field must be 'fr', 'fq' or 'fq2', got '" + field + "'");
  const bool binary = op == "add" || op == "sub" || op == "mul";
  if (!binary && op != "sqr" && op != "neg" && op != "inv")
    throw_range(env, "fieldOp: op must be add, sub, mul, sqr, neg or inv, got '" + op + "'");
  Bytes a = u8_arg(info, 2, "fieldOp: a");
  const size_t n = elems(env, a, size, "fieldOp: a");
  Bytes b;
  if (binary) {
    b = u8_arg(info, 3, "fieldOp: b");
    if (b.len != a.len) throw_range(env, "fieldOp: a and b must have the same length");
  }
  Napi::Uint8Array out = new_u8(env, a.len);
  const uint8_t* bp = binary ? b.data : nullptr;
  if (field == "fr") field_op<Fr>(op, a.data, bp, out.Data(), n);
  else if (field == "fq") field_op<Fq>(op, a.data, bp, out.Data(), n);
  else field_op<Fq2>(op, a.data, bp, out.Data(), n);
  return out;
}

template <class C>
Napi::Value CurveOp(const Napi::CallbackInfo& info) {
  using A = typename C::A;
  Napi::Env env = info.Env();
  const std::string fn = std::string(C::name == std::string("G1") ? "g1Op" : "g2Op");
  const std::string op = string_arg(info, 0, (fn + ": op").c_str());
  const bool binary = op == "add" || op == "mul";
  if (!binary && op != "double" && op != "neg")
    throw_range(env, fn + ": op must be add, double, neg or mul, got '" + op + "'");
  Bytes a = u8_arg(info, 1, (fn + ": a").c_str());
  const size_t n = elems(env, a, sizeof(A), (fn + ": a").c_str());
  Bytes b;
  if (binary) {
    b = u8_arg(info, 2, (fn + ": b").c_str());
    const size_t want = op == "mul" ? n * sizeof(Fr) : a.len;
    if (b.len != want)
      throw_range(env, fn + ": b must have " + std::to_string(want) + " bytes, got " + std::to_string(b.len));
  }
  Napi::Uint8Array out = new_u8(env, a.len);
  for (size_t i = 0; i < n; i++) {
    A x, r;
    std::memcpy(static_cast<void*>(&x), a.data + i * sizeof(A), sizeof(A));
    if (op == "add") {
      A y;
      std::memcpy(static_cast<void*>(&y), b.data + i * sizeof(A), sizeof(A));
      r = C::add(x, y);
    } else if (op == "mul") {
      Fr k;
      std::memcpy(static_cast<void*>(&k), b.data + i * sizeof(Fr), sizeof(Fr));
      r = C::mul(x, k);
    } else if (op == "double") {
      r = C::dbl(x);
    } else {
      r = x.neg();
    }
    std::memcpy(out.Data() + i * sizeof(A), static_cast<const void*>(&r), sizeof(A));
  }
  return out;
}

// lincombG1(bases, scalars) / lincombG2: Σ scalars[i]·bases[i] for a few points (≤ 256), computed
// synchronously on the JS thread (~0.1 ms per full-width G1 scalar): the proof's assembly.
constexpr size_t kLincombMax = 256;

template <class C>
Napi::Value Lincomb(const Napi::CallbackInfo& info) {
  using A = typename C::A;
  Napi::Env env = info.Env();
  const std::string fn = std::string("lincomb") + C::name;
  Bytes bases = u8_arg(info, 0, (fn + ": bases").c_str());
  Bytes scalars = u8_arg(info, 1, (fn + ": scalars").c_str());
  const size_t n = elems(env, bases, sizeof(A), (fn + ": bases").c_str());
  const size_t ns = elems(env, scalars, sizeof(Fr), (fn + ": scalars").c_str());
  if (ns != n)
    throw_range(env, fn + ": " + std::to_string(n) + " bases but " + std::to_string(ns) + " scalars");
  if (n > kLincombMax)
    throw_range(env, fn + ": at most " + std::to_string(kLincombMax) + " points (use msm" + C::name + ")");
  Span<const A> b(bases);
  Span<const Fr> k(scalars);
  const A r = C::lincomb(b.get(), k.get(), n);
  Napi::Uint8Array out = new_u8(env, sizeof(A));
  std::memcpy(out.Data(), static_cast<const void*>(&r), sizeof(A));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Memory, threads, capabilities.

// Unmapping gigabytes takes a good part of a second (a 32 GiB partition's witness is 4.2 GB): blocks of
// 64 MiB or more are unmapped on a detached thread, so release() never stalls the JS thread. Nothing
// refers to the memory any more (the buffer is detached, no call holds it).
void free_block(uint8_t* mem, size_t, size_t mapped) {
  if (mapped >= (size_t(64) << 20))
    std::thread([mem, mapped] { munmap(mem, mapped); }).detach();
  else if (mapped)
    munmap(mem, mapped);
  else
    std::free(mem);
}

// alloc'd memory is reported to V8 as external memory (so that the GC sees the pressure of large
// native buffers, e.g. precomputed MSM tables) until release() or the finalizer.
Napi::Value Alloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t bytes = count_arg(info, 0, "alloc: bytes", 9007199254740991.0);
  if (bytes == 0) return Napi::ArrayBuffer::New(env, 0);  // nothing to free; release() is a no-op
  const size_t rounded = std::max<size_t>(64, (bytes + 63) & ~size_t(63));
  if (rounded >= (size_t(1) << 20)) {
    // Large buffers: anonymous pages, zeroed lazily by the kernel, page (hence 64-byte) aligned.
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw_range(env, "alloc: out of memory (" + std::to_string(bytes) + " bytes)");
#ifdef MADV_HUGEPAGE
    // Transparent huge pages where the kernel only gives them on request ("madvise" mode): fewer TLB
    // misses in the MSM tables and SRS vectors (G1 MSM over a 2^16 table: 84 -> 74 ms, 2 threads).
    if (rounded >= (size_t(4) << 20)) madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return block_buffer(env, static_cast<uint8_t*>(p), bytes, rounded, free_block, true, "alloc");
  }
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw_range(env, "alloc: out of memory (" + std::to_string(bytes) + " bytes)");
  std::memset(p, 0, rounded);
  return block_buffer(env, static_cast<uint8_t*>(p), bytes, 0, free_block, true, "alloc");
}

Napi::Value Release(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Value v = info[0];
  if (!v.IsArrayBuffer() && !v.IsTypedArray()) throw_type(env, "release: argument must be a buffer returned by alloc");
  Napi::ArrayBuffer ab = buffer_of(v);
  if (ab.IsDetached() || ab.ByteLength() == 0) return env.Undefined();  // released already, or empty
  if (!release_buffer(env, ab)) throw_type(env, "release: buffer was not returned by alloc");
  return env.Undefined();
}

Napi::Value SetThreads(const Napi::CallbackInfo& info) {
  const size_t n = count_arg(info, 0, "setThreads: n", 1024);
  pool().resize(n == 0 ? ThreadPool::default_threads() : unsigned(n));
  return Napi::Number::New(info.Env(), pool().size());
}

// setNoIfma(noIfma): the edge's KILN_NO_IFMA (src/util/tuning.ts), applied before the first kernel;
// returns whether the kernels run on IFMA now. An Error when the choice was fixed the other way.
Napi::Value SetNoIfma(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const bool off = bool_arg(info, 0, "setNoIfma: noIfma");
  if (!set_no_ifma(off))
    throw Napi::Error::New(env, std::string("setNoIfma(") + (off ? "true" : "false") +
                                    "): the IFMA choice of this process is fixed already (by an earlier setNoIfma, or "
                                    "by the first kernel: precomputed tables are stored in its form)");
  return Napi::Boolean::New(env, cpu_ifma_peek());
}

Napi::Value Capabilities(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("backend", "native-cpu");
  o.Set("threads", pool().size());
  o.Set("cuda", false);
  o.Set("gpus", Napi::Array::New(env));
#ifdef KILN_MONT_X86
  o.Set("mulx", true);
#else
  o.Set("mulx", false);
#endif
  o.Set("ifma", cpu_ifma_peek());
  return o;
}

// msmTableForm(group, point): a point (G1 96 B / G2 192 B) as precomputed tables store it (the
// IFMA path's M52 form when capabilities().ifma, else unchanged), so callers can check a table
// against its bases.
template <class C>
Napi::Value table_form(Napi::Env env, const Bytes& p) {
  typename C::A a;
  std::memcpy(static_cast<void*>(&a), p.data, sizeof a);
  const typename C::A r = C::table_form(a);
  return u8_copy(env, &r, sizeof r);
}

Napi::Value MsmTableForm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string group = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  if (group != "G1" && group != "G2") throw_range(env, "msmTableForm: group must be \"G1\" or \"G2\"");
  Bytes p = u8_arg(info, 1, "msmTableForm: point");
  const size_t size = group == "G1" ? sizeof(G1Affine) : sizeof(G2Affine);
  if (p.len != size) throw_range(env, "msmTableForm: a " + group + " point is " + std::to_string(size) + " bytes");
  return group == "G1" ? table_form<G1>(env, p) : table_form<G2>(env, p);
}

// ---------------------------------------------------------------------------------------------
// Poseidon (hash/poseidon.hpp), synchronous: a hash is tens of microseconds.
//   poseidonSetup(arity, fullRounds, partialRounds, crc, preSparse, mds, wHat, vRest): the optimized
//     constants of an arity (canonical little-endian 32-byte Fr elements), once per process (worker
//     threads share them; a second setup of an arity replaces the first).
//   poseidonHash(arity, inputs, tag?): inputs.length / (32·arity) preimages → one canonical 32-byte
//     element each; tag (32 bytes) replaces the MerkleTree domain tag 2^arity − 1.
constexpr int kPoseidonMaxArity = 36;
std::mutex g_poseidon_mu;
std::shared_ptr<const PoseidonOptimized> g_poseidon[kPoseidonMaxArity + 1];

bool fr_canonical(const u64* a) {
  for (int i = 3; i >= 0; i--) {
    if (a[i] < FrParams::MOD[i]) return true;
    if (a[i] > FrParams::MOD[i]) return false;
  }
  return false;
}

Fr fr_from_bytes(Napi::Env env, const uint8_t* p, const std::string& what) {
  u64 limbs[4];
  std::memcpy(limbs, p, 32);
  if (!fr_canonical(limbs)) throw_range(env, what + ": not a canonical Fr element (≥ r)");
  return Fr::from_canonical(limbs);
}

std::vector<Fr> fr_vector(const Napi::CallbackInfo& info, size_t i, size_t count, const std::string& what) {
  Bytes b = u8_arg(info, i, what.c_str());
  if (b.len != count * 32)
    throw_range(info.Env(), what + ": expected " + std::to_string(count) + " elements (" + std::to_string(count * 32) +
                                " bytes), got " + std::to_string(b.len) + " bytes");
  std::vector<Fr> out(count);
  for (size_t k = 0; k < count; k++) out[k] = fr_from_bytes(info.Env(), b.data + 32 * k, what + "[" + std::to_string(k) + "]");
  return out;
}

Napi::Value PoseidonSetup(const Napi::CallbackInfo& info) {
  const int arity = (int)count_arg(info, 0, "poseidonSetup: arity", kPoseidonMaxArity);
  if (arity < 1) throw_range(info.Env(), "poseidonSetup: arity must be at least 1");
  auto c = std::make_shared<PoseidonOptimized>();
  c->t = arity + 1;
  c->full = (int)count_arg(info, 1, "poseidonSetup: fullRounds", 64);
  c->partial = (int)count_arg(info, 2, "poseidonSetup: partialRounds", 256);
  if (c->full < 2 || c->full % 2 != 0) throw_range(info.Env(), "poseidonSetup: fullRounds must be even and at least 2");
  const size_t t = (size_t)c->t, p = (size_t)c->partial;
  c->crc = fr_vector(info, 3, (size_t)c->full * t + p, "poseidonSetup: crc");
  c->pre_sparse = fr_vector(info, 4, t * t, "poseidonSetup: preSparse");
  c->mds = fr_vector(info, 5, t * t, "poseidonSetup: mds");
  c->w_hat = fr_vector(info, 6, p * t, "poseidonSetup: wHat");
  c->v_rest = fr_vector(info, 7, p * (t - 1), "poseidonSetup: vRest");
  std::lock_guard<std::mutex> lock(g_poseidon_mu);
  g_poseidon[arity] = std::move(c);
  return info.Env().Undefined();
}

Napi::Value PoseidonHash(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int arity = (int)count_arg(info, 0, "poseidonHash: arity", kPoseidonMaxArity);
  std::shared_ptr<const PoseidonOptimized> c;
  {
    std::lock_guard<std::mutex> lock(g_poseidon_mu);
    c = g_poseidon[arity];
  }
  if (!c) throw_range(env, "poseidonHash: no constants for arity " + std::to_string(arity) + " (call poseidonSetup first)");
  Bytes in = u8_arg(info, 1, "poseidonHash: inputs");
  const size_t n = elems(env, in, 32 * (size_t)arity, "poseidonHash: inputs");
  Fr tag;
  if (info.Length() > 2 && !info[2].IsUndefined()) {
    Bytes tb = u8_arg(info, 2, "poseidonHash: tag");
    if (tb.len != 32) throw_range(env, "poseidonHash: tag must be 32 bytes");
    tag = fr_from_bytes(env, tb.data, "poseidonHash: tag");
  } else {
    tag = Fr::from_u64((u64(1) << arity) - 1);  // MerkleTree: 2^arity − 1 (arity ≤ 36)
  }
  std::vector<Fr> pre((size_t)arity);
  Napi::Uint8Array out = new_u8(env, 32 * n);
  for (size_t k = 0; k < n; k++) {
    for (int i = 0; i < arity; i++)
      pre[i] = fr_from_bytes(env, in.data + 32 * (k * arity + i), "poseidonHash: inputs[" + std::to_string(k * arity + i) + "]");
    u64 limbs[4];
    poseidon_hash(*c, pre.data(), tag).to_canonical(limbs);
    std::memcpy(out.Data() + 32 * k, limbs, 32);
  }
  return out;
}

Napi::Value Version(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), KILN_VERSION); }

// The exported functions (native/API.md), one line each.
const Export kExports[] = {
    {"version", Version},
    {"capabilities", Capabilities},
    {"setThreads", SetThreads},
    {"setNoIfma", SetNoIfma},
    {"alloc", Alloc},
    {"release", Release},
    {"microBench", MicroBench},
    {"fieldOp", FieldOp},
    {"poseidonSetup", PoseidonSetup},
    {"poseidonHash", PoseidonHash},
    {"g1Op", CurveOp<G1>},
    {"g2Op", CurveOp<G2>},
    {"lincombG1", Lincomb<G1>},
    {"lincombG2", Lincomb<G2>},
    {"msmTableForm", MsmTableForm},
    {"msmPrecomputeWindow", MsmPrecomputeWindow},
    {"msmPrecomputePays", MsmPrecomputePays},
    {"msmPrecomputeG1", Start<PrecomputeCall<G1>>},
    {"msmPrecomputeG2", Start<PrecomputeCall<G2>>},
    {"msmPrecomputedG1", Start<MsmPrecomputedCall<G1>>},
    {"msmPrecomputedG2", Start<MsmPrecomputedCall<G2>>},
    {"msmG1", Start<MsmCall<G1>>},
    {"msmG2", Start<MsmCall<G2>>},
    {"batchAddG1", Start<BatchAddCall>},
    {"ntt", Start<NttCall>},
    {"quotient", Start<QuotientCall>},
    {"csrMatVec", Start<CsrCall>},
    {"devSetupScalars", Start<SetupScalarsCall>},
    {"witnessRun", Start<WitnessCall>},
    {"fixedBaseMulG1", Start<FixedBaseCall<G1>>},
    {"fixedBaseMulG2", Start<FixedBaseCall<G2>>},
    {"decodeG1Uncompressed", Start<DecodePointsCall<G1>>},
    {"decodeG2Uncompressed", Start<DecodePointsCall<G2>>},
    {"encodeG1Uncompressed", Start<EncodePointsCall<G1>>},
    {"encodeG2Uncompressed", Start<EncodePointsCall<G2>>},
    {"paramsInspect", Start<ParamsInspectCall>},
    {"paramsDecode", Start<ParamsDecodeCall>},
};

Napi::Object Init(Napi::Env env, Napi::Object exports) { return export_all(env, exports, kExports); }

}  // namespace
}  // namespace kiln

static Napi::Object KilnInit(Napi::Env env, Napi::Object exports) { return kiln::Init(env, exports); }

NODE_API_MODULE(kiln_native, KilnInit)
