// G1 and G2 MSM on the CPU with AVX-512 IFMA: the same algorithms as msm/pippenger.hpp and
// msm/precomputed.hpp (signed digits, affine buckets filled by batched additions, row/column
// bucket reduction, precomputed window shifts), with the batched affine addition done for eight
// independent additions at once in 52-bit limbs (ff/fq52.hpp). Points are "M52" points, laid out
// like Affine<Fq> / Affine<Fq2> (96 / 192 bytes, identity = zero bytes) with every Fq component
// a·2^416 mod q packed in six u64 limbs. Templated on the curve's traits (G1T, G2T below).
//
// batch_add52 is the kernel: per addition 6 multiplications (1 for the shared inversion's prefix
// products, 2 to unwind it, λ, λ², λ·(x1 − x3)), all eight-wide. Equal x coordinates (doubling,
// P + (−P)) and identities are resolved per lane before the vector pass, in scalar code.
// Measured on the 2-core EPYC (Zen 4): one 8-wide multiplication 74 ns, i.e. 9.2 ns per element
// against 32 ns for the mulx/adx Fq multiplication; one G1 batched addition 89 ns against 257 ns.
//
// Portability: this file's translation unit is compiled with -mavx512f, and template code it
// shares with the rest of the addon (Fq arithmetic, XYZZ formulas, the thread pool) may be linked
// from there, so an addon built on an AVX-512 machine expects one at run time. The addon is built
// where it runs (npm ci); KILN_PORTABLE=1 builds without these kernels for shipping binaries.
#pragma once
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <memory>
#include <vector>

#include "../ec/xyzz.hpp"
#include "../ff/fq52.hpp"
#include "precomputed.hpp"

namespace kiln {
namespace m52 {

// Curve traits. W: u64 words of one coordinate (6 for Fq, 12 for Fq2), kPt = 2W words a point.
struct G1T {
  using F = Fq;
  using VF = F8;
  static constexpr size_t W = 6;
  static KILN_INLINE VF vload(const u64* const* p, unsigned off) { return load(p, off); }
  static KILN_INLINE void vstore(const VF& f, u64* const* p, unsigned off) { store(f, p, off); }
  static KILN_INLINE VF vone() { return broadcast(kC.one); }
  static KILN_INLINE VF vneg(const VF& y) { return sub(F8{}, y, kC.q); }  // q − y, y canonical ≠ 0
  static F from_words(const u64* w) { return from_m52(w); }
  static void to_words(const F& a, u64* w) { to_m52(a, w); }
};
struct G2T {
  using F = Fq2;
  using VF = F8x2;
  static constexpr size_t W = 12;
  static KILN_INLINE VF vload(const u64* const* p, unsigned off) { return {load(p, off), load(p, off + 6)}; }
  static KILN_INLINE void vstore(const VF& f, u64* const* p, unsigned off) {
    store(f.c0, p, off);
    store(f.c1, p, off + 6);
  }
  static KILN_INLINE VF vone() { return {broadcast(kC.one), F8{}}; }
  // −y component-wise: q − c, and 0 stays 0 (a G2 y may have one zero component).
  static KILN_INLINE VF vneg(const VF& y) {
    const F8 z{};
    return {csub(sub(z, y.c0, kC.q), kC.q), csub(sub(z, y.c1, kC.q), kC.q)};
  }
  static F from_words(const u64* w) { return {from_m52(w), from_m52(w + 6)}; }
  static void to_words(const F& a, u64* w) {
    to_m52(a.c0, w);
    to_m52(a.c1, w + 6);
  }
};

template <class C>
struct Pt {
  static constexpr size_t W = C::W, kPt = 2 * C::W;
  using F = typename C::F;
  static KILN_INLINE bool is_id(const u64* p) {
    u64 o = 0;
    for (size_t i = 0; i < kPt; i++) o |= p[i];
    return o == 0;
  }
  static KILN_INLINE bool eq(const u64* a, const u64* b) { return std::memcmp(a, b, W * 8) == 0; }
  static KILN_INLINE void set_id(u64* p) { std::memset(p, 0, kPt * 8); }
  // −y, component-wise q − c (0 stays 0).
  static KILN_INLINE void neg_y(const u64* y, u64* out) {
    for (size_t c = 0; c < W; c += 6) neg64(y + c, out + c);
  }
  // dst = neg ? −src : src.
  static KILN_INLINE void copy(u64* dst, const u64* src, bool neg) {
    std::memcpy(dst, src, W * 8);
    if (neg)
      neg_y(src + W, dst + W);
    else
      std::memcpy(dst + W, src + W, W * 8);
  }
  // Affine ↔ M52 point (scalar; rare paths and small counts).
  static Affine<F> to_affine(const u64* p) {
    if (is_id(p)) return Affine<F>::identity();
    return {C::from_words(p), C::from_words(p + W)};
  }
  static void from_affine(const Affine<F>& a, u64* p) {
    if (a.is_identity()) return set_id(p);
    C::to_words(a.x, p);
    C::to_words(a.y, p + W);
  }
  // Doubling (scalar fallback: equal operands in a batch).
  static void dbl(u64* p) { from_affine(Xyzz<F>::dbl_affine(to_affine(p)).to_affine(), p); }
};

// Eight points' Fq components (rows, kPt words each) → M52, vectorised: a·2^384 → M(·, 2^448).
template <size_t kPt>
KILN_INLINE void convert8(const u64* const* in, u64* const* out) {
  const F8 k = broadcast(kC.to52);
  for (unsigned off = 0; off < kPt; off += 6) store(csub(mul(load(in, off), k), kC.q), out, off);
}

// out[i] = M52 form of bases[idx ? idx[i] : i] (identity stays identity), on the pool.
template <class C>
void convert_bases(const Affine<typename C::F>* bases, const u32* idx, size_t n, u64* out, ThreadPool& tp) {
  constexpr size_t kPt = Pt<C>::kPt;
  const size_t CH = 4096;
  tp.parallel_for((n + CH - 1) / CH, [&](size_t ch) {
    const size_t b = ch * CH, e = std::min(n, b + CH);
    u64 junk[8][kPt];
    for (size_t i = b; i < e; i += 8) {
      const u64* in[8];
      u64* o[8];
      for (size_t L = 0; L < 8; L++) {
        if (i + L < e) {
          in[L] = reinterpret_cast<const u64*>(&bases[idx ? idx[i + L] : i + L]);
          o[L] = out + (i + L) * kPt;
        } else {
          in[L] = in[0];
          o[L] = junk[L];
        }
      }
      convert8<kPt>(in, o);
    }
  });
}

// Dummy lanes pad the last group of eight: dst (1, 1), src (2, 2) in any representation; they
// need not be curve points, only distinct x (their result is discarded).
template <size_t kPt>
struct Dummies {
  u64 d[kPt] = {}, s[kPt] = {};
  Dummies() {
    d[0] = d[kPt / 2] = 1;
    s[0] = s[kPt / 2] = 2;
  }
};

// Scratch of batch_add52 (per thread / per accumulator).
template <class C>
struct Scratch {
  std::vector<u64*> d;
  std::vector<const u64*> s;
  std::vector<uint8_t> neg;
  std::vector<typename C::VF> prefix, den;
  Dummies<2 * C::W> dummy;  // dst of the padding lanes (overwritten), and their src
};

// dst(i) += neg(i) ? −src(i) : src(i) for i < n; the dst of every lane must be a distinct point,
// distinct from every src. Any values are allowed (identity, equal or opposite points).
// Bounds per Fq component (see ff/fq52.hpp): stored coordinates canonical; den, num < 3q;
// products < 2q; x3, y3 brought back to canonical by conditional subtractions.
// kNonId: the caller guarantees that no dst and no src is the identity (the bucket accumulator's
// pending additions: bases are never the identity there, and a bucket marked present is not).
template <bool kNonId = false, class C, class DstAt, class SrcAt, class NegAt>
void batch_add52(size_t n, DstAt dst_at, SrcAt src_at, NegAt neg_at, Scratch<C>& sc) {
  using P = Pt<C>;
  using VF = typename C::VF;
  using F = typename C::F;
  constexpr unsigned W = unsigned(C::W);
  const size_t cap = (n + 7) / 8 * 8;
  if (sc.d.size() < cap) {
    sc.d.resize(cap);
    sc.s.resize(cap);
    sc.neg.resize(cap);
  }
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    u64* d = dst_at(i);
    const u64* s = src_at(i);
    const bool ng = neg_at(i);
    if (!kNonId) {
      if (P::is_id(s)) continue;
      if (P::is_id(d)) {
        P::copy(d, s, ng);
        continue;
      }
    }
    if (__builtin_expect(P::eq(d, s), 0)) {
      u64 sy[C::W];
      if (ng)
        P::neg_y(s + W, sy);
      else
        std::memcpy(sy, s + W, W * 8);
      if (P::eq(d + W, sy))
        P::dbl(d);
      else
        P::set_id(d);
      continue;
    }
    sc.d[m] = d;
    sc.s[m] = s;
    sc.neg[m] = ng;
    m++;
  }
  if (m == 0) return;
  const size_t G = (m + 7) / 8;
  for (size_t i = m; i < G * 8; i++) {
    sc.d[i] = sc.dummy.d;
    sc.s[i] = sc.dummy.s;
    sc.neg[i] = 0;
  }
  if (sc.prefix.size() < G) {
    sc.prefix.resize(G);
    sc.den.resize(G);
  }
  u64* const* D = sc.d.data();
  const u64* const* S = sc.s.data();
  // Forward: den = x2 − x1 ∈ (q, 3q); prefix products per lane.
  VF acc = C::vone();
  for (size_t g = 0; g < G; g++) {
    const VF x1 = C::vload(D + 8 * g, 0), x2 = C::vload(S + 8 * g, 0);
    const VF den = sub(x2, x1, kC.q2);
    sc.den[g] = den;
    sc.prefix[g] = acc;
    acc = mul(acc, den);
  }
  // Invert the eight lane products in scalar code (one inversion), then back to M52.
  VF inv;
  {
    alignas(64) u64 rows[8][2 * C::W];
    u64* rp[8];
    for (int L = 0; L < 8; L++) rp[L] = rows[L];
    C::vstore(csub(acc, kC.q), rp, 0);
    F a[8], pre[8];
    F run = F::one();
    for (int L = 0; L < 8; L++) {
      a[L] = C::from_words(rows[L]);
      pre[L] = run;
      run *= a[L];
    }
    F ir = run.inverse();
    for (int L = 8; L-- > 0;) {
      const F il = ir * pre[L];
      ir *= a[L];
      C::to_words(il, rows[L]);  // M52 form of the inverse of lane L's product
    }
    inv = C::vload(rp, 0);
  }
  // Backward: unwind the prefix products and finish each group.
  for (size_t g = G; g-- > 0;) {
    const VF inv_g = mul(inv, sc.prefix[g]);  // 1/den_g
    inv = mul(inv, sc.den[g]);
    const VF x1 = C::vload(D + 8 * g, 0), y1 = C::vload(D + 8 * g, W);
    const VF x2 = C::vload(S + 8 * g, 0);
    VF y2 = C::vload(S + 8 * g, W);
    __mmask8 ng = 0;
    for (int L = 0; L < 8; L++) ng |= __mmask8(sc.neg[8 * g + L] ? 1u << L : 0u);
    if (ng) y2 = blend(ng, y2, C::vneg(y2));
    const VF num = sub(y2, y1, kC.q2);          // (q, 3q)
    const VF lam = mul(num, inv_g);             // < 2q
    const VF l2 = mul(lam, lam);                // < 2q
    VF x3 = sub(l2, add_lazy(x1, x2), kC.q2);   // (0, 4q)
    x3 = csub(csub(x3, kC.q2), kC.q);           // canonical
    const VF t = mul(lam, sub(x1, x3, kC.q));   // < 2q
    VF y3 = sub(t, y1, kC.q);                   // (0, 3q)
    y3 = csub(csub(y3, kC.q2), kC.q);
    C::vstore(x3, D + 8 * g, 0);
    C::vstore(y3, D + 8 * g, W);
  }
}

inline bool no_neg(size_t) { return false; }

// Window width of the plain Pippenger here: additions are ~3× cheaper than on the scalar path
// but the bucket reduction and the batch inversions are not, so the best c is larger than
// msm_pick_window's. Measured (G1, one thread, c = 5 … 16): best c = log2(n) − 2 from 2^8 to 2^18
// (2^11: 9, 2^13: 11, 2^16: 14, 2^18: 15 at 612 ms against 760 ms for c = 13).
inline unsigned window52(size_t n) {
  unsigned lg = 0;
  while (lg < 40 && (size_t(2) << lg) <= n) lg++;  // floor(log2 n)
  const unsigned hi = lg >= 20 ? 16 : 15;
  return lg < 7 ? 5 : std::min(lg - 2, hi);
}

// Bucket memory: 2 MiB aligned and transparent-huge-page advised when ≥ 2 MiB (a task's 2^15 G1
// buckets are 3 MiB, touched at random: fewer TLB misses).
struct FreeDeleter {
  void operator()(u64* p) const { std::free(p); }
};
using HugeBuf = std::unique_ptr<u64[], FreeDeleter>;
inline HugeBuf alloc_buckets(size_t words) {
  const size_t huge = size_t(1) << 21;
  size_t bytes = std::max<size_t>(64, words * 8);
  const bool big = bytes >= huge;
  bytes = big ? (bytes + huge - 1) & ~(huge - 1) : (bytes + 63) & ~size_t(63);
  void* p = std::aligned_alloc(big ? huge : 64, bytes);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (big) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return HugeBuf(static_cast<u64*>(p));
}

// Batch size for K buckets: as msm_batch_size, up to 4096 (the shared inversion, ~15 µs of
// scalar code, is a larger share of an 8-wide addition than of a scalar one).
inline size_t batch_size52(size_t K) { return std::min<size_t>(std::max<size_t>(K / 4, 32), 4096); }

// Affine M52 buckets filled by batch_add52; the same queueing and overflow rules as BucketAcc
// (msm/pippenger.hpp), but pending additions hold a pointer to the source point and a sign.
template <class C>
class BucketAcc52 {
  using P = Pt<C>;
  using F = typename C::F;
  static constexpr size_t kPt = P::kPt;

 public:
  BucketAcc52(size_t K, size_t B)
      : K_(K), B_(B), Q_(4 * B), words_((K + 63) / 64), buckets_(alloc_buckets(K * kPt)), have_(new u64[words_]()),
        busy_(new u64[words_]()), ovf_(new u64[words_]()), pend_k_(new u32[B]), pend_p_(new const u64*[B]),
        pend_n_(new uint8_t[B]), queue_k_(new u32[4 * B]), queue_p_(new const u64*[4 * B]),
        queue_n_(new uint8_t[4 * B]) {}

  // The queue holds up to 4 batches. A full queue executes the pending batch early when it is at
  // least a quarter full (the vector additions are cheap next to the scalar overflow path); else,
  // or if the queue is still full (long runs of one digit), the point goes to the bucket's XYZZ
  // overflow accumulator.
  KILN_INLINE void add(u32 k, const u64* p, bool neg) {
    if (np_ == B_) flush();
    if (try_insert(k, p, neg)) return;
    if (nq_ == Q_) {
      if (np_ < B_ / 4) return add_overflow(k, p, neg);
      flush();
      if (try_insert(k, p, neg)) return;
      if (nq_ == Q_) return add_overflow(k, p, neg);
    }
    queue_k_[nq_] = k;
    queue_p_[nq_] = p;
    queue_n_[nq_] = neg;
    nq_++;
  }

  void flush() {
    execute();
    size_t w = 0;
    for (size_t i = 0; i < nq_; i++) {
      if (np_ < B_ && try_insert(queue_k_[i], queue_p_[i], queue_n_[i])) continue;
      queue_k_[w] = queue_k_[i];
      queue_p_[w] = queue_p_[i];
      queue_n_[w] = queue_n_[i];
      w++;
    }
    nq_ = w;
  }

  void finish() {
    flush();
    execute();
    for (size_t i = 0; i < nq_; i++) add_overflow(queue_k_[i], queue_p_[i], queue_n_[i]);
    nq_ = 0;
  }

  // out[w] = Σ_{k<count} (k+1)·bucket_{w·count+k} for every window w < nw (call finish() first).
  // Power-of-two counts ≥ 16: with m = a·S + b (S ≈ √count), Σ (m+1)·B_m = S·Σ_a a·R_a +
  // Σ_b (b+1)·C_b over the row and column sums R_a, C_b, which are folds of batch_add52 calls done
  // for all nw windows at once (one shared inversion per fold step, not per window), then two
  // short running sums per window (XYZZ, scalar). Other counts: a running sum per window.
  void reduce_all(size_t count, size_t nw, Xyzz<F>* out) {
    fold_overflow(0, count * nw);
    auto bucket = [&](size_t k) -> const u64* {
      return (have_[k >> 6] >> (k & 63)) & 1 ? &buckets_[k * kPt] : kZero;
    };
    if (count < 16 || (count & (count - 1)) != 0) {
      for (size_t w = 0; w < nw; w++) {
        Xyzz<F> running = Xyzz<F>::identity(), sum = Xyzz<F>::identity();
        for (size_t j = count; j-- > 0;) {
          running = running.add_affine(P::to_affine(bucket(w * count + j)));
          sum = sum.add(running);
        }
        out[w] = sum;
      }
      return;
    }
    unsigned lg = 0;
    while ((size_t(1) << lg) < count) lg++;
    const unsigned sb = (lg + 1) / 2;
    const size_t S = size_t(1) << sb, A = count >> sb, total = count * nw;
    std::unique_ptr<u64[]> rows(new u64[total * kPt]), cols(new u64[total * kPt]);
    for (size_t k = 0; k < total; k++) {
      std::memcpy(&rows[k * kPt], bucket(k), kPt * 8);
      std::memcpy(&cols[k * kPt], bucket(k), kPt * 8);
    }
    u64* R = rows.get();
    u64* Cl = cols.get();
    for (size_t h = S / 2; h >= 1; h /= 2) {  // rows: fold b ≥ h onto b − h, every window
      const size_t per = A * h;
      auto at = [&](size_t i) { return (i / per) * count + ((i % per) / h) * S + i % h; };
      batch_add52(
          nw * per, [&](size_t i) { return R + at(i) * kPt; },
          [&](size_t i) -> const u64* { return R + (at(i) + h) * kPt; }, no_neg, sc_);
    }
    for (size_t h = A / 2; h >= 1; h /= 2) {  // columns: fold a ≥ h onto a − h, every window
      const size_t per = h * S;
      auto at = [&](size_t i) { return (i / per) * count + i % per; };
      batch_add52(
          nw * per, [&](size_t i) { return Cl + at(i) * kPt; },
          [&](size_t i) -> const u64* { return Cl + (at(i) + h * S) * kPt; }, no_neg, sc_);
    }
    for (size_t w = 0; w < nw; w++) {
      const u64* Rw = R + w * count * kPt;
      const u64* Cw = Cl + w * count * kPt;
      Xyzz<F> running = Xyzz<F>::identity(), rsum = Xyzz<F>::identity();
      for (size_t a = A; a-- > 1;) {
        running = running.add_affine(P::to_affine(Rw + a * S * kPt));
        rsum = rsum.add(running);
      }
      for (unsigned i = 0; i < sb; i++) rsum = rsum.dbl();
      running = Xyzz<F>::identity();
      Xyzz<F> csum = Xyzz<F>::identity();
      for (size_t b = S; b-- > 0;) {
        running = running.add_affine(P::to_affine(Cw + b * kPt));
        csum = csum.add(running);
      }
      out[w] = rsum.add(csum);
    }
  }

 private:
  static constexpr u64 kZero[2 * C::W] = {};

  KILN_INLINE bool try_insert(u32 k, const u64* p, bool neg) {
    const u64 bit = u64(1) << (k & 63);
    const size_t w = k >> 6;
    u64* b = &buckets_[size_t(k) * kPt];
    if (!(have_[w] & bit)) {
      have_[w] |= bit;
      P::copy(b, p, neg);
      return true;
    }
    if (busy_[w] & bit) return false;
    busy_[w] |= bit;
    __builtin_prefetch(b, 1, 1);
    __builtin_prefetch(b + kPt - 1, 1, 1);
    pend_k_[np_] = k;
    pend_p_[np_] = p;
    pend_n_[np_] = neg;
    np_++;
    return true;
  }

  void add_overflow(u32 k, const u64* p, bool neg) {
    if (!overflow_) overflow_.reset(new Xyzz<F>[K_]);
    Affine<F> a = P::to_affine(p);
    if (neg) a = a.neg();
    const u64 bit = u64(1) << (k & 63);
    if (ovf_[k >> 6] & bit) {
      overflow_[k] = overflow_[k].add_affine(a);
    } else {
      ovf_[k >> 6] |= bit;
      overflow_[k] = Xyzz<F>::from_affine(a);
    }
  }

  // Adds the overflow accumulators (rare: long runs of equal digits) into their buckets.
  void fold_overflow(size_t base, size_t count) {
    if (!overflow_) return;
    std::vector<u32> ks;
    std::vector<Xyzz<F>> xs;
    for (size_t k = base; k < base + count; k++) {
      const u64 bit = u64(1) << (k & 63);
      if (!(ovf_[k >> 6] & bit)) continue;
      ovf_[k >> 6] &= ~bit;
      Xyzz<F> s = overflow_[k];
      if (have_[k >> 6] & bit) s = s.add_affine(P::to_affine(&buckets_[k * kPt]));
      ks.push_back(u32(k));
      xs.push_back(s);
    }
    std::vector<Affine<F>> as(xs.size());
    std::vector<F> scratch(xs.size());
    batch_to_affine<F>(xs.data(), as.data(), xs.size(), scratch.data());  // one inversion
    for (size_t i = 0; i < ks.size(); i++) {
      const size_t k = ks[i];
      P::from_affine(as[i], &buckets_[k * kPt]);
      if (as[i].is_identity())
        have_[k >> 6] &= ~(u64(1) << (k & 63));
      else
        have_[k >> 6] |= u64(1) << (k & 63);
    }
  }

  void execute() {
    if (np_ == 0) return;
    u64* bk = buckets_.get();
    const u32* pk = pend_k_.get();
    const u64* const* pp = pend_p_.get();
    const uint8_t* pn = pend_n_.get();
    batch_add52<true>(
        np_, [&](size_t i) { return bk + size_t(pk[i]) * kPt; }, [&](size_t i) { return pp[i]; },
        [&](size_t i) { return pn[i] != 0; }, sc_);
    for (size_t i = 0; i < np_; i++) {
      const u64 bit = ~(u64(1) << (pk[i] & 63));
      busy_[pk[i] >> 6] &= bit;
      if (P::is_id(bk + size_t(pk[i]) * kPt)) have_[pk[i] >> 6] &= bit;
    }
    np_ = 0;
  }

  size_t K_, B_, Q_, words_;
  HugeBuf buckets_;
  std::unique_ptr<Xyzz<F>[]> overflow_;
  std::unique_ptr<u64[]> have_, busy_, ovf_;
  std::unique_ptr<u32[]> pend_k_;
  std::unique_ptr<const u64*[]> pend_p_;
  std::unique_ptr<uint8_t[]> pend_n_;
  std::unique_ptr<u32[]> queue_k_;
  std::unique_ptr<const u64*[]> queue_p_;
  std::unique_ptr<uint8_t[]> queue_n_;
  size_t np_ = 0, nq_ = 0;
  Scratch<C> sc_;
};

// Σ sc[i]·P_i over M52 points P_i = pts + (bidx ? bidx[i] : i)·kPt (the plain Pippenger's
// schedule, pippenger_run in msm/pippenger.hpp).
template <class C>
Xyzz<typename C::F> pippenger52(const u64* pts, const u32* bidx, const Scalar256* sc, size_t n, ThreadPool& tp,
                                unsigned window = 0) {
  constexpr size_t kPt = Pt<C>::kPt;
  const unsigned c = window ? window : window52(n ? n : 1);
  return pippenger_run<Xyzz<typename C::F>>(
      sc, n, c, tp, [](size_t buckets) { return BucketAcc52<C>(buckets, batch_size52(buckets)); },
      [&](BucketAcc52<C>& acc, u32 slot, size_t i, int d) {
        const u64* p = pts + size_t(bidx ? bidx[i] : i) * kPt;
        if (d > 0)
          acc.add(slot + u32(d - 1), p, false);
        else
          acc.add(slot + u32(-d - 1), p, true);
      });
}

// Over a precomputed table of M52 points (row of base k at toff[i] points: 2^(c·j)·P_k, j < W):
// one bucket set for every (point, digit) pair (pippenger_precomputed_run, msm/precomputed.hpp).
template <class C>
Xyzz<typename C::F> pippenger52_precomputed(const u64* table, unsigned c, const u32* toff, const Scalar256* sc,
                                            size_t m, ThreadPool& tp) {
  constexpr size_t kPt = Pt<C>::kPt;
  return pippenger_precomputed_run<Xyzz<typename C::F>>(
      sc, m, c, tp, [](size_t K) { return BucketAcc52<C>(K, batch_size52(K)); },
      [&](BucketAcc52<C>& acc, size_t i, unsigned w, int d) {
        const u64* p = table + (size_t(toff[i]) + w) * kPt;
        if (d > 0)
          acc.add(u32(d - 1), p, false);
        else
          acc.add(u32(-d - 1), p, true);
      });
}

// Σ P_i over M52 points pts + (idx ? idx[i] : i)·kPt: per task, A accumulators filled A points per
// batch, then a tree.
template <class C>
Xyzz<typename C::F> batch_sum52(const u64* pts, const u32* idx, size_t n, ThreadPool& tp) {
  using F = typename C::F;
  constexpr size_t kPt = Pt<C>::kPt;
  if (n == 0) return Xyzz<F>::identity();
  const size_t T = tp.size();
  const size_t tasks = std::max<size_t>(1, std::min<size_t>(T, n / 512));
  std::vector<Xyzz<F>> partial(tasks);
  tp.parallel_for(tasks, [&](size_t t) {
    size_t b, e;
    split_range(n, tasks, t, b, e);
    const size_t m = e - b;
    const size_t A = std::max<size_t>(1, std::min<size_t>(1024, m / 2));
    std::unique_ptr<u64[]> acc(new u64[A * kPt]());
    Scratch<C> sc;
    u64* a = acc.get();
    for (size_t i = b; i < e; i += A) {
      const size_t cnt = std::min(A, e - i);
      batch_add52(
          cnt, [&](size_t j) { return a + j * kPt; },
          [&](size_t j) -> const u64* { return pts + size_t(idx ? idx[i + j] : i + j) * kPt; }, no_neg, sc);
    }
    size_t len = A;
    while (len > 64) {  // halve by batched additions (one inversion each) down to 64 points
      const size_t h = len / 2, off = len - h;
      batch_add52(
          h, [&](size_t j) { return a + j * kPt; }, [&](size_t j) -> const u64* { return a + (j + off) * kPt; },
          no_neg, sc);
      len = off;
    }
    Xyzz<F> sum = Xyzz<F>::identity();  // the last ≤ 64 in XYZZ: cheaper than six more inversions
    for (size_t j = 0; j < len; j++) sum = sum.add_affine(Pt<C>::to_affine(a + j * kPt));
    partial[t] = sum;
  });
  Xyzz<F> r = Xyzz<F>::identity();
  for (auto& p : partial) r = r.add(p);
  return r;
}

}  // namespace m52
}  // namespace kiln
