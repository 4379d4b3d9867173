// The device field arithmetic (native/cuda/field.cuh: 32-bit limbs, PTX carry chains) compiled for the
// host with the PTX primitives emulated (native/cuda/ptx_host.hpp), against the CPU addon's fields
// (native/src/ff: 64-bit limbs, the same Montgomery bytes) and curve formulas: the slow twin of the GPU's
// arithmetic, checked in CI without a GPU (test/cuda-field-host.test.ts builds and runs this).
//   field-host-check [cases]   → "ok <checks>" and exit 0, or the first mismatch and exit 1
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "../field.cuh"
#include "hex-arg.hpp"
#include "../../src/ec/xyzz.hpp"
#include "../../src/ff/bls12_381.hpp"

using namespace kiln;
using cuda::DFq;
using cuda::DFq2;
using cuda::DFr;

static_assert(sizeof(DFq) == sizeof(Fq) && sizeof(DFr) == sizeof(Fr) && sizeof(DFq2) == sizeof(Fq2), "same bytes");

static std::mt19937_64 rng(0x6b696c6e);
static long checks = 0;

template <class F> struct ParamsOf;
template <> struct ParamsOf<Fq> { using P = FqParams; };
template <> struct ParamsOf<Fr> { using P = FrParams; };

template <class F>
static F random_field() {
  using P = typename ParamsOf<F>::P;
  // uniform below the modulus by rejection
  for (;;) {
    F x;
    for (int i = 0; i < F::N; i++) x.v[i] = rng();
    int top = 63;
    while (!((P::MOD[F::N - 1] >> top) & 1)) top--;
    x.v[F::N - 1] &= (top == 63) ? ~0ull : ((1ull << (top + 1)) - 1);
    bool below = false;
    for (int i = F::N - 1; i >= 0; i--) {
      if (x.v[i] != P::MOD[i]) {
        below = x.v[i] < P::MOD[i];
        break;
      }
    }
    if (below) return x;
  }
}

// 0, 1 (Montgomery one), −1, MOD − 1 as raw bytes, and random values.
template <class F>
static F sample(int i) {
  switch (i) {
    case 0:
      return F::zero();
    case 1:
      return F::one();
    case 2:
      return -F::one();
    case 3: {
      F x;
      for (int k = 0; k < F::N; k++) x.v[k] = ParamsOf<F>::P::MOD[k];
      x.v[0] -= 1;
      return x;
    }
    case 4: {
      F x = F::zero();
      x.v[0] = 1;
      return x;
    }
    default:
      return random_field<F>();
  }
}

template <class A, class B>
static void expect_same(const A& got, const B& want, const char* what, int i) {
  static_assert(sizeof(A) == sizeof(B), "sizes");
  checks++;
  if (std::memcmp(&got, &want, sizeof(A)) != 0) {
    std::printf("FAIL %s (case %d)\n  device:", what, i);
    const unsigned char* g = reinterpret_cast<const unsigned char*>(&got);
    const unsigned char* w = reinterpret_cast<const unsigned char*>(&want);
    for (size_t k = sizeof(A); k-- > 0;) std::printf("%02x", g[k]);
    std::printf("\n  cpu:   ");
    for (size_t k = sizeof(B); k-- > 0;) std::printf("%02x", w[k]);
    std::printf("\n");
    std::exit(1);
  }
}

template <class D, class C>
static D to_dev(const C& c) {
  D d;
  std::memcpy(&d, &c, sizeof d);
  return d;
}

template <class D, class C>
static void field_checks(int cases, const char* name) {
  char what[64];
  for (int i = 0; i < cases; i++) {
    const C a = sample<C>(i % 7 < 5 ? i % 7 : 9), b = sample<C>((i / 7) % 7 < 5 ? (i / 7) % 7 : 9);
    const D da = to_dev<D>(a), db = to_dev<D>(b);
    std::snprintf(what, sizeof what, "%s add", name);
    expect_same(da + db, a + b, what, i);
    std::snprintf(what, sizeof what, "%s sub", name);
    expect_same(da - db, a - b, what, i);
    std::snprintf(what, sizeof what, "%s neg", name);
    expect_same(-da, -a, what, i);
    std::snprintf(what, sizeof what, "%s mul", name);
    expect_same(da * db, a * b, what, i);
    std::snprintf(what, sizeof what, "%s sqr", name);
    expect_same(da.sqr(), a.sqr(), what, i);
    std::snprintf(what, sizeof what, "%s dbl", name);
    expect_same(da.dbl(), a.dbl(), what, i);
    if (i < cases / 8) {
      std::snprintf(what, sizeof what, "%s inverse", name);
      expect_same(da.inverse(), a.inverse(), what, i);
    }
  }
}

// The binary GCD inversion (DFp::inverse_gcd) against the CPU's inverse: the edges, random values, values of
// every length (raw Montgomery bytes with few bits) and values just below the modulus. It must never need its
// Fermat fallback (ok = false: the step bound failed), and the Fermat twin must agree as well.
template <class D, class C>
static void inverse_checks(int cases, const char* name) {
  using P = typename ParamsOf<C>::P;
  char what[64];
  for (int i = 1; i < cases; i++) {
    C a = i < 5 ? sample<C>(i) : random_field<C>();
    if (i >= 5 && i % 3 == 0) {  // a value of 1 … bits(MOD) − 1 bits
      const int bits = 1 + (i / 3) % (64 * C::N - 4);
      for (int k = 0; k < C::N; k++) {
        const int lo = 64 * k;
        a.v[k] = bits >= lo + 64 ? a.v[k] : bits <= lo ? 0 : a.v[k] & ((1ull << (bits - lo)) - 1);
      }
      if (a.is_zero()) a.v[0] = 1;
    } else if (i >= 5 && i % 3 == 1) {  // MOD − small
      for (int k = 0; k < C::N; k++) a.v[k] = P::MOD[k];
      a.v[0] -= 1 + (rng() & 0xffff) * 2;
    }
    bool ok = false;
    const D r = to_dev<D>(a).inverse_gcd(ok);
    checks++;
    if (!ok) {
      std::printf("FAIL %s inverse_gcd: the step bound failed (case %d)\n", name, i);
      std::exit(1);
    }
    std::snprintf(what, sizeof what, "%s inverse_gcd", name);
    expect_same(r, a.inverse(), what, i);
    if (i % 16 == 0) {
      std::snprintf(what, sizeof what, "%s inverse_fermat", name);
      expect_same(to_dev<D>(a).inverse_fermat(), a.inverse(), what, i);
    }
  }
  std::snprintf(what, sizeof what, "%s inverse of zero", name);
  expect_same(D::zero().inverse(), C::zero(), what, 0);
}

static Fq2 fq2_sample(int i) { return {sample<Fq>(i % 7 < 5 ? i % 7 : 9), sample<Fq>((i / 3) % 7 < 5 ? (i / 3) % 7 : 9)}; }

static void fq2_checks(int cases) {
  for (int i = 0; i < cases; i++) {
    const Fq2 a = fq2_sample(i), b = fq2_sample(i * 5 + 1);
    const DFq2 da = to_dev<DFq2>(a), db = to_dev<DFq2>(b);
    expect_same(da * db, a * b, "Fq2 mul", i);
    expect_same(da.sqr(), a.sqr(), "Fq2 sqr", i);
    expect_same(da + db, a + b, "Fq2 add", i);
    expect_same(da - db, a - b, "Fq2 sub", i);
    if (i < cases / 8) expect_same(da.inverse(), a.inverse(), "Fq2 inverse", i);
  }
}

// The curve formulas over the device field against the same formulas over the CPU field: random
// points (multiples of a point found by hashing to x), their sums, doublings, P + P and P + (−P).
template <class D, class C>
static void curve_checks(int cases, const Affine<C>& g, const char* name) {
  char what[64];
  Xyzz<C> acc = Xyzz<C>::from_affine(g);
  Xyzz<D> dacc = to_dev<Xyzz<D>>(acc);
  for (int i = 0; i < cases; i++) {
    // P = (i + 2)·g by repeated mixed additions, both sides
    const Affine<C> p = acc.to_affine();
    const Affine<D> dp = to_dev<Affine<D>>(p);
    std::snprintf(what, sizeof what, "%s add_affine", name);
    expect_same(dacc.add_affine(to_dev<Affine<D>>(g)), acc.add_affine(g), what, i);
    std::snprintf(what, sizeof what, "%s dbl", name);
    expect_same(dacc.dbl(), acc.dbl(), what, i);
    std::snprintf(what, sizeof what, "%s P + P", name);
    expect_same(Xyzz<D>::from_affine(dp).add_affine(dp), Xyzz<C>::from_affine(p).add_affine(p), what, i);
    std::snprintf(what, sizeof what, "%s P + (-P)", name);
    expect_same(Xyzz<D>::from_affine(dp).add_affine(dp.neg()), Xyzz<C>::from_affine(p).add_affine(p.neg()), what, i);
    std::snprintf(what, sizeof what, "%s add", name);
    expect_same(dacc.add(dacc.dbl()), acc.add(acc.dbl()), what, i);
    std::snprintf(what, sizeof what, "%s to_affine", name);
    expect_same(dacc.to_affine(), acc.to_affine(), what, i);
    acc = acc.add_affine(g);
    dacc = dacc.add_affine(to_dev<Affine<D>>(g));
  }
}


// field-host-check <cases> <G1 generator hex (96 B)> <G2 generator hex (192 B)>
int main(int argc, char** argv) {
  if (argc != 4) {
    std::printf("usage: field-host-check <cases> <g1 hex> <g2 hex>\n");
    return 2;
  }
  const int cases = std::atoi(argv[1]);
  field_checks<DFq, Fq>(cases, "Fq");
  field_checks<DFr, Fr>(cases, "Fr");
  // the dedicated squaring (DFp variant 2: mont_sqr_sos) in both fields, and the curve formulas over it
  field_checks<cuda::DFp<cuda::FqP, 2>, Fq>(cases, "Fq (squaring variant)");
  field_checks<cuda::DFp<cuda::FrP, 2>, Fr>(cases, "Fr (squaring variant)");
  fq2_checks(cases);
  inverse_checks<DFq, Fq>(cases, "Fq");
  inverse_checks<DFr, Fr>(cases, "Fr");
  curve_checks<DFq, Fq>(cases / 10 + 5, from_hex<Affine<Fq>>(argv[2]), "G1");
  curve_checks<DFq2, Fq2>(cases / 20 + 5, from_hex<Affine<Fq2>>(argv[3]), "G2");
  curve_checks<cuda::DFp<cuda::FqP, 2>, Fq>(cases / 10 + 5, from_hex<Affine<Fq>>(argv[2]), "G1 (squaring variant)");
  std::printf("ok %ld\n", checks);
  return 0;
}
