/**
 * The PoRep planner's tasks, run in a synthesis worker (see synth-pool.ts): parsing a request's C1,
 * checking a partition, the witness of a partition. The C1 travels packed (c1-packed.ts): each task
 * unpacks the one partition it works on.
 */
import { serialize } from 'node:v8';
import { C1FormatError, VANILLA_PROOF_PREFIX, parseC1Input, parseSplitPartition, splitCommit2In, withStatedChallenges, type C1Output, type Commit2In } from '../../filecoin/c1.js';
import { sealProofInfo } from '../../filecoin/registry.js';
import { packC1, unpackC1Partition, type PackedC1 } from '../../filecoin/c1-packed.js';
import { partitionPublicInputs } from '../../filecoin/public-inputs.js';
import { WitnessGenerator } from '../../r1cs/witness.js';
import { verifyC1Header, verifyC1Partition } from '../../filecoin/c1-checks.js';
import { actorIdFromAddress, proverIdFromActorId } from '../../filecoin/graph.js';
import { stackedCircuitFor } from '../../filecoin/circuit/index.js';

export interface PorepWitnessArg {
  c1: PackedC1;
  partition: number;
  numInputs: number;
}

export function porepWitness(arg: PorepWitnessArg): { assignment: Uint8Array; inputs: bigint[]; ms: number } {
  const t0 = performance.now();
  const circuit = stackedCircuitFor(unpackC1Partition(arg.c1, arg.partition), arg.partition);
  const wg = new WitnessGenerator(arg.numInputs);
  circuit.synthesize(wg);
  return { assignment: wg.assignment().slice(), inputs: wg.inputs(), ms: performance.now() - t0 };
}

/** What partition k's vanilla proofs claim, checked before any synthesis (filecoin/c1-checks.ts
 *  verifyC1Partition): every Merkle path against its root, comm_r = Poseidon2(comm_c, comm_r_last),
 *  the challenges and column indices, the parents against the graph, the labels and the encoding.
 *  The first few failures, and the roots that the planner compares across partitions. With from/to, only
 *  those challenges (a piece of the partition: the planner checks a 32 GiB partition in pieces, in parallel). */
export function porepCheckPartition(arg: { c1: PackedC1; partition: number; from?: number; to?: number }): {
  failures: string[];
  count: number;
  partition: number;
  from?: number;
  commC: bigint | undefined;
  commRLast: bigint | undefined;
  ms: number;
} {
  const t0 = performance.now();
  const range = arg.from !== undefined || arg.to !== undefined ? { from: arg.from ?? 0, to: arg.to ?? Infinity } : undefined;
  const r = verifyC1Partition(unpackC1Partition(arg.c1, arg.partition), arg.partition, range);
  return { failures: r.failures.slice(0, 5), count: r.failures.length, partition: r.partition, ...(r.from ? { from: r.from } : {}), commC: r.commC, commRLast: r.commRLast, ms: performance.now() - t0 };
}

export type PorepPlanTaskResult =
  | { ok: true; c2: Omit<Commit2In, 'phase1Out'> & { phase1Out: PackedC1 }; inputs: bigint[][] | undefined; inputsError: string | undefined; failures: string[]; count: number; ms: number; split?: undefined }
  | {
      ok: true;
      /** A large C1 split for a parallel parse (splitCommit2In): its partitions are parsed by porepParsePartition tasks. */
      split: { c2: Commit2In; json: Uint8Array; ranges: readonly (readonly [number, number])[]; path: string };
      failures: string[];
      count: number;
      ms: number;
    }
  | { ok: false; error: string };

/**
 * The planner's work on a request's bytes, in a synthesis worker (JSON parsing, base64 and the
 * public inputs take tens of milliseconds for a 2 KiB C1 and seconds for a 32 GiB one: not on the
 * event loop): the parsed Commit2In, its public inputs and the replica_id check. The partitions'
 * consistency checks are separate tasks (porepCheckPartition), one per partition, so that a 32 GiB
 * C1's ten run in parallel (in one task they took ~47 s on the H200 machine, 2026-12-02) and each
 * partition's synthesis waits only for its own (planner.ts).
 */
export function porepPlanTask(arg: { bytes: Uint8Array; statedNiChallenges?: boolean; whole?: boolean }): PorepPlanTaskResult {
  const t0 = performance.now();
  // a large wrapper: its partitions parsed in parallel (stated challenges are a property of every partition: whole)
  const split = arg.whole === true || arg.statedNiChallenges === true ? undefined : splitCommit2In(arg.bytes);
  if (split !== undefined) {
    const ids = replicaIds(split.c2);
    if (typeof ids === 'string') return { ok: false, error: ids };
    const failures = verifyC1Header(split.c2.phase1Out, ids ?? {});
    return { ok: true, split, failures: failures.slice(0, 5), count: failures.length, ms: performance.now() - t0 };
  }
  let c2: Commit2In;
  try {
    c2 = parseC1Input(arg.bytes);
  } catch (e) {
    return { ok: false, error: `${VANILLA_PROOF_PREFIX}${e instanceof C1FormatError ? e.message : (e as Error).message}` };
  }
  // [kiln] insecure_stated_ni_challenges: an NI-PoRep C1's own challenges (synthetic C1s of benchmarks)
  if (arg.statedNiChallenges === true) c2 = { ...c2, phase1Out: withStatedChallenges(c2.phase1Out) };
  const c1 = c2.phase1Out;
  let inputs: bigint[][] | undefined;
  let inputsError: string | undefined;
  try {
    inputs = c1.partitions.map((_, k) => partitionPublicInputs(c1, k));
  } catch (e) {
    inputsError = `public inputs of ${c1.registeredProof.name}: ${(e as Error).message}`;
  }
  const ids = replicaIds(c2);
  if (typeof ids === 'string') return { ok: false, error: ids };
  const failures = verifyC1Header(c1, ids ?? {});
  // packed: the planner's thread gets shared bytes, not the C1's object graph to rebuild (c1-packed.ts)
  return { ok: true, c2: { ...c2, phase1Out: packC1(c1) }, inputs, inputsError, failures: failures.slice(0, 5), count: failures.length, ms: performance.now() - t0 };
}

/** With the wrapper's Miner (or gpuproxy's prover_id), replica_id is recomputed from (prover id, sector number,
 *  ticket, comm_d, porep id) too: the ids to do it with, none, or the refusal of a Miner that is no address. */
function replicaIds(c2: Commit2In): { proverId: Uint8Array; sectorId: number } | undefined | string {
  try {
    if (c2.proverId !== undefined) return { proverId: c2.proverId, sectorId: c2.sectorNum };
    if (c2.miner !== undefined) return { proverId: proverIdFromActorId(actorIdFromAddress(c2.miner)), sectorId: c2.sectorNum };
    return undefined;
  } catch (e) {
    return `${VANILLA_PROOF_PREFIX}Miner ${JSON.stringify(c2.miner).slice(0, 100)}: ${(e as Error).message}`;
  }
}

export interface PorepParsePartitionArg {
  /** The split C1's JSON (shared) and partition k's byte range in it. */
  json: Uint8Array;
  range: readonly [number, number];
  path: string;
  partition: number;
  /** The C1's fields other than its partitions, and how many partitions it has. */
  head: Omit<C1Output, 'partitions'>;
  partitions: number;
}

/**
 * Partition k of a split C1 (porepPlanTask's `split`): parsed and checked as the whole parse does it, packed
 * (serialized into shared memory, as packC1), with its public inputs. `ok: false` on any fault: the planner
 * then parses the C1 whole, whose error names the first fault in the C1's order.
 */
export function porepParsePartition(arg: PorepParsePartitionArg): { ok: true; packed: Uint8Array; count: number; inputs: bigint[]; ms: number } | { ok: false } {
  const t0 = performance.now();
  try {
    const info = sealProofInfo(arg.head.registeredProof.name) ?? arg.head.registeredProof;
    const proofs = parseSplitPartition(arg.json, arg.range, arg.path, arg.partition, info);
    const partitions = Array.from({ length: arg.partitions }, (_, i) => (i === arg.partition ? proofs : []));
    const inputs = partitionPublicInputs({ ...arg.head, registeredProof: info, partitions }, arg.partition);
    const bytes = serialize(proofs);
    const packed = new Uint8Array(new SharedArrayBuffer(bytes.length));
    packed.set(bytes);
    return { ok: true, packed, count: proofs.length, inputs, ms: performance.now() - t0 };
  } catch {
    return { ok: false };
  }
}
