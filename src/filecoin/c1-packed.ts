/**
 * A C1 whose partitions' vanilla proofs stay serialized (node:v8) in shared memory until a worker
 * thread needs one. The planner's thread never holds the object graph of a large C1: taking a parsed
 * 32 GiB C1 from the planning worker (a structured clone of ~10^6 objects) held the event loop
 * 0.2–0.6 s on the 2-core dev machine, and sending each partition on to its check task ~40 ms more
 * per partition (bench/ingest.ts). A packed partition (~1.25 MB at 32 GiB) reaches any worker
 * without a copy (a view of a SharedArrayBuffer) and is rebuilt there in ~16 ms.
 */
import { deserialize, serialize } from 'node:v8';
import type { C1Output, ChallengeProof } from './c1.js';

export interface PackedC1 extends Omit<C1Output, 'partitions'> {
  /** Each partition's ChallengeProof[], serialized (node:v8) into a SharedArrayBuffer. */
  readonly partitions: readonly Uint8Array[];
  /** Each partition's number of challenges (without unpacking it). */
  readonly challengeCounts: readonly number[];
}

/** Packs `c1`'s partitions (in the thread that parsed it). */
export function packC1(c1: C1Output): PackedC1 {
  const partitions = c1.partitions.map((p) => {
    const bytes = serialize(p);
    const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
    shared.set(bytes);
    return shared;
  });
  return { ...c1, partitions, challengeCounts: c1.partitions.map((p) => p.length) };
}

/** The C1 as the circuits and checks take it, with partition `k`'s proofs only (the others empty). */
export function unpackC1Partition(c1: PackedC1, k: number): C1Output {
  if (!Number.isInteger(k) || k < 0 || k >= c1.partitions.length) throw new RangeError(`partition ${k} of a C1 of ${c1.partitions.length}`);
  const { challengeCounts: _counts, ...rest } = c1;
  return { ...rest, partitions: c1.partitions.map((p, i) => (i === k ? (deserialize(p) as ChallengeProof[]) : [])) };
}
