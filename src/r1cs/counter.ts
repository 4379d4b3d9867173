/**
 * CountingSystem: counts constraints and variables and stores nothing (O(1) memory), like
 * bellperson's metric system without the names. Never calls value closures or evaluates names.
 */
import type { CircuitCounts, ConstraintSystem, LinearCombination, Name, Variable } from './cs.js';
import { auxVariable } from './cs.js';

export class CountingSystem implements ConstraintSystem {
  readonly computesValues = false;
  numConstraints = 0;
  /** Inputs including ONE. */
  numInputs = 1;
  numAux = 0;

  alloc(_name: Name, _value: () => bigint): Variable {
    return auxVariable(this.numAux++);
  }

  allocInput(_name: Name, _value: () => bigint): Variable {
    return this.numInputs++;
  }

  enforce(_name: Name, _a: LinearCombination, _b: LinearCombination, _c: LinearCombination): void {
    this.numConstraints++;
  }

  namespace<T>(_name: Name, fn: () => T): T {
    return fn();
  }

  value(_v: Variable): undefined {
    return undefined;
  }

  counts(): CircuitCounts {
    return { constraints: this.numConstraints, inputs: this.numInputs, aux: this.numAux };
  }
}
