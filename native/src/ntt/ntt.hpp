// Radix-2 NTT over Fr (host). Natural order in and out: bit-reversal permutation, then
// decimation-in-time stages. The first log2(kBlock) stages run block by block (each block stays in
// L2 and belongs to one task); the later stages are split across threads stage by stage.
//
// Twiddles are stored per stage, contiguously: tw[h + j] = ω_{2h}^j for the stage that combines
// halves of length h (h = 1, 2, 4, …, n/2); entries 1 … n-1, entry 0 unused. The inverse transform
// uses the same table: ω_{2h}^-j = -ω_{2h}^(h-j), i.e. tw[2h - j] with the butterfly's signs swapped.
// Root of unity: ω_{2^32} = 7^((r-1)/2^32); ω_n = ω_{2^32}^(2^32/n). Coset generator g = 7.
#pragma once
#include <memory>
#include <vector>

#include "../ff/bls12_381.hpp"
#include "../util/thread_pool.hpp"

namespace kiln {

inline u32 bit_reverse(u32 x, unsigned bits) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = __builtin_bswap32(x);
  return bits == 0 ? 0 : x >> (32 - bits);
}

// Primitive n-th root of unity (n = 2^log_n, log_n ≤ 32).
inline Fr root_of_unity(unsigned log_n) {
  Fr w;
  for (int i = 0; i < 4; i++) w.v[i] = FrParams::ROOT_2_32[i];
  for (unsigned i = log_n; i < (unsigned)FrParams::TWO_ADICITY; i++) w = w.sqr();
  return w;
}

inline Fr coset_gen() {
  Fr g;
  for (int i = 0; i < 4; i++) g.v[i] = FrParams::COSET_GEN[i];
  return g;
}

// out[i] = start · step^i for i < n, in parallel chunks.
inline void fill_powers(Fr* out, size_t n, const Fr& start, const Fr& step, ThreadPool& tp) {
  const size_t chunk = 1 << 14;
  const size_t tasks = (n + chunk - 1) / chunk;
  tp.parallel_for(tasks, [&](size_t t) {
    const size_t b = t * chunk, e = std::min(n, b + chunk);
    Fr x = start * step.pow_u64(b);
    for (size_t i = b; i < e; i++) {
      out[i] = x;
      x *= step;
    }
  });
}

// A stage's butterflies (or radix-4 quads) split over `tasks` pool tasks: units 0 … count−1 come in
// groups of h; each task walks its range as runs within a group: fn(g, j0, j1) for group g, units
// j0 … j1−1 of it.
template <class Fn>
void for_stage_runs(ThreadPool& tp, size_t count, size_t tasks, size_t h, Fn fn) {
  tp.parallel_for(tasks, [&](size_t t) {
    size_t b, e;
    split_range(count, tasks, t, b, e);
    size_t q = b;
    while (q < e) {
      const size_t g = q / h, j0 = q % h;
      const size_t j1 = std::min(h, j0 + (e - q));
      fn(g, j0, j1);
      q += j1 - j0;
    }
  });
}

class NttPlan {
 public:
  NttPlan(unsigned log_n, ThreadPool& tp) : log_n_(log_n), n_(size_t(1) << log_n) {
    n_inv_ = Fr::from_u64(n_).inverse();
    tw_ = build(root_of_unity(log_n), tp);
  }
  size_t n() const { return n_; }
  unsigned log_n() const { return log_n_; }
  const Fr& n_inv() const { return n_inv_; }

  // In-place transform without any scaling (the inverse uses ω^-1 and omits 1/n).
  void transform(Fr* a, bool inverse, ThreadPool& tp) const {
    if (n_ <= 1) return;
    const Fr* tw = tw_.get();
    const size_t T = tp.size();
    // Bit reversal: each pair is swapped by the owner of its smaller index.
    {
      const size_t tasks = std::min<size_t>(4 * T, std::max<size_t>(1, n_ >> 12));
      tp.parallel_for(tasks, [&](size_t t) {
        size_t b, e;
        split_range(n_, tasks, t, b, e);
        for (size_t i = b; i < e; i++) {
          const size_t j = bit_reverse(u32(i), log_n_);
          if (i < j) {
            const Fr x = a[i];
            a[i] = a[j];
            a[j] = x;
          }
        }
      });
    }
    const size_t block = std::min(n_, kBlock);
    tp.parallel_for(n_ / block, [&](size_t blk) {
      Fr* x = a + blk * block;
      for (size_t h = 1; h < block; h <<= 1) {
        for (size_t g = 0; g < block; g += 2 * h) {
          if (inverse)
            butterfly_group_inv(x + g, h, tw + h);
          else
            butterfly_group(x + g, h, tw + h);
        }
      }
    });
    for (size_t h = block; h < n_; h <<= 1) {
      const size_t half = n_ / 2;
      const size_t tasks = std::min<size_t>(4 * T, std::max<size_t>(1, half >> 11));
      // butterfly index q → group q / h, offset q % h
      for_stage_runs(tp, half, tasks, h, [&](size_t g, size_t j0, size_t j1) {
        Fr* x = a + g * 2 * h;
        const Fr* w = tw + h;
        if (inverse) {
          size_t j = j0;
          if (j == 0) {
            const Fr u = x[0], v = x[h];
            x[0] = u + v;
            x[h] = u - v;
            j = 1;
          }
          for (; j < j1; j++) {
            const Fr v = x[j + h] * w[h - j];  // = -(x[j+h]·ω^-j)
            const Fr u = x[j];
            x[j] = u - v;
            x[j + h] = u + v;
          }
        } else {
          for (size_t j = j0; j < j1; j++) {
            const Fr v = x[j + h] * w[j];
            const Fr u = x[j];
            x[j] = u + v;
            x[j + h] = u - v;
          }
        }
      });
    }
  }

 private:
  static constexpr size_t kBlock = size_t(1) << 12;  // 128 KiB of Fr: fits L2

  static KILN_INLINE void butterfly_group(Fr* x, size_t h, const Fr* w) {
    {
      const Fr u = x[0], v = x[h];
      x[0] = u + v;
      x[h] = u - v;
    }
    for (size_t j = 1; j < h; j++) {
      const Fr v = x[j + h] * w[j];
      const Fr u = x[j];
      x[j] = u + v;
      x[j + h] = u - v;
    }
  }

  // Inverse butterflies from the forward table: ω_{2h}^-j = -w[h - j] for 0 < j < h.
  static KILN_INLINE void butterfly_group_inv(Fr* x, size_t h, const Fr* w) {
    {
      const Fr u = x[0], v = x[h];
      x[0] = u + v;
      x[h] = u - v;
    }
    for (size_t j = 1; j < h; j++) {
      const Fr v = x[j + h] * w[h - j];
      const Fr u = x[j];
      x[j] = u - v;
      x[j + h] = u + v;
    }
  }

  std::unique_ptr<Fr[]> build(const Fr& omega, ThreadPool& tp) const {
    std::unique_ptr<Fr[]> tw(new Fr[n_ > 1 ? n_ : 1]);
    if (n_ < 2) return tw;
    const size_t half = n_ / 2;
    fill_powers(tw.get() + half, half, Fr::one(), omega, tp);  // ω_n^j
    for (size_t h = half / 2; h >= 1; h >>= 1)
      for (size_t j = 0; j < h; j++) tw[h + j] = tw[2 * h + 2 * j];  // ω_{2h}^j = ω_{4h}^{2j}
    return tw;
  }

  unsigned log_n_;
  size_t n_;
  Fr n_inv_;
  std::unique_ptr<Fr[]> tw_;
};

// a[i] *= start · step^i.
inline void scale_powers(Fr* a, size_t n, const Fr& start, const Fr& step, ThreadPool& tp) {
  const size_t chunk = 1 << 14;
  const size_t tasks = (n + chunk - 1) / chunk;
  tp.parallel_for(tasks, [&](size_t t) {
    const size_t b = t * chunk, e = std::min(n, b + chunk);
    Fr x = start * step.pow_u64(b);
    for (size_t i = b; i < e; i++) {
      a[i] *= x;
      x *= step;
    }
  });
}

// The Backend's ntt(values, {inverse, coset}) on one vector.
inline void ntt(Fr* a, unsigned log_n, bool inverse, bool coset, ThreadPool& tp) {
  const size_t n = size_t(1) << log_n;
  NttPlan plan(log_n, tp);
  const Fr g = coset_gen();
  if (!inverse) {
    if (coset) scale_powers(a, n, Fr::one(), g, tp);
    plan.transform(a, false, tp);
  } else {
    plan.transform(a, true, tp);
    scale_powers(a, n, plan.n_inv(), coset ? g.inverse() : Fr::one(), tp);
  }
}

// Groth16 quotient: h = (a·b - c) / Z evaluated on the coset, returned as coefficients in a.
// Z(gω^i) = g^n - 1 for every i, so the division is one constant factor, folded into the
// final scaling together with 1/n and g^-i.
inline void quotient(Fr* a, Fr* b, Fr* c, unsigned log_n, ThreadPool& tp) {
  const size_t n = size_t(1) << log_n;
  NttPlan plan(log_n, tp);
  const Fr g = coset_gen();
  for (Fr* v : {a, b, c}) {
    plan.transform(v, true, tp);           // evaluations on H → coefficients (×n)
    scale_powers(v, n, plan.n_inv(), g, tp);  // ÷n, then coefficient i × g^i
    plan.transform(v, false, tp);          // → evaluations on gH
  }
  const size_t chunk = 1 << 14;
  tp.parallel_for((n + chunk - 1) / chunk, [&](size_t t) {
    const size_t e = std::min(n, (t + 1) * chunk);
    for (size_t i = t * chunk; i < e; i++) a[i] = a[i] * b[i] - c[i];
  });
  const Fr z_inv = (g.pow_u64(n) - Fr::one()).inverse();
  plan.transform(a, true, tp);
  scale_powers(a, n, plan.n_inv() * z_inv, g.inverse(), tp);
}

}  // namespace kiln
