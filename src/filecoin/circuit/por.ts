/**
 * Merkle inclusion as storage-proofs-core's `PoRCircuit::synthesize` (gadgets/por.rs), with the
 * insertion gadgets of gadgets/insertion.rs and the two Merkle hashers of filecoin-hashers:
 *  - SHA-256 (comm_d's binary tree): each child `to_bits_le` (255 bits, padded to 256, bits reversed
 *    within every byte), SHA-256 gadget, digest bytes bit-reversed, first 254 bits packed;
 *  - Poseidon (tree_r_last / tree_c, arity 8 base/sub, 2 top): neptune's legacy circuit.
 *
 * Per level ("merkle tree hash i" in namespace base / sub / top): log2(arity) index bits
 * ("index bit k"), the arity − 1 siblings ("path element k"), `insert` of the current node among
 * them, the hash ("computation of commitment hash"). Then the index bits of all levels are packed
 * into public inputs ("path"), and the computed root is enforced equal to the root
 * ("enforce root is correct"); a non-private root is also exposed ("root").
 */
import { type ConstraintSystem, LinearCombination, ONE } from '../../r1cs/cs.js';
import { AllocatedBit, Boolean } from '../../gadgets/boolean.js';
import { required } from '../../gadgets/errors.js';
import { packBits, packIntoInputs } from '../../gadgets/multipack.js';
import { AllocatedNum } from '../../gadgets/num.js';
import { sha256 } from '../../gadgets/sha256.js';
import { FR_CAPACITY } from '../../gadgets/errors.js';
import { poseidonHashCircuit } from './poseidon.js';

// ---------------------------------------------------------------------------------------------
// insertion.rs

/** `pick`: "pick result" c = condition ? a : b; "pick": (b − a) · condition = b − c. */
export function pick(cs: ConstraintSystem, condition: Boolean, a: AllocatedNum, b: AllocatedNum): AllocatedNum {
  const c = cs.namespace('pick result', () =>
    AllocatedNum.alloc(cs, () => (required(condition.getValue()) ? required(a.value) : required(b.value))),
  );
  cs.program?.select(c.variable, condition, a.variable, b.variable);
  cs.enforce('pick', LinearCombination.of(b.variable).sub(a.variable), condition.lc(), LinearCombination.of(b.variable).sub(c.variable));
  return c;
}

/** `select`: element n of `from` (n = path bits, least significant first), one pick per tree node. */
export function select(cs: ConstraintSystem, from: readonly AllocatedNum[], pathBits: readonly Boolean[]): AllocatedNum {
  if (1 << pathBits.length !== from.length) throw new RangeError('select: from.length must be 2^bits');
  let state = from.slice();
  let halfSize = from.length / 2;
  const rev = pathBits.slice().reverse();
  rev.forEach((bit, i) => {
    const next: AllocatedNum[] = [];
    for (let j = 0; j < halfSize; j++) {
      const jj = j;
      next.push(cs.namespace(() => `pick ${i}, ${jj}`, () => pick(cs, bit, state[halfSize + jj], state[jj])));
    }
    state = next;
    halfSize /= 2;
  });
  return state[0];
}

/** `insert`: `element` inserted at position n (bits, least significant first) among `elements`. */
export function insert(cs: ConstraintSystem, element: AllocatedNum, bits: readonly Boolean[], elements: readonly AllocatedNum[]): AllocatedNum[] {
  const size = elements.length + 1;
  if (1 << bits.length !== size) throw new RangeError('insert: elements.length + 1 must be 2^bits');
  if (size === 2) return insert2(cs, element, bits, elements);
  if (size === 4) return insert4(cs, element, bits, elements);
  if (size === 8) return insert8(cs, element, bits, elements);
  const potential: AllocatedNum[][] = [];
  for (let index = 0; index < size; index++) potential.push([...elements.slice(0, index), element, ...elements.slice(index)]);
  const result: AllocatedNum[] = [];
  for (let pos = 0; pos < size; pos++) {
    const choices = potential.map((r) => r[pos]);
    result.push(cs.namespace(() => `choice at ${pos}`, () => select(cs, choices, bits)));
  }
  return result;
}

function insert2(cs: ConstraintSystem, element: AllocatedNum, bits: readonly Boolean[], elements: readonly AllocatedNum[]): AllocatedNum[] {
  return [
    cs.namespace('binary insert 0', () => pick(cs, bits[0], elements[0], element)),
    cs.namespace('binary insert 1', () => pick(cs, bits[0], element, elements[0])),
  ];
}

function insert4(cs: ConstraintSystem, element: AllocatedNum, bits: readonly Boolean[], elements: readonly AllocatedNum[]): AllocatedNum[] {
  const [b0, b1] = bits;
  const a = element;
  const [b, c, d] = elements;
  const w = (name: string, cond: Boolean, x: AllocatedNum, y: AllocatedNum) => cs.namespace(name, () => pick(cs, cond, x, y));
  const p0x0 = w('p0_x0', b0, b, a);
  const p0 = w('p0', b1, b, p0x0);
  const p1x0 = w('p1_x0', b0, a, b);
  const p1 = w('p1', b1, c, p1x0);
  const p2x1 = w('p2_x1', b0, d, a);
  const p2 = w('p2', b1, p2x1, c);
  const p3x1 = w('p3_x1', b0, a, d);
  const p3 = w('p3', b1, p3x1, d);
  return [p0, p1, p2, p3];
}

function insert8(cs: ConstraintSystem, element: AllocatedNum, bits: readonly Boolean[], elements: readonly AllocatedNum[]): AllocatedNum[] {
  const [b0, b1, b2] = bits;
  const a = element;
  const [b, c, d, e, f, g, h] = elements;
  if (!b0.isIs() || !b1.isIs()) throw new Error('insert_8: bits must be allocated and unnegated');
  const b0NorB1 = Boolean.is(cs.namespace('b0 nor b1', () => AllocatedBit.nor(cs, b0.bit!, b1.bit!)));
  const b0AndB1 = Boolean.is(cs.namespace('b0 and b1', () => AllocatedBit.and(cs, b0.bit!, b1.bit!)));
  const w = (name: string, cond: Boolean, x: AllocatedNum, y: AllocatedNum) => cs.namespace(name, () => pick(cs, cond, x, y));

  const p0xx0 = w('p0_xx0', b0NorB1, a, b);
  const p0 = w('p0', b2, b, p0xx0);

  const p1x00 = w('p1_x00', b0, a, b);
  const p1xx0 = w('p1_xx0', b1, c, p1x00);
  const p1 = w('p1', b2, c, p1xx0);

  const p2x10 = w('p2_x10', b0, d, a);
  const p2xx0 = w('p2_xx0', b1, p2x10, c);
  const p2 = w('p2', b2, d, p2xx0);

  const p3xx0 = w('p3_xx0', b0AndB1, a, d);
  const p3 = w('p3', b2, e, p3xx0);

  const p4xx1 = w('p4_xx1', b0NorB1, a, f);
  const p4 = w('p4', b2, p4xx1, e);

  const p5x01 = w('p5_x01', b0, a, f);
  const p5xx1 = w('p5_xx1', b1, g, p5x01);
  const p5 = w('p5', b2, p5xx1, f);

  const p6x11 = w('p6_x11', b0, h, a);
  const p6xx1 = w('p6_xx1', b1, p6x11, g);
  const p6 = w('p6', b2, p6xx1, g);

  const p7xx1 = w('p7_xx1', b0AndB1, a, h);
  const p7 = w('p7', b2, p7xx1, h);

  return [p0, p1, p2, p3, p4, p5, p6, p7];
}

// ---------------------------------------------------------------------------------------------
// Merkle hashers (filecoin-hashers `hash_multi_leaf_circuit`)

export type MerkleHasher = 'sha256' | 'poseidon';

/** Per byte, the 8 bits in reverse order (the input is padded with constant false to whole bytes). */
function reverseWithinBytes(bits: readonly Boolean[]): Boolean[] {
  const padded = bits.slice();
  while (padded.length % 8 !== 0) padded.push(Boolean.FALSE);
  const out: Boolean[] = [];
  for (let i = 0; i < padded.length; i += 8) for (let k = 7; k >= 0; k--) out.push(padded[i + k]);
  return out;
}

/** Sha256Function::hash_multi_leaf_circuit (then hash_circuit): "{i}_num_into_bits", "hash", "pack_le". */
export function sha256HashMultiLeafCircuit(cs: ConstraintSystem, leaves: readonly AllocatedNum[]): AllocatedNum {
  const bits: Boolean[] = [];
  leaves.forEach((leaf, i) => {
    const leBits = cs.namespace(() => `${i}_num_into_bits`, () => leaf.toBitsLe(cs));
    bits.push(...reverseWithinBytes(leBits));
  });
  const be = cs.namespace('hash', () => sha256(cs, bits));
  const le = reverseWithinBytes(be).slice(0, FR_CAPACITY);
  return cs.namespace('pack_le', () => packBits(cs, le));
}

export function hashMultiLeafCircuit(cs: ConstraintSystem, hasher: MerkleHasher, leaves: readonly AllocatedNum[]): AllocatedNum {
  return hasher === 'sha256' ? sha256HashMultiLeafCircuit(cs, leaves) : poseidonHashCircuit(cs, leaves);
}

// ---------------------------------------------------------------------------------------------
// por.rs

/** One level of an authentication path; values are undefined in a blank (shape) circuit. */
export interface AuthPathLevel {
  readonly arity: number;
  /** arity − 1 siblings. */
  readonly hashes: readonly (bigint | undefined)[];
  /** Position of the current node among the arity children. */
  readonly index: number | undefined;
}

/** `AuthPath`: base levels, then at most one sub level and one top level. */
export interface AuthPath {
  readonly base: readonly AuthPathLevel[];
  readonly sub: readonly AuthPathLevel[];
  readonly top: readonly AuthPathLevel[];
}

/** A path with no values (`AuthPath::blank`) for the given per-segment arities. */
export function blankAuthPath(baseArity: number, baseLevels: number, subArity = 0, topArity = 0): AuthPath {
  const level = (arity: number): AuthPathLevel => ({ arity, hashes: new Array<undefined>(arity - 1).fill(undefined), index: undefined });
  return {
    base: Array.from({ length: baseLevels }, () => level(baseArity)),
    sub: subArity ? [level(subArity)] : [],
    top: topArity ? [level(topArity)] : [],
  };
}

/** `SubPath::synthesize`: returns the node at the top of the segment and its index bits. */
function synthesizeSubPath(cs: ConstraintSystem, hasher: MerkleHasher, levels: readonly AuthPathLevel[], start: AllocatedNum): [AllocatedNum, Boolean[]] {
  let cur = start;
  const authPathBits: Boolean[] = [];
  levels.forEach((level, i) => {
    const arity = level.arity;
    if (arity < 2 || (arity & (arity - 1)) !== 0) throw new RangeError('arity must be a power of two');
    if (level.hashes.length !== arity - 1) throw new RangeError(`path level ${i}: expected ${arity - 1} siblings`);
    const indexBitCount = Math.log2(arity);
    cs.namespace(
      () => `merkle tree hash ${i}`,
      () => {
        const indexBits: Boolean[] = [];
        for (let k = 0; k < indexBitCount; k++) {
          const b = level.index === undefined ? undefined : ((level.index >> k) & 1) === 1;
          indexBits.push(Boolean.is(cs.namespace(() => `index bit ${k}`, () => AllocatedBit.alloc(cs, b))));
        }
        cs.program?.inputBits(indexBits[0].refVariable(), indexBitCount, level.index);
        authPathBits.push(...indexBits);
        const siblings = level.hashes.map((h, k) => cs.namespace(() => `path element ${k}`, () => AllocatedNum.allocHint(cs, h)));
        const inserted = insert(cs, cur, indexBits, siblings);
        cur = cs.namespace('computation of commitment hash', () => hashMultiLeafCircuit(cs, hasher, inserted));
      },
    );
  });
  return [cur, authPathBits];
}

/** A leaf or root: already allocated (`Root::Var`), or a value to allocate (`Root::Val`). */
export type RootArg = AllocatedNum | { readonly value: bigint | undefined };

function allocatedRoot(cs: ConstraintSystem, name: string, r: RootArg): AllocatedNum {
  if (r instanceof AllocatedNum) return r;
  const v = r.value;
  return cs.namespace(name, () => AllocatedNum.allocHint(cs, v));
}

/**
 * `PoRCircuit::synthesize(cs, value, auth_path, root, private)`. StackedDrg calls it with allocated
 * leaf and root and `private = true`: one public input (the packed path bits) per inclusion proof.
 */
export function porCircuit(cs: ConstraintSystem, hasher: MerkleHasher, value: RootArg, authPath: AuthPath, root: RootArg, isPrivate: boolean): AllocatedNum {
  const valueNum = allocatedRoot(cs, 'value', value);
  const [afterBase, baseBits] = cs.namespace('base', () => synthesizeSubPath(cs, hasher, authPath.base, valueNum));
  const [afterSub, subBits] = cs.namespace('sub', () => synthesizeSubPath(cs, hasher, authPath.sub, afterBase));
  const [computedRoot, topBits] = cs.namespace('top', () => synthesizeSubPath(cs, hasher, authPath.top, afterSub));
  cs.namespace('path', () => packIntoInputs(cs, [...baseBits, ...subBits, ...topBits]));
  const rt = allocatedRoot(cs, 'root_value', root);
  cs.enforce('enforce root is correct', LinearCombination.of(computedRoot.variable), LinearCombination.of(ONE), LinearCombination.of(rt.variable));
  if (!isPrivate) cs.namespace('root', () => rt.inputize(cs));
  return computedRoot;
}
