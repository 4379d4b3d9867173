/**
 * The EmptySectorUpdate circuit (SnapDeals), constraint for constraint as rust-fil-proofs v19's
 * `EmptySectorUpdateCircuit::synthesize` (storage-proofs-update/src/circuit.rs) with the gadgets of gadgets.rs
 * (`apex_por`, `gen_challenge_bits`, `get_challenge_high_bits`, `label_r_new`) and storage-proofs-core's
 * `por_no_challenge_input` and `insertion::select`. In order:
 *
 *  k_and_h_select (aux, inputized), its partition_bit_len + |hs| bits and "k_and_h_select binary decomp";
 *  "pack partition bits"; comm_r_old, comm_d_new, comm_r_new (aux, inputized);
 *  phi = Poseidon₂(comm_d_new, comm_r_old) with the gen-randomness tag; comm_c, root_r_old, root_r_new, the apex
 *  leaves and the partition path (TreeD siblings above the apex root);
 *  comm_r_old = H(comm_c, root_r_old), comm_r_new = H(comm_c, root_r_new) (Poseidon₂, MerkleTree tag);
 *  apex_por: the apex tree (SHA256 hash2) over this partition's apex leaves and its root's path to comm_d_new;
 *  gen_challenge_bits: per digest j, digest_index = k·digests + j, digest = Poseidon₂(comm_r_new, digest_index)
 *  (gen-randomness tag), its 255 bits ("binary decomp"), chunks of (challenge_bit_len − partition_bit_len) bits;
 *  per challenge ("c_index"): c_bits = chunk ‖ partition bits; c_high selected by h_select; rho = Poseidon₂(phi,
 *  c_high); leaf_r_old, leaf_d_new; leaf_r_new = leaf_r_old + leaf_d_new·rho; the TreeR PoRs of r_old and r_new
 *  (siblings allocated just before each); the apex leaf selected by the challenge's apex bits; the SHA256 PoR of
 *  leaf_d_new up to that apex leaf.
 * Public inputs: [k | h_select << partition_bit_len, comm_r_old, comm_d_new, comm_r_new].
 *
 * Each challenge is one witness-program segment (program.ts); everything before the first challenge is the
 * prologue.
 */
import { LinearCombination, ONE, type Circuit, type ConstraintSystem } from '../../r1cs/cs.js';
import { AllocatedBit, Boolean, fieldIntoAllocatedBitsLe } from '../../gadgets/boolean.js';
import { required } from '../../gadgets/errors.js';
import { packBits } from '../../gadgets/multipack.js';
import { AllocatedNum } from '../../gadgets/num.js';
import { sha256 } from '../../gadgets/sha256.js';
import { FR_CAPACITY, FR_NUM_BITS } from '../../gadgets/errors.js';
import { FR_MODULUS } from '../../field/layout.js';
import { hashMultiLeafCircuit, insert, select, type MerkleHasher } from '../circuit/por.js';
import { poseidonHashCircuit } from '../circuit/poseidon.js';
import type { PoseidonTreeShape } from '../circuit/stacked.js';
import { GEN_RANDOMNESS_DOMAIN_TAG } from '../hash/poseidon.js';
import { snapChallengesPerDigest, snapDigestsPerPartition, snapRandomBitsPerChallenge } from './challenges.js';
import { snapHSelect, type SnapParams } from './registry.js';

type V = bigint | undefined;

/** One challenge's openings (circuit.rs `ChallengeProof`): leaves and sibling lists, leaf first. */
export interface SnapChallengeWitness {
  readonly leafROld: V;
  /** TreeR path: per level (base levels, then sub, then top) its arity − 1 siblings. */
  readonly pathROld: readonly (readonly V[])[];
  readonly leafDNew: V;
  /** TreeD siblings from the leaf up to (not including) the apex leaves' row. */
  readonly pathDToApex: readonly V[];
  readonly pathRNew: readonly (readonly V[])[];
}

/** The circuit's witness (circuit.rs `PublicInputs` + `PrivateInputs`); undefined values in a blank circuit. */
export interface SnapWitness {
  readonly kAndHSelect: V;
  readonly commROld: V;
  readonly commDNew: V;
  readonly commRNew: V;
  readonly commC: V;
  readonly rootROld: V;
  readonly rootRNew: V;
  readonly apexLeaves: readonly V[];
  /** TreeD siblings from the apex root up to comm_d_new (partition_bit_len of them). */
  readonly partitionPath: readonly V[];
  readonly challenges: readonly SnapChallengeWitness[];
}

/** `k | h_select << partition_bit_len`. */
export function snapKAndHSelect(p: SnapParams, k: number, h: number): bigint {
  if (!Number.isInteger(k) || k < 0 || k >= p.partitionCount) throw new RangeError(`partition ${k} outside 0..${p.partitionCount - 1}`);
  return BigInt(k) | (BigInt(snapHSelect(p.sectorNodes, h)) << BigInt(p.partitionBitLen));
}

/** The public inputs of partition k: [k_and_h_select, comm_r_old, comm_d_new, comm_r_new]. */
export function snapPublicInputs(p: SnapParams, k: number, h: number, commROld: bigint, commDNew: bigint, commRNew: bigint): bigint[] {
  return [snapKAndHSelect(p, k, h), commROld, commDNew, commRNew];
}

/** TreeR levels' arities, bottom up (base levels, sub, top). */
export function snapTreeRArities(t: PoseidonTreeShape): number[] {
  const out = new Array<number>(t.baseLevels).fill(t.baseArity);
  if (t.subArity) out.push(t.subArity);
  if (t.topArity) out.push(t.topArity);
  return out;
}

// ---------------------------------------------------------------------------------------------
// gadgets

/** filecoin-hashers `Sha256Function::hash2_circuit`: "a_bits", "b_bits", then "hash" and "pack_le". */
export function sha256Hash2Circuit(cs: ConstraintSystem, a: AllocatedNum, b: AllocatedNum): AllocatedNum {
  const rev = (bits: Boolean[]): Boolean[] => {
    const padded = bits.slice();
    while (padded.length % 8 !== 0) padded.push(Boolean.FALSE);
    const out: Boolean[] = [];
    for (let i = 0; i < padded.length; i += 8) for (let k = 7; k >= 0; k--) out.push(padded[i + k]!);
    return out;
  };
  const aBits = cs.namespace('a_bits', () => a.toBitsLe(cs));
  const bBits = cs.namespace('b_bits', () => b.toBitsLe(cs));
  const be = cs.namespace('hash', () => sha256(cs, [...rev(aBits), ...rev(bBits)]));
  const le = rev(be).slice(0, FR_CAPACITY);
  return cs.namespace('pack_le', () => packBits(cs, le));
}

/**
 * storage-proofs-core `por_no_challenge_input`: per level "merkle proof insert (height=h)" of the current node among
 * the siblings at the position the next log2(arity) challenge bits give, "merkle proof hash (height=h)"; then
 * "calculated root == provided root".
 */
export function porNoChallengeInput(
  cs: ConstraintSystem,
  hasher: MerkleHasher,
  arities: readonly number[],
  challengeBits: readonly AllocatedBit[],
  leaf: AllocatedNum,
  path: readonly (readonly AllocatedNum[])[],
  root: AllocatedNum,
): void {
  if (path.length !== arities.length) throw new RangeError(`path of ${path.length} levels, the tree has ${arities.length}`);
  const bitsNeeded = arities.reduce((s, a) => s + Math.log2(a), 0);
  if (challengeBits.length !== bitsNeeded) throw new RangeError(`${challengeBits.length} challenge bits, the tree takes ${bitsNeeded}`);
  let cur = leaf;
  let used = 0;
  arities.forEach((arity, height) => {
    const siblings = path[height]!;
    if (siblings.length !== arity - 1) throw new RangeError(`path level ${height} has ${siblings.length} siblings, expected ${arity - 1}`);
    const n = Math.log2(arity);
    const index = challengeBits.slice(used, used + n).map(Boolean.is);
    used += n;
    const preimage = cs.namespace(() => `merkle proof insert (height=${height})`, () => insert(cs, cur, index, siblings));
    cur = cs.namespace(() => `merkle proof hash (height=${height})`, () => hashMultiLeafCircuit(cs, hasher, preimage));
  });
  cs.enforce('calculated root == provided root', LinearCombination.of(cur.variable), LinearCombination.of(ONE), LinearCombination.of(root.variable));
}

/** Σ 2^i·bit_i. */
function bitsLc(bits: readonly AllocatedBit[]): LinearCombination {
  const lc = LinearCombination.zero();
  let pow2 = 1n;
  for (const b of bits) {
    lc.add(b.variable, pow2);
    pow2 = (pow2 * 2n) % FR_MODULUS;
  }
  return lc;
}

/** gadgets.rs `allocated_num_to_allocated_bits`: the 255 bits ("bit i") and "binary decomp": Σ 2^i·b_i · 1 = num. */
export function allocatedNumToAllocatedBits(cs: ConstraintSystem, num: AllocatedNum): AllocatedBit[] {
  const bits = fieldIntoAllocatedBitsLe(cs, num.value, num.variable);
  if (bits.length !== FR_NUM_BITS) throw new Error('expected 255 bits');
  cs.enforce('binary decomp', bitsLc(bits), LinearCombination.of(ONE), LinearCombination.of(num.variable));
  return bits;
}

/** gadgets.rs `apex_por`. */
export function apexPor(cs: ConstraintSystem, apexLeaves: readonly AllocatedNum[], partitionBits: readonly AllocatedBit[], partitionPath: readonly AllocatedNum[], commD: AllocatedNum): void {
  const height = Math.log2(apexLeaves.length);
  if (!Number.isInteger(height)) throw new RangeError('apex leaf count must be a power of two');
  let row = apexLeaves.slice();
  for (let r = 0; r < height; r++) {
    const next: AllocatedNum[] = [];
    for (let i = 0; i < row.length / 2; i++) {
      const [a, b] = [row[2 * i]!, row[2 * i + 1]!];
      next.push(cs.namespace(() => `apex_tree generation hash (tree_row=${r}, siblings=${i})`, () => sha256Hash2Circuit(cs, a, b)));
    }
    row = next;
  }
  cs.namespace('partition-tree por', () =>
    porNoChallengeInput(cs, 'sha256', new Array<number>(partitionBits.length).fill(2), partitionBits, row[0]!, partitionPath.map((s) => [s]), commD),
  );
}

/** gadgets.rs `gen_challenge_bits`: the random bits of each of the partition's challenges. */
export function genChallengeBits(cs: ConstraintSystem, commRNew: AllocatedNum, partition: AllocatedNum, challenges: number, bitsPerChallenge: number): AllocatedBit[][] {
  const perDigest = Math.floor(FR_CAPACITY / bitsPerChallenge);
  const digests = Math.ceil(challenges / perDigest);
  const out: AllocatedBit[][] = [];
  for (let j = 0; j < digests; j++) {
    const digestIndex = cs.namespace(() => `digest_index_${j}`, () => AllocatedNum.alloc(cs, () => required(partition.value) * BigInt(digests) + BigInt(j)));
    cs.program?.lc(digestIndex.variable, [
      [partition.variable, BigInt(digests)],
      [ONE, BigInt(j)],
    ]);
    cs.enforce(
      () => `digest_index_${j} == k * digests_per_partition + ${j}`,
      LinearCombination.of(partition.variable, BigInt(digests)).add(ONE, BigInt(j)),
      LinearCombination.of(ONE),
      LinearCombination.of(digestIndex.variable),
    );
    const digest = cs.namespace(() => `digest_${j}`, () => poseidonHashCircuit(cs, [commRNew, digestIndex], GEN_RANDOMNESS_DOMAIN_TAG));
    const bits = cs.namespace(() => `digest_${j}_bits`, () => allocatedNumToAllocatedBits(cs, digest));
    const take = j === digests - 1 ? challenges - out.length : perDigest;
    for (let c = 0; c < take; c++) out.push(bits.slice(c * bitsPerChallenge, (c + 1) * bitsPerChallenge));
  }
  return out;
}

/** gadgets.rs `get_challenge_high_bits`: Σ_k h_select_k · (top hs[k] bits of c). */
export function getChallengeHighBits(cs: ConstraintSystem, cBits: readonly AllocatedBit[], hSelectBits: readonly AllocatedBit[], hs: readonly number[]): AllocatedNum {
  if (hSelectBits.length !== hs.length) throw new RangeError('h_select bits and hs differ in length');
  const n = cBits.length;
  const cHighOrZero = hs.map((h, k) => {
    const cHigh = cs.namespace(() => `c_high (h=${h}, k=${k})`, () => packBits(cs, cBits.slice(n - h).map(Boolean.is)));
    const sel = hSelectBits[k]!;
    const z = cs.namespace(() => `c_high_or_zero (h=${h}, k=${k})`, () => AllocatedNum.alloc(cs, () => (required(sel.getValue()) ? required(cHigh.value) : 0n)));
    cs.program?.mul(z.variable, cHigh.variable, sel.variable);
    cs.enforce(() => `c_high_or_zero == c_high * h_select_bit (h=${h}, k=${k})`, LinearCombination.of(cHigh.variable), LinearCombination.of(sel.variable), LinearCombination.of(z.variable));
    return z;
  });
  const selected = cs.namespace('c_high_selected', () => AllocatedNum.alloc(cs, () => cHighOrZero.reduce((s, z) => s + required(z.value), 0n)));
  cs.program?.lc(selected.variable, cHighOrZero.map((z) => [z.variable, 1n] as const));
  const lc = LinearCombination.zero();
  for (const z of cHighOrZero) lc.add(z.variable);
  cs.enforce('c_high_selected == dot(c_highs, h_select_bits)', lc, LinearCombination.of(ONE), LinearCombination.of(selected.variable));
  return selected;
}

/** gadgets.rs `label_r_new`: leaf_r_old + leaf_d_new·rho. */
export function labelRNew(cs: ConstraintSystem, rOld: AllocatedNum, dNew: AllocatedNum, rho: AllocatedNum): AllocatedNum {
  const dRho = cs.namespace('label_d_new * rho', () => dNew.mul(cs, rho));
  const r = cs.namespace('label_r_new', () => AllocatedNum.alloc(cs, () => required(rOld.value) + required(dRho.value)));
  cs.program?.add(r.variable, rOld.variable, dRho.variable);
  cs.enforce('label_r_new == label_r_old + label_d_new * rho', LinearCombination.of(rOld.variable).add(dRho.variable), LinearCombination.of(ONE), LinearCombination.of(r.variable));
  return r;
}

// ---------------------------------------------------------------------------------------------
// the circuit

/** Recording options (program.ts): synthesize only the first `challenges` challenges (the prologue is whole). */
export interface SnapRecordingOptions {
  readonly challenges?: number;
}

export class EmptySectorUpdateCircuit implements Circuit {
  /** After synthesis: the variables of each challenge's random bits (gen_challenge_bits), for shape replication. */
  challengeBitVariables: number[][] = [];

  constructor(
    readonly params: SnapParams,
    readonly witness: SnapWitness,
    readonly recording: SnapRecordingOptions = {},
  ) {
    const p = params;
    const w = witness;
    if (w.apexLeaves.length !== p.apexLeafCount) throw new RangeError(`${w.apexLeaves.length} apex leaves, the circuit takes ${p.apexLeafCount}`);
    if (w.partitionPath.length !== p.partitionBitLen) throw new RangeError(`partition path of ${w.partitionPath.length}, expected ${p.partitionBitLen}`);
    if (w.challenges.length !== p.challengeCount) throw new RangeError(`${w.challenges.length} challenge proofs, the circuit takes ${p.challengeCount}`);
    const arities = snapTreeRArities(p.tree);
    const toApex = p.challengeBitLen - p.partitionBitLen - p.apexLeafBitLen;
    w.challenges.forEach((c, i) => {
      for (const [name, path] of [['path_r_old', c.pathROld], ['path_r_new', c.pathRNew]] as const) {
        if (path.length !== arities.length || path.some((s, l) => s.length !== arities[l]! - 1)) throw new RangeError(`challenge ${i}: ${name} does not have the TreeR shape`);
      }
      if (c.pathDToApex.length !== toApex) throw new RangeError(`challenge ${i}: ${c.pathDToApex.length} TreeD siblings below the apex leaves, expected ${toApex}`);
    });
  }

  synthesize(cs: ConstraintSystem): void {
    const p = this.params;
    const w = this.witness;
    const hs = p.hs;
    const bitLen = p.partitionBitLen + hs.length;

    const kAndHSelect = cs.namespace('k_and_h_select', () => AllocatedNum.allocHint(cs, w.kAndHSelect));
    cs.namespace('k_and_h_select (public input)', () => kAndHSelect.inputize(cs));
    const kh = kAndHSelect.value;
    const khBits: AllocatedBit[] = [];
    for (let i = 0; i < bitLen; i++) {
      const b = kh === undefined ? undefined : ((kh >> BigInt(i)) & 1n) === 1n;
      khBits.push(cs.namespace(() => `k_and_h_select_bit_${i}`, () => AllocatedBit.alloc(cs, b)));
    }
    if (bitLen > 0) cs.program?.bits(khBits[0]!.variable, bitLen, kAndHSelect.variable);
    cs.enforce('k_and_h_select binary decomp', bitsLc(khBits), LinearCombination.of(ONE), LinearCombination.of(kAndHSelect.variable));
    const partitionBits = khBits.slice(0, p.partitionBitLen);
    const hSelectBits = khBits.slice(p.partitionBitLen);
    const partition = cs.namespace('pack partition bits', () => packBits(cs, partitionBits.map(Boolean.is)));

    const pub = (name: string, v: V): AllocatedNum => {
      const n = cs.namespace(name, () => AllocatedNum.allocHint(cs, v));
      cs.namespace(`${name}_input`, () => n.inputize(cs));
      return n;
    };
    const commROld = pub('comm_r_old', w.commROld);
    const commDNew = pub('comm_d_new', w.commDNew);
    const commRNew = pub('comm_r_new', w.commRNew);

    const phi = cs.namespace('phi', () => poseidonHashCircuit(cs, [commDNew, commROld], GEN_RANDOMNESS_DOMAIN_TAG));

    const commC = cs.namespace('comm_c', () => AllocatedNum.allocHint(cs, w.commC));
    const rootROld = cs.namespace('root_r_old', () => AllocatedNum.allocHint(cs, w.rootROld));
    const rootRNew = cs.namespace('root_r_new', () => AllocatedNum.allocHint(cs, w.rootRNew));
    const apexLeaves = w.apexLeaves.map((x, i) => cs.namespace(() => `apex_leaf_${i}`, () => AllocatedNum.allocHint(cs, x)));
    const partitionPath = w.partitionPath.map((x, i) => cs.namespace(() => `partition_path_sibling_${i}`, () => AllocatedNum.allocHint(cs, x)));

    const commROldCalc = cs.namespace('comm_r_old_calc', () => poseidonHashCircuit(cs, [commC, rootROld]));
    cs.enforce('enforce comm_r_old_calc == comm_r_old', LinearCombination.of(commROldCalc.variable), LinearCombination.of(ONE), LinearCombination.of(commROld.variable));
    const commRNewCalc = cs.namespace('comm_r_new_calc', () => poseidonHashCircuit(cs, [commC, rootRNew]));
    cs.enforce('enforce comm_r_new_calc == comm_r_new', LinearCombination.of(commRNewCalc.variable), LinearCombination.of(ONE), LinearCombination.of(commRNew.variable));

    cs.namespace('apex_gadget', () => apexPor(cs, apexLeaves, partitionBits, partitionPath, commDNew));

    const randomBits = snapRandomBitsPerChallenge(p);
    const generated = cs.namespace('gen_challenge_bits', () => genChallengeBits(cs, commRNew, partition, p.challengeCount, randomBits));

    this.challengeBitVariables = generated.map((bits) => bits.map((b) => b.variable));

    const arities = snapTreeRArities(p.tree);
    const apexStart = p.challengeBitLen - p.partitionBitLen - p.apexLeafBitLen;
    generated.slice(0, this.recording.challenges ?? generated.length).forEach((bits, c) => {
      cs.program?.beginSegment(); // challenges are independent: one witness-program segment each
      const ch = w.challenges[c]!;
      const cBits = [...bits, ...partitionBits];
      const cHigh = cs.namespace(() => `get_challenge_high_bits (c_index=${c})`, () => getChallengeHighBits(cs, cBits, hSelectBits, hs));
      const rho = cs.namespace(() => `rho (c_index=${c})`, () => poseidonHashCircuit(cs, [phi, cHigh], GEN_RANDOMNESS_DOMAIN_TAG));
      const leafROld = cs.namespace(() => `leaf_r_old (c_index=${c})`, () => AllocatedNum.allocHint(cs, ch.leafROld));
      const leafDNew = cs.namespace(() => `leaf_d_new (c_index=${c})`, () => AllocatedNum.allocHint(cs, ch.leafDNew));
      const leafRNew = cs.namespace(() => `leaf_r_new (c_index=${c})`, () => labelRNew(cs, leafROld, leafDNew, rho));
      const allocPath = (name: string, path: readonly (readonly V[])[]): AllocatedNum[][] =>
        path.map((sibs, row) =>
          sibs.map((s, i) => cs.namespace(() => `${name} sibling (c_index=${c}, tree_row=${row}, sibling_index=${i})`, () => AllocatedNum.allocHint(cs, s))),
        );
      const pathROld = allocPath('path_r_old', ch.pathROld);
      cs.namespace(() => `por tree_r_old (c_index=${c})`, () => porNoChallengeInput(cs, 'poseidon', arities, cBits, leafROld, pathROld, rootROld));
      const pathRNew = allocPath('path_r_new', ch.pathRNew);
      cs.namespace(() => `por tree_r_new (c_index=${c})`, () => porNoChallengeInput(cs, 'poseidon', arities, cBits, leafRNew, pathRNew, rootRNew));
      const apexBits = cBits.slice(apexStart, apexStart + p.apexLeafBitLen).map(Boolean.is);
      const apexLeaf = cs.namespace(() => `select_apex_leaf (c_index=${c})`, () => select(cs, apexLeaves, apexBits));
      const pathToApex = ch.pathDToApex.map((s, row) => [cs.namespace(() => `path_to_apex_leaf sibling (c_index=${c}, tree_row=${row})`, () => AllocatedNum.allocHint(cs, s))]);
      cs.namespace(() => `por to_apex_leaf (c_index=${c})`, () =>
        porNoChallengeInput(cs, 'sha256', new Array<number>(apexStart).fill(2), cBits.slice(0, apexStart), leafDNew, pathToApex, apexLeaf),
      );
    });
  }
}

// ---------------------------------------------------------------------------------------------
// construction

/** `EmptySectorUpdateCircuit::blank`: every value undefined (shapes, setup, counting). */
export function snapBlankWitness(p: SnapParams): SnapWitness {
  const arities = snapTreeRArities(p.tree);
  const rPath = (): (readonly V[])[] => arities.map((a) => new Array<undefined>(a - 1).fill(undefined));
  const toApex = p.challengeBitLen - p.partitionBitLen - p.apexLeafBitLen;
  return {
    kAndHSelect: undefined,
    commROld: undefined,
    commDNew: undefined,
    commRNew: undefined,
    commC: undefined,
    rootROld: undefined,
    rootRNew: undefined,
    apexLeaves: new Array<undefined>(p.apexLeafCount).fill(undefined),
    partitionPath: new Array<undefined>(p.partitionBitLen).fill(undefined),
    challenges: Array.from({ length: p.challengeCount }, () => ({
      leafROld: undefined,
      pathROld: rPath(),
      leafDNew: undefined,
      pathDToApex: new Array<undefined>(toApex).fill(undefined),
      pathRNew: rPath(),
    })),
  };
}

export function snapBlankCircuit(p: SnapParams): EmptySectorUpdateCircuit {
  return new EmptySectorUpdateCircuit(p, snapBlankWitness(p));
}

/** Challenges per digest and digests per partition, re-exported for callers that size the circuit. */
export { snapChallengesPerDigest, snapDigestsPerPartition };
