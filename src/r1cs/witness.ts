/**
 * WitnessGenerator: computes values only and writes the full assignment [inputs…, aux…] as
 * Montgomery Fr (layout.ts) straight into one Uint8Array: element i is input i (0 = ONE), element
 * numInputs + j is aux j. No per-variable objects, no names, no constraints stored; `enforce` is a
 * no-op unless the debug `check` option is set, which evaluates every constraint as it is enforced
 * and throws with the constraint's namespace path on the first unsatisfied one.
 */
import { FR_BYTES, FR_MODULUS, mod } from '../field/layout.js';
import {
  type ConstraintSystem,
  type LinearCombination,
  type Name,
  type Variable,
  auxIndex,
  auxVariable,
  evalName,
  isInput,
} from './cs.js';

const R_MONT = (1n << 256n) % FR_MODULUS;
const R_INV = modPow(R_MONT, FR_MODULUS - 2n, FR_MODULUS);
const MASK64 = (1n << 64n) - 1n;

function modPow(b: bigint, e: bigint, m: bigint): bigint {
  let r = 1n;
  for (b %= m; e > 0n; e >>= 1n, b = (b * b) % m) if (e & 1n) r = (r * b) % m;
  return r;
}

export interface WitnessOptions {
  /** Evaluate every constraint when enforced and throw on the first unsatisfied one (slow). */
  check?: boolean;
}

export class WitnessGenerator implements ConstraintSystem {
  readonly computesValues = true;
  readonly numInputs: number;
  private buf: Uint8Array;
  private view: DataView;
  private readonly growable: boolean;
  private nInputs = 1; // ONE
  private nAux = 0;
  private readonly check: boolean;
  private readonly path: string[] = [];

  /**
   * @param numInputs the shape's input count, ONE included (fixes where aux values start)
   * @param out buffer to write into, at least (numInputs + numAux)·32 bytes; it is not grown (a
   *   RangeError is thrown when it is too small). Without it a buffer is allocated and grown.
   */
  constructor(numInputs: number, out?: Uint8Array, opts: WitnessOptions = {}) {
    if (!Number.isSafeInteger(numInputs) || numInputs < 1) {
      throw new RangeError(`numInputs must be ≥ 1 (ONE included), got ${numInputs}`);
    }
    this.numInputs = numInputs;
    this.growable = out === undefined;
    this.buf = out ?? new Uint8Array((numInputs + 1024) * FR_BYTES);
    if (this.buf.length < numInputs * FR_BYTES) {
      throw new RangeError(`output buffer of ${this.buf.length} bytes cannot hold ${numInputs} inputs`);
    }
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.check = opts.check ?? false;
    this.write(0, 1n);
  }

  get numAux(): number {
    return this.nAux;
  }

  alloc(_name: Name, value: () => bigint): Variable {
    const j = this.nAux;
    const i = this.numInputs + j;
    if ((i + 1) * FR_BYTES > this.buf.length) this.grow(i + 1);
    this.write(i, value());
    this.nAux = j + 1;
    return auxVariable(j);
  }

  allocInput(_name: Name, value: () => bigint): Variable {
    const i = this.nInputs;
    if (i >= this.numInputs) {
      throw new RangeError(`the circuit allocates more than the shape's ${this.numInputs - 1} public inputs`);
    }
    this.write(i, value());
    this.nInputs = i + 1;
    return i;
  }

  enforce(name: Name, a: LinearCombination, b: LinearCombination, c: LinearCombination): void {
    if (!this.check) return;
    const lhs = this.eval(a) * this.eval(b);
    if (mod(lhs - this.eval(c), FR_MODULUS) !== 0n) {
      const full = [...this.path, evalName(name)].join('/');
      throw new Error(`unsatisfied constraint: ${full}`);
    }
  }

  namespace<T>(name: Name, fn: () => T): T {
    if (!this.check) return fn();
    this.path.push(evalName(name));
    try {
      return fn();
    } finally {
      this.path.pop();
    }
  }

  value(v: Variable): bigint {
    if (isInput(v)) {
      if (v >= this.nInputs) throw new RangeError(`unknown input ${v}`);
      return this.read(v);
    }
    const j = auxIndex(v);
    if (j >= this.nAux) throw new RangeError(`unknown aux variable ${j}`);
    return this.read(this.numInputs + j);
  }

  /** The full assignment, (numInputs + numAux)·32 bytes of Montgomery Fr (a view, not a copy). */
  assignment(): Uint8Array {
    if (this.nInputs !== this.numInputs) {
      throw new Error(`the circuit allocated ${this.nInputs} inputs but the shape has ${this.numInputs}`);
    }
    return this.buf.subarray(0, (this.numInputs + this.nAux) * FR_BYTES);
  }

  /** The public inputs a verifier takes: inputs 1 … numInputs − 1, *without* ONE. */
  inputs(): bigint[] {
    const out: bigint[] = [];
    for (let i = 1; i < this.nInputs; i++) out.push(this.read(i));
    return out;
  }

  private eval(lc: LinearCombination): bigint {
    let acc = 0n;
    for (let k = 0; k < lc.vars.length; k++) acc += lc.coeffs[k] * this.value(lc.vars[k]);
    return acc % FR_MODULUS;
  }

  private grow(minElements: number): void {
    if (!this.growable) {
      throw new RangeError(
        `witness buffer of ${this.buf.length} bytes is full (needs ${minElements * FR_BYTES}); pass a larger one`,
      );
    }
    const next = new Uint8Array(Math.max(minElements, 2 * (this.buf.length / FR_BYTES)) * FR_BYTES);
    next.set(this.buf);
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  // Montgomery write/read through 64-bit limbs: ~4× faster than a byte loop (same layout as
  // layout.ts writeFr/readFr, which the tests compare against).
  private write(i: number, x: bigint): void {
    const o = i * FR_BYTES;
    let m = x === 0n ? 0n : x === 1n ? R_MONT : mod(x * R_MONT, FR_MODULUS);
    const dv = this.view;
    dv.setBigUint64(o, m & MASK64, true);
    m >>= 64n;
    dv.setBigUint64(o + 8, m & MASK64, true);
    m >>= 64n;
    dv.setBigUint64(o + 16, m & MASK64, true);
    dv.setBigUint64(o + 24, m >> 64n, true);
  }

  private read(i: number): bigint {
    const o = i * FR_BYTES;
    const dv = this.view;
    const m =
      dv.getBigUint64(o, true) |
      (dv.getBigUint64(o + 8, true) << 64n) |
      (dv.getBigUint64(o + 16, true) << 128n) |
      (dv.getBigUint64(o + 24, true) << 192n);
    return m === 0n ? 0n : m === R_MONT ? 1n : (m * R_INV) % FR_MODULUS;
  }
}
