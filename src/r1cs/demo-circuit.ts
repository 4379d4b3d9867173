/**
 * DemoCircuit: a synthetic circuit family for benchmarks and the CLI demo, shaped like the bulk of
 * a Filecoin PoRep circuit (docs/filecoin.md §1): mostly boolean constraints on bits, bits packed into numbers
 * (with the 2^i coefficients of `pack_bits`), and a chain of multiplications by random field
 * elements. The witness therefore has the PoRep mix of scalars: many 0s and 1s (bits), small
 * numbers (packed words) and full-size field elements — which is what the MSM classification and
 * batched addition are tuned for.
 *
 *   input 1 = x_0 (from the seed)
 *   block  (k + 2 constraints):  b_j·(1 − b_j) = 0 for j < k;   (Σ 2^j b_j)·1 = w;
 *                                x·y = x' − w          (i.e. x' = x·y + w, y random)
 *   filler (1 constraint):       x·y = x'
 *   checkpoint (1 constraint):   x·1 = input           (inputs 2 … publicInputs)
 *
 * With `dense`, only filler steps: every witness value is a full-size field element.
 *
 * The constraint count is exactly `constraints`; values are deterministic in `seed`.
 */
import { FR_MODULUS } from '../field/layout.js';
import { type Circuit, type ConstraintSystem, LinearCombination, ONE, type Variable } from './cs.js';

export interface DemoOptions {
  /** Number of constraints (exact). Must be ≥ publicInputs. */
  constraints: number;
  /** Seed of the values (default 1). */
  seed?: number;
  /** Public inputs besides ONE (default 2: the start value and the final result); ≥ 1. */
  publicInputs?: number;
  /** Bits per packed word (default 32, a UInt32). */
  bitsPerWord?: number;
  /** Only the multiplication chain x' = x·y (every witness value a full-size field element, like
   *  snarkjs's benchmark chain circuits); no bits or packing. Default false. */
  dense?: boolean;
}

/** mulberry32: a small deterministic 32-bit PRNG (not cryptographic; values only). */
class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  field(): bigint {
    let x = 0n;
    for (let k = 0; k < 8; k++) x = (x << 32n) | BigInt(this.u32());
    return x % FR_MODULUS;
  }
}

export class DemoCircuit implements Circuit {
  readonly constraints: number;
  readonly seed: number;
  readonly publicInputs: number;
  readonly bitsPerWord: number;
  readonly dense: boolean;

  constructor(opts: DemoOptions) {
    this.dense = opts.dense ?? false;
    this.constraints = opts.constraints;
    this.seed = opts.seed ?? 1;
    this.publicInputs = opts.publicInputs ?? 2;
    this.bitsPerWord = opts.bitsPerWord ?? 32;
    if (!Number.isSafeInteger(this.publicInputs) || this.publicInputs < 1) {
      throw new RangeError(`publicInputs must be ≥ 1, got ${this.publicInputs}`);
    }
    if (!Number.isSafeInteger(this.constraints) || this.constraints < this.publicInputs) {
      throw new RangeError(`constraints must be an integer ≥ publicInputs (${this.publicInputs}), got ${this.constraints}`);
    }
    if (!Number.isInteger(this.bitsPerWord) || this.bitsPerWord < 1 || this.bitsPerWord > 253) {
      throw new RangeError(`bitsPerWord must be in 1..253, got ${this.bitsPerWord}`);
    }
  }

  synthesize(cs: ConstraintSystem): void {
    const cv = cs.computesValues;
    const rng = new Rng(this.seed);
    const k = this.bitsPerWord;
    const r = FR_MODULUS;

    let xv = cv ? rng.field() : 0n;
    let x: Variable = cs.allocInput('x0', () => xv);

    const checkpoints = this.publicInputs - 1;
    const body = this.constraints - checkpoints;
    // split the body into nearly equal segments, each followed by one checkpoint (a single
    // segment and no checkpoint when publicInputs = 1)
    const segments = Math.max(1, checkpoints);
    let blockNo = 0;
    let stepNo = 0;
    for (let seg = 0; seg < segments; seg++) {
      let budget = Math.floor((body * (seg + 1)) / segments) - Math.floor((body * seg) / segments);
      while (!this.dense && budget >= k + 2) {
        cs.namespace(
          () => `block ${blockNo}`,
          () => {
            const packed = new LinearCombination();
            let wv = 0n;
            for (let j = 0; j < k; j++) {
              const bit = cv ? rng.u32() & 1 : 0;
              const b = cs.alloc(() => `bit ${j}`, () => BigInt(bit));
              cs.enforce(
                () => `boolean ${j}`,
                LinearCombination.of(b),
                LinearCombination.of(ONE).sub(b),
                LinearCombination.zero(),
              );
              packed.add(b, 1n << BigInt(j));
              if (bit) wv += 1n << BigInt(j);
            }
            const w = cs.alloc('packed', () => wv);
            cs.enforce('pack', packed, LinearCombination.of(ONE), LinearCombination.of(w));
            const yv = cv ? rng.field() : 0n;
            const y = cs.alloc('y', () => yv);
            const nextv = cv ? (xv * yv + wv) % r : 0n;
            const next = cs.alloc('x', () => nextv);
            cs.enforce('mul', LinearCombination.of(x), LinearCombination.of(y), LinearCombination.of(next).sub(w));
            x = next;
            xv = nextv;
          },
        );
        blockNo++;
        budget -= k + 2;
      }
      for (; budget > 0; budget--) {
        cs.namespace(
          () => `step ${stepNo}`,
          () => {
            const yv = cv ? rng.field() : 0n;
            const y = cs.alloc('y', () => yv);
            const nextv = cv ? (xv * yv) % r : 0n;
            const next = cs.alloc('x', () => nextv);
            cs.enforce('mul', LinearCombination.of(x), LinearCombination.of(y), LinearCombination.of(next));
            x = next;
            xv = nextv;
          },
        );
        stepNo++;
      }
      if (seg < checkpoints) {
        const cur = xv;
        const out = cs.allocInput(() => `checkpoint ${seg}`, () => cur);
        cs.enforce(() => `checkpoint ${seg} is public`, LinearCombination.of(x), LinearCombination.of(ONE), LinearCombination.of(out));
      }
    }
  }
}
