/**
 * Synthetic PoSt vanilla proofs of full size (a 2349-sector 32 GiB WindowPoSt partition, a 32/64 GiB WinningPoSt)
 * without sealing, for benchmarks. Every sector is internally consistent, so the FallbackPoSt circuit is satisfied:
 *  - the challenged leaves are exactly the ones derived from the randomness and the sector id (challenges.ts);
 *  - tree_r_last is a sparse tree over those leaves (pseudo-random values), every sibling that no opened leaf
 *    determines is pseudo-random, so all of a sector's paths lead to one root, comm_r_last;
 *  - comm_c is pseudo-random and comm_r = Poseidon2(comm_c, comm_r_last).
 * The trees of all sectors are hashed level by level together, so one batch per level goes to the Poseidon
 * worker pool. Everything is a deterministic function of the options (rngSeed included).
 */
import { FR_MODULUS } from '../../field/layout.js';
import { bytesToBigintLE } from '../hash/fr32.js';
import { deriveKey, keystream, rngSeedBytes } from '../seal/options.js';
import { poseidonPool } from '../seal/poseidon-pool.js';
import { poseidonLevel, shapedProof } from '../seal/trees.js';
import { shapeArities } from '../tree/build.js';
import type { PathElement } from '../tree/path.js';
import { postSectorChallenges } from './challenges.js';
import { checkPoStRandomness, PoStGenerateError } from './generate.js';
import { postProofName } from './registry.js';
import type { PoStProofInfo, PoStSectorProof } from './types.js';
import { serializePoStSectorProof } from './vanilla.js';

export interface SynthPoStOptions {
  readonly info: PoStProofInfo;
  readonly randomness: Uint8Array;
  /** Sectors (window: default the partition's sector count; winning: 1). */
  readonly sectors?: number;
  /** Id of the first sector; the others follow (default 1). */
  readonly firstSectorId?: bigint;
  /** Partition index (V1 window challenges depend on the sector's place in the whole PoSt). Default 0. */
  readonly partitionIndex?: number;
  readonly rngSeed?: Uint8Array | string | number | bigint;
  /** Poseidon worker threads (default: the machine's parallelism; 1 = in-thread). */
  readonly threads?: number;
  readonly progress?: (stage: string, done: number, total: number) => void;
}

export interface SynthPoStResult {
  /** One raw bincode FallbackPoStSectorProof per sector, in order. */
  readonly elements: Uint8Array[];
  readonly sectorIds: bigint[];
  readonly timings: { readonly [stage: string]: number };
}

/** A stream of pseudo-random canonical field elements (< 2^254) keyed by the parts. */
function frStream(count: number, key: Uint8Array): bigint[] {
  const bytes = keystream(key, count * 32);
  const out: bigint[] = [];
  for (let i = 0; i < count; i++) {
    const b = bytes.subarray(i * 32, i * 32 + 32);
    b[31]! &= 0x3f;
    out.push(bytesToBigintLE(b));
  }
  return out;
}

const u64 = (v: bigint | number): Uint8Array => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(v), true);
  return b;
};

export function synthPoSt(o: SynthPoStOptions): SynthPoStResult {
  const { info } = o;
  checkPoStRandomness(o.randomness);
  const count = o.sectors ?? (info.type === 'winning' ? 1 : info.sectorCount);
  if (!Number.isInteger(count) || count <= 0) throw new PoStGenerateError('sectors must be a positive integer');
  if (info.type === 'winning' && count !== 1) throw new PoStGenerateError('a WinningPoSt proves one sector');
  const partition = o.partitionIndex ?? 0;
  if (!Number.isInteger(partition) || partition < 0) throw new PoStGenerateError('partition index must be a non-negative integer');
  const first = o.firstSectorId ?? 1n;
  if (first < 0n || first + BigInt(count) > 1n << 64n) throw new PoStGenerateError('sector ids must be u64');
  const rng = rngSeedBytes(o.rngSeed);
  const arities = shapeArities(info.size.tree);
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (stage: string): void => {
    const t = performance.now();
    timings[stage] = Math.round(t - t0);
    t0 = t;
  };

  // challenges and leaves
  const sectorIds = Array.from({ length: count }, (_, i) => first + BigInt(i));
  const challenges = sectorIds.map((id, i) => postSectorChallenges(info, o.randomness, id, partition * info.sectorCount + i));
  const levels: Map<number, bigint>[][] = sectorIds.map((id, s) => {
    const leaves = new Map<number, bigint>();
    const opened = [...new Set(challenges[s]!)].sort((a, b) => a - b);
    const values = frStream(opened.length, deriveKey('kiln synth-post leaves', rng, u64(id)));
    opened.forEach((c, k) => leaves.set(c, values[k]!));
    return [leaves];
  });
  lap('challenges');

  // the sparse trees, one level of every sector per batch
  const batch = o.threads === undefined ? poseidonPool(undefined, 256) : poseidonPool(o.threads, 256);
  let commCs: bigint[];
  let commRs: bigint[];
  try {
    const hashLevel = poseidonLevel(batch);
    arities.forEach((a, level) => {
      const groups: bigint[][] = [];
      const owners: { s: number; parent: number }[] = [];
      levels.forEach((ls, s) => {
        const cur = ls[level]!;
        const parents = [...new Set([...cur.keys()].map((i) => Math.floor(i / a)))].sort((x, y) => x - y);
        const missing = parents.length * a - cur.size;
        const filler = frStream(missing, deriveKey('kiln synth-post filler', rng, u64(sectorIds[s]!), u64(level)));
        let f = 0;
        for (const p of parents) {
          const children: bigint[] = [];
          for (let k = 0; k < a; k++) {
            let v = cur.get(p * a + k);
            if (v === undefined) {
              v = filler[f++]!;
              cur.set(p * a + k, v);
            }
            children.push(v);
          }
          groups.push(children);
          owners.push({ s, parent: p });
        }
        ls.push(new Map());
      });
      const hashes = hashLevel(groups, o.progress && ((d) => o.progress!(`tree level ${level + 1}/${arities.length}`, d, groups.length)));
      owners.forEach(({ s, parent }, k) => levels[s]![level + 1]!.set(parent, hashes[k]!));
      o.progress?.(`tree level ${level + 1}/${arities.length}`, groups.length, groups.length);
    });
    lap('trees');
    commCs = sectorIds.map((id) => frStream(1, deriveKey('kiln synth-post comm_c', rng, u64(id)))[0]!);
    commRs = hashLevel(levels.map((ls, s) => [commCs[s]!, ls[arities.length]!.get(0)!]));
    lap('comm_r');
  } finally {
    batch.close();
  }

  // the proofs
  const elements = levels.map((ls, s) => {
    const root = ls[arities.length]!.get(0)!;
    const path = (index: number): PathElement<bigint>[] => {
      const out: PathElement<bigint>[] = [];
      let i = index;
      arities.forEach((a, level) => {
        const firstChild = i - (i % a);
        const hashes: bigint[] = [];
        for (let k = 0; k < a; k++) if (k !== i % a) hashes.push(ls[level]!.get(firstChild + k)!);
        out.push({ hashes, index: i % a });
        i = Math.floor(i / a);
      });
      return out;
    };
    const proof: PoStSectorProof = {
      sectorId: sectorIds[s]!,
      commR: commRs[s]!,
      inclusionProofs: challenges[s]!.map((c) => shapedProof(root, ls[0]!.get(c)!, path(c), info.size.tree)),
      commC: commCs[s]!,
      commRLast: root,
    };
    if (proof.commR >= FR_MODULUS) throw new Error('synthetic comm_r out of range'); // cannot happen: Poseidon output
    levels[s] = []; // free the sector's tree
    o.progress?.('serialise', s + 1, count);
    return serializePoStSectorProof(proof, info);
  });
  lap('serialise');
  return { elements, sectorIds, timings };
}

/** The options' proof described for messages ("StackedDrgWindow32GiBV1_1, 2349 sectors"). */
export function synthPoStLabel(info: PoStProofInfo, sectors: number): string {
  return `${postProofName(info)}, ${sectors} sector${sectors === 1 ? '' : 's'}`;
}
