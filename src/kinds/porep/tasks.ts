/**
 * The PoRep planner's tasks, run in a synthesis worker (see synth-pool.ts): parsing a request's C1,
 * checking a partition, the witness of a partition. The C1 travels packed (c1-packed.ts): each task
 * unpacks the one partition it works on.
 */
import { C1FormatError, VANILLA_PROOF_PREFIX, parseC1Input, withStatedChallenges, type Commit2In } from '../../filecoin/c1.js';
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
  | { ok: true; c2: Omit<Commit2In, 'phase1Out'> & { phase1Out: PackedC1 }; inputs: bigint[][] | undefined; inputsError: string | undefined; failures: string[]; count: number; ms: number }
  | { ok: false; error: string };

/**
 * The planner's work on a request's bytes, in a synthesis worker (JSON parsing, base64 and the
 * public inputs take tens of milliseconds for a 2 KiB C1 and seconds for a 32 GiB one: not on the
 * event loop): the parsed Commit2In, its public inputs and the replica_id check. The partitions'
 * consistency checks are separate tasks (porepCheckPartition), one per partition, so that a 32 GiB
 * C1's ten run in parallel (in one task they took ~47 s on the H200 machine, 2026-12-02) and each
 * partition's synthesis waits only for its own (planner.ts).
 */
export function porepPlanTask(arg: { bytes: Uint8Array; statedNiChallenges?: boolean }): PorepPlanTaskResult {
  const t0 = performance.now();
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
  // with the wrapper's Miner (or gpuproxy's prover_id), replica_id is recomputed from (prover id, sector number,
  // ticket, comm_d, porep id) too
  let ids: { proverId: Uint8Array; sectorId: number } | undefined;
  try {
    if (c2.proverId !== undefined) ids = { proverId: c2.proverId, sectorId: c2.sectorNum };
    else if (c2.miner !== undefined) ids = { proverId: proverIdFromActorId(actorIdFromAddress(c2.miner)), sectorId: c2.sectorNum };
  } catch (e) {
    return { ok: false, error: `${VANILLA_PROOF_PREFIX}Miner ${JSON.stringify(c2.miner).slice(0, 100)}: ${(e as Error).message}` };
  }
  const failures = verifyC1Header(c1, ids ?? {});
  // packed: the planner's thread gets shared bytes, not the C1's object graph to rebuild (c1-packed.ts)
  return { ok: true, c2: { ...c2, phase1Out: packC1(c1) }, inputs, inputsError, failures: failures.slice(0, 5), count: failures.length, ms: performance.now() - t0 };
}
