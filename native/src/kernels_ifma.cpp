// G1 and G2 MSM entry points on AVX-512 IFMA (msm/ifma.hpp). This file is compiled with
// -mavx512f -mavx512ifma (binding.gyp target kiln_ifma, when the building CPU has them); the
// dispatch in kernels_ec.cpp calls it only when cpu_ifma() (the running CPU has
// IFMA and setNoIfma(true) was not called: KILN_NO_IFMA at the edges).
#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include "kernels.hpp"
#include "msm/ifma.hpp"

namespace kiln {

namespace {

// Converting the bases used by one MSM needs a copy of them; above this many points the MSM runs
// in slices so the copy stays ≤ 384 MiB (G1) / 768 MiB (G2).
constexpr size_t kSlice = size_t(1) << 22;

template <class C>
using A = Affine<typename C::F>;

// f(points, b, m) over the M52 forms of bases[idx[b .. b+m)] (idx null: bases[b .. b+m)), converted
// slice by slice into one buffer (not zero-filled: every word is written); the results are added.
template <class C, class Fn>
Xyzz<typename C::F> over_slices(const A<C>* bases, const u32* idx, size_t n, Fn f) {
  constexpr size_t kPt = m52::Pt<C>::kPt;
  Xyzz<typename C::F> r = Xyzz<typename C::F>::identity();
  if (n == 0) return r;
  std::unique_ptr<u64[]> buf(new u64[std::min(kSlice, n) * kPt]);
  for (size_t b = 0; b < n; b += kSlice) {
    const size_t m = std::min(kSlice, n - b);
    m52::convert_bases<C>(idx ? bases : bases + b, idx ? idx + b : nullptr, m, buf.get(), pool());
    r = r.add(f(buf.get(), b, m));
  }
  return r;
}

template <class C>
Xyzz<typename C::F> sum_ones(const A<C>* bases, const u32* idx, size_t n) {
  return over_slices<C>(bases, idx, n, [](const u64* pts, size_t, size_t m) {
    return m52::batch_sum52<C>(pts, nullptr, m, pool());
  });
}

template <class C>
A<C> msm_ifma(const A<C>* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm) {
  return msm_query<typename C::F>(
      bases, 1, nb, scalars, sidx, pool(), tm,
      [&](const MsmClassified& cl) { return sum_ones<C>(bases, cl.ones.data(), cl.ones.size()); },
      [&](const MsmClassified& cl) {
        return over_slices<C>(bases, cl.other.data(), cl.other.size(), [&](const u64* pts, size_t b, size_t m) {
          return m52::pippenger52<C>(pts, nullptr, cl.sc.data() + b, m, pool());
        });
      });
}

template <class C>
void precompute_ifma(const A<C>* bases, size_t n, unsigned c, A<C>* table) {
  msm_precompute<typename C::F>(bases, n, c, table, pool());
  // In place: convert_bases reads each group of eight points before it writes them.
  m52::convert_bases<C>(table, nullptr, n * msm_windows(c), reinterpret_cast<u64*>(table), pool());
}

template <class C>
A<C> msm_precomputed_ifma(const A<C>* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                          MsmTimings& tm) {
  const u64* t = reinterpret_cast<const u64*>(table);
  return msm_query<typename C::F>(
      table, msm_windows(c), nb, scalars, sidx, pool(), tm,
      [&](const MsmClassified& cl) { return m52::batch_sum52<C>(t, cl.ones.data(), cl.ones.size(), pool()); },
      [&](const MsmClassified& cl) {
        tm.precomputed = msm_precomputed_pays(cl.other.size(), c, pool().size());
        return tm.precomputed
                   ? m52::pippenger52_precomputed<C>(t, c, cl.other.data(), cl.sc.data(), cl.other.size(), pool())
                   : m52::pippenger52<C>(t, cl.other.data(), cl.sc.data(), cl.other.size(), pool());
      });
}

template <class C>
A<C> batch_add_ifma(const A<C>* bases, const u32* idx, size_t n) {
  return sum_ones<C>(bases, idx, n).to_affine();
}

}  // namespace

template <class F>
using T52 = typename std::conditional<std::is_same<F, Fq>::value, m52::G1T, m52::G2T>::type;

template <class F>
Affine<F> EcIfma<F>::msm(const A* bases, size_t nb, const Fr* scalars, const u32* sidx, MsmTimings& tm) {
  return msm_ifma<T52<F>>(bases, nb, scalars, sidx, tm);
}
template <class F>
void EcIfma<F>::msm_precompute(const A* bases, size_t n, unsigned c, A* table) {
  precompute_ifma<T52<F>>(bases, n, c, table);
}
template <class F>
Affine<F> EcIfma<F>::msm_precomputed(const A* table, unsigned c, size_t nb, const Fr* scalars, const u32* sidx,
                                     MsmTimings& tm) {
  return msm_precomputed_ifma<T52<F>>(table, c, nb, scalars, sidx, tm);
}
template <class F>
Affine<F> EcIfma<F>::batch_add(const A* bases, const u32* idx, size_t n) {
  return batch_add_ifma<T52<F>>(bases, idx, n);
}
template <class F>
Affine<F> EcIfma<F>::to_m52(const A& p) {
  A r;
  m52::Pt<T52<F>>::from_affine(p, reinterpret_cast<u64*>(&r));
  return r;
}

template struct EcIfma<Fq>;
template struct EcIfma<Fq2>;

}  // namespace kiln
#endif
