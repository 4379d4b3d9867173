/**
 * TestConstraintSystem: the bellperson test system. Keeps every name with its namespace path
 * ("a/b/c"), every value and every constraint, and answers "which constraint is unsatisfied" with
 * that path. Slow and memory-hungry by design: for gadget tests, never for real circuits.
 *
 * Naming follows bellperson's TestConstraintSystem: a name segment may not contain '/', and
 * creating a second object (variable, constraint or namespace) at an existing path throws. The
 * constant input is pre-registered as "ONE".
 */
import { FR_MODULUS, mod } from '../field/layout.js';
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

type NamedObject = 'namespace' | 'variable' | 'constraint';

export interface StoredConstraint {
  path: string;
  a: LinearCombination;
  b: LinearCombination;
  c: LinearCombination;
}

export class TestConstraintSystem implements ConstraintSystem {
  readonly computesValues = true;

  private readonly named = new Map<string, NamedObject | Variable>();
  private readonly path: string[] = [];
  private readonly inputValues: bigint[] = [1n];
  private readonly auxValues: bigint[] = [];
  private readonly inputNames: string[] = ['ONE'];
  private readonly auxNames: string[] = [];
  private readonly stored: StoredConstraint[] = [];

  constructor() {
    this.named.set('ONE', 0);
  }

  get numConstraints(): number {
    return this.stored.length;
  }
  /** Inputs including ONE. */
  get numInputs(): number {
    return this.inputValues.length;
  }
  get numAux(): number {
    return this.auxValues.length;
  }

  alloc(name: Name, value: () => bigint): Variable {
    const path = this.register(name);
    const v = auxVariable(this.auxValues.length);
    this.named.set(path, v);
    this.auxValues.push(mod(value(), FR_MODULUS));
    this.auxNames.push(path);
    return v;
  }

  allocInput(name: Name, value: () => bigint): Variable {
    const path = this.register(name);
    const v = this.inputValues.length;
    this.named.set(path, v);
    this.inputValues.push(mod(value(), FR_MODULUS));
    this.inputNames.push(path);
    return v;
  }

  enforce(name: Name, a: LinearCombination, b: LinearCombination, c: LinearCombination): void {
    const path = this.register(name);
    this.named.set(path, 'constraint');
    for (const lc of [a, b, c]) for (const v of lc.vars) this.checkVariable(v, path);
    this.stored.push({ path, a, b, c });
  }

  namespace<T>(name: Name, fn: () => T): T {
    const segment = evalName(name);
    const path = this.register(segment);
    this.named.set(path, 'namespace');
    this.path.push(segment);
    try {
      return fn();
    } finally {
      this.path.pop();
    }
  }

  value(v: Variable): bigint {
    this.checkVariable(v, 'value');
    return isInput(v) ? this.inputValues[v] : this.auxValues[auxIndex(v)];
  }

  /** Evaluates a linear combination on the current assignment. */
  eval(lc: LinearCombination): bigint {
    let acc = 0n;
    for (let k = 0; k < lc.vars.length; k++) acc += lc.coeffs[k] * this.value(lc.vars[k]);
    return mod(acc, FR_MODULUS);
  }

  /** The full path of the first unsatisfied constraint, or undefined when all hold. */
  whichIsUnsatisfied(): string | undefined {
    for (const k of this.stored) {
      if (mod(this.eval(k.a) * this.eval(k.b) - this.eval(k.c), FR_MODULUS) !== 0n) return k.path;
    }
    return undefined;
  }

  isSatisfied(): boolean {
    return this.whichIsUnsatisfied() === undefined;
  }

  /** Value of the variable at `path`. */
  get(path: string): bigint {
    const v = this.named.get(path);
    if (typeof v !== 'number') throw new Error(`no variable at path ${path}`);
    return this.value(v);
  }

  /** Overwrites the value of the variable at `path` (to test that a gadget catches a bad witness). */
  set(path: string, value: bigint): void {
    const v = this.named.get(path);
    if (typeof v !== 'number') throw new Error(`no variable at path ${path}`);
    if (isInput(v)) this.inputValues[v] = mod(value, FR_MODULUS);
    else this.auxValues[auxIndex(v)] = mod(value, FR_MODULUS);
  }

  /** Input values, ONE first. */
  inputs(): bigint[] {
    return this.inputValues.slice();
  }

  aux(): bigint[] {
    return this.auxValues.slice();
  }

  /** The full assignment [inputs…, aux…] (the column order of the shape matrices). */
  assignment(): bigint[] {
    return [...this.inputValues, ...this.auxValues];
  }

  /** Paths of the constraints, in synthesis order. */
  constraintPaths(): string[] {
    return this.stored.map((k) => k.path);
  }

  /** Constraint i as enforced (linear combinations unmerged). */
  constraint(i: number): Readonly<StoredConstraint> {
    return this.stored[i];
  }

  /** Path of input i / aux j. */
  inputPath(i: number): string {
    return this.inputNames[i];
  }
  auxPath(j: number): string {
    return this.auxNames[j];
  }

  private register(name: Name): string {
    const segment = evalName(name);
    if (segment.includes('/')) throw new Error(`'/' is not allowed in names: ${segment}`);
    const full = this.path.length === 0 ? segment : `${this.path.join('/')}/${segment}`;
    if (this.named.has(full)) throw new Error(`tried to create object at existing path: ${full}`);
    return full;
  }

  private checkVariable(v: Variable, where: string): void {
    const ok = isInput(v) ? v < this.inputValues.length : auxIndex(v) < this.auxValues.length;
    if (!Number.isInteger(v) || !ok) throw new RangeError(`${where}: unknown variable ${v}`);
  }
}
