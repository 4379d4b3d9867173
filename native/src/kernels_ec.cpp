// Curve-group entry points, one template for G1 (Fq) and G2 (Fq2): the MSM, batch addition and
// fixed-base templates, the small point operations and the zcash codec. The MSM paths dispatch to
// the AVX-512 IFMA twins (kernels_ifma.cpp) when cpu_ifma().
#include <atomic>

#include "kernels.hpp"
#include "msm/fixed_base.hpp"
#include "msm/lincomb.hpp"

namespace kiln {

namespace {
// Whether the IFMA kernels are built in and the running CPU has them.
bool ifma_hardware() {
#ifdef KILN_HAVE_IFMA
  static const bool hw = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
  }();
  return hw;
#else
  return false;
#endif
}

// The process's choice: -1 until fixed, then 1 (IFMA) or 0 (the scalar paths). Fixed by set_no_ifma or by the
// first kernel that dispatches on it (cpu_ifma), whichever comes first: precomputed tables are stored in the
// chosen path's form, so it never changes after that.
std::atomic<int> g_ifma{-1};
}  // namespace

bool cpu_ifma() {
  int v = g_ifma.load(std::memory_order_acquire);
  if (v < 0) {
    g_ifma.compare_exchange_strong(v, ifma_hardware() ? 1 : 0, std::memory_order_acq_rel);
    v = g_ifma.load(std::memory_order_acquire);
  }
  return v == 1;
}

bool cpu_ifma_peek() {
  const int v = g_ifma.load(std::memory_order_acquire);
  return v < 0 ? ifma_hardware() : v == 1;
}

bool set_no_ifma(bool off) {
  const int want = !off && ifma_hardware() ? 1 : 0;
  int v = -1;
  return g_ifma.compare_exchange_strong(v, want, std::memory_order_acq_rel) || v == want;
}

namespace {
template <class F>
using Wire = typename std::conditional<std::is_same<F, Fq>::value, zcash::G1Wire, zcash::G2Wire>::type;
}  // namespace

template <class F>
Affine<F> Ec<F>::table_form(const A& p) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return EcIfma<F>::to_m52(p);
#endif
  return p;
}

template <class F>
Affine<F> Ec<F>::msm(const A* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return EcIfma<F>::msm(bases, nb, scalars, sidx, tm);
#endif
  return kiln::msm<F>(bases, nb, scalars, sidx, pool(), tm);
}

template <class F>
void Ec<F>::msm_precompute(const A* bases, size_t n, unsigned c, A* table) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return EcIfma<F>::msm_precompute(bases, n, c, table);
#endif
  kiln::msm_precompute<F>(bases, n, c, table, pool());
}

template <class F>
Affine<F> Ec<F>::msm_precomputed(const A* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                                 MsmTimings& tm) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return EcIfma<F>::msm_precomputed(table, c, nb, scalars, sidx, tm);
#endif
  return kiln::msm_precomputed<F>(table, c, nb, scalars, sidx, pool(), tm);
}

template <class F>
Affine<F> Ec<F>::batch_add(const A* bases, const u32* idx, size_t n) {
#ifdef KILN_HAVE_IFMA
  if (cpu_ifma()) return EcIfma<F>::batch_add(bases, idx, n);
#endif
  return batch_sum<F>(bases, idx, n, pool()).to_affine();
}

template <class F>
void Ec<F>::fixed_base_mul(const A& base, const Fr* scalars, size_t n, A* out) {
  kiln::fixed_base_mul<F>(base, scalars, n, out, pool());
}

template <class F>
Affine<F> Ec<F>::add(const A& a, const A& b) {
  return Xyzz<F>::from_affine(a).add_affine(b).to_affine();
}

template <class F>
Affine<F> Ec<F>::dbl(const A& a) {
  return Xyzz<F>::dbl_affine(a).to_affine();
}

template <class F>
Affine<F> Ec<F>::mul(const A& a, const Fr& k) {
  u64 c[4];
  k.to_canonical(c);
  return scalar_mul<F>(a, c, 4).to_affine();
}

template <class F>
Affine<F> Ec<F>::lincomb(const A* bases, const Fr* scalars, size_t n) {
  return kiln::lincomb<F>(bases, scalars, n).to_affine();
}

template <class F>
DecodeFault Ec<F>::decode_uncompressed(const uint8_t* src, uint8_t* dst, size_t n, int check) {
  return zcash::decode<Wire<F>>(src, dst, n, check, pool());
}

template <class F>
void Ec<F>::encode_uncompressed(const uint8_t* src, uint8_t* dst, size_t n) {
  zcash::encode<Wire<F>>(src, dst, n, pool());
}

template struct Ec<Fq>;
template struct Ec<Fq2>;

}  // namespace kiln
