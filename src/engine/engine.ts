/**
 * The proving engine: jobs, priorities, the per-partition pipeline, prover lanes, memory budget,
 * SRS cache, verification, timing. Transport-free (src/server/ puts gRPC and HTTP on top).
 *
 * Flow of one job (spans in brackets):
 *   submit → [validate] planner.plan (errors → FAILED) → [queue] priority queue →
 *   [srs] acquire the circuit's parameters (load on demand) →
 *   per partition k, at most `synthesis_lookahead + 1` partitions in flight:
 *     [partition[k]] → [mem_wait] reserve the working set → [synth] witness (worker threads) →
 *     [lane_wait] a prover lane → [prove] (+ the prover's phases) → [verify] → release
 *   → [assemble] the partition proofs concatenated → COMPLETED.
 *
 * Concurrency: `lanes` prover lanes (GPUs × gpu_workers_per_device; 1 device on the CPU) take
 * synthesised partitions from a priority queue (job priority, then submission order), so the
 * proving of one partition (native code, off the JS thread) overlaps synthesis of the next
 * partition of the same job and of other jobs (worker threads). Up to lanes + synthesis_concurrency
 * jobs run at once (lanes only when the pipeline is disabled).
 */
import { concatBytes } from '@noble/hashes/utils.js';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Backend } from '../backend/backend.js';
import { FR_BYTES } from '../field/layout.js';
import { encodeProof } from '../groth16/proof.js';
import { prove } from '../groth16/prover.js';
import { domainSize } from '../groth16/queries.js';
import { verifyProof } from '../groth16/verifier.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { Span } from '../util/timing.js';
import type { EngineConfig } from './config.js';
import { MemoryBudget, fmtBytes, type Reservation } from './memory.js';
import { EngineMetrics } from './metrics.js';
import { PriorityQueue, type Queued } from './queue.js';
import { gapWarnings, sumSpans } from './spans.js';
import { SrsCache, type SrsEntry } from './srs-cache.js';
import { SynthesisPool } from './synth-pool.js';
import { chromeTrace, type TraceEvent } from './trace.js';
import {
  AwaitStatus,
  PRIORITY_NAMES,
  Priority,
  ProofKind,
  type CircuitProvider,
  type PartitionWitness,
  type Planner,
  type ProofRequest,
  type ProofWork,
} from './types.js';

export type JobState = 'planning' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface JobTimings {
  queueWaitMs: number;
  srsLoadMs: number;
  synthesisMs: number;
  gpuComputeMs: number;
  totalMs: number;
}

export interface JobResult {
  jobId: string;
  status: number; // AwaitStatus
  proof: Uint8Array;
  errorMessage: string;
  timings: JobTimings;
}

class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CancelledError';
  }
}

/** Bytes one partition needs while in flight: the witness, the prover's a, b, c buffers, and the
 *  quotient's scratch and twiddle tables in the addon (up to 120 B per domain element on the
 *  AVX-512 IFMA path, 32 B on the scalar one: counted as 4 × 32 B). */
export function estimatePartitionBytes(shape: CircuitShape): number {
  return (shape.numInputs + shape.numAux) * FR_BYTES + (3 + 4) * domainSize(shape) * FR_BYTES;
}

export class Job implements Queued {
  state: JobState = 'planning';
  readonly span: Span;
  queueSpan: Span | undefined;
  work: ProofWork | undefined;
  proof: Uint8Array | undefined;
  error: string | undefined;
  cancelRequested = false;
  readonly submittedAt = Date.now();
  startedAtMs: number | undefined;
  finishedAtMs: number | undefined;
  partitionsDone = 0;
  readonly lanes = new Set<number>();
  timings: JobTimings = { queueWaitMs: 0, srsLoadMs: 0, synthesisMs: 0, gpuComputeMs: 0, totalMs: 0 };
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  constructor(
    readonly id: string,
    readonly requestId: string,
    readonly kind: number,
    readonly kindName: string,
    readonly priority: number,
    readonly seq: number,
  ) {
    this.span = new Span('job');
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  get finished(): boolean {
    return this.state === 'completed' || this.state === 'failed' || this.state === 'cancelled';
  }

  /** @internal */
  settle(): void {
    this.resolveDone();
  }

  summary(): Record<string, unknown> {
    return {
      id: this.id,
      requestId: this.requestId,
      kind: this.kindName,
      priority: PRIORITY_NAMES[this.priority] ?? String(this.priority),
      state: this.state,
      circuitId: this.work?.circuitId,
      describe: this.work?.describe,
      partitions: { total: this.work?.partitions ?? 0, done: this.partitionsDone },
      lanes: [...this.lanes],
      submittedAt: new Date(this.submittedAt).toISOString(),
      startedAtMs: this.startedAtMs === undefined ? undefined : round(this.startedAtMs),
      finishedAtMs: this.finishedAtMs === undefined ? undefined : round(this.finishedAtMs),
      timings: this.timings,
      error: this.error,
    };
  }
}

interface LaneItem extends Queued {
  job: Job;
  partition: number;
  circuitId: string;
  entry: SrsEntry;
  witness: PartitionWitness;
  span: Span;
  submittedMs: number;
  resolve: (v: { proof: import('../groth16/proof.js').Proof }) => void;
  reject: (e: Error) => void;
}

interface Lane {
  index: number;
  items: LaneItem[];
}

class Semaphore {
  private waiters: (() => void)[] = [];
  constructor(private free: number) {}
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

export interface EngineOptions {
  config: EngineConfig;
  backend: Backend;
  logger: Logger;
  /** Planners (default: none; src/kinds/index.ts has the built-in set). */
  planners?: Planner[];
  providers?: CircuitProvider[];
  /** Include Node's default process metrics (default true). */
  defaultMetrics?: boolean;
}

const KIND_LABELS: Record<number, string> = {
  [ProofKind.POREP_SEAL_COMMIT]: 'porep-c2',
  [ProofKind.SNAP_DEALS_UPDATE]: 'snap-update',
  [ProofKind.WINDOW_POST_PARTITION]: 'window-post',
  [ProofKind.WINNING_POST]: 'winning-post',
};

export class Engine {
  readonly config: EngineConfig;
  readonly backend: Backend;
  readonly log: Logger;
  readonly budget: MemoryBudget;
  readonly srs: SrsCache;
  readonly synthPool: SynthesisPool;
  readonly metrics: EngineMetrics;
  readonly laneCount: number;
  readonly maxInFlight: number;
  private readonly planners = new Map<number, Planner>();
  private readonly providers: CircuitProvider[] = [];
  private readonly jobs = new Map<string, Job>();
  private readonly byRequest = new Map<string, Job>();
  private readonly queue = new PriorityQueue<Job>();
  private readonly running = new Set<Job>();
  private readonly laneQueue = new PriorityQueue<LaneItem>();
  private readonly lanes: Lane[];
  private readonly laneOf = new WeakMap<Span, string>();
  private readonly startedAt = Date.now();
  private seq = 0;
  private closed = false;
  private batchTimer: NodeJS.Timeout | undefined;
  totals = { completed: 0, failed: 0, cancelled: 0 };

  constructor(opts: EngineOptions) {
    this.config = opts.config;
    this.backend = opts.backend;
    this.log = opts.logger;
    this.budget = new MemoryBudget(opts.config.memory.total_budget);
    this.srs = new SrsCache(() => this.providers, this.budget, this.backend, opts.config.memory.eviction_min_idle_ms);
    this.synthPool = new SynthesisPool(opts.config.synthesis.threads);
    const caps = this.backend.capabilities();
    const devices = opts.config.gpus.devices.length || caps.gpus.length || 1;
    this.laneCount = devices * opts.config.gpus.gpu_workers_per_device;
    this.maxInFlight = this.laneCount + (opts.config.pipeline.enabled ? opts.config.pipeline.synthesis_concurrency : 0);
    this.lanes = Array.from({ length: this.laneCount }, (_, index) => ({ index, items: [] }));
    for (const p of opts.planners ?? []) this.registerPlanner(p);
    for (const p of opts.providers ?? []) this.registerCircuits(p);
    this.metrics = new EngineMetrics(
      {
        queues: () => this.queueStats(),
        memory: () => ({ budget: this.budget.limit, reserved: this.budget.reserved, srs: this.srs.loadedBytes }),
      },
      { defaultMetrics: opts.defaultMetrics },
    );
  }

  /** Adds (or replaces) the planner of a proof kind. Tests register the demo kind this way. */
  registerPlanner(p: Planner): void {
    this.planners.set(p.kind, p);
  }

  registerCircuits(p: CircuitProvider): void {
    this.providers.push(p);
  }

  // ---------------------------------------------------------------------------------------------
  // Submit / await / cancel

  /** Creates a job (or returns the live one with the same request id). Never throws for bad input:
   *  the job FAILS with a message instead. */
  async submit(req: ProofRequest): Promise<{ job: Job; existing: boolean; queuePosition: number }> {
    if (this.closed) throw new Error('the engine is shutting down');
    if (req.requestId !== '') {
      const prev = this.byRequest.get(req.requestId);
      if (prev !== undefined && prev.state !== 'failed' && prev.state !== 'cancelled') {
        return { job: prev, existing: true, queuePosition: Math.max(0, this.queue.position(prev)) };
      }
    }
    const planner = this.planners.get(req.proofKind);
    const kindName = planner?.name ?? KIND_LABELS[req.proofKind] ?? `kind-${req.proofKind}`;
    const priority =
      req.priority >= Priority.LOW && req.priority <= Priority.CRITICAL ? req.priority : (planner?.defaultPriority ?? Priority.NORMAL);
    const job = new Job(`${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`, req.requestId, req.proofKind, kindName, priority, this.seq++);
    this.jobs.set(job.id, job);
    if (req.requestId !== '') this.byRequest.set(req.requestId, job);

    if (planner === undefined) {
      const what = req.proofKind === ProofKind.UNSPECIFIED ? 'proof_kind is PROOF_KIND_UNSPECIFIED' : `unknown proof_kind ${req.proofKind}`;
      this.finish(job, 'failed', `${what} (expected POREP_SEAL_COMMIT, SNAP_DEALS_UPDATE, WINDOW_POST_PARTITION or WINNING_POST)`);
      return { job, existing: false, queuePosition: 0 };
    }
    const validate = job.span.child('validate');
    try {
      job.work = await planner.plan(req, { synthPool: this.synthPool });
    } catch (e) {
      validate.end();
      this.finish(job, 'failed', errorText(e));
      return { job, existing: false, queuePosition: 0 };
    }
    validate.end();
    if (job.cancelRequested) {
      this.finish(job, 'cancelled');
      return { job, existing: false, queuePosition: 0 };
    }
    if (!Number.isInteger(job.work.partitions) || job.work.partitions < 1) {
      this.finish(job, 'failed', `planner ${planner.name}: bad partition count ${job.work.partitions}`);
      return { job, existing: false, queuePosition: 0 };
    }
    job.state = 'queued';
    job.queueSpan = job.span.child('queue');
    this.queue.push(job);
    const queuePosition = this.queue.position(job);
    this.log.debug({ job: job.id, requestId: job.requestId, kind: kindName, priority: PRIORITY_NAMES[priority], circuit: job.work.circuitId }, 'job queued');
    this.pump();
    return { job, existing: false, queuePosition: Math.max(0, queuePosition) };
  }

  getJob(id: string): Job | undefined {
    return this.jobs.get(id);
  }

  /** Waits for a job (timeoutMs 0 = forever). undefined when the job is unknown. */
  async await(jobId: string, timeoutMs = 0): Promise<JobResult | undefined> {
    const job = this.jobs.get(jobId);
    if (job === undefined) return undefined;
    if (!job.finished) {
      if (timeoutMs > 0) {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          job.done.then(() => false),
          new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs))),
        ]);
        clearTimeout(timer);
        if (timedOut) return { jobId, status: AwaitStatus.TIMEOUT, proof: new Uint8Array(0), errorMessage: `job ${jobId} still ${job.state} after ${timeoutMs} ms`, timings: this.timingsOf(job) };
      } else await job.done;
    }
    return this.resultOf(job);
  }

  resultOf(job: Job): JobResult {
    const status =
      job.state === 'completed' ? AwaitStatus.COMPLETED : job.state === 'failed' ? AwaitStatus.FAILED : job.state === 'cancelled' ? AwaitStatus.CANCELLED : AwaitStatus.UNKNOWN;
    return { jobId: job.id, status, proof: job.proof ?? new Uint8Array(0), errorMessage: job.error ?? '', timings: job.timings };
  }

  /** CancelProof. undefined when the job is unknown. */
  cancel(jobId: string): { wasRunning: boolean } | undefined {
    const job = this.jobs.get(jobId);
    if (job === undefined) return undefined;
    if (job.finished) return { wasRunning: false };
    job.cancelRequested = true;
    if (job.state === 'queued') {
      this.queue.remove(job);
      this.finish(job, 'cancelled');
      return { wasRunning: false };
    }
    if (job.state === 'planning') return { wasRunning: false };
    // running: drop its partitions waiting for a lane; the rest stops at the next partition boundary
    for (const it of [...this.laneQueue.toArray()]) {
      if (it.job === job) {
        this.laneQueue.remove(it);
        it.reject(new CancelledError());
      }
    }
    this.log.info({ job: job.id }, 'cancelling running job at the next partition boundary');
    return { wasRunning: true };
  }

  // ---------------------------------------------------------------------------------------------
  // Scheduling

  private pump(): void {
    while (!this.closed && this.running.size < this.maxInFlight && this.queue.length > 0) {
      const job = this.queue.shift()!;
      void this.runJob(job);
    }
  }

  private async runJob(job: Job): Promise<void> {
    const work = job.work!;
    this.running.add(job);
    job.state = 'running';
    job.startedAtMs = performance.now();
    job.queueSpan?.end();
    let entry: SrsEntry | undefined;
    let outcome: 'completed' | 'failed' | 'cancelled' = 'completed';
    let error: string | undefined;
    try {
      entry = await job.span.time('srs', (s) => this.srs.acquire(work.circuitId, s));
      const proofs = await this.runPartitions(job, work, entry);
      job.proof = await job.span.time('assemble', () => concatBytes(...proofs));
    } catch (e) {
      if (e instanceof CancelledError || job.cancelRequested) outcome = 'cancelled';
      else {
        outcome = 'failed';
        error = errorText(e);
      }
    } finally {
      if (entry !== undefined) this.srs.release(work.circuitId);
      this.running.delete(job);
    }
    this.finish(job, outcome, error);
    this.pump();
  }

  private async runPartitions(job: Job, work: ProofWork, entry: SrsEntry): Promise<Uint8Array[]> {
    const lookahead = this.config.pipeline.enabled ? this.config.pipeline.synthesis_lookahead : 0;
    const slots = new Semaphore(lookahead + 1);
    const partBytes = estimatePartitionBytes(entry.shape);
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
      this.laneOf.set(ps, `partition ${k}`);
      let res: Reservation | undefined;
      try {
        res = this.budget.tryReserve(partBytes, `job ${job.id} partition ${k}`);
        if (res === undefined) res = await ps.time('mem_wait', () => this.budget.reserve(partBytes, `job ${job.id} partition ${k}`));
        const synth = ps.child('synth');
        this.laneOf.set(synth, 'synthesis');
        let witness: PartitionWitness;
        try {
          witness = await work.synthesize(k, synth);
        } finally {
          synth.end();
        }
        if (job.cancelRequested) throw new CancelledError();
        const reservation = res;
        const p = this.proveOnLane(job, k, work.circuitId, entry, witness, ps)
          .then(({ proof }) =>
            ps.time('verify', () => {
              if (!verifyProof(entry.pvk, proof, witness.inputs)) {
                throw new Error(`partition ${k}: the proof did not verify against its ${witness.inputs.length} public inputs (circuit ${work.circuitId})`);
              }
              job.partitionsDone++;
              return encodeProof(proof);
            }),
          )
          .catch((e: unknown) => {
            stop ??= e;
            throw e;
          })
          .finally(() => {
            this.budget.release(reservation);
            ps.end();
            slots.release();
          });
        p.catch(() => {}); // observed below
        inFlight.push(p);
      } catch (e) {
        if (res !== undefined) this.budget.release(res);
        ps.end();
        slots.release();
        stop ??= e instanceof CancelledError ? e : new Error(`partition ${k}: ${errorText(e)}`);
        break;
      }
    }
    const settled = await Promise.allSettled(inFlight);
    if (stop !== undefined) throw stop;
    if (job.cancelRequested) throw new CancelledError();
    return settled.map((s) => (s as PromiseFulfilledResult<Uint8Array>).value);
  }

  private proveOnLane(job: Job, partition: number, circuitId: string, entry: SrsEntry, witness: PartitionWitness, span: Span) {
    return new Promise<{ proof: import('../groth16/proof.js').Proof }>((resolve, reject) => {
      this.laneQueue.push({
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
      this.dispatchLanes();
    });
  }

  private dispatchLanes(): void {
    const maxBatch = this.config.scheduler.max_batch_size;
    for (const lane of this.lanes) {
      if (lane.items.length > 0 || this.laneQueue.length === 0) continue;
      const first = this.laneQueue.peek()!;
      const same = this.laneQueue.toArray().filter((it) => it.circuitId === first.circuitId).slice(0, maxBatch);
      if (maxBatch > 1 && same.length < maxBatch && this.config.scheduler.max_batch_wait_ms > 0 && this.moreExpected(first.circuitId, same)) {
        // cross-sector batching: wait (bounded) for more partitions of the same circuit
        const waited = performance.now() - first.submittedMs;
        if (waited < this.config.scheduler.max_batch_wait_ms) {
          if (this.batchTimer === undefined) {
            this.batchTimer = setTimeout(() => {
              this.batchTimer = undefined;
              this.dispatchLanes();
            }, Math.max(1, this.config.scheduler.max_batch_wait_ms - waited));
          }
          return;
        }
      }
      for (const it of same) this.laneQueue.remove(it);
      lane.items = same;
      void this.runLane(lane);
    }
  }

  /** Whether another job of the same circuit may still hand partitions to the lanes. */
  private moreExpected(circuitId: string, batch: LaneItem[]): boolean {
    const inBatch = new Set(batch.map((b) => b.job));
    for (const j of this.running) {
      if (j.work?.circuitId === circuitId && !inBatch.has(j) && !j.cancelRequested) return true;
    }
    return this.queue.toArray().some((j) => j.work?.circuitId === circuitId);
  }

  private async runLane(lane: Lane): Promise<void> {
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
      this.laneOf.set(proving, `prover ${lane.index}`);
      try {
        const r = await prove(it.entry.params, it.entry.shape, it.witness.assignment, this.backend, proving);
        proving.end();
        it.resolve({ proof: r.proof });
      } catch (e) {
        proving.end();
        it.reject(new Error(`prover: ${errorText(e)}`));
      } finally {
        it.witness.release?.();
        it.job.lanes.delete(lane.index);
      }
    }
    lane.items = [];
    this.dispatchLanes();
  }

  // ---------------------------------------------------------------------------------------------
  // Completion, timing, logs, metrics

  private timingsOf(job: Job): JobTimings {
    const byName = (n: string): number => job.span.children.filter((c) => c.name === n).reduce((t, c) => t + c.durationMs, 0);
    return {
      queueWaitMs: round(job.queueSpan?.durationMs ?? 0),
      srsLoadMs: round(byName('srs')),
      synthesisMs: round(sumSpans(job.span, 'synth')),
      gpuComputeMs: round(sumSpans(job.span, 'prove')),
      totalMs: round(job.span.durationMs),
    };
  }

  private finish(job: Job, state: 'completed' | 'failed' | 'cancelled', error?: string): void {
    if (job.finished) return;
    job.queueSpan?.end();
    job.span.end();
    job.state = state;
    job.error = error;
    job.finishedAtMs = performance.now();
    job.timings = this.timingsOf(job);
    try {
      job.work?.dispose?.();
    } catch {
      /* ignore */
    }
    if (state !== 'completed') job.proof = undefined;
    const t = job.timings;
    const kind = job.kindName;
    if (state === 'completed') {
      this.totals.completed++;
      this.metrics.completed.inc({ proof_kind: kind });
    } else if (state === 'failed') {
      this.totals.failed++;
      this.metrics.failed.inc({ proof_kind: kind });
    } else {
      this.totals.cancelled++;
      this.metrics.cancelled.inc({ proof_kind: kind });
    }
    if (job.queueSpan) this.metrics.stage.observe({ proof_kind: kind, stage: 'queue' }, t.queueWaitMs / 1000);
    this.metrics.stage.observe({ proof_kind: kind, stage: 'total' }, t.totalMs / 1000);
    const srsSpan = job.span.children.find((c) => c.name === 'srs');
    if (srsSpan) this.metrics.stage.observe({ proof_kind: kind, stage: 'srs' }, srsSpan.durationMs / 1000);
    for (const p of job.span.children.filter((c) => c.name.startsWith('partition['))) {
      for (const c of p.children) {
        if (c.name === 'synth' || c.name === 'prove' || c.name === 'verify' || c.name === 'mem_wait' || c.name === 'lane_wait') {
          this.metrics.stage.observe({ proof_kind: kind, stage: c.name }, c.durationMs / 1000);
        }
        if (c.name === 'prove') for (const ph of c.children) this.metrics.phase.observe({ phase: ph.name }, ph.durationMs / 1000);
      }
    }
    const gaps = gapWarnings(job.span);
    for (const g of gaps) {
      this.metrics.gapWarnings.inc({ stage: g.stage });
      this.log.warn({ job: job.id, span: g.path, gapMs: g.gapMs, gapPct: round(100 * g.fraction) }, 'span gap over 2 %');
    }
    const line = {
      job: job.id,
      requestId: job.requestId || undefined,
      kind,
      priority: PRIORITY_NAMES[job.priority],
      circuit: job.work?.circuitId,
      partitions: job.work?.partitions,
      status: state,
      error,
      timings: t,
      spans: job.span.toJSON(),
    };
    if (state === 'failed') this.log.error(line, 'proof job failed');
    else this.log.info(line, `proof job ${state}`);
    job.settle();
    const retention = this.config.kiln.job_retention_s * 1000;
    const timer = setTimeout(() => {
      this.jobs.delete(job.id);
      if (this.byRequest.get(job.requestId) === job) this.byRequest.delete(job.requestId);
    }, retention);
    timer.unref();
  }

  // ---------------------------------------------------------------------------------------------
  // Status, SRS management, traces

  queueStats(): { kind: string; pending: number; inProgress: number }[] {
    const kinds = new Map<string, { kind: string; pending: number; inProgress: number }>();
    for (const p of this.planners.values()) kinds.set(p.name, { kind: p.name, pending: 0, inProgress: 0 });
    for (const j of this.queue.toArray()) {
      const q = kinds.get(j.kindName) ?? { kind: j.kindName, pending: 0, inProgress: 0 };
      q.pending++;
      kinds.set(j.kindName, q);
    }
    for (const j of this.running) {
      const q = kinds.get(j.kindName) ?? { kind: j.kindName, pending: 0, inProgress: 0 };
      q.inProgress++;
      kinds.set(j.kindName, q);
    }
    return [...kinds.values()];
  }

  lanesStatus(): { ordinal: number; name: string; vramTotal: number; vramFree: number; currentJobId: string; currentProofKind: string }[] {
    const caps = this.backend.capabilities();
    const perDevice = this.config.gpus.gpu_workers_per_device;
    return this.lanes.map((l) => {
      const dev = Math.floor(l.index / perDevice);
      const gpu = caps.gpus.find((g) => g.ordinal === (this.config.gpus.devices[dev] ?? dev));
      const cur = l.items.find((it) => it.job.lanes.has(l.index)) ?? l.items[0];
      return {
        ordinal: l.index,
        name: gpu ? `${gpu.name} (worker ${l.index % perDevice})` : `${caps.backend} (${caps.threads} threads, worker ${l.index % perDevice})`,
        vramTotal: gpu?.memoryBytes ?? 0,
        vramFree: 0,
        currentJobId: cur?.job.id ?? '',
        currentProofKind: cur?.job.kindName ?? '',
      };
    });
  }

  /** JSON status (GET /status). */
  status(): Record<string, unknown> {
    const caps = this.backend.capabilities();
    return {
      uptimeSeconds: Math.floor((Date.now() - this.startedAt) / 1000),
      backend: caps,
      lanes: this.lanesStatus(),
      maxJobsInFlight: this.maxInFlight,
      queues: this.queueStats(),
      jobs: [...this.jobs.values()].map((j) => j.summary()),
      srs: this.srs.status(),
      memory: {
        budgetBytes: this.budget.limit,
        budget: fmtBytes(this.budget.limit),
        configured: this.config.memory.total_budget_text,
        reservedBytes: this.budget.reserved,
        waiting: this.budget.waiting,
        reservations: this.budget.reservations(),
      },
      synthesis: { workers: this.synthPool.size, busy: this.synthPool.busy, queued: this.synthPool.queued },
      pipeline: { ...this.config.pipeline },
      scheduler: { ...this.config.scheduler },
      totals: { ...this.totals },
    };
  }

  get uptimeSeconds(): number {
    return Math.floor((Date.now() - this.startedAt) / 1000);
  }

  preloadSrs(circuitId: string): Promise<{ alreadyLoaded: boolean; loadTimeMs: number }> {
    return this.srs.preload(circuitId);
  }

  evictSrs(circuitId: string): { wasLoaded: boolean; freedBytes: number } {
    return this.srs.evict(circuitId);
  }

  /** Chrome trace-event JSON of the given jobs (unknown ids are skipped). */
  trace(jobIds: readonly string[]): { traceEvents: TraceEvent[]; displayTimeUnit: 'ms' } {
    const jobs = jobIds.map((id) => this.jobs.get(id)).filter((j): j is Job => j !== undefined);
    return chromeTrace(jobs.map((j) => ({ label: `job ${j.id} (${j.kindName})`, root: j.span, laneOf: (s: Span) => this.laneOf.get(s) })));
  }

  jobIds(): string[] {
    return [...this.jobs.keys()];
  }

  /** Stops accepting jobs, cancels queued ones, waits up to graceMs for running ones (then cancels
   *  them at their next partition boundary), and frees workers and SRS. */
  async close(graceMs = 30_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const j of [...this.queue.toArray()]) this.cancel(j.id);
    const running = [...this.running];
    const all = Promise.all(running.map((j) => j.done));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([all.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
    clearTimeout(timer);
    if (timedOut) {
      for (const j of running) this.cancel(j.id);
      await Promise.race([all, new Promise((r) => setTimeout(r, 5000).unref())]);
    }
    clearTimeout(this.batchTimer);
    this.budget.close();
    await this.synthPool.close();
    this.srs.clear();
  }
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const round = (x: number): number => Math.round(x * 100) / 100;
