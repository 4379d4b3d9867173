/**
 * The FallbackPoSt circuit (WinningPoSt and WindowPoSt), constraint for constraint as rust-fil-proofs v19's
 * `FallbackPoStCircuit::synthesize` / `Sector::synthesize` (storage-proofs-post/src/fallback/circuit.rs), docs/filecoin.md §6:
 *
 *  per sector ("sector_i"):
 *    comm_r_last, comm_c, comm_r allocated (private), comm_r inputized ("comm_r_input");
 *    Poseidon arity 2 (comm_c, comm_r_last) ("H_comm_c_comm_r_last") enforced equal to comm_r;
 *    per challenge ("challenge_inclusion_n"): `PoRCircuit::synthesize(Root::Val(leaf), path,
 *    Root::Var(comm_r_last), private = true)`: the leaf, the path levels, the packed path index (one public input),
 *    the computed root enforced equal to comm_r_last.
 *  Public inputs per sector: [comm_r, c_0 … c_{n−1}] (c_n = the challenged leaf index).
 *
 * A partition with fewer real sectors repeats the last one (proof and inputs) up to `sectorCount`. WinningPoSt
 * (sector_count 66, challenge_count 1) unrolls its one sector's 66 inclusion proofs into 66 sector proofs.
 *
 * Sectors are independent and identical in structure: each is one witness-program segment (see program.ts),
 * so a 2349-sector partition's shape and program are recorded from one sector and replicated.
 */
import { LinearCombination, ONE, type Circuit, type ConstraintSystem } from '../../r1cs/cs.js';
import { AllocatedNum } from '../../gadgets/num.js';
import { type AuthPath, type AuthPathLevel, blankAuthPath, porCircuit } from '../circuit/por.js';
import { poseidonHashCircuit } from '../circuit/poseidon.js';
import type { PoseidonTreeShape } from '../circuit/stacked.js';
import { fastPoseidonHash } from '../hash/poseidon-native.js';
import type { TreeShape } from '../registry.js';
import { fullPath, pathLeafIndex, type MerkleProof } from '../tree/path.js';
import { postLeafChallenge, postSectorChallenges } from './challenges.js';
import { WINNING_POST_CHALLENGE_COUNT } from './registry.js';
import type { PoStProofInfo, PoStSectorProof } from './types.js';

/** What fixes the circuit's shape (`FallbackPoSt::PublicParams` + the tree). */
export interface PoStCircuitParams {
  readonly tree: PoseidonTreeShape;
  /** Challenges per (circuit) sector: 10 window, 1 winning. */
  readonly challengeCount: number;
  /** Sectors per circuit: 2 / 2349 / 2300 window, 66 winning. */
  readonly sectorCount: number;
}

/** One circuit sector's witness (`Sector<Tree>`); values undefined in a blank circuit. */
export interface PoStSectorWitness {
  readonly commR: bigint | undefined;
  readonly commC: bigint | undefined;
  readonly commRLast: bigint | undefined;
  readonly leaves: readonly (bigint | undefined)[];
  readonly paths: readonly AuthPath[];
}

/** `Sector::synthesize`. */
function synthesizeSector(cs: ConstraintSystem, s: PoStSectorWitness): void {
  if (s.leaves.length !== s.paths.length) throw new RangeError(`sector has ${s.leaves.length} leaves and ${s.paths.length} paths`);
  const commRLast = cs.namespace('comm_r_last', () => AllocatedNum.allocHint(cs, s.commRLast));
  const commC = cs.namespace('comm_c', () => AllocatedNum.allocHint(cs, s.commC));
  const commR = cs.namespace('comm_r', () => AllocatedNum.allocHint(cs, s.commR));
  cs.namespace('comm_r_input', () => commR.inputize(cs));
  const hash = cs.namespace('H_comm_c_comm_r_last', () => poseidonHashCircuit(cs, [commC, commRLast]));
  cs.enforce(
    'enforce_comm_c_comm_r_last_hash_comm_r',
    LinearCombination.of(commR.variable),
    LinearCombination.of(ONE),
    LinearCombination.of(hash.variable),
  );
  s.leaves.forEach((leaf, n) => {
    cs.namespace(
      () => `challenge_inclusion_${n}`,
      () => porCircuit(cs, 'poseidon', { value: leaf }, s.paths[n], commRLast, true),
    );
  });
}

export class FallbackPoStCircuit implements Circuit {
  constructor(
    readonly params: PoStCircuitParams,
    readonly sectors: readonly PoStSectorWitness[],
  ) {
    if (sectors.length !== params.sectorCount) throw new RangeError(`expected ${params.sectorCount} circuit sectors, got ${sectors.length}`);
    sectors.forEach((s, i) => {
      if (s.paths.length !== params.challengeCount) throw new RangeError(`sector ${i}: expected ${params.challengeCount} inclusion proofs, got ${s.paths.length}`);
    });
  }

  synthesize(cs: ConstraintSystem): void {
    cs.namespace('outer namespace', () => {
      this.sectors.forEach((s, i) => {
        cs.program?.beginSegment(); // sectors are independent: witness programs run them in parallel
        cs.namespace(() => `sector_${i}`, () => synthesizeSector(cs, s));
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Construction

/** The circuit parameters of a registered PoSt proof. */
export function postCircuitParams(p: PoStProofInfo): PoStCircuitParams {
  return { tree: p.size.tree, challengeCount: p.challengeCount, sectorCount: p.sectorCount };
}

function blankSector(params: PoStCircuitParams): PoStSectorWitness {
  const t = params.tree;
  return {
    commR: undefined,
    commC: undefined,
    commRLast: undefined,
    leaves: new Array<undefined>(params.challengeCount).fill(undefined),
    paths: Array.from({ length: params.challengeCount }, () => blankAuthPath(t.baseArity, t.baseLevels, t.subArity, t.topArity)),
  };
}

/** `FallbackPoStCompound::blank_circuit`: every value undefined (shapes, setup, counting). */
export function postBlankCircuit(params: PoStCircuitParams): FallbackPoStCircuit {
  return new FallbackPoStCircuit(params, Array.from({ length: params.sectorCount }, () => blankSector(params)));
}

function authPath(proof: MerkleProof<bigint>): AuthPath {
  const level = (el: { hashes: readonly bigint[]; index: number }): AuthPathLevel => ({ arity: el.hashes.length + 1, hashes: el.hashes, index: el.index });
  return { base: proof.base.map(level), sub: proof.sub.map(level), top: proof.top.map(level) };
}

/** `Sector::circuit`: one circuit sector from (a slice of) a vanilla sector proof. */
export function sectorWitness(p: PoStSectorProof, proofs: readonly MerkleProof<bigint>[]): PoStSectorWitness {
  return { commR: p.commR, commC: p.commC, commRLast: p.commRLast, leaves: proofs.map((x) => x.leaf), paths: proofs.map(authPath) };
}

/**
 * The circuit sectors of one partition, in circuit order: WinningPoSt unrolls the one sector's inclusion proofs
 * (one circuit sector each); WindowPoSt takes the sectors as given; a short list repeats its last sector.
 */
export function postCircuitSectorProofs(p: PoStProofInfo, sectors: readonly PoStSectorProof[]): { proof: PoStSectorProof; inclusion: readonly MerkleProof<bigint>[] }[] {
  if (sectors.length === 0) throw new RangeError('no sector proofs');
  const out: { proof: PoStSectorProof; inclusion: readonly MerkleProof<bigint>[] }[] = [];
  if (p.type === 'winning') {
    for (const s of sectors) for (const ip of s.inclusionProofs) out.push({ proof: s, inclusion: [ip] });
  } else {
    for (const s of sectors) out.push({ proof: s, inclusion: s.inclusionProofs });
  }
  if (out.length > p.sectorCount) throw new RangeError(`${out.length} circuit sectors, the circuit has ${p.sectorCount}`);
  while (out.length < p.sectorCount) out.push(out[out.length - 1]!);
  return out;
}

/** `FallbackPoStCompound::circuit`: the circuit of one partition with its witness (no checks: see checkPoStSectors). */
export function postCircuitFor(p: PoStProofInfo, sectors: readonly PoStSectorProof[]): FallbackPoStCircuit {
  const params = postCircuitParams(p);
  return new FallbackPoStCircuit(
    params,
    postCircuitSectorProofs(p, sectors).map((x) => sectorWitness(x.proof, x.inclusion)),
  );
}

// ---------------------------------------------------------------------------------------------
// Public inputs and the checks a planner makes before proving

/** The public inputs the prover must meet and the verifier uses: what `postPublicInputs` needs. */
export interface PoStChallengeContext {
  readonly randomness: Uint8Array;
  /** WindowPoSt partition index (V1 challenge derivation uses it); 0 for WinningPoSt. */
  readonly partitionIndex: number;
  /** The position of `sectors[0]` in the partition's sector list when a piece of it is checked (default 0): the
   *  challenges' sector index and the messages' proof numbers count from it. */
  readonly firstIndex?: number;
}

/** A sector list that cannot be proved (the message names the sector and challenge). */
export class PoStInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoStInputError';
  }
}

/**
 * The challenged leaves of each *real* sector (in order): WinningPoSt: the one sector's 66 challenges, one per
 * unrolled circuit sector; WindowPoSt: 10 per sector, with sector_index = partition·sector_count + i for V1.
 */
export function postExpectedChallenges(p: PoStProofInfo, sectors: readonly PoStSectorProof[], ctx: PoStChallengeContext): number[][] {
  if (p.type === 'winning') {
    return sectors.map((s) => Array.from({ length: WINNING_POST_CHALLENGE_COUNT }, (_, n) => postLeafChallenge(ctx.randomness, s.sectorId, BigInt(n), p.size.sectorSize)));
  }
  const first = ctx.firstIndex ?? 0;
  return sectors.map((s, i) => postSectorChallenges(p, ctx.randomness, s.sectorId, ctx.partitionIndex * p.sectorCount + first + i));
}

/**
 * `FallbackPoStCircuit::generate_public_inputs` (what a chain verifier computes from randomness and the public
 * sectors): per circuit sector [comm_r, c_0 … c_{n−1}], the last sector's repeated up to sector_count.
 */
export function postPublicInputs(p: PoStProofInfo, sectors: readonly { sectorId: bigint; commR: bigint }[], ctx: PoStChallengeContext): bigint[] {
  if (sectors.length === 0) throw new RangeError('no sectors');
  const out: bigint[] = [];
  if (p.type === 'winning') {
    if (sectors.length !== 1) throw new RangeError(`WinningPoSt proves one sector, got ${sectors.length}`);
    const s = sectors[0]!;
    for (let n = 0; n < p.sectorCount; n++) out.push(s.commR, BigInt(postLeafChallenge(ctx.randomness, s.sectorId, BigInt(n), p.size.sectorSize)));
    return out;
  }
  if (sectors.length > p.sectorCount) throw new RangeError(`${sectors.length} sectors; a ${p.size.label} WindowPoSt partition holds at most ${p.sectorCount}`);
  return padWindowInputs(p, windowSectorInputs(p, sectors, ctx));
}

/** A WindowPoSt piece's public inputs: [comm_r, c_0 … c_{n−1}] per sector, from ctx.firstIndex on, unpadded. */
export function windowSectorInputs(p: PoStProofInfo, sectors: readonly { sectorId: bigint; commR: bigint }[], ctx: PoStChallengeContext): bigint[] {
  const out: bigint[] = [];
  const first = ctx.firstIndex ?? 0;
  sectors.forEach((s, i) => {
    out.push(s.commR);
    for (const c of postSectorChallenges(p, ctx.randomness, s.sectorId, ctx.partitionIndex * p.sectorCount + first + i)) out.push(BigInt(c));
  });
  return out;
}

/** The WindowPoSt circuit's inputs from its real sectors' (windowSectorInputs in order): the last sector's
 *  repeated up to sector_count. */
export function padWindowInputs(p: PoStProofInfo, out: bigint[]): bigint[] {
  const per = 1 + p.challengeCount;
  while (out.length < per * p.sectorCount) out.push(...out.slice(out.length - per));
  return out;
}

const SHAPES = ['Single', 'Sub', 'Top'] as const;

function expectedProofShape(t: TreeShape): (typeof SHAPES)[number] {
  return t.topArity ? 'Top' : t.subArity ? 'Sub' : 'Single';
}

/**
 * Everything the circuit would refuse, checked first with a message naming the sector and challenge: the number
 * of sectors and inclusion proofs, each path's shape (levels and arities of the sector size), each proof's root
 * = comm_r_last, comm_r = Poseidon(comm_c, comm_r_last), each path leads from its leaf to the root, and each
 * challenged leaf index equals the challenge derived from the randomness and sector id (challenges.ts).
 */
export function checkPoStSectors(p: PoStProofInfo, sectors: readonly PoStSectorProof[], ctx: PoStChallengeContext, opts: { commR?: boolean } = {}): void {
  if (sectors.length === 0) throw new PoStInputError('no sector proofs');
  if (p.type === 'winning' && sectors.length !== 1) throw new PoStInputError(`WinningPoSt proves exactly one sector, got ${sectors.length} sector proofs`);
  if (p.type === 'window' && sectors.length > p.sectorCount) {
    throw new PoStInputError(`${sectors.length} sector proofs; a ${p.size.label} WindowPoSt partition holds at most ${p.sectorCount}`);
  }
  const t = p.size.tree;
  const shape = expectedProofShape(t);
  const want = postExpectedChallenges(p, sectors, ctx);
  const first = ctx.firstIndex ?? 0;
  sectors.forEach((s, i) => {
    const who = `sector ${s.sectorId} (proof ${first + i})`;
    const count = p.type === 'winning' ? WINNING_POST_CHALLENGE_COUNT : p.challengeCount;
    if (s.inclusionProofs.length !== count) throw new PoStInputError(`${who}: ${s.inclusionProofs.length} inclusion proofs, ${p.size.label} ${p.type === 'winning' ? 'WinningPoSt' : 'WindowPoSt'} needs ${count}`);
    if (opts.commR !== false) checkCommR(s, first + i);
    s.inclusionProofs.forEach((ip, n) => {
      const where = `${who} challenge ${n}`;
      if (ip.shape !== shape) throw new PoStInputError(`${where}: a ${ip.shape} Merkle proof, ${p.size.label} trees take ${shape}`);
      const levels = [
        [ip.base, t.baseLevels, t.baseArity, 'base'],
        [ip.sub, t.subArity ? 1 : 0, t.subArity, 'sub'],
        [ip.top, t.topArity ? 1 : 0, t.topArity, 'top'],
      ] as const;
      for (const [path, len, arity, name] of levels) {
        if (path.length !== len) throw new PoStInputError(`${where}: ${name} path of ${path.length} levels, expected ${len}`);
        path.forEach((el, l) => {
          if (el.hashes.length !== arity - 1) throw new PoStInputError(`${where}: ${name} level ${l} has ${el.hashes.length} siblings, expected ${arity - 1}`);
          if (!Number.isInteger(el.index) || el.index < 0 || el.index >= arity) throw new PoStInputError(`${where}: ${name} level ${l} index ${el.index} outside 0..${arity - 1}`);
        });
      }
      if (ip.root !== s.commRLast) throw new PoStInputError(`${where}: the inclusion proof's root is not the sector's comm_r_last`);
      const leafIndex = pathLeafIndex(fullPath(ip));
      const c = want[i]![n]!;
      if (leafIndex !== c) {
        throw new PoStInputError(`${where}: the proof opens leaf ${leafIndex}, but the randomness challenges leaf ${c} (wrong randomness, sector id or partition index?)`);
      }
    });
  });
}

function checkCommR(s: PoStSectorProof, i: number): void {
  if (fastPoseidonHash([s.commC, s.commRLast]) !== s.commR) throw new PoStInputError(`sector ${s.sectorId} (proof ${i}): comm_r is not Poseidon(comm_c, comm_r_last)`);
}

/**
 * checkPoStSectors without blocking the event loop for long: the cheap checks at once, then comm_r =
 * Poseidon(comm_c, comm_r_last) sector by sector (TypeScript Poseidon: ~0.5 ms each, a 2349-sector partition
 * ~1 s; the native one, poseidon-native.ts, ~15 µs), yielding every `chunk` sectors so that a daemon keeps
 * answering (and planning a WinningPoSt) meanwhile.
 */
export async function checkPoStSectorsAsync(p: PoStProofInfo, sectors: readonly PoStSectorProof[], ctx: PoStChallengeContext, chunk = 64): Promise<void> {
  checkPoStSectors(p, sectors, ctx, { commR: false });
  for (let i = 0; i < sectors.length; i++) {
    if (i > 0 && i % chunk === 0) await new Promise<void>((r) => setImmediate(r));
    checkCommR(sectors[i]!, i);
  }
}
