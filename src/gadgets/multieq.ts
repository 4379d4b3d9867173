/**
 * MultiEq (bellperson `gadgets::multieq`): packs several equalities lhs_k = rhs_k of small bit
 * widths into one constraint Σ 2^{off_k}·lhs_k · 1 = Σ 2^{off_k}·rhs_k, starting a new constraint
 * ("multieq N") when the next one would reach the field's CAPACITY (254 bits).
 *
 * Rust flushes the pending equality when the MultiEq is *dropped*. TypeScript has no destructors:
 * the caller must call `finish()` exactly where the Rust value goes out of scope. In bellperson that
 * is the end of `sha256_compression_function` (after "new h7", once per compression), and the end
 * of the `{ let mut cs = MultiEq::new(&mut cs); UInt32::addmany(…) }` blocks of the uint32 tests.
 * `withMultiEq` runs a scope and finishes it.
 *
 * MultiEq is itself a ConstraintSystem that delegates to the wrapped one (as in Rust), so gadgets
 * can open namespaces on it; the flushed constraint is named under whatever namespace is open at the
 * moment of the flush, exactly as bellperson's root-namespace stack does.
 */
import { type ConstraintSystem, LinearCombination, type Name, ONE, type Variable } from '../r1cs/cs.js';
import { FR_CAPACITY } from './errors.js';

export class MultiEq implements ConstraintSystem {
  private ops = 0;
  private bitsUsed = 0;
  private lhs = LinearCombination.zero();
  private rhs = LinearCombination.zero();
  private finished = false;

  constructor(readonly cs: ConstraintSystem) {}

  get computesValues(): boolean {
    return this.cs.computesValues;
  }

  get program() {
    return this.cs.program;
  }

  /** Number of "multieq" constraints emitted so far. */
  get constraintsEmitted(): number {
    return this.ops;
  }

  private accumulate(): void {
    const ops = this.ops;
    this.cs.enforce(() => `multieq ${ops}`, this.lhs, LinearCombination.of(ONE), this.rhs);
    // Fresh objects: the constraint system may keep the ones it was given.
    this.lhs = LinearCombination.zero();
    this.rhs = LinearCombination.zero();
    this.bitsUsed = 0;
    this.ops += 1;
  }

  /** Adds lhs = rhs, both below 2^numBits. */
  enforceEqual(numBits: number, lhs: LinearCombination, rhs: LinearCombination): void {
    if (this.finished) throw new Error('MultiEq used after finish()');
    if (FR_CAPACITY <= this.bitsUsed + numBits) this.accumulate();
    if (!(FR_CAPACITY > this.bitsUsed + numBits)) throw new RangeError(`MultiEq: ${numBits} bits exceed the capacity`);
    const coeff = 1n << BigInt(this.bitsUsed);
    this.lhs.addLc(lhs, coeff);
    this.rhs.addLc(rhs, coeff);
    this.bitsUsed += numBits;
  }

  /** Rust's Drop: flushes the pending equalities, if any. Idempotent. */
  finish(): void {
    if (this.finished) return;
    if (this.bitsUsed > 0) this.accumulate();
    this.finished = true;
  }

  alloc(name: Name, value: () => bigint): Variable {
    return this.cs.alloc(name, value);
  }
  allocInput(name: Name, value: () => bigint): Variable {
    return this.cs.allocInput(name, value);
  }
  enforce(name: Name, a: LinearCombination, b: LinearCombination, c: LinearCombination): void {
    this.cs.enforce(name, a, b, c);
  }
  namespace<T>(name: Name, fn: () => T): T {
    return this.cs.namespace(name, fn);
  }
  value(v: Variable): bigint | undefined {
    return this.cs.value(v);
  }
}

/** `{ let mut cs = MultiEq::new(cs); … }`: runs `fn` and flushes when it returns. */
export function withMultiEq<T>(cs: ConstraintSystem, fn: (me: MultiEq) => T): T {
  const me = new MultiEq(cs);
  const out = fn(me);
  me.finish();
  return out;
}
