/**
 * The SDR graph: DRG parents (storage-proofs-core `BucketGraph`, ChaCha8 bucket sampling), expander
 * parents (storage-proofs-porep `StackedGraph`, 3-round Feistel over blake2b), labels, challenges and
 * the ids that key them (porep_id, prover_id, replica_id). docs/filecoin.md §1. Tested in test/filecoin-graph.test.ts:
 * parents and ids against the 2 KiB fixture, parents on 32 and 64 GiB graphs against an independent implementation.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { ChaCha8Rng } from './hash/chacha8.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { sha256Truncated } from './hash/sha256.js';
import type { SealProofInfo } from './registry.js';

export const DRG_DEGREE = 6;
export const EXP_DEGREE = 8;
/** Parent labels hashed per node: the 14 base parents repeated to 37. */
export const LABEL_PARENTS = 37;
const FEISTEL_ROUNDS = 3;

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

function porepSeed(dst: string, porepId: Uint8Array): Uint8Array {
  return sha256(concatBytes(utf8(dst), porepId));
}

/** Bit length of x − 1, i.e. ⌈log2 x⌉ for x ≥ 2 (exact where Rust computes it through f64). */
function ceilLog2(x: number): number {
  let n = 0;
  for (let v = x - 1; v > 0; v = Math.floor(v / 2)) n++;
  return n;
}

/**
 * Reusable DRG parent sampler for one porep_id. `predecessorFirst` is true for V1_1 and later
 * (api version ≥ 1.1), false for V1 where the predecessor is the last parent.
 */
export class DrgParents {
  private readonly seedPrefix: Uint8Array;

  constructor(porepId: Uint8Array, private readonly predecessorFirst = true) {
    this.seedPrefix = porepSeed('Filecoin_DRSample', porepId).slice(0, 28);
  }

  parents(node: number): number[] {
    const m = DRG_DEGREE;
    if (node === 0 || node === 1) return new Array<number>(m).fill(0);
    const seed = new Uint8Array(32);
    seed.set(this.seedPrefix);
    new DataView(seed.buffer).setUint32(28, node, true);
    const rng = new ChaCha8Rng(seed);
    const mPrime = m - 1;
    const meta = node * mPrime;
    const buckets = BigInt(ceilLog2(meta));
    const out = new Array<number>(m).fill(0);
    const start = this.predecessorFirst ? 1 : 0;
    for (let k = 0; k < mPrime; k++) {
      const bucket = Number(rng.nextU64() % buckets) + 1;
      const largest = Math.min(meta, 2 ** bucket);
      const smallest = Math.max(2, Math.floor(largest / 2));
      const dist = smallest + Number(rng.nextU64() % BigInt(largest - smallest + 1));
      const p = Math.floor((meta - dist) / mPrime);
      out[start + k] = p === node ? node - 1 : p;
    }
    out[this.predecessorFirst ? 0 : mPrime] = node - 1;
    return out;
  }
}

/** Expander parents of one layer over `nodes` nodes (the Feistel permutation of node·8 + i). */
export class ExpanderParents {
  private readonly keys: bigint[];
  private readonly elements: bigint;
  private readonly halfBits: bigint;
  private readonly leftMask: bigint;
  private readonly rightMask: bigint;

  constructor(porepId: Uint8Array, readonly nodes: number) {
    const raw = porepSeed('Filecoin_Feistel', porepId);
    const dv = new DataView(raw.buffer, raw.byteOffset, 32);
    this.keys = [0, 1, 2, 3].map((i) => dv.getBigUint64(i * 8, true));
    this.elements = BigInt(nodes) * BigInt(EXP_DEGREE);
    let nextPow4 = 4n;
    let log4 = 1n;
    while (nextPow4 < this.elements) {
      nextPow4 *= 4n;
      log4++;
    }
    this.halfBits = log4;
    this.rightMask = (1n << log4) - 1n;
    this.leftMask = this.rightMask << log4;
  }

  private round(right: bigint, key: bigint): bigint {
    const buf = new Uint8Array(16);
    const dv = new DataView(buf.buffer);
    dv.setBigUint64(0, right, false);
    dv.setBigUint64(8, key, false);
    const h = blake2b(buf); // 64-byte digest, as blake2b_simd's default
    return new DataView(h.buffer, h.byteOffset, 8).getBigUint64(0, false) & this.rightMask;
  }

  private encode(index: bigint): bigint {
    let left = (index & this.leftMask) >> this.halfBits;
    let right = index & this.rightMask;
    for (let r = 0; r < FEISTEL_ROUNDS; r++) {
      [left, right] = [right, left ^ this.round(right, this.keys[r])];
    }
    return (left << this.halfBits) | right;
  }

  parents(node: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < EXP_DEGREE; i++) {
      // Cycle-walk until the permuted index falls inside the domain.
      let u = this.encode(BigInt(node) * BigInt(EXP_DEGREE) + BigInt(i));
      while (u >= this.elements) u = this.encode(u);
      out.push(Number(u / BigInt(EXP_DEGREE)));
    }
    return out;
  }
}

/**
 * The 37 parent positions hashed into a label, as indices into [drg×6, exp×8]: layer 1 uses the six
 * DRG parents repeated; later layers the 14 base parents twice then the first nine again.
 */
export function labelParentOrder(layer: number): number[] {
  const base = layer === 1 ? DRG_DEGREE : DRG_DEGREE + EXP_DEGREE;
  return Array.from({ length: LABEL_PARENTS }, (_, i) => i % base);
}

/**
 * Label of `node` at `layer` (1-based) = truncated SHA256(replica_id ‖ layer u32 BE ‖ node u64 BE ‖
 * 20 zero bytes ‖ 37 parent labels).
 */
export function computeLabel(replicaId: Uint8Array, layer: number, node: number, parents: readonly Uint8Array[]): Uint8Array {
  if (parents.length !== LABEL_PARENTS) throw new RangeError(`a label hashes ${LABEL_PARENTS} parents, got ${parents.length}`);
  const head = new Uint8Array(64);
  head.set(replicaId, 0);
  const dv = new DataView(head.buffer);
  dv.setUint32(32, layer, false);
  dv.setBigUint64(36, BigInt(node), false);
  return sha256Truncated(head, ...parents);
}

/** `bigint_to_challenge`: a SHA-256 digest read as a little-endian integer, mod (nodes − 1), plus 1 (never node 0). */
function digestToChallenge(h: Uint8Array, nodes: number): number {
  let v = 0n;
  for (let b = 31; b >= 0; b--) v = (v << 8n) | BigInt(h[b]);
  return Number(v % BigInt(nodes - 1)) + 1;
}

/** j = perPartition · k + i as u32 little-endian. */
function challengeIndexLE(perPartition: number, k: number, i: number): Uint8Array {
  const j = new Uint8Array(4);
  new DataView(j.buffer).setUint32(0, perPartition * k + i, true);
  return j;
}

/** Interactive PoRep challenges of partition `k`: h = SHA256(replica_id ‖ seed ‖ j u32 LE), c = h mod (nodes − 1) + 1. */
export function interactiveChallenges(
  replicaId: Uint8Array, seed: Uint8Array, nodes: number, perPartition: number, k: number,
): number[] {
  return Array.from({ length: perPartition }, (_, i) => digestToChallenge(sha256(concatBytes(replicaId, seed, challengeIndexLE(perPartition, k, i))), nodes));
}

/** The domain tag of NI-PoRep challenges (storage-proofs-porep stacked/vanilla/challenges.rs `NiChallenges::derive`). */
export const NI_CHALLENGE_TAG = 'filecoin.io|PoRep|1|NonInteractive|1';

/**
 * NI-PoRep challenges of partition `k` (`NiChallenges::derive`): no seed, the sector's own comm_r
 * instead: h = SHA256(tag ‖ replica_id ‖ comm_r ‖ j u32 LE), c = h mod (nodes − 1) + 1.
 */
export function niChallenges(
  replicaId: Uint8Array, commR: Uint8Array, nodes: number, perPartition: number, k: number,
): number[] {
  const head = concatBytes(utf8(NI_CHALLENGE_TAG), replicaId, commR);
  return Array.from({ length: perPartition }, (_, i) => digestToChallenge(sha256(concatBytes(head, challengeIndexLE(perPartition, k, i))), nodes));
}

/** What a seal proof's challenges are derived from. */
export interface ChallengeSeeds {
  readonly replicaId: Uint8Array;
  /** The interactive seed (ignored by NI-PoRep). */
  readonly seed: Uint8Array;
  /** comm_r (what NI-PoRep derives from). */
  readonly commR: Uint8Array;
}

/**
 * The challenges of partition `k` of a registered seal proof, as its verifier derives them
 * (storage-proofs-porep stacked/vanilla/params.rs `PublicInputs::challenges`): interactive from
 * (replica_id, seed), NI-PoRep from (replica_id, comm_r). Synthetic PoRep (ids 10–14) picks among
 * 2^18 synthetic challenges: not implemented (a RangeError).
 */
export function porepChallenges(info: SealProofInfo, s: ChallengeSeeds, perPartition: number, k: number): number[] {
  switch (info.challengeDerivation) {
    case 'interactive':
      return interactiveChallenges(s.replicaId, s.seed, info.nodes, perPartition, k);
    case 'non-interactive':
      return niChallenges(s.replicaId, s.commR, info.nodes, perPartition, k);
    default:
      throw new RangeError(`challenge derivation for ${info.name} (${info.challengeDerivation}) is not implemented`);
  }
}

/** prover_id: the miner's actor id as an unsigned LEB128 varint, zero-padded to 32 bytes. */
export function proverIdFromActorId(actorId: bigint | number): Uint8Array {
  let v = BigInt(actorId);
  if (v < 0n || v >= 1n << 64n) throw new RangeError('actor id must be a u64');
  const out = new Uint8Array(32);
  let i = 0;
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out[i++] = byte;
  } while (v !== 0n);
  return out;
}

/** Parses an actor address like "f01001" / "t01001" (ID addresses only) into its actor id. */
export function actorIdFromAddress(addr: string): bigint {
  const m = /^[ft]0(\d{1,20})$/.exec(addr);
  if (m === null) throw new RangeError(`not an ID address: ${JSON.stringify(addr)}`);
  const id = BigInt(m[1]);
  if (id >= 1n << 64n) throw new RangeError('actor id out of range');
  return id;
}

/** replica_id = SHA256(prover_id ‖ sector_id u64 BE ‖ ticket ‖ comm_d ‖ porep_id), truncated to 254 bits. */
export function replicaId(
  proverId: Uint8Array, sectorId: bigint | number, ticket: Uint8Array, commD: Uint8Array, porepId: Uint8Array,
): Uint8Array {
  const sid = new Uint8Array(8);
  new DataView(sid.buffer).setBigUint64(0, BigInt(sectorId), false);
  return sha256Truncated(proverId, sid, ticket, commD, porepId);
}
