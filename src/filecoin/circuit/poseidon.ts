/**
 * neptune 11's *legacy* Poseidon circuit (`neptune::circuit::poseidon_hash`), the one Filecoin's
 * trusted setups were made with: filecoin-hashers' `hash2_circuit` / `hash_multi_leaf_circuit` and
 * storage-proofs-porep's `hash_single_column` all call it with `PoseidonConstants::new()`
 * (Strength::Standard, HashType::MerkleTree: the domain tag 2^arity − 1 is a constant element).
 *
 * The circuit runs neptune's optimized schedule: compressed round constants, the pre-sparse matrix
 * after the last initial full round, one sparse matrix per partial round. State elements are either
 * allocated numbers or linear combinations (`Elt`); an S-box first allocates its input when it is a
 * linear combination ("S-box input" / "enforce num allocation preserves lc"). The very first S-box of
 * the constant tag is computed out of circuit. Pinned counts (neptune `test_poseidon_hash`):
 * arity 2 → 311, 4 → 377, 8 → 505, 11 → 598 (storage-proofs-porep hash.rs).
 *
 * Linear combinations are kept merged by variable (bellpepper-core's `LinearCombination` is an
 * indexer that merges terms on insertion), which also keeps them short: at most width + R_P terms.
 */
import { type ConstraintSystem, LinearCombination, ONE, type Variable } from '../../r1cs/cs.js';
import { FR_MODULUS as P } from '../../field/layout.js';
import { AllocatedNum } from '../../gadgets/num.js';
import { required } from '../../gadgets/errors.js';
import { type PoseidonOptimizedConstants, type SparseMatrix, poseidonOptimizedConstants } from '../hash/poseidon.js';

const modP = (x: bigint): bigint => {
  const r = x % P;
  return r < 0n ? r + P : r;
};

/** A state element: an allocated number, or a linear combination (merged terms) with its value. */
type Elt =
  | { readonly kind: 'alloc'; readonly num: AllocatedNum }
  | { readonly kind: 'lc'; readonly terms: Map<Variable, bigint>; readonly value: bigint | undefined };

const constantElt = (c: bigint): Elt => ({ kind: 'lc', terms: new Map([[ONE, modP(c)]]), value: modP(c) });

/** Σ scalars[i]·elts[i] as a merged linear combination (neptune `scalar_product`). */
function scalarProduct(elts: readonly Elt[], scalars: readonly bigint[]): Elt {
  const terms = new Map<Variable, bigint>();
  let value: bigint | undefined = 0n;
  for (let i = 0; i < elts.length; i++) {
    const e = elts[i];
    const s = scalars[i];
    if (e.kind === 'alloc') {
      const v = e.num.variable;
      const prev = terms.get(v);
      terms.set(v, prev === undefined ? s : (prev + s) % P);
      const ev = e.num.value;
      value = value === undefined || ev === undefined ? undefined : value + ev * s;
    } else {
      for (const [v, c] of e.terms) {
        const prev = terms.get(v);
        terms.set(v, prev === undefined ? (c * s) % P : (prev + c * s) % P);
      }
      value = value === undefined || e.value === undefined ? undefined : value + e.value * s;
    }
  }
  return { kind: 'lc', terms, value: value === undefined ? undefined : value % P };
}

function toLc(terms: Map<Variable, bigint>): LinearCombination {
  const lc = LinearCombination.zero();
  for (const [v, c] of terms) lc.add(v, c);
  return lc;
}

/** neptune `Elt::ensure_allocated`: allocates "allocate for Elt::Num" and enforces lc · 1 = num. */
function ensureAllocated(cs: ConstraintSystem, e: Elt): AllocatedNum {
  if (e.kind === 'alloc') return e.num;
  const value = e.value;
  const num = cs.namespace('allocate for Elt::Num', () => AllocatedNum.alloc(cs, () => required(value)));
  cs.program?.lc(num.variable, e.terms);
  cs.enforce('enforce num allocation preserves lc', toLc(e.terms), LinearCombination.of(ONE), LinearCombination.of(num.variable));
  return num;
}

const lcPlusConst = (v: Variable, c: bigint): LinearCombination => LinearCombination.of(v).add(ONE, c);

/** neptune `square_sum`: "squared sum" = (num + toAdd)^2. */
function squareSum(cs: ConstraintSystem, toAdd: bigint, num: AllocatedNum): AllocatedNum {
  const res = cs.namespace('squared sum', () =>
    AllocatedNum.alloc(cs, () => {
      const t = required(num.value) + toAdd;
      return (t * t) % P;
    }),
  );
  cs.program?.sqadd(res.variable, num.variable, toAdd);
  cs.enforce('squared sum constraint', lcPlusConst(num.variable, toAdd), lcPlusConst(num.variable, toAdd), LinearCombination.of(res.variable));
  return res;
}

/** neptune `mul_sum`: "mul_sum" = a·(b + preAdd) + postAdd, with the constraint named after the adds present. */
function mulSum(cs: ConstraintSystem, a: AllocatedNum, b: AllocatedNum, preAdd: bigint | undefined, postAdd: bigint | undefined): AllocatedNum {
  const res = cs.namespace('mul_sum', () =>
    AllocatedNum.alloc(cs, () => {
      let t = required(b.value);
      if (preAdd !== undefined) t += preAdd;
      t *= required(a.value);
      if (postAdd !== undefined) t += postAdd;
      return modP(t);
    }),
  );
  cs.program?.muladd(res.variable, a.variable, b.variable, preAdd, postAdd);
  const bLc = preAdd === undefined ? LinearCombination.of(b.variable) : lcPlusConst(b.variable, preAdd);
  const cLc = postAdd === undefined ? LinearCombination.of(res.variable) : lcPlusConst(res.variable, modP(-postAdd));
  const name =
    postAdd !== undefined
      ? preAdd !== undefined
        ? 'mul sum constraint pre-post-add'
        : 'mul sum constraint post-add'
      : preAdd !== undefined
        ? 'mul sum constraint pre-add'
        : 'mul sum constraint';
  cs.enforce(name, bLc, LinearCombination.of(a.variable), cLc);
  return res;
}

/** neptune `quintic_s_box`: l^5 (+ postKey), l allocated first when it is a linear combination. */
function quinticSBox(cs: ConstraintSystem, e: Elt, postKey: bigint | undefined): Elt {
  const l = cs.namespace('S-box input', () => ensureAllocated(cs, e));
  const l2 = cs.namespace('l^2', () => l.square(cs));
  const l4 = cs.namespace('l^4', () => l2.square(cs));
  const l5 = cs.namespace('(l4 * l) + rk)', () => mulSum(cs, l4, l, undefined, postKey));
  return { kind: 'alloc', num: l5 };
}

/** neptune `quintic_s_box_pre_add`: (l + preKey)^5 + postKey. */
function quinticSBoxPreAdd(cs: ConstraintSystem, e: Elt, preKey: bigint, postKey: bigint): Elt {
  const l = cs.namespace('S-box input', () => ensureAllocated(cs, e));
  const l2 = cs.namespace('(l+rk)^2', () => squareSum(cs, preKey, l));
  const l4 = cs.namespace('l^4', () => l2.square(cs));
  const l5 = cs.namespace('l4 * (l + rk)', () => mulSum(cs, l4, l, preKey, postKey));
  return { kind: 'alloc', num: l5 };
}

const pow5 = (x: bigint): bigint => {
  const x2 = (x * x) % P;
  return (((x2 * x2) % P) * x) % P;
};

class LegacyPoseidonCircuit {
  private offset = 0;
  private round = 0;
  private readonly width: number;

  constructor(
    private elements: Elt[],
    private readonly c: PoseidonOptimizedConstants,
  ) {
    this.width = c.width;
  }

  hash(cs: ConstraintSystem): AllocatedNum {
    const half = this.c.fullRounds / 2;
    cs.namespace('first round', () => this.fullRound(cs, true, false));
    for (let i = 1; i < half; i++) cs.namespace(() => `initial full round ${i}`, () => this.fullRound(cs, false, false));
    for (let i = 0; i < this.c.partialRounds; i++) cs.namespace(() => `partial round ${i}`, () => this.partialRound(cs));
    for (let i = 0; i < half - 1; i++) cs.namespace(() => `final full round ${i}`, () => this.fullRound(cs, false, false));
    cs.namespace('terminal full round', () => this.fullRound(cs, false, true));
    return cs.namespace('hash result', () => ensureAllocated(cs, this.elements[1]));
  }

  private fullRound(cs: ConstraintSystem, first: boolean, last: boolean): void {
    const crc = this.c.compressedRoundConstants;
    const w = this.width;
    let off = this.offset;
    const pre = first ? crc.slice(off, off + w) : [];
    off += pre.length;
    const post = first || !last ? crc.slice(off, off + w) : [];
    off += post.length;
    for (let i = 0; i < w; i++) {
      const postKey = first || !last ? post[i] : undefined;
      const idx = i;
      if (first) {
        if (i === 0) {
          // The tag is a constant: its first S-box is computed statically (no constraint).
          const e = this.elements[0];
          if (e.kind !== 'lc' || e.value === undefined) throw new Error('Poseidon tag must be a constant');
          this.elements[0] = constantElt(pow5((e.value + pre[0]) % P) + post[0]);
        } else {
          this.elements[i] = cs.namespace(() => `quintic s-box ${idx}`, () => quinticSBoxPreAdd(cs, this.elements[idx], pre[idx], post[idx]));
        }
      } else {
        this.elements[i] = cs.namespace(() => `quintic s-box ${idx}`, () => quinticSBox(cs, this.elements[idx], postKey));
      }
    }
    this.offset = off;
    this.productMds();
  }

  private partialRound(cs: ConstraintSystem): void {
    const rk = this.c.compressedRoundConstants[this.offset];
    this.offset += 1;
    this.elements[0] = cs.namespace('solitary quintic s-box', () => quinticSBox(cs, this.elements[0], rk));
    this.productMds();
  }

  private productMds(): void {
    const half = this.c.fullRounds / 2;
    const sparseOffset = half - 1;
    if (this.round === sparseOffset) {
      this.productWithMatrix(this.c.preSparseMatrix);
    } else if (this.round > sparseOffset && this.round < half + this.c.partialRounds) {
      this.productWithSparse(this.c.sparseMatrices[this.round - sparseOffset - 1]);
    } else {
      this.productWithMatrix(this.c.mds);
    }
    this.round += 1;
  }

  /** result[j] = Σ_i elements[i]·m[i][j] (row vector times matrix). */
  private productWithMatrix(m: readonly (readonly bigint[])[]): void {
    const w = this.width;
    const out: Elt[] = [];
    for (let j = 0; j < w; j++) {
      const column: bigint[] = new Array(w);
      for (let i = 0; i < w; i++) column[i] = m[i][j];
      out.push(scalarProduct(this.elements, column));
    }
    this.elements = out;
  }

  /** M'': result[0] = Σ wHat[i]·elements[i]; result[j] = elements[j] + vRest[j−1]·elements[0]. */
  private productWithSparse(sm: SparseMatrix): void {
    const out: Elt[] = [scalarProduct(this.elements, sm.wHat)];
    const e0 = this.elements[0];
    for (let j = 1; j < this.width; j++) {
      const ej = this.elements[j];
      if (ej.kind !== 'lc') throw new Error('neptune: only two numbers may be added');
      out.push(scalarProduct([ej, e0], [1n, sm.vRest[j - 1]]));
    }
    this.elements = out;
  }
}

/**
 * `neptune::circuit::poseidon_hash` with Filecoin's constants for arity = preimage.length
 * (2, 4, 8 or 11; MerkleTree domain tag unless `domainTag` gives another, e.g. SnapDeals'
 * GEN_RANDOMNESS_DOMAIN_TAG: the same constraints, only the constant tag differs). Namespaces and names follow neptune.
 */
export function poseidonHashCircuit(cs: ConstraintSystem, preimage: readonly AllocatedNum[], domainTag?: bigint): AllocatedNum {
  const c = poseidonOptimizedConstants(preimage.length);
  const elements: Elt[] = [constantElt(domainTag ?? c.domainTag), ...preimage.map((num): Elt => ({ kind: 'alloc', num }))];
  return new LegacyPoseidonCircuit(elements, c).hash(cs);
}

/** Constraints of one legacy Poseidon hash: 3 per S-box except the tag's first, plus the LC allocations. */
export function poseidonCircuitConstraintCount(arity: number): number {
  const c = poseidonOptimizedConstants(arity);
  const w = arity + 1;
  const sBoxes = w * c.fullRounds + c.partialRounds - 1;
  return 3 * sBoxes + (w * c.fullRounds + c.partialRounds - arity);
}
