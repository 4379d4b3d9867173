/**
 * Prover lanes and batching: `count` lanes (GPUs × gpu_workers_per_device; 1 device on the CPU)
 * take synthesised partitions from one priority queue (job priority, then submission order, then
 * partition). With [scheduler] max_batch_size > 1 a free lane waits (at most max_batch_wait_ms) for
 * more partitions of the same circuit while another job of it may still hand some over, then proves
 * the batch one partition after the other.
 */
import { performance } from 'node:perf_hooks';
import type { Backend } from '../backend/backend.js';
import type { Proof } from '../groth16/proof.js';
import { prove } from '../groth16/prover.js';
import { Span } from '../util/timing.js';
import type { EngineConfig } from './config.js';
import { CancelledError, errorText, type Job } from './jobs.js';
import { PriorityQueue, type Queued } from './queue.js';
import type { SrsEntry } from './srs-cache.js';
import type { PartitionWitness } from './types.js';

interface LaneItem extends Queued {
  job: Job;
  partition: number;
  circuitId: string;
  entry: SrsEntry;
  witness: PartitionWitness;
  span: Span;
  submittedMs: number;
  resolve: (v: { proof: Proof }) => void;
  reject: (e: Error) => void;
}

export interface Lane {
  readonly index: number;
  items: LaneItem[];
}

export interface ProverLanesOptions {
  count: number;
  config: EngineConfig;
  backend: Backend;
  /** Names the trace lane of a span (the observability module reads it). */
  laneOf: WeakMap<Span, string>;
  /** Whether a job of `circuitId` not in `inBatch` may still hand partitions to the lanes. */
  moreExpected: (circuitId: string, inBatch: ReadonlySet<Job>) => boolean;
}

export class ProverLanes {
  readonly lanes: readonly Lane[];
  private readonly queue = new PriorityQueue<LaneItem>();
  private batchTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ProverLanesOptions) {
    this.lanes = Array.from({ length: opts.count }, (_, index) => ({ index, items: [] }));
  }

  /** Proves partition `partition` of `job` on the next free lane. */
  prove(job: Job, partition: number, circuitId: string, entry: SrsEntry, witness: PartitionWitness, span: Span): Promise<{ proof: Proof }> {
    return new Promise<{ proof: Proof }>((resolve, reject) => {
      this.queue.push({
        job,
        partition,
        circuitId,
        entry,
        witness,
        span,
        submittedMs: performance.now(),
        priority: job.priority,
        seq: job.seq * 65536 + partition,
        resolve,
        reject,
      });
      this.dispatch();
    });
  }

  /** Drops the job's partitions still waiting for a lane (their proofs reject as cancelled). */
  dropJob(job: Job): void {
    for (const it of [...this.queue.toArray()]) {
      if (it.job === job) {
        this.queue.remove(it);
        it.witness.release?.();
        it.reject(new CancelledError());
      }
    }
  }

  close(): void {
    clearTimeout(this.batchTimer);
  }

  private dispatch(): void {
    const { config } = this.opts;
    const maxBatch = config.scheduler.max_batch_size;
    for (const lane of this.lanes) {
      if (lane.items.length > 0 || this.queue.length === 0) continue;
      const first = this.queue.peek()!;
      const same = this.queue.toArray().filter((it) => it.circuitId === first.circuitId).slice(0, maxBatch);
      if (maxBatch > 1 && same.length < maxBatch && config.scheduler.max_batch_wait_ms > 0 && this.opts.moreExpected(first.circuitId, new Set(same.map((b) => b.job)))) {
        // cross-sector batching: wait (bounded) for more partitions of the same circuit
        const waited = performance.now() - first.submittedMs;
        if (waited < config.scheduler.max_batch_wait_ms) {
          if (this.batchTimer === undefined) {
            this.batchTimer = setTimeout(() => {
              this.batchTimer = undefined;
              this.dispatch();
            }, Math.max(1, config.scheduler.max_batch_wait_ms - waited));
          }
          return;
        }
      }
      for (const it of same) this.queue.remove(it);
      lane.items = same;
      void this.run(lane);
    }
  }

  private async run(lane: Lane): Promise<void> {
    const batch = lane.items;
    for (const it of batch) {
      if (it.job.cancelRequested) {
        it.witness.release?.();
        it.reject(new CancelledError());
        continue;
      }
      const wait = new Span('lane_wait', it.span, it.submittedMs);
      wait.end();
      it.job.lanes.add(lane.index);
      const proving = it.span.child('prove');
      this.opts.laneOf.set(proving, `prover ${lane.index}`);
      try {
        const r = await prove(it.entry.params, it.entry.shape, it.witness.assignment, this.opts.backend, proving, it.job.abort.signal);
        proving.end();
        it.resolve({ proof: r.proof });
      } catch (e) {
        proving.end();
        it.reject(e instanceof CancelledError || it.job.cancelRequested ? new CancelledError() : new Error(`prover: ${errorText(e)}`));
      } finally {
        it.witness.release?.();
        it.job.lanes.delete(lane.index);
      }
    }
    lane.items = [];
    this.dispatch();
  }
}
