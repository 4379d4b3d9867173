// Witness-program interpreter: the native twin of src/r1cs/program.ts `interpretProgram`.
//
// A program is recorded once per circuit shape (program.ts documents the word format); a proof runs
// it over its tape (the per-proof values from outside the circuit, Montgomery Fr) and gets the full
// assignment [inputs…, aux…] in Montgomery Fr, byte for byte what the TypeScript WitnessGenerator
// writes. Segment 0 (the prologue) runs first, then segments 1… in parallel on the pool: each reads
// the prologue and itself only.
//
// Every operand, target and slot is checked against the bounds its segment may touch before it is
// used, so a malformed program gives an error string, never an out-of-bounds access.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "ff/bls12_381.hpp"
#include "ff/dot.hpp"
#include "util/thread_pool.hpp"

namespace kiln {
namespace witness {

enum Op : u32 {
  INPUT = 1,
  INPUT_BITS = 2,
  BITS = 3,
  XOR = 4,
  AND = 5,
  ANDNOT = 6,
  NOR = 7,
  CH = 8,
  MAJ = 9,
  ADDMANY = 10,
  PACK = 11,
  LC = 12,
  ADD = 13,
  COPY = 14,
  MUL = 15,
  SQR = 16,
  SQADD = 17,
  MULADD = 18,
  INV = 19,
  SELECT = 20,
};

constexpr u32 NEG = 0x80000000u;
constexpr u32 REL = 0x40000000u;
constexpr u32 INP = 0x20000000u;
constexpr u32 INDEX_MASK = 0x1fffffffu;
constexpr u32 NONE = 0xffffffffu;
constexpr u32 TARGET_INPUT = 1u << 8;

struct Block {
  const u32* words;
  size_t len;
};

struct Segment {
  u32 block, aux_base, input_base, slot_base;
};

struct Program {
  size_t num_inputs = 0, num_aux = 0, num_slots = 0;
  const Fr* coeffs = nullptr;
  size_t n_coeffs = 0;
  std::vector<Block> blocks;
  std::vector<Segment> segments;
};

namespace detail {

struct Bounds {
  // readable: absolute indices below abs_*, relative ones below next_* (written so far)
  size_t abs_inputs, abs_aux;
  size_t input_base, aux_base, slot_base;
  size_t slot_end_rel;  // relative slots must be below this (absolute slot = slot_base + index)
  size_t abs_slots;
  size_t in_limit, ax_limit;  // a segment writes exactly up to these
};

struct Fail {
  std::string msg;
};

class Runner {
 public:
  Runner(const Program& p, const Fr* tape, Fr* out, size_t seg_index, dot::Fn dot)
      : p_(p), tape_(tape), in_(out), aux_(out + p.num_inputs), si_(seg_index), dot_(dot) {}

  void run(const Segment& seg, const Bounds& b) {
    b_ = b;
    next_input_ = si_ == 0 ? 1 : seg.input_base;
    next_aux_ = si_ == 0 ? 0 : seg.aux_base;
    const Block& blk = p_.blocks[seg.block];
    const u32* w = blk.words;
    const size_t n = blk.len;
    size_t k = 0;
    auto need = [&](size_t m) {
      if (k + m > n) fail("op at word " + std::to_string(k) + " runs past the block's end");
    };
    while (k < n) {
      const u32 h = w[k++];
      const u32 op = h & 0xff;
      to_input_ = (h & TARGET_INPUT) != 0;
      const u32 count = h >> 9;
      switch (op) {
        case INPUT:
          need(1);
          put(slot(w[k++]));
          break;
        case INPUT_BITS: {
          need(1);
          if (count < 1 || count > 256) fail("bad bit count");
          u64 c[4];
          slot(w[k++]).to_canonical(c);
          put_bits(c, count);
          break;
        }
        case BITS: {
          need(1);
          if (count < 1 || count > 256) fail("bad bit count");
          u64 c[4];
          get(w[k++]).to_canonical(c);
          put_bits(c, count);
          break;
        }
        case XOR:
        case AND:
        case ANDNOT:
        case NOR: {
          need(2);
          const bool a = !get(w[k]).is_zero();
          const bool bb = !get(w[k + 1]).is_zero();
          k += 2;
          const bool r = op == XOR ? a != bb : op == AND ? (a && bb) : op == ANDNOT ? (a && !bb) : (!a && !bb);
          put_bit(r);
          break;
        }
        case CH:
        case MAJ: {
          need(3);
          const bool a = bit(w[k]), bb = bit(w[k + 1]), c = bit(w[k + 2]);
          k += 3;
          put_bit(op == CH ? ((a && bb) != (!a && c)) : (((a && bb) != (a && c)) != (bb && c)));
          break;
        }
        case ADDMANY: {
          const u32 nbits = count & 0xff, nops = count >> 8;
          if (nbits < 1 || nbits > 64 || nops < 1) fail("bad addmany counts");
          need((size_t)nops * 32);
          u64 sum = 0;
          for (u32 o = 0; o < nops; o++)
            for (u32 i = 0; i < 32; i++) sum += (u64)bit(w[k++]) << i;
          u64 c[4] = {sum, 0, 0, 0};
          put_bits(c, nbits);
          break;
        }
        case PACK: {
          if (count > 254) fail("pack of more than 254 bits");
          need(count);
          u64 c[4] = {0, 0, 0, 0};
          for (u32 i = 0; i < count; i++)
            if (bit(w[k++])) c[i >> 6] |= u64(1) << (i & 63);
          put(Fr::from_canonical(c));  // < 2^254 < r
          break;
        }
        case LC: {
          need((size_t)count * 2);
          // operands checked first, then the products in runs (ff/dot.hpp: one reduction per run)
          Fr acc = Fr::zero();
          const Fr* xs[dot::kRun];
          const Fr* cs[dot::kRun];
          for (u32 i = 0; i < count;) {
            const u32 n = count - i > dot::kRun ? dot::kRun : count - i;
            for (u32 j = 0; j < n; j++, k += 2) {
              xs[j] = &get(w[k]);
              cs[j] = &coeff(w[k + 1]);
            }
            acc += dot_(xs, cs, n);
            i += n;
          }
          put(acc);
          break;
        }
        case ADD:
          need(2);
          put(get(w[k]) + get(w[k + 1]));
          k += 2;
          break;
        case COPY:
          need(1);
          put(get(w[k++]));
          break;
        case MUL:
          need(2);
          put(get(w[k]) * get(w[k + 1]));
          k += 2;
          break;
        case SQR:
          need(1);
          put(get(w[k++]).sqr());
          break;
        case SQADD: {
          need(2);
          const Fr t = get(w[k]) + coeff(w[k + 1]);
          k += 2;
          put(t.sqr());
          break;
        }
        case MULADD: {
          need(4);
          const Fr a = get(w[k]);
          Fr bb = get(w[k + 1]);
          if (w[k + 2] != NONE) bb += coeff(w[k + 2]);
          Fr r = a * bb;
          if (w[k + 3] != NONE) r += coeff(w[k + 3]);
          k += 4;
          put(r);
          break;
        }
        case INV: {
          need(1);
          const Fr a = get(w[k++]);
          if (a.is_zero()) fail("DivisionByZero");
          put(a.inverse());
          break;
        }
        case SELECT: {
          need(3);
          const bool c = bit(w[k]);
          const Fr x = get(w[k + 1]), y = get(w[k + 2]);
          k += 3;
          put(c ? x : y);
          break;
        }
        default:
          fail("unknown opcode " + std::to_string(op) + " at word " + std::to_string(k - 1));
      }
    }
    end_input_ = next_input_;
    end_aux_ = next_aux_;
  }

  size_t end_input_ = 0, end_aux_ = 0;

 private:
  [[noreturn]] void fail(const std::string& m) const { throw Fail{"segment " + std::to_string(si_) + ": " + m}; }

  const Fr& get(u32 o) const {
    const size_t idx = o & INDEX_MASK;
    const bool rel = (o & REL) != 0;
    if (o & INP) {
      const size_t i = (rel ? b_.input_base : 0) + idx;
      if (i >= next_input_ || (!rel && i >= b_.abs_inputs)) fail("input " + std::to_string(i) + " is not readable here");
      return in_[i];
    }
    const size_t j = (rel ? b_.aux_base : 0) + idx;
    if (j >= next_aux_ || (!rel && j >= b_.abs_aux)) fail("aux " + std::to_string(j) + " is not readable here");
    return aux_[j];
  }
  bool bit(u32 o) const { return (!get(o).is_zero()) != ((o & NEG) != 0); }
  Fr slot(u32 o) const {
    size_t s;
    if (o & REL) {
      const size_t idx = o & INDEX_MASK;
      if (idx >= b_.slot_end_rel) fail("slot " + std::to_string(b_.slot_base + idx) + " belongs to another segment");
      s = b_.slot_base + idx;
    } else {
      s = o & INDEX_MASK;
      if (s >= b_.abs_slots) fail("slot " + std::to_string(s) + " is outside the prologue");
    }
    if (s >= p_.num_slots) fail("slot " + std::to_string(s) + " out of range");
    return tape_[s];
  }
  const Fr& coeff(u32 o) const {
    if (o >= p_.n_coeffs) fail("coefficient " + std::to_string(o) + " out of range");
    return p_.coeffs[o];
  }
  void put(const Fr& v) {
    if (to_input_) {
      if (next_input_ >= p_.num_inputs || (si_ > 0 && next_input_ >= b_.in_limit)) fail("writes past its inputs");
      in_[next_input_++] = v;
    } else {
      if (next_aux_ >= p_.num_aux || (si_ > 0 && next_aux_ >= b_.ax_limit)) fail("writes past its aux variables");
      aux_[next_aux_++] = v;
    }
  }
  void put_bit(bool b) { put(b ? Fr::one() : Fr::zero()); }
  void put_bits(const u64* c, u32 n) {
    for (u32 i = 0; i < n; i++) put_bit((c[i >> 6] >> (i & 63)) & 1);
  }

  const Program& p_;
  const Fr* tape_;
  Fr* in_;
  Fr* aux_;
  size_t si_;
  dot::Fn dot_;
  Bounds b_{};
  size_t next_input_ = 0, next_aux_ = 0;
  bool to_input_ = false;
};

}  // namespace detail

// Runs the program; out has (num_inputs + num_aux) elements. Returns "" or the first error (by
// segment order). Writes ONE at element 0. `dot` forms the linear combinations (the same bytes whichever).
inline std::string run(const Program& p, const Fr* tape, Fr* out, dot::Fn dot = dot::run_scalar) {
  using namespace detail;
  if (p.segments.empty()) return "program has no segments";
  for (size_t s = 0; s < p.segments.size(); s++) {
    const Segment& g = p.segments[s];
    if (g.block >= p.blocks.size()) return "segment " + std::to_string(s) + ": no block " + std::to_string(g.block);
    if (s > 0) {
      const Segment& prev = p.segments[s - 1];
      if (g.aux_base > p.num_aux || g.input_base > p.num_inputs || g.slot_base > p.num_slots ||
          (s > 1 && (g.aux_base < prev.aux_base || g.input_base < prev.input_base || g.slot_base < prev.slot_base)))
        return "segment " + std::to_string(s) + ": bases out of order or range";
    }
  }
  if (p.num_inputs < 1) return "program has no ONE input";
  out[0] = Fr::one();
  const size_t nseg = p.segments.size();
  // limits of segment s (s ≥ 1): up to the next segment's bases, or the end
  auto limits = [&](size_t s, size_t& in_end, size_t& aux_end, size_t& slot_end) {
    if (s + 1 < nseg) {
      in_end = p.segments[s + 1].input_base;
      aux_end = p.segments[s + 1].aux_base;
      slot_end = p.segments[s + 1].slot_base;
    } else {
      in_end = p.num_inputs;
      aux_end = p.num_aux;
      slot_end = p.num_slots;
    }
  };
  const size_t pro_inputs = nseg > 1 ? p.segments[1].input_base : p.num_inputs;
  const size_t pro_aux = nseg > 1 ? p.segments[1].aux_base : p.num_aux;
  const size_t pro_slots = nseg > 1 ? p.segments[1].slot_base : p.num_slots;
  std::vector<std::string> errors(nseg);
  auto run_one = [&](size_t s) {
    const Segment& g = p.segments[s];
    Bounds b{};
    size_t in_end, aux_end, slot_end;
    limits(s, in_end, aux_end, slot_end);
    b.abs_inputs = s == 0 ? p.num_inputs : pro_inputs;
    b.abs_aux = s == 0 ? p.num_aux : pro_aux;
    b.abs_slots = s == 0 ? p.num_slots : pro_slots;
    b.input_base = s == 0 ? 0 : g.input_base;
    b.aux_base = s == 0 ? 0 : g.aux_base;
    b.slot_base = s == 0 ? 0 : g.slot_base;
    b.slot_end_rel = s == 0 ? 0 : slot_end - g.slot_base;
    b.in_limit = s == 0 ? pro_inputs : in_end;
    b.ax_limit = s == 0 ? pro_aux : aux_end;
    Runner r(p, tape, out, s, dot);
    try {
      r.run(g, b);
      if (r.end_input_ != b.in_limit || r.end_aux_ != b.ax_limit)
        errors[s] = "segment " + std::to_string(s) + " wrote inputs up to " + std::to_string(r.end_input_) + " and aux up to " +
                    std::to_string(r.end_aux_) + ", expected " + std::to_string(b.in_limit) + " and " + std::to_string(b.ax_limit);
    } catch (const Fail& f) {
      errors[s] = f.msg;
    }
  };
  run_one(0);
  if (!errors[0].empty()) return errors[0];
  if (nseg > 1) pool().parallel_for(nseg - 1, [&](size_t i) { run_one(i + 1); });
  for (const std::string& e : errors)
    if (!e.empty()) return e;
  return "";
}

}  // namespace witness
}  // namespace kiln
