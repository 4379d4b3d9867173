/**
 * The partition pipeline of one job: at most lanes + synthesis_lookahead partitions in flight
 * across all jobs, handed out by job priority then submission order ([pipeline_wait] when that
 * waits), one at a time per job when [pipeline] is disabled: [partition[k]] → [mem_wait] reserve the working set → [synth] witness (worker
 * threads) → a prover lane ([lane_wait], [prove]) → [verify]. The proving of one partition (native
 * code, off the JS thread) overlaps the synthesis of the next. A partition's slot and memory are given
 * back when its proof is made, before it is verified: the verification (in the verification worker)
 * is off the next partition's critical path (WindowPoSt partitions of one deadline proved back to back).
 * A latency-critical job's partition (priority CRITICAL: WinningPoSt) takes its slot in overdraft
 * (RankedSemaphore): it never waits for a partition in flight to be proved.
 */
import type { Backend } from '../backend/backend.js';
import { FR_BYTES } from '../field/layout.js';
import { encodeProof, type Proof } from '../groth16/proof.js';
import { domainSize } from '../groth16/queries.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { verifyPartitionProof } from './verify-proof.js';
import type { Span } from '../util/timing.js';
import type { EngineConfig } from './config.js';
import { CancelledError, errorText, type Job } from './jobs.js';
import type { ProverLanes } from './lanes.js';
import type { MemoryBudget, Reservation } from './memory.js';
import type { SrsEntry } from './srs-cache.js';
import { Priority, type PartitionWitness, type ProofWork } from './types.js';
import { insertByRank, type Rank } from './queue.js';

/** Bytes one partition needs while in flight: the witness, and what the backend says one
 *  partition proof of this domain takes (Backend.partitionWorkingSetBytes: the a, b, c
 *  evaluations and the quotient's scratch and twiddle tables). */
export function estimatePartitionBytes(shape: CircuitShape, backend: Backend): number {
  return (shape.numInputs + shape.numAux) * FR_BYTES + backend.partitionWorkingSetBytes(domainSize(shape));
}

export class Semaphore {
  private waiters: (() => void)[] = [];
  constructor(private free: number) {}
  /** True when acquire() would not wait. */
  get available(): boolean {
    return this.free > 0;
  }
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((r) => this.waiters.push(r));
  }
  release(): void {
    const w = this.waiters.shift();
    if (w) w();
    else this.free++;
  }
}

/**
 * A semaphore whose waiters are served by rank (lower first; ties in arrival order): the engine's
 * partition slots go to the most urgent, then oldest, job first, so one proof's partitions run
 * back to back instead of interleaving with the next job's (whose first answer would otherwise come
 * only when all of them end). An `overdraft` acquire (a latency-critical job's partition: a
 * WinningPoSt's) never waits: it takes a slot beyond the limit, paid back by the next release, so it
 * does not wait for a partition in flight to be proved before its own synthesis starts.
 */
export class RankedSemaphore {
  private waiters: { rank: Rank; wake: () => void }[] = [];
  constructor(private free: number) {}
  get available(): boolean {
    return this.free > 0;
  }
  async acquire(rank: Rank, overdraft = false): Promise<void> {
    if (this.free > 0 || overdraft) {
      this.free--;
      return;
    }
    await new Promise<void>((wake) => insertByRank(this.waiters, { rank, wake }));
  }
  release(): void {
    // a slot taken in overdraft is paid back first
    const w = this.free < 0 ? undefined : this.waiters.shift();
    if (w) w.wake();
    else this.free++;
  }
}

export interface PipelineDeps {
  config: EngineConfig;
  backend: Backend;
  budget: MemoryBudget;
  lanes: ProverLanes;
  laneOf: WeakMap<Span, string>;
  /** Partitions in flight across all jobs (synthesised or proving): prover lanes + lookahead, so
   *  witnesses (4.2 GB each at 32 GiB) are made only as fast as the lanes take them; served by job
   *  priority, then submission order. */
  inFlight: RankedSemaphore;
  /** Verifies a partition proof of `job` off the event loop (default: verifyProof on this thread). */
  verify?: (entry: SrsEntry, proof: Proof, inputs: bigint[], job: Job) => Promise<{ ok: boolean; encoded: Uint8Array }>;
}

/** Synthesises, proves and verifies every partition of `work`; returns the encoded proofs in order.
 *  Stops at the first failure (or cancellation) after the partitions in flight settle. */
export async function runPartitions(deps: PipelineDeps, job: Job, work: ProofWork, entry: SrsEntry): Promise<Uint8Array[]> {
  const { config, budget, lanes, laneOf } = deps;
  // The engine-wide slots (deps.inFlight: lanes + synthesis_lookahead, by job rank) bound what is in
  // flight; without the pipeline a job also synthesises one partition at a time.
  const slots = new Semaphore(config.pipeline.enabled ? Number.MAX_SAFE_INTEGER : 1);
  const partBytes = estimatePartitionBytes(entry.circuit.shape, deps.backend);
  const inFlight: Promise<Uint8Array>[] = [];
  let stop: unknown;
  for (let k = 0; k < work.partitions; k++) {
    await slots.acquire();
    if (job.cancelRequested) stop ??= new CancelledError();
    if (stop !== undefined) {
      slots.release();
      break;
    }
    const ps = job.span.child(`partition[${k}]`);
    laneOf.set(ps, `partition ${k}`);
    let res: Reservation | undefined;
    // the slot, the memory and the per-job slot, given back once (when the proof is made, or on failure)
    let held = false;
    const giveBack = (): void => {
      if (!held) return;
      held = false;
      if (res !== undefined) budget.release(res);
      deps.inFlight.release();
      slots.release();
    };
    try {
      const rank = [-job.priority, job.seq, k];
      const overdraft = job.priority >= Priority.CRITICAL;
      if (deps.inFlight.available || overdraft) await deps.inFlight.acquire(rank, overdraft);
      else await ps.time('pipeline_wait', () => deps.inFlight.acquire(rank));
      held = true;
      if (job.cancelRequested) throw new CancelledError();
      res = budget.tryReserve(partBytes, `job ${job.id} partition ${k}`);
      if (res === undefined) res = await ps.time('mem_wait', () => budget.reserve(partBytes, `job ${job.id} partition ${k}`));
      const synth = ps.child('synth');
      laneOf.set(synth, 'synthesis');
      let witness: PartitionWitness;
      try {
        witness = await work.synthesize(k, synth);
      } finally {
        synth.end();
      }
      if (job.cancelRequested) {
        witness.release?.(); // the witness buffer goes back to the pool
        throw new CancelledError();
      }
      const p = lanes
        .prove(job, k, work.circuitId, entry, witness, ps)
        .finally(giveBack) // the witness buffer is back in the pool: the next partition may start
        .then(({ proof }) =>
          ps.time('verify', async () => {
            const v = deps.verify !== undefined ? await deps.verify(entry, proof, witness.inputs, job) : undefined;
            const ok = v !== undefined ? v.ok : await verifyPartitionProof(entry.pvk, proof, witness.inputs);
            if (!ok) {
              throw new Error(`partition ${k}: the proof did not verify against its ${witness.inputs.length} public inputs (circuit ${work.circuitId})`);
            }
            job.partitionsDone++;
            return v?.encoded ?? encodeProof(proof);
          }),
        )
        .catch((e: unknown) => {
          stop ??= e;
          throw e;
        })
        .finally(() => ps.end());
      p.catch(() => {}); // observed below
      inFlight.push(p);
    } catch (e) {
      giveBack();
      ps.end();
      stop ??= e instanceof CancelledError ? e : new Error(`partition ${k}: ${errorText(e)}`);
      break;
    }
  }
  const settled = await Promise.allSettled(inFlight);
  if (stop !== undefined) throw stop;
  if (job.cancelRequested) throw new CancelledError();
  return settled.map((s) => (s as PromiseFulfilledResult<Uint8Array>).value);
}
