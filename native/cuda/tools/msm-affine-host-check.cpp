// The batch-affine levels of the GPU MSM (native/cuda/msm_affine.cuh: k_ba_counts, k_ba_scatter, k_ba_level)
// compiled for the host with the PTX primitives emulated (native/cuda/ptx_host.hpp) and run one thread at a
// time (the kernels' threads share nothing, so a serial run computes what the device does), against the CPU's
// curve arithmetic (native/src/ec, native/src/ff): bucket runs of random lengths (empty, 1, odd, long) of
// signed bases, runs where equal points meet (doublings at every level), P beside −P (identities entering
// the later levels), several threads' worth of pairs per thread (the batch inversion over many pairs), and the
// padded array cut into slices as the driver does when memory is short. Each bucket's last-level points,
// summed on the CPU, must equal the CPU's sum of its run. G1 and G2. test/cuda-field-host.test.ts runs it.
//   msm-affine-host-check <G1 generator hex (96 B)> <G2 generator hex (192 B)>  → "ok <buckets checked>"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "../msm_affine.cuh"
#include "hex-arg.hpp"
#include "../../src/ec/xyzz.hpp"
#include "../../src/ff/bls12_381.hpp"

using namespace kiln;
using cuda::DFq;
using cuda::DFq2;
using cuda::kPad;
using cuda::kSignBit;
using cuda::u32;

static std::mt19937_64 rng(0x61666669);
static long checked = 0;

static void set_thread(size_t t) {
  blockIdx.x = (unsigned)t;
  threadIdx.x = 0;
  blockDim.x = 1;
}

// One case: nb buckets, their runs of values (signed base indices) in order, lv levels, T threads per
// level (at most), slices of S padded digits (0: one slice).
template <class D, class C>
static void run_case(const std::vector<Affine<C>>& bases, const std::vector<std::vector<u32>>& runs, unsigned lv,
                     size_t T, size_t S, const char* what) {
  const u32 nb = (u32)runs.size();
  const u32 M = 1u << lv;
  // the sorted pass as the driver has it: keys, values, each bucket's [start, end)
  std::vector<u32> keys, vals, start(nb, 0), end(nb, 0);
  for (u32 b = 0; b < nb; b++) {
    if (runs[b].empty()) continue;
    start[b] = (u32)keys.size();
    for (u32 v : runs[b]) {
      keys.push_back(b);
      vals.push_back(v);
    }
    end[b] = (u32)keys.size();
  }
  const u32 sentinel = nb;
  for (int k = 0; k < 5; k++) {  // zero digits sort last with the sentinel key
    keys.push_back(sentinel);
    vals.push_back(0);
  }
  const size_t total = keys.size();
  std::vector<u32> cc(nb), foff(nb + 1, 0);
  for (u32 b = 0; b < nb; b++) {
    set_thread(b);
    cuda::k_ba_counts(start.data(), end.data(), nb, M, cc.data());
  }
  for (u32 b = 0; b < nb; b++) foff[b + 1] = foff[b] + cc[b];
  const size_t ftot = foff[nb], P = ftot * M;
  std::vector<u32> pv(P, kPad);
  for (size_t p = 0; p < total; p++) {
    set_thread(p);
    cuda::k_ba_scatter(keys.data(), vals.data(), total, sentinel, start.data(), foff.data(), M, pv.data());
  }
  const Affine<D>* dbases = reinterpret_cast<const Affine<D>*>(bases.data());
  std::vector<Affine<D>> fin(ftot), buf0(P / 2 + 1), buf1(P / 4 + 1);
  if (S == 0 || S > P) S = P;
  S = S / M * M;
  if (S == 0) S = M;
  for (size_t s0 = 0; s0 < P; s0 += S) {
    const size_t n = std::min(S, P - s0);
    const Affine<D>* src = dbases;
    for (unsigned l = 1; l <= lv; l++) {
      const size_t np = n >> l;
      Affine<D>* dst = l == lv ? fin.data() + s0 / M : (l & 1 ? buf0.data() : buf1.data());
      const size_t Tl = std::min(T, std::max<size_t>(1, np / 3));  // several pairs a thread
      for (size_t t = 0; t < Tl; t++) {
        set_thread(t);
        if (l == 1)
          cuda::k_ba_level<D, true>(dbases, pv.data() + s0, np, (u32)Tl, dst);
        else
          cuda::k_ba_level<D, false>(src, nullptr, np, (u32)Tl, dst);
      }
      src = dst;
    }
  }
  // each bucket: Σ of its last-level points (CPU) == Σ of its run (CPU)
  for (u32 b = 0; b < nb; b++) {
    Xyzz<C> want = Xyzz<C>::identity(), got = Xyzz<C>::identity();
    for (u32 v : runs[b]) {
      Affine<C> q = bases[v & ~kSignBit];
      if (v & kSignBit) q = q.neg();
      want = want.add_affine(q);
    }
    for (u32 k = foff[b]; k < foff[b + 1]; k++) {
      Affine<C> q;
      std::memcpy(&q, &fin[k], sizeof q);
      got = got.add_affine(q);
    }
    const Affine<C> w = want.to_affine(), g = got.to_affine();
    checked++;
    if (std::memcmp(&w, &g, sizeof w) != 0) {
      std::printf("FAIL %s: bucket %u (run of %zu, %u levels, %zu threads, slices of %zu)\n", what, b, runs[b].size(), lv,
                  T, S);
      std::exit(1);
    }
  }
}

template <class D, class C>
static void checks(const Affine<C>& g, const char* name) {
  // 40 bases: multiples of g (distinct, none the identity)
  std::vector<Affine<C>> bases;
  Xyzz<C> acc = Xyzz<C>::from_affine(g);
  for (int i = 0; i < 40; i++) {
    bases.push_back(acc.to_affine());
    acc = acc.add_affine(g);
  }
  auto sv = [&](u32 i, bool neg) { return i | (neg ? kSignBit : 0); };
  char what[96];
  for (int round = 0; round < 6; round++) {
    const unsigned lv = 2 + round % 4;  // 2 … 5 levels
    std::vector<std::vector<u32>> runs;
    const u32 nb = 30 + (u32)(rng() % 20);
    for (u32 b = 0; b < nb; b++) {
      std::vector<u32> r;
      const u32 kind = (u32)(rng() % 6);
      const u32 len = kind == 0 ? 0 : kind == 1 ? 1 : (u32)(rng() % 90);
      for (u32 k = 0; k < len; k++) {
        if (kind == 2) {  // equal points in a row: doublings, then doublings of sums
          r.push_back(sv(b % 40, false));
        } else if (kind == 3) {  // P, −P, P, P: identities and doublings
          r.push_back(sv(b % 40, k % 4 == 1));
        } else if (kind == 4) {  // everything cancels in pairs
          r.push_back(sv((b + k / 2) % 40, k % 2 == 1));
        } else {
          r.push_back(sv((u32)(rng() % 40), rng() & 1));
        }
      }
      runs.push_back(r);
    }
    for (size_t T : {size_t(1), size_t(3), size_t(64)}) {
      for (size_t S : {size_t(0), size_t(1) << (lv + 2)}) {
        std::snprintf(what, sizeof what, "%s round %d", name, round);
        run_case<D, C>(bases, runs, lv, T, S, what);
      }
    }
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::printf("usage: msm-affine-host-check <g1 hex> <g2 hex>\n");
    return 2;
  }
  checks<DFq, Fq>(from_hex<Affine<Fq>>(argv[1]), "G1");
  checks<DFq2, Fq2>(from_hex<Affine<Fq2>>(argv[2]), "G2");
  std::printf("ok %ld\n", checked);
  return 0;
}
