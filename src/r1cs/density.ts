/**
 * DensityCounter: counts like CountingSystem and also tracks the A and B densities (which variables
 * appear with a non-zero coefficient), without storing any constraint. Memory is one byte per
 * variable per density, so the 32 GiB PoRep partition (~130 M aux) fits on a small machine, where
 * recording its full shape would not. Densities follow ShapeRecorder's rule: terms of one linear
 * combination are merged by variable, and a merged coefficient ≡ 0 (mod r) does not count.
 */
import { FR_MODULUS } from '../field/layout.js';
import { CountingSystem } from './counter.js';
import { auxIndex, isInput, type LinearCombination, type Name } from './cs.js';

class GrowableFlags {
  bytes = new Uint8Array(1 << 16);
  set(i: number): void {
    if (i >= this.bytes.length) {
      let n = this.bytes.length;
      while (n <= i) n *= 2;
      const next = new Uint8Array(n);
      next.set(this.bytes);
      this.bytes = next;
    }
    this.bytes[i] = 1;
  }
  count(limit: number): number {
    let c = 0;
    const end = Math.min(limit, this.bytes.length);
    for (let i = 0; i < end; i++) c += this.bytes[i];
    return c;
  }
}

export interface DensityCounts {
  constraints: number;
  inputs: number;
  aux: number;
  /** Aux variables dense in A (the prover's A query also holds every input). */
  aAuxDense: number;
  bInputDense: number;
  bAuxDense: number;
}

export class DensityCounter extends CountingSystem {
  private readonly aAux = new GrowableFlags();
  private readonly bAux = new GrowableFlags();
  private readonly bInput = new GrowableFlags();

  override enforce(name: Name, a: LinearCombination, b: LinearCombination, c: LinearCombination): void {
    super.enforce(name, a, b, c);
    this.mark(a, undefined, this.aAux);
    this.mark(b, this.bInput, this.bAux);
  }

  private mark(lc: LinearCombination, inputs: GrowableFlags | undefined, aux: GrowableFlags): void {
    const { vars, coeffs } = lc;
    const n = vars.length;
    let merged: Map<number, bigint> | undefined;
    for (let i = 0; i < n && merged === undefined; i++) for (let j = i + 1; j < n; j++) if (vars[i] === vars[j]) merged = new Map();
    if (merged === undefined) {
      for (let i = 0; i < n; i++) if (coeffs[i] % FR_MODULUS !== 0n) this.flag(vars[i], inputs, aux);
      return;
    }
    for (let i = 0; i < n; i++) merged.set(vars[i], (merged.get(vars[i]) ?? 0n) + coeffs[i]);
    for (const [v, k] of merged) if (k % FR_MODULUS !== 0n) this.flag(v, inputs, aux);
  }

  private flag(v: number, inputs: GrowableFlags | undefined, aux: GrowableFlags): void {
    if (isInput(v)) inputs?.set(v);
    else aux.set(auxIndex(v));
  }

  densityCounts(): DensityCounts {
    return {
      constraints: this.numConstraints,
      inputs: this.numInputs,
      aux: this.numAux,
      aAuxDense: this.aAux.count(this.numAux),
      bInputDense: this.bInput.count(this.numInputs),
      bAuxDense: this.bAux.count(this.numAux),
    };
  }
}
