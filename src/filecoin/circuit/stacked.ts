/**
 * The StackedDrg PoRep partition circuit, constraint for constraint as rust-fil-proofs'
 * `StackedCircuit::synthesize` (storage-proofs-porep/src/stacked/circuit/proof.rs) and
 * `Proof::synthesize` (params.rs), docs/filecoin.md §1:
 *
 *  replica_id, comm_d, comm_r: allocated then inputized (public inputs 1..3); replica_id's bits;
 *  comm_r_last, comm_c private; comm_r = Poseidon2(comm_c, comm_r_last);
 *  per challenge ("challenge_i"):
 *    data leaf; its inclusion in comm_d (SHA-256 binary path);
 *    6 DRG then 8 expander parent columns: rows, column hash, inclusion in comm_c;
 *    the challenge as a UInt64 packed into one public input;
 *    per layer: every parent row to 255 bits (bit order reversed per byte), create_label;
 *    encoding (last label + data leaf) and its inclusion in comm_r_last;
 *    the challenged column's hash (of the labels just computed) and its inclusion in comm_c.
 *
 * A circuit is built from a parsed C1 (values) or blank (shape: every value undefined, no value
 * closure ever called), so the shape can be recorded once per sector size.
 */
import type { Circuit, ConstraintSystem } from '../../r1cs/cs.js';
import { Boolean } from '../../gadgets/boolean.js';
import { FR_CAPACITY, required } from '../../gadgets/errors.js';
import { packBits } from '../../gadgets/multipack.js';
import { AllocatedNum } from '../../gadgets/num.js';
import { sha256 } from '../../gadgets/sha256.js';
import { UInt32 } from '../../gadgets/uint32.js';
import { UInt64 } from '../../gadgets/uint64.js';
import { reverseBitNumbering } from '../../gadgets/bits.js';
import { LinearCombination, ONE } from '../../r1cs/cs.js';
import type { C1Output, ChallengeProof, ColumnProof } from '../c1.js';
import { DRG_DEGREE, EXP_DEGREE, LABEL_PARENTS } from '../graph.js';
import { bytesToBigintLE } from '../hash/fr32.js';
import type { SealProofInfo } from '../registry.js';
import type { MerkleProof, PathElement } from '../tree/path.js';
import { type AuthPath, type AuthPathLevel, blankAuthPath, porCircuit } from './por.js';
import { poseidonHashCircuit } from './poseidon.js';

/** Shape of the Poseidon trees (tree_r_last, tree_c): base levels of `baseArity`, optional sub / top level. */
export interface PoseidonTreeShape {
  readonly baseArity: number;
  readonly baseLevels: number;
  /** 0 = no sub-tree level. */
  readonly subArity: number;
  /** 0 = no top-tree level. */
  readonly topArity: number;
}

/** What fixes the circuit's shape. */
export interface StackedCircuitParams {
  /** Number of layers (column height): 2 or 11 (the arities `hash_single_column` supports). */
  readonly layers: number;
  /** Height of the binary comm_d tree. */
  readonly commDLevels: number;
  readonly tree: PoseidonTreeShape;
  /** Challenges in this partition. */
  readonly challenges: number;
}

/** A column opening: one row per layer, and its inclusion path in tree_c. */
export interface ColumnWitness {
  readonly rows: readonly (bigint | undefined)[];
  readonly path: AuthPath;
}

/** Per-challenge witness (`params.rs` `Proof`). */
export interface ChallengeWitness {
  readonly dataLeaf: bigint | undefined;
  readonly challenge: bigint | undefined;
  readonly commDPath: AuthPath;
  readonly commRLastPath: AuthPath;
  /** Inclusion path of the challenged node's column hash in tree_c. */
  readonly commCPath: AuthPath;
  readonly drgParents: readonly ColumnWitness[];
  readonly expParents: readonly ColumnWitness[];
}

export interface StackedWitness {
  readonly replicaId: bigint | undefined;
  readonly commD: bigint | undefined;
  readonly commR: bigint | undefined;
  readonly commRLast: bigint | undefined;
  readonly commC: bigint | undefined;
  readonly proofs: readonly ChallengeWitness[];
}

// ---------------------------------------------------------------------------------------------
// Sub-circuits

/** `create_label_circuit`: SHA-256 over replica_id ‖ layer (u32 BE) ‖ node (u64 BE) ‖ 0-padding ‖ 37 parents, first 254 bits packed. */
export function createLabelCircuit(
  cs: ConstraintSystem,
  replicaIdBits: readonly Boolean[],
  parents: readonly (readonly Boolean[])[],
  layerIndex: UInt32,
  node: UInt64,
): AllocatedNum {
  if (replicaIdBits.length < 32 || replicaIdBits.length > 256) throw new RangeError('replica id bits: 32..256');
  if (parents.length !== LABEL_PARENTS) throw new RangeError(`create_label needs ${LABEL_PARENTS} parents`);
  const ct: Boolean[] = replicaIdBits.slice();
  while (ct.length < 256) ct.push(Boolean.FALSE);
  ct.push(...layerIndex.intoBitsBe());
  ct.push(...node.toBitsBe());
  while (ct.length < 512) ct.push(Boolean.FALSE);
  for (const p of parents) {
    ct.push(...p);
    while (ct.length % 256 !== 0) ct.push(Boolean.FALSE);
  }
  if (ct.length !== (2 + LABEL_PARENTS) * 256) throw new Error('create_label: wrong preimage length');
  const digest = cs.namespace('hash', () => sha256(cs, ct));
  const bits = reverseBitNumbering(digest);
  return cs.namespace('result_num', () => packBits(cs, bits.slice(0, FR_CAPACITY)));
}

/** `hash_single_column`: Poseidon of the column's rows (arity = layers: 2 or 11). */
export function hashSingleColumn(cs: ConstraintSystem, rows: readonly AllocatedNum[]): AllocatedNum {
  if (rows.length !== 2 && rows.length !== 11) throw new RangeError(`unsupported column size: ${rows.length}`);
  return poseidonHashCircuit(cs, rows);
}

/** `constraint::add` in namespace "encode_add" (gadgets/encode.rs `encode`). */
function encode(cs: ConstraintSystem, key: AllocatedNum, value: AllocatedNum): AllocatedNum {
  return cs.namespace('encode_add', () => {
    const res = cs.namespace('add_num', () => AllocatedNum.alloc(cs, () => required(key.value) + required(value.value)));
    cs.program?.add(res.variable, key.variable, value.variable);
    cs.enforce('sum constraint', LinearCombination.of(key.variable).add(value.variable), LinearCombination.of(ONE), LinearCombination.of(res.variable));
    return res;
  });
}

/** `constraint::equal`: a · 1 = b. */
function enforceEqual(cs: ConstraintSystem, name: string, a: AllocatedNum, b: AllocatedNum): void {
  cs.enforce(name, LinearCombination.of(a.variable), LinearCombination.of(ONE), LinearCombination.of(b.variable));
}

function enforceInclusion(cs: ConstraintSystem, name: string, hasher: 'sha256' | 'poseidon', path: AuthPath, root: AllocatedNum, leaf: AllocatedNum): void {
  cs.namespace(name, () => porCircuit(cs, hasher, leaf, path, root, true));
}

function allocColumn(cs: ConstraintSystem, name: string, col: ColumnWitness): AllocatedNum[] {
  return cs.namespace(name, () =>
    cs.namespace('column', () =>
      col.rows.map((r, i) => cs.namespace(() => `column_num_row_${i}`, () => AllocatedNum.allocHint(cs, r))),
    ),
  );
}

function synthesizeChallenge(
  cs: ConstraintSystem,
  proof: ChallengeWitness,
  commD: AllocatedNum,
  commC: AllocatedNum,
  commRLast: AllocatedNum,
  replicaIdBits: readonly Boolean[],
): void {
  if (proof.drgParents.length === 0 || proof.expParents.length === 0) throw new RangeError('parents missing');

  const dataLeaf = cs.namespace('data_leaf', () => AllocatedNum.allocHint(cs, proof.dataLeaf));
  enforceInclusion(cs, 'comm_d_inclusion', 'sha256', proof.commDPath, commD, dataLeaf);

  const numLayers = proof.drgParents[0].rows.length;
  const drgParents: AllocatedNum[][] = [];
  proof.drgParents.forEach((p, i) => {
    const col = allocColumn(cs, `drg_parent_${i}_num`, p);
    if (col.length !== numLayers) throw new RangeError('column heights differ');
    const val = cs.namespace(() => `drg_parent_${i}_constraint`, () => hashSingleColumn(cs, col));
    enforceInclusion(cs, `drg_parent_${i}_inclusion`, 'poseidon', p.path, commC, val);
    drgParents.push(col);
  });
  const expParents: AllocatedNum[][] = [];
  proof.expParents.forEach((p, i) => {
    const col = allocColumn(cs, `exp_parent_${i}_num`, p);
    if (col.length !== numLayers) throw new RangeError('column heights differ');
    const val = cs.namespace(() => `exp_parent_${i}_constraint`, () => hashSingleColumn(cs, col));
    enforceInclusion(cs, `exp_parent_${i}_inclusion`, 'poseidon', p.path, commC, val);
    expParents.push(col);
  });

  const challenge = cs.namespace('challenge', () => UInt64.allocHint(cs, proof.challenge));
  cs.namespace('challenge input', () => challenge.packIntoInput(cs));

  const columnLabels: AllocatedNum[] = [];
  for (let layer = 1; layer <= numLayers; layer++) {
    const label = cs.namespace(
      () => `labeling_${layer}`,
      () => {
        const parents: Boolean[][] = [];
        for (const col of drgParents) {
          const k = parents.length;
          parents.push(reverseBitNumbering(cs.namespace(() => `drg_parent_${k}_bits`, () => col[layer - 1].toBitsLe(cs))));
        }
        if (layer > 1) {
          for (const col of expParents) {
            const k = parents.length;
            // expander parents hash the previous layer's labels
            parents.push(reverseBitNumbering(cs.namespace(() => `exp_parent_${k}_bits`, () => col[layer - 2].toBitsLe(cs))));
          }
        }
        const expanded: Boolean[][] = [...parents];
        if (layer > 1) {
          expanded.push(...parents, ...parents.slice(0, 9));
        } else {
          for (let r = 0; r < 5; r++) expanded.push(...parents);
          expanded.push(parents[0]);
        }
        return cs.namespace('create_label', () => createLabelCircuit(cs, replicaIdBits, expanded, UInt32.constant(layer), challenge));
      },
    );
    columnLabels.push(label);
  }

  const encoded = cs.namespace('encode_node', () => encode(cs, columnLabels[columnLabels.length - 1], dataLeaf));
  enforceInclusion(cs, 'comm_r_last_data_inclusion', 'poseidon', proof.commRLastPath, commRLast, encoded);

  const columnHash = cs.namespace('c_x_column_hash', () => hashSingleColumn(cs, columnLabels));
  enforceInclusion(cs, 'c_x_inclusion', 'poseidon', proof.commCPath, commC, columnHash);
}

// ---------------------------------------------------------------------------------------------
// The circuit

export class StackedCircuit implements Circuit {
  constructor(
    readonly params: StackedCircuitParams,
    readonly witness: StackedWitness,
  ) {
    if (witness.proofs.length !== params.challenges) throw new RangeError(`expected ${params.challenges} challenge proofs, got ${witness.proofs.length}`);
  }

  synthesize(cs: ConstraintSystem): void {
    const w = this.witness;
    const replicaId = cs.namespace('replica_id', () => AllocatedNum.allocHint(cs, w.replicaId));
    cs.namespace('replica_id_input', () => replicaId.inputize(cs));
    const replicaIdBits = reverseBitNumbering(cs.namespace('replica_id_bits', () => replicaId.toBitsLe(cs)));

    const commD = cs.namespace('comm_d', () => AllocatedNum.allocHint(cs, w.commD));
    cs.namespace('comm_d_input', () => commD.inputize(cs));
    const commR = cs.namespace('comm_r', () => AllocatedNum.allocHint(cs, w.commR));
    cs.namespace('comm_r_input', () => commR.inputize(cs));
    const commRLast = cs.namespace('comm_r_last', () => AllocatedNum.allocHint(cs, w.commRLast));
    const commC = cs.namespace('comm_c', () => AllocatedNum.allocHint(cs, w.commC));

    const hash = cs.namespace('H_comm_c_comm_r_last', () => poseidonHashCircuit(cs, [commC, commRLast]));
    enforceEqual(cs, 'enforce comm_r = H(comm_c || comm_r_last)', commR, hash);

    w.proofs.forEach((p, i) => {
      cs.program?.beginSegment(); // challenges are independent: witness programs run them in parallel
      cs.namespace(() => `challenge_${i}`, () => synthesizeChallenge(cs, p, commD, commC, commRLast, replicaIdBits));
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Construction

const log = (x: number, base: number): number => {
  let n = 0;
  let v = 1;
  while (v < x) {
    v *= base;
    n++;
  }
  if (v !== x) throw new RangeError(`${x} is not a power of ${base}`);
  return n;
};

/** A blank witness for `params` (shape mode). */
export function blankStackedWitness(params: StackedCircuitParams): StackedWitness {
  const t = params.tree;
  const treePath = () => blankAuthPath(t.baseArity, t.baseLevels, t.subArity, t.topArity);
  const column = (): ColumnWitness => ({ rows: new Array<undefined>(params.layers).fill(undefined), path: treePath() });
  const proof = (): ChallengeWitness => ({
    dataLeaf: undefined,
    challenge: undefined,
    commDPath: blankAuthPath(2, params.commDLevels),
    commRLastPath: treePath(),
    commCPath: treePath(),
    drgParents: Array.from({ length: DRG_DEGREE }, column),
    expParents: Array.from({ length: EXP_DEGREE }, column),
  });
  return {
    replicaId: undefined,
    commD: undefined,
    commR: undefined,
    commRLast: undefined,
    commC: undefined,
    proofs: Array.from({ length: params.challenges }, proof),
  };
}

/** Circuit parameters of one partition of a registered seal proof. */
export function stackedParamsFor(info: SealProofInfo, challenges = info.challengesPerPartition): StackedCircuitParams {
  if (challenges === undefined) throw new RangeError(`${info.name}: challenges per partition not pinned; pass them`);
  return { layers: info.layers, commDLevels: info.commDLevels, tree: info.tree, challenges };
}

/**
 * The small configurations of rust-fil-proofs' `test_stacked_porep_circuit` (tests/stacked_circuit.rs):
 * nodes = 8 × base-tree count, 2 layers, 1 challenge. For (8, 0, 0): 8 nodes, 22 inputs, 1,199,620 constraints.
 */
export function stackedTestParams(baseArity = 8, subArity = 0, topArity = 0, layers = 2, challenges = 1): StackedCircuitParams {
  const baseTrees = (subArity || 1) * (topArity || 1);
  const nodes = 8 * baseTrees;
  return {
    layers,
    commDLevels: log(nodes, 2),
    tree: { baseArity, baseLevels: log(nodes / baseTrees, baseArity), subArity, topArity },
    challenges,
  };
}

/** A blank (shape-mode) circuit for `params`. */
export function stackedBlankCircuit(params: StackedCircuitParams): StackedCircuit {
  return new StackedCircuit(params, blankStackedWitness(params));
}

/** The blank partition circuit of a registered seal proof (one shape per sector size). */
export function stackedShapeCircuit(info: SealProofInfo, challenges?: number): StackedCircuit {
  return stackedBlankCircuit(stackedParamsFor(info, challenges));
}

function toAuthPath<T>(proof: MerkleProof<T>, toFr: (x: T) => bigint): AuthPath {
  const level = (el: PathElement<T>): AuthPathLevel => ({ arity: el.hashes.length + 1, hashes: el.hashes.map(toFr), index: el.index });
  return { base: proof.base.map(level), sub: proof.sub.map(level), top: proof.top.map(level) };
}

const id = (x: bigint): bigint => x;

function columnWitness(c: ColumnProof): ColumnWitness {
  return { rows: c.rows, path: toAuthPath(c.inclusion, id) };
}

/** `Proof::from(vanilla_proof)`. */
export function challengeWitness(p: ChallengeProof): ChallengeWitness {
  return {
    dataLeaf: bytesToBigintLE(p.commDProof.leaf),
    challenge: BigInt(p.labelingProofs[0].node),
    commDPath: toAuthPath(p.commDProof, bytesToBigintLE),
    commRLastPath: toAuthPath(p.commRLastProof, id),
    commCPath: toAuthPath(p.cX.inclusion, id),
    drgParents: p.drgParents.map(columnWitness),
    expParents: p.expParents.map(columnWitness),
  };
}

/** `StackedCompound::circuit`: the circuit of partition `partition` of a parsed C1, with its witness. */
export function stackedCircuitFor(c1: C1Output, partition: number): StackedCircuit {
  if (!Number.isInteger(partition) || partition < 0 || partition >= c1.partitions.length) throw new RangeError(`partition ${partition} out of range`);
  const proofs = c1.partitions[partition];
  if (proofs.length === 0) throw new RangeError('cannot create a circuit with no vanilla proofs');
  const commRLast = proofs[0].commRLastProof.root;
  const commC = proofs[0].cX.inclusion.root;
  if (!proofs.every((p) => p.commRLastProof.root === commRLast)) throw new Error('inconsistent comm_r_lasts');
  if (!proofs.every((p) => p.cX.inclusion.root === commC)) throw new Error('inconsistent comm_cs');
  const params = stackedParamsFor(c1.registeredProof, proofs.length);
  return new StackedCircuit(params, {
    replicaId: bytesToBigintLE(c1.replicaId),
    commD: bytesToBigintLE(c1.commD),
    commR: bytesToBigintLE(c1.commR),
    commRLast,
    commC,
    proofs: proofs.map(challengeWitness),
  });
}

// ---------------------------------------------------------------------------------------------
// Witness programs (r1cs/program.ts): the tape order of a StackedWitness's leaves

/** The witness's leaves mapped in tape order: the five roots, then per challenge its own block. */
function mapStackedLeaves(
  w: StackedWitness,
  leaf: (x: bigint | undefined) => bigint | undefined,
  index: (i: number | undefined) => number | undefined,
  onChallenge: (i: number) => void = () => {},
): StackedWitness {
  const path = (p: AuthPath): AuthPath => {
    const level = (l: AuthPathLevel): AuthPathLevel => ({ arity: l.arity, index: index(l.index), hashes: l.hashes.map(leaf) });
    return { base: p.base.map(level), sub: p.sub.map(level), top: p.top.map(level) };
  };
  const column = (c: ColumnWitness): ColumnWitness => ({ rows: c.rows.map(leaf), path: path(c.path) });
  const replicaId = leaf(w.replicaId);
  const commD = leaf(w.commD);
  const commR = leaf(w.commR);
  const commRLast = leaf(w.commRLast);
  const commC = leaf(w.commC);
  const proofs = w.proofs.map((p, i): ChallengeWitness => {
    onChallenge(i);
    return {
      dataLeaf: leaf(p.dataLeaf),
      challenge: leaf(p.challenge),
      commDPath: path(p.commDPath),
      commRLastPath: path(p.commRLastPath),
      commCPath: path(p.commCPath),
      drgParents: p.drgParents.map(column),
      expParents: p.expParents.map(column),
    };
  });
  return { replicaId, commD, commR, commRLast, commC, proofs };
}

/** The slot witness of `params` (every leaf its tape slot) and where each challenge's slots start. */
export function stackedSlotWitness(params: StackedCircuitParams): { witness: StackedWitness; numSlots: number; segmentSlotBases: number[] } {
  let n = 0;
  const segmentSlotBases: number[] = [];
  const witness = mapStackedLeaves(
    blankStackedWitness(params),
    () => BigInt(n++),
    () => n++,
    () => segmentSlotBases.push(n),
  );
  return { witness, numSlots: n, segmentSlotBases };
}

/** The tape of a witness: its leaves in slot order (a missing leaf is an error naming the slot). */
export function stackedTape(w: StackedWitness): bigint[] {
  const out: bigint[] = [];
  const push = (x: bigint | number | undefined): void => {
    if (x === undefined) throw new RangeError(`stacked witness: leaf ${out.length} (tape slot) has no value`);
    out.push(BigInt(x));
  };
  mapStackedLeaves(
    w,
    (x) => (push(x), x),
    (i) => (push(i), i),
  );
  return out;
}
