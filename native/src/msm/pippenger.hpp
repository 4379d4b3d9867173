// Multi-scalar multiplication on the host: classification of the scalars (0 / 1 / other),
// batched affine summation of the bases whose scalar is 1, and Pippenger with signed digits over
// the others. Templated on the coordinate field (Fq → G1, Fq2 → G2).
//
// Pippenger here:
//  * signed digits computed statelessly per window: d_w = v_w + b_{wc-1} - 2^c·b_{wc+c-1}, where v_w
//    is the c-bit window and b_i bit i of the scalar. The carries telescope, so Σ d_w 2^{wc} = k
//    as long as bit Wc-1 is zero (W = ceil(256/c), r < 2^255). |d_w| ≤ 2^(c-1): 2^(c-1) buckets;
//  * buckets are affine and points are added in batches of B with one shared inversion
//    (ec/batch_affine.hpp). A point whose bucket is already waiting in the current batch is
//    queued for the next batch; when the queue is full (repeated digits: equal scalars, repeated
//    bases) it goes to a per-bucket XYZZ overflow accumulator, so no input degrades into one
//    inversion per addition;
//  * for small c, several windows share one accumulator (bucket index = window slot + digit) so a
//    batch can still hold 2048 additions with few conflicts;
//  * bucket reduction (reduce_affine): row and column sums by batched affine additions, then two
//    short running sums in XYZZ (the plain running sum for fewer than 256 buckets); windows
//    combined by Horner;
//  * parallel over (window group × point range) tasks.
// The window width minimises a cost model counted in field multiplications (fitted on G1).
// Measured (1 thread, EPYC 2.6 GHz): G1 2^16 random scalars 440 ms; B = K/2 and K/4 equal, K/8 4 %
// slower. The affine row/column reduction saved ~5 % at 2^15 (the reduction was ~15 %).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "../ec/batch_affine.hpp"
#include "../ff/bls12_381.hpp"
#include "../util/thread_pool.hpp"

namespace kiln {

struct Scalar256 {
  u64 v[4];
};

struct MsmTimings {
  double classify = 0, batch_add = 0, msm = 0;  // milliseconds
  size_t ones = 0, others = 0;                   // scalars equal to 1 / neither 0 nor 1 (bases not identity)
  bool precomputed = false;                      // the precomputed-table path ran (msm/precomputed.hpp)
};

// Signed digit of the window starting at bit s (width c ≤ 16) of a canonical 256-bit integer.
KILN_INLINE int window_digit(const u64* k, unsigned s, unsigned c) {
  const unsigned limb = s >> 6, off = s & 63;
  u64 v = 0;
  if (limb < 4) {
    v = k[limb] >> off;
    if (off + c > 64 && limb + 1 < 4) v |= k[limb + 1] << (64 - off);
  }
  v &= (u64(1) << c) - 1;
  const u64 b = s ? (k[(s - 1) >> 6] >> ((s - 1) & 63)) & 1 : 0;
  return (int)v + (int)b - (int)(((v >> (c - 1)) & 1) << c);
}

inline unsigned msm_windows(unsigned c) { return (256 + c - 1) / c; }

// Batch size for K buckets. A point whose bucket already waits in the batch is deferred to the
// next batch (a queue), so conflicts cost a copy, and the batch can be large: the shared inversion
// (~500 multiplications) is amortised over B additions.
inline size_t msm_batch_size(size_t K) { return std::min<size_t>(std::max<size_t>(K / 2, 32), 2048); }

// Cost per window in field multiplications: batched additions (6M each, plus the inversion share,
// the digit, copies and queueing: ~9M measured) and the running-sum reduction (a mixed and a full
// XYZZ addition per bucket, ~24M). Fitted on G1 at 2^12…2^16 (CPU time, EPYC 2.6 GHz).
// Windows that share one bucket accumulator: enough buckets for a full batch of 2048 with few
// conflicts (small c would otherwise mean small batches and an inversion every few additions).
inline unsigned msm_group_windows(unsigned c) {
  const size_t K = size_t(1) << (c - 1);
  const size_t g = (4096 + K - 1) / K;
  return (unsigned)std::min<size_t>(g, msm_windows(c));
}

inline unsigned msm_pick_window(size_t n) {
  unsigned best = 2;
  double best_cost = 1e300;
  for (unsigned c = 2; c <= 16; c++) {
    const double K = double(size_t(1) << (c - 1));
    const double B = (double)msm_batch_size((size_t)K * msm_group_windows(c));
    const double cost = msm_windows(c) * ((double)n * (9.0 + 500.0 / B) + K * 24.0);
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

// Affine buckets filled by batched additions. A point whose bucket is busy (already in the
// pending batch) waits in a queue and is re-admitted after the batch is executed; if the queue is
// full (many equal digits: repeated scalars or bases) it goes to a per-bucket XYZZ overflow
// accumulator instead, so no input degrades into one inversion per addition.
template <class F>
class BucketAcc {
 public:
  BucketAcc(size_t K, size_t B)
      : K_(K), B_(B), Q_(B), words_((K + 63) / 64),
        buckets_(new Affine<F>[K]), overflow_(new Xyzz<F>[K]),
        have_(new u64[words_]()), busy_(new u64[words_]()), ovf_(new u64[words_]()),
        pend_k_(new u32[B]), pend_p_(new Affine<F>[B]), prefix_(new F[B]), kind_(new uint8_t[B]),
        queue_k_(new u32[Q_]), queue_p_(new Affine<F>[Q_]) {}

  KILN_INLINE void add(u32 k, const Affine<F>& p) {
    if (np_ == B_) flush();
    if (try_insert(k, p)) return;
    if (nq_ < Q_) {
      queue_k_[nq_] = k;
      queue_p_[nq_] = p;
      nq_++;
    } else {
      add_overflow(k, p);
    }
  }

  // Executes the pending batch, then re-admits queued points whose bucket is free.
  void flush() {
    execute();
    size_t w = 0;
    for (size_t i = 0; i < nq_; i++) {
      if (np_ < B_ && try_insert(queue_k_[i], queue_p_[i])) continue;
      if (w != i) {
        queue_k_[w] = queue_k_[i];
        queue_p_[w] = queue_p_[i];
      }
      w++;
    }
    nq_ = w;
  }

  // Executes everything still pending (queued points go to the overflow accumulators).
  void finish() {
    flush();
    execute();
    for (size_t i = 0; i < nq_; i++) add_overflow(queue_k_[i], queue_p_[i]);
    nq_ = 0;
  }

  // Σ_{k<count} (k+1)·bucket_{base+k}; call finish() first.
  Xyzz<F> reduce(size_t base, size_t count) const {
    Xyzz<F> running = Xyzz<F>::identity(), sum = Xyzz<F>::identity();
    size_t j = count;
    while (j > 0 && !(have_[(base + j - 1) >> 6] & (u64(1) << ((base + j - 1) & 63)))) j--;
    while (j-- > 0) {
      const size_t k = base + j;
      const u64 bit = u64(1) << (k & 63);
      if (have_[k >> 6] & bit) running = running.add_affine(buckets_[k]);
      if (ovf_[k >> 6] & bit) running = running.add(overflow_[k]);
      sum = sum.add(running);
    }
    return sum;
  }

  // out[w] = the sum above for the buckets of window w < nw (bases w·count): the interface the
  // shared Pippenger driver (pippenger_run) uses.
  void reduce_all(size_t count, size_t nw, Xyzz<F>* out) {
    for (size_t w = 0; w < nw; w++) out[w] = reduce_affine(w * count, count);
  }

  // Same sum for a power-of-two count, mostly in batched affine additions: with bucket index
  // m = a·S + b (S ≈ √count), Σ (m+1)·B_m = S·Σ_a a·R_a + Σ_b (b+1)·C_b where R_a, C_b are the row
  // and column sums, each a tree of batched additions (count additions in all, ~7 multiplications
  // each with the shared inversion), followed by two running sums of √count terms: about 60 % of
  // the cost of reduce() (two XYZZ additions per bucket, ~24 multiplications). Call finish() first.
  Xyzz<F> reduce_affine(size_t base, size_t count) {
    if (count < 256 || (count & (count - 1)) != 0) return reduce(base, count);
    auto have = [&](size_t k) { return (have_[k >> 6] >> (k & 63)) & 1; };
    // Fold the overflow accumulators (rare) into their buckets.
    std::vector<u32> ov;
    for (size_t k = base; k < base + count; k++)
      if ((ovf_[k >> 6] >> (k & 63)) & 1) ov.push_back(u32(k));
    if (!ov.empty()) {
      const size_t m = ov.size();
      std::vector<Xyzz<F>> xs(m);
      std::vector<Affine<F>> as(m);
      std::vector<F> sc(m);
      std::vector<uint8_t> kd(m);
      for (size_t i = 0; i < m; i++) {
        xs[i] = overflow_[ov[i]];
        if (!have(ov[i])) {
          buckets_[ov[i]] = Affine<F>::identity();
          have_[ov[i] >> 6] |= u64(1) << (ov[i] & 63);
        }
        ovf_[ov[i] >> 6] &= ~(u64(1) << (ov[i] & 63));
      }
      batch_to_affine<F>(xs.data(), as.data(), m, sc.data());
      Affine<F>* bk = buckets_.get();
      batch_add_affine<F>(
          m, [&](size_t i) -> Affine<F>& { return bk[ov[i]]; }, [&](size_t i) -> const Affine<F>& { return as[i]; },
          sc.data(), kd.data());
    }
    unsigned lg = 0;
    while ((size_t(1) << lg) < count) lg++;
    const unsigned sb = (lg + 1) / 2;
    const size_t S = size_t(1) << sb, A = count >> sb;
    std::vector<Affine<F>> rows(count), cols(count);
    for (size_t m = 0; m < count; m++) rows[m] = cols[m] = have(base + m) ? buckets_[base + m] : Affine<F>::identity();
    std::vector<F> prefix(count / 2);
    std::vector<uint8_t> kind(count / 2);
    for (size_t h = S / 2; h >= 1; h /= 2)  // rows: fold b ≥ h onto b - h
      batch_add_affine<F>(
          A * h, [&](size_t i) -> Affine<F>& { return rows[(i / h) * S + i % h]; },
          [&](size_t i) -> const Affine<F>& { return rows[(i / h) * S + i % h + h]; }, prefix.data(), kind.data());
    for (size_t h = A / 2; h >= 1; h /= 2)  // columns: fold a ≥ h onto a - h
      batch_add_affine<F>(
          h * S, [&](size_t i) -> Affine<F>& { return cols[i]; },
          [&](size_t i) -> const Affine<F>& { return cols[i + h * S]; }, prefix.data(), kind.data());
    Xyzz<F> running = Xyzz<F>::identity(), rsum = Xyzz<F>::identity();
    for (size_t a = A; a-- > 1;) {
      running = running.add_affine(rows[a * S]);
      rsum = rsum.add(running);
    }
    for (unsigned i = 0; i < sb; i++) rsum = rsum.dbl();
    running = Xyzz<F>::identity();
    Xyzz<F> csum = Xyzz<F>::identity();
    for (size_t b = S; b-- > 0;) {
      running = running.add_affine(cols[b]);
      csum = csum.add(running);
    }
    return rsum.add(csum);
  }

 private:
  // false when the bucket is busy; otherwise the point is stored or queued in the batch.
  KILN_INLINE bool try_insert(u32 k, const Affine<F>& p) {
    const u64 bit = u64(1) << (k & 63);
    const size_t w = k >> 6;
    if (!(have_[w] & bit)) {
      have_[w] |= bit;
      buckets_[k] = p;
      return true;
    }
    if (busy_[w] & bit) return false;
    // A bucket marked present is not the identity (execute() clears the mark when P + (-P) empties
    // it), so the bucket itself is not read here: it is usually not in cache yet.
    busy_[w] |= bit;
    // The bucket is read again when the batch executes (up to B insertions later): start bringing
    // it into cache now (bucket sets of large windows do not fit L2).
    __builtin_prefetch(&buckets_[k], 1, 1);
    __builtin_prefetch(reinterpret_cast<const char*>(&buckets_[k]) + sizeof(Affine<F>) - 1, 1, 1);
    pend_k_[np_] = k;
    pend_p_[np_] = p;
    np_++;
    return true;
  }

  void add_overflow(u32 k, const Affine<F>& p) {
    const u64 bit = u64(1) << (k & 63);
    if (ovf_[k >> 6] & bit) {
      overflow_[k] = overflow_[k].add_affine(p);
    } else {
      ovf_[k >> 6] |= bit;
      overflow_[k] = Xyzz<F>::from_affine(p);
    }
  }

  void execute() {
    if (np_ == 0) return;
    Affine<F>* buckets = buckets_.get();
    const u32* pk = pend_k_.get();
    const Affine<F>* pp = pend_p_.get();
    batch_add_affine<F>(
        np_, [&](size_t i) -> Affine<F>& { return buckets[pk[i]]; },
        [&](size_t i) -> const Affine<F>& { return pp[i]; }, prefix_.get(), kind_.get());
    for (size_t i = 0; i < np_; i++) {
      const u64 bit = ~(u64(1) << (pk[i] & 63));
      busy_[pk[i] >> 6] &= bit;
      if (buckets[pk[i]].is_identity()) have_[pk[i] >> 6] &= bit;
    }
    np_ = 0;
  }

  size_t K_, B_, Q_, words_;
  std::unique_ptr<Affine<F>[]> buckets_;
  std::unique_ptr<Xyzz<F>[]> overflow_;
  std::unique_ptr<u64[]> have_, busy_, ovf_;
  std::unique_ptr<u32[]> pend_k_;
  std::unique_ptr<Affine<F>[]> pend_p_;
  std::unique_ptr<F[]> prefix_;
  std::unique_ptr<uint8_t[]> kind_;
  std::unique_ptr<u32[]> queue_k_;
  std::unique_ptr<Affine<F>[]> queue_p_;
  size_t np_ = 0, nq_ = 0;
};

// The plain Pippenger's schedule, shared by the scalar accumulators (BucketAcc here) and the
// AVX-512 IFMA ones (msm/ifma.hpp): tasks are (group of windows × range of points), a group's
// windows share one accumulator made by make_acc(buckets); add(acc, slot, i, d) puts point i with
// signed digit d ≠ 0 into bucket slot + |d| − 1 (negated when d < 0); the accumulator's
// finish() and reduce_all(K, windows, out) give each window's sum; windows combine by Horner.
template <class X, class MakeAcc, class Add>
X pippenger_run(const Scalar256* sc, size_t n, unsigned c, ThreadPool& tp, MakeAcc make_acc, Add add) {
  if (n == 0) return X::identity();
  const unsigned W = msm_windows(c);
  const size_t K = size_t(1) << (c - 1);
  const size_t T = tp.size();
  const unsigned G = msm_group_windows(c);
  size_t groups = (W + G - 1) / G;
  if (groups < T) groups = std::min<size_t>(W, T);
  size_t chunks = groups >= 2 * T ? 1 : (2 * T + groups - 1) / groups;
  chunks = std::max<size_t>(1, std::min(chunks, n / 1024 + 1));
  std::vector<X> partial(size_t(W) * chunks);
  tp.parallel_for(groups * chunks, [&](size_t t) {
    size_t w0, w1, b, e;
    split_range(W, groups, t / chunks, w0, w1);
    split_range(n, chunks, t % chunks, b, e);
    const size_t gw = w1 - w0;
    auto acc = make_acc(gw * K);
    for (size_t i = b; i < e; i++) {
      const u64* k = sc[i].v;
      for (size_t w = w0; w < w1; w++) {
        const int d = window_digit(k, unsigned(w * c), c);
        if (d != 0) add(acc, u32((w - w0) * K), i, d);
      }
    }
    acc.finish();
    std::vector<X> sums(gw);
    acc.reduce_all(K, gw, sums.data());
    for (size_t w = w0; w < w1; w++) partial[w * chunks + t % chunks] = sums[w - w0];
  });
  X r = X::identity();
  for (unsigned w = W; w-- > 0;) {
    if (!r.is_identity())
      for (unsigned j = 0; j < c; j++) r = r.dbl();
    for (size_t ch = 0; ch < chunks; ch++) r = r.add(partial[w * chunks + ch]);
  }
  return r;
}

// Σ sc[i]·bases[bidx[i]] for canonical scalars (any value; zero digits are skipped).
template <class F>
Xyzz<F> pippenger(const Affine<F>* bases, const u32* bidx, const Scalar256* sc, size_t n, ThreadPool& tp,
                  unsigned window = 0) {
  const unsigned c = window ? window : msm_pick_window(n ? n : 1);
  return pippenger_run<Xyzz<F>>(
      sc, n, c, tp, [](size_t buckets) { return BucketAcc<F>(buckets, msm_batch_size(buckets)); },
      [&](BucketAcc<F>& acc, u32 slot, size_t i, int d) {
        const Affine<F>& p = bases[bidx[i]];
        if (d > 0)
          acc.add(slot + u32(d - 1), p);
        else
          acc.add(slot + u32(-d - 1), Affine<F>{p.x, -p.y});
      });
}

// Σ bases[idx[i]] (idx null: Σ bases[i]) by batched affine additions: each task adds its range
// into A accumulators, A points per shared inversion, then tree-reduces the accumulators.
template <class F>
Xyzz<F> batch_sum(const Affine<F>* bases, const u32* idx, size_t n, ThreadPool& tp) {
  if (n == 0) return Xyzz<F>::identity();
  const size_t T = tp.size();
  const size_t tasks = std::max<size_t>(1, std::min<size_t>(T, n / 512));
  std::vector<Xyzz<F>> partial(tasks);
  tp.parallel_for(tasks, [&](size_t t) {
    size_t b, e;
    split_range(n, tasks, t, b, e);
    const size_t m = e - b;
    const size_t A = std::max<size_t>(1, std::min<size_t>(1024, m / 2));
    std::unique_ptr<Affine<F>[]> acc(new Affine<F>[A]);
    std::unique_ptr<F[]> prefix(new F[A]);
    std::unique_ptr<uint8_t[]> kind(new uint8_t[A]);
    for (size_t j = 0; j < A; j++) acc[j] = Affine<F>::identity();
    Affine<F>* a = acc.get();
    for (size_t i = b; i < e; i += A) {
      const size_t cnt = std::min(A, e - i);
      batch_add_affine<F>(
          cnt, [&](size_t j) -> Affine<F>& { return a[j]; },
          [&](size_t j) -> const Affine<F>& { return bases[idx ? idx[i + j] : i + j]; }, prefix.get(),
          kind.get());
    }
    size_t len = A;
    while (len > 1) {
      const size_t h = len / 2, off = len - h;
      batch_add_affine<F>(
          h, [&](size_t j) -> Affine<F>& { return a[j]; },
          [&](size_t j) -> const Affine<F>& { return a[j + off]; }, prefix.get(), kind.get());
      len = off;
    }
    partial[t] = Xyzz<F>::from_affine(a[0]);
  });
  Xyzz<F> r = Xyzz<F>::identity();
  for (auto& p : partial) r = r.add(p);
  return r;
}

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Classification of a query MSM: base k (bases[k·stride]) is skipped when it is the identity or
// its scalar is zero; scalar one → `ones`, others → `other` with the canonical scalar in `sc`.
// Indices are returned as k·stride (offsets into `bases`).
struct MsmClassified {
  std::vector<u32> ones, other;
  std::vector<Scalar256> sc;
};

template <class F>
MsmClassified msm_classify(const Affine<F>* bases, size_t stride, size_t nb, const Fr* scalars, const u32* sidx,
                           ThreadPool& tp) {
  const size_t T = tp.size();
  const size_t tasks = std::max<size_t>(1, std::min<size_t>(4 * T, nb / 4096));
  std::vector<MsmClassified> parts(tasks);
  tp.parallel_for(tasks, [&](size_t t) {
    size_t b, e;
    split_range(nb, tasks, t, b, e);
    MsmClassified& p = parts[t];
    for (size_t k = b; k < e; k++) {
      if (bases[k * stride].is_identity()) continue;
      const Fr& s = scalars[sidx ? sidx[k] : k];
      if (s.is_zero()) continue;
      if (s.is_one()) {
        p.ones.push_back(u32(k * stride));
        continue;
      }
      Scalar256 c;
      s.to_canonical(c.v);
      p.other.push_back(u32(k * stride));
      p.sc.push_back(c);
    }
  });
  size_t n_ones = 0, n_other = 0;
  for (auto& p : parts) {
    n_ones += p.ones.size();
    n_other += p.other.size();
  }
  MsmClassified r;
  r.ones.reserve(n_ones);
  r.other.reserve(n_other);
  r.sc.reserve(n_other);
  for (auto& p : parts) {
    r.ones.insert(r.ones.end(), p.ones.begin(), p.ones.end());
    r.other.insert(r.other.end(), p.other.begin(), p.other.end());
    r.sc.insert(r.sc.end(), p.sc.begin(), p.sc.end());
    p = MsmClassified();
  }
  return r;
}

// The shape of every query MSM (scalar and IFMA paths, plain and over a table): classify the
// scalars of bases[k·stride] (identity bases and zero scalars dropped), sum the bases whose scalar
// is one with ones(cl), the rest with others(cl) (both return Xyzz<F>), and record the timings.
template <class F, class Ones, class Others>
Affine<F> msm_query(const Affine<F>* bases, size_t stride, size_t nb, const Fr* scalars, const u32* sidx,
                    ThreadPool& tp, MsmTimings& tm, Ones ones, Others others) {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  const MsmClassified cl = msm_classify<F>(bases, stride, nb, scalars, sidx, tp);
  tm.classify = ms_since(t0);
  tm.ones = cl.ones.size();
  tm.others = cl.other.size();
  auto t1 = clock::now();
  const Xyzz<F> s1 = ones(cl);
  tm.batch_add = ms_since(t1);
  auto t2 = clock::now();
  const Affine<F> r = s1.add(others(cl)).to_affine();
  tm.msm = ms_since(t2);
  return r;
}

// The full query MSM: Σ scalars[sidx ? sidx[k] : k] · bases[k] over k < nb, scalars in Montgomery
// form. Zero scalars and identity bases are skipped, scalars equal to one are batch-added.
// Indices must have been validated (< ns) by the caller.
template <class F>
Affine<F> msm(const Affine<F>* bases, size_t nb, const Fr* scalars, const u32* sidx, ThreadPool& tp,
              MsmTimings& tm) {
  return msm_query<F>(
      bases, 1, nb, scalars, sidx, tp, tm,
      [&](const MsmClassified& cl) { return batch_sum<F>(bases, cl.ones.data(), cl.ones.size(), tp); },
      [&](const MsmClassified& cl) { return pippenger<F>(bases, cl.other.data(), cl.sc.data(), cl.other.size(), tp); });
}

}  // namespace kiln
