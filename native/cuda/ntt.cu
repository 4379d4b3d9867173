// Fr transforms on the device: the twiddle table, stage groups, scalings, the NTT entry point and
// the Groth16 quotient (on host buffers, and on device buffers for the partition prover).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "ntt.cuh"
#include "ntt_ops.cuh"
#include "warm.hpp"

namespace kiln {
namespace cuda {

static DFr to_dfr(const uint8_t* b) {
  DFr r;
  std::memcpy(r.w, b, 32);
  return r;
}

void ensure_twiddles(Ctx& c, unsigned log_n) {
  if (c.tw && c.tw_log >= log_n) return;
  const unsigned L = std::max(log_n, 1u);
  if (c.tw) {
    KC_CHECK(cudaStreamSynchronize(c.stream));
    KC_CHECK(cudaFree(c.tw));
    c.tw = nullptr;
  }
  const size_t half = size_t(1) << (L - 1);
  KC_CHECK(cudaMalloc(&c.tw, half * 32));
  const FrConsts k = fr_consts(L);
  k_twiddles<<<blocks_for((half + 63) / 64, 128), 128, 0, c.stream>>>(static_cast<DFr*>(c.tw), half, to_dfr(k.omega));
  KC_LAUNCHED();
  c.tw_log = L;
}

// The tables of x_i ·= factor·g^i (ntt_ops.cuh ScaleTables), made on c.stream.
ScaleTables scale_tables(Ctx& c, unsigned log_n, const uint8_t* factor, const uint8_t* g) {
  ScaleTables t;
  t.slog = (log_n + 1) / 2;
  const size_t nlo = size_t(1) << t.slog, nhi = size_t(1) << (log_n - t.slog);
  t.lo = dalloc<DFr>(c, nlo + nhi);
  t.hi = t.lo + nlo;
  const FrConsts unit = fr_consts(0);  // n_inv of n = 1: one
  k_pow_table<<<blocks_for(nlo, 256), 256, 0, c.stream>>>(t.lo, nlo, to_dfr(g), to_dfr(unit.n_inv), 0);
  KC_LAUNCHED();
  k_pow_table<<<blocks_for(nhi, 256), 256, 0, c.stream>>>(t.hi, nhi, to_dfr(g), to_dfr(factor), t.slog);
  KC_LAUNCHED();
  return t;
}

void free_scale_tables(Ctx& c, ScaleTables& t) {
  dfree(c, t.lo);
  t.lo = t.hi = nullptr;
}

// Transform of `data` (natural order in and out); the result lands in `scratch` (the first stage
// group gathers out of place). Returns the buffer holding the result. Scaled by `sc` when given.
DFr* ntt_raw(Ctx& c, DFr* data, DFr* scratch, unsigned log_n, bool inverse, const ScaleTables* sc) {
  if (log_n == 0) {
    if (sc != nullptr) throw Error("ntt_raw: a scaled transform of size 1");
    return data;
  }
  ensure_twiddles(c, log_n);
  const unsigned groups = (log_n + kGroupLog - 1) / kGroupLog;
  unsigned s = 0;
  for (unsigned gi = 0; gi < groups; gi++) {
    const unsigned k = (log_n - s + (groups - gi) - 1) / (groups - gi);  // even split
    const size_t blocks = size_t(1) << (log_n - k);
    const unsigned threads = std::min(1u << (k >= 2 ? k - 2 : 0), 256u);
    const ScaleTables* last = gi + 1 == groups ? sc : nullptr;
    k_ntt_group<<<(unsigned)blocks, threads, (32u << k), c.stream>>>(
        gi == 0 ? data : nullptr, scratch, log_n, s, k, static_cast<const DFr*>(c.tw), c.tw_log, inverse,
        last ? last->lo : nullptr, last ? last->hi : nullptr, last ? last->slog : 0);
    KC_LAUNCHED();
    s += k;
  }
  return scratch;
}

DFr* ntt_any(Ctx& c, DFr* data, DFr* scratch, unsigned log_n, bool inverse, const ScaleTables* sc) {
  if (scratch) return ntt_raw(c, data, scratch, log_n, inverse, sc);
  if (log_n == 0) {
    if (sc != nullptr) throw Error("ntt_any: a scaled transform of size 1");
    return data;
  }
  ensure_twiddles(c, log_n);
  const size_t n = size_t(1) << log_n;
  k_bitrev_inplace<<<blocks_for(n, 256), 256, 0, c.stream>>>(data, log_n);
  KC_LAUNCHED();
  const unsigned groups = (log_n + kGroupLog - 1) / kGroupLog;
  unsigned s = 0;
  for (unsigned gi = 0; gi < groups; gi++) {
    const unsigned k = (log_n - s + (groups - gi) - 1) / (groups - gi);
    const size_t blocks = size_t(1) << (log_n - k);
    const unsigned threads = std::min(1u << (k >= 2 ? k - 2 : 0), 256u);
    const ScaleTables* last = gi + 1 == groups ? sc : nullptr;
    k_ntt_group<<<(unsigned)blocks, threads, (32u << k), c.stream>>>(
        nullptr, data, log_n, s, k, static_cast<const DFr*>(c.tw), c.tw_log, inverse, last ? last->lo : nullptr,
        last ? last->hi : nullptr, last ? last->slog : 0);
    KC_LAUNCHED();
    s += k;
  }
  return data;
}

static void scale(Ctx& c, DFr* a, size_t n, const uint8_t* factor, const uint8_t* g) {
  DFr one;
  std::memset(one.w, 0, 32);
  k_scale_powers<<<blocks_for((n + 31) / 32, 128), 128, 0, c.stream>>>(a, n, to_dfr(factor), g ? to_dfr(g) : one,
                                                                      g != nullptr);
  KC_LAUNCHED();
}

// Whether inverse_scaled fuses (set_ntt_fused, the addon's setNttFused; KILN_NTT_FUSED at the edges).
static std::atomic<int> g_ntt_fused{KILN_CUDA_FUSED_SCALE};
void set_ntt_fused(int v) { g_ntt_fused.store(v ? 1 : 0); }
int ntt_fused() { return g_ntt_fused.load(); }

// The inverse transform followed by x_i ·= factor·g^i (g == nullptr: x_i ·= factor): fused into its last stage group
// when g_ntt_fused is set, else a pass of its own. Sizes below 2 (no stage group) always take the pass.
static DFr* inverse_scaled(Ctx& c, DFr* x, DFr* scratch, unsigned log_n, const uint8_t* factor, const uint8_t* g) {
  if (g_ntt_fused.load() && log_n >= 1) {
    ScaleTables t;
    try {
      t = scale_tables(c, log_n, factor, g != nullptr ? g : fr_consts(0).n_inv);  // no g: powers of one
    } catch (const Error&) {
      // no room for the tables (a plan at the card's edge): the pass of its own below
      (void)cudaGetLastError();
      t.lo = nullptr;
    }
    if (t.lo != nullptr) {
      DFr* y = ntt_any(c, x, scratch, log_n, true, &t);
      free_scale_tables(c, t);
      return y;
    }
  }
  DFr* y = ntt_any(c, x, scratch, log_n, true);
  scale(c, y, size_t(1) << log_n, factor, g);
  return y;
}

void ntt(int dev, void* data, unsigned log_n, bool inverse, bool coset, float& ms) {
  Guard g(dev);
  Ctx& c = g.c;
  const size_t n = size_t(1) << log_n;
  const FrConsts k = fr_consts(log_n);
  Events ev(2);
  DFr* a = dalloc<DFr>(c, n);
  DFr* s = dalloc<DFr>(c, n);
  KC_CHECK(cudaMemcpyAsync(a, data, n * 32, cudaMemcpyHostToDevice, c.stream));
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  if (!inverse && coset) {
    // a_i *= g^i (the constant factor is 1: n_inv of n = 1)
    const FrConsts unit = fr_consts(0);
    scale(c, a, n, unit.n_inv, k.g);
  }
  DFr* r = inverse ? inverse_scaled(c, a, s, log_n, k.n_inv, coset ? k.g_inv : nullptr) : ntt_raw(c, a, s, log_n, false);
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
  KC_CHECK(cudaMemcpyAsync(data, r, n * 32, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaStreamSynchronize(c.stream));
  ms = ev.ms(0, 1);
  dfree(c, a);
  dfree(c, s);
}

DFr* coset_evals(Ctx& c, DFr* x, DFr* scratch, unsigned log_n) {
  const FrConsts k = fr_consts(log_n);
  DFr* y = inverse_scaled(c, x, scratch, log_n, k.n_inv, k.g);
  DFr* other = scratch ? (y == x ? scratch : x) : nullptr;
  return ntt_any(c, y, other, log_n, false);
}

void quotient_mul(Ctx& c, DFr* ab, const DFr* b, unsigned log_n) {
  const size_t n = size_t(1) << log_n;
  k_mul_pointwise<<<blocks_for(n, 256), 256, 0, c.stream>>>(ab, b, n);
  KC_LAUNCHED();
}

void quotient_sub(Ctx& c, DFr* ab, const DFr* cc, unsigned log_n) {
  const size_t n = size_t(1) << log_n;
  const FrConsts k = fr_consts(log_n);
  k_sub_scale<<<blocks_for(n, 256), 256, 0, c.stream>>>(ab, cc, n, to_dfr(k.z_inv));
  KC_LAUNCHED();
}

DFr* quotient_h(Ctx& c, DFr* ab, DFr* scratch, unsigned log_n) {
  const FrConsts k = fr_consts(log_n);
  return inverse_scaled(c, ab, scratch, log_n, k.n_inv, k.g_inv);
}

DFr* quotient_dev(Ctx& c, DFr* a, DFr* b, DFr* cc, DFr* spare, unsigned log_n, DFr* rest[3]) {
  const size_t n = size_t(1) << log_n;
  const FrConsts k = fr_consts(log_n);
  DFr* buf[3] = {a, b, cc};
  for (int i = 0; i < 3; i++) {
    // iNTT with ·(1/n)·g^i (the coset shift; in its last stage group, or a pass of its own), then the forward NTT
    DFr* x = inverse_scaled(c, buf[i], spare, log_n, k.n_inv, k.g);
    DFr* other = x == buf[i] ? spare : buf[i];
    DFr* y = ntt_raw(c, x, other, log_n, false);
    spare = y == x ? other : x;  // the free one
    buf[i] = y;
  }
  k_quotient_pointwise<<<blocks_for(n, 256), 256, 0, c.stream>>>(buf[0], buf[1], buf[2], n, to_dfr(k.z_inv));
  KC_LAUNCHED();
  DFr* h = inverse_scaled(c, buf[0], spare, log_n, k.n_inv, k.g_inv);
  rest[0] = h == buf[0] ? spare : buf[0];
  rest[1] = buf[1];
  rest[2] = buf[2];
  return h;
}

void warm_device(int dev, unsigned log_n, unsigned vectors) {
  Guard g(dev);
  Ctx& c = g.c;
  ensure_twiddles(c, log_n);
  const size_t n = size_t(1) << log_n;
  std::vector<DFr*> held;
  try {
    for (unsigned i = 0; i < vectors; i++) held.push_back(dalloc<DFr>(c, n));
  } catch (...) {
    // no room for them all: what was reserved stays in the pool; the proof allocates the rest
  }
  for (DFr* p : held) dfree(c, p);
  KC_CHECK(cudaStreamSynchronize(c.stream));
}

void quotient(int dev, void* ha, void* hb, void* hc, unsigned log_n, float& ms) {
  Guard g(dev);
  Ctx& c = g.c;
  const size_t n = size_t(1) << log_n;
  Events ev(2);
  DFr* buf[4];
  for (auto& p : buf) p = dalloc<DFr>(c, n);
  void* host[3] = {ha, hb, hc};
  KC_CHECK(cudaEventRecord(ev.e[0], c.stream));
  for (int i = 0; i < 3; i++) KC_CHECK(cudaMemcpyAsync(buf[i], host[i], n * 32, cudaMemcpyHostToDevice, c.stream));
  DFr* rest[3];
  DFr* h = quotient_dev(c, buf[0], buf[1], buf[2], buf[3], log_n, rest);
  KC_CHECK(cudaEventRecord(ev.e[1], c.stream));
  KC_CHECK(cudaMemcpyAsync(ha, h, n * 32, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaMemcpyAsync(hb, rest[1], n * 32, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaMemcpyAsync(hc, rest[2], n * 32, cudaMemcpyDeviceToHost, c.stream));
  KC_CHECK(cudaStreamSynchronize(c.stream));
  ms = ev.ms(0, 1);
  for (auto* p : buf) dfree(c, p);
}

}  // namespace cuda
}  // namespace kiln
