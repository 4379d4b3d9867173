/**
 * The proving engine: submit / await / cancel, the job queue, scheduling, status, SRS management and
 * shutdown, over small parts: jobs.ts (the job and its registry: idempotency, retention),
 * partitions.ts (the per-partition pipeline), lanes.ts (prover lanes and batching),
 * observability/ (spans, metrics, logs, traces), memory.ts, srs-cache.ts, synth-pool.ts, queue.ts.
 * Transport-free (src/server/ puts gRPC and HTTP on top).
 *
 * Flow of one job (spans in brackets):
 *   submit → [validate] planner.plan (errors → FAILED) → [queue] priority queue →
 *   [srs] acquire the circuit's parameters (load on demand, the first copy on the device its
 *   partitions go to first) →
 *   per partition k, at most lanes + synthesis_lookahead partitions in flight across all jobs,
 *   most urgent then oldest job first (witnesses are made only as fast as lanes take them):
 *     [partition[k]] → [mem_wait] reserve the working set → [synth] witness (worker threads) →
 *     [lane_wait] a prover lane → ([srs_device] the lane's device loads its SRS copy) →
 *     [prove] (+ the prover's phases) → [verify] → release
 *   → [assemble] the partition proofs concatenated → COMPLETED.
 *
 * Priorities (queue.ts ranks: [-priority, submission order, partition]) reach every queue: jobs, partition
 * slots, synthesis and verification tasks, lanes. Up to maxInFlight jobs run, and a job of higher priority
 * than one running starts beyond it (a WinningPoSt never waits for a PoRep to end); within a priority jobs
 * start in submission order, a later one waiting for an earlier one still being planned. A CRITICAL job
 * (WinningPoSt) plans and synthesises on the synthesis pool's reserved worker, takes its partition slot in
 * overdraft, and proves on its device's urgent lane, before the other lanes' proofs waiting for the device
 * (lanes.ts).
 *
 * Concurrency: `lanes` prover lanes (devices × gpu_workers_per_device; one device on the CPU) take
 * synthesised partitions from a priority queue (job priority, then submission order), so the
 * proving of one partition (native code, off the JS thread) overlaps synthesis of the next
 * partition of the same job and of other jobs (worker threads), and one proof's partitions spread
 * over the GPUs (lanes.ts). Up to lanes + synthesis_concurrency jobs run at once (lanes only when the
 * pipeline is disabled). Devices (devices.ts): one backend per GPU; a GPU that fails a partition
 * proof is taken out of service until a probe passes, the partition retried on another.
 */
import { concatBytes } from '@noble/hashes/utils.js';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Backend } from '../backend/backend.js';
import { Span } from '../util/timing.js';
import { FR_BYTES } from '../field/layout.js';
import { lanesForDevices, type EngineConfig } from './config.js';
import { Job, JobRegistry, CancelledError, InvalidRequestError, OverloadError, RequestIdConflictError, UnavailableError, errorText, requestDigest, requestIdConflict, type JobResult } from './jobs.js';
import { MAX_REQUEST_ID_BYTES, boundText, waitMs } from '../util/limits.js';
import { DeviceSet } from './devices.js';
import { ProverLanes } from './lanes.js';
import { BufferPool } from './buffers.js';
import { MemoryBudget } from './memory.js';
import { EngineMetrics, jobTimings, jobsTrace, reportFinishedJob, type TraceEvent } from './observability/index.js';
import { RankedSemaphore, runPartitions } from './partitions.js';
import { PriorityQueue } from './queue.js';
import { SrsCache, type SrsEntry } from './srs-cache.js';
import { SynthesisPool, workerTasks } from './synth-pool.js';
import type { Journal, JournalJob, JournalOpenResult } from './journal.js';
import { inOrderBounded, logJournalFindings } from './recovery.js';
import { affineProof, encodedVerifyingKey } from './verify-task.js';
import type { Proof } from '../groth16/proof.js';
import { type EngineState, devicesStatus, engineStatus, insecureStatus, lanesStatus, queueStats } from './status-views.js';
import { AwaitStatus, PRIORITY_NAMES, Priority, ProofKind, type CircuitProvider, type Planner, type ProofRequest } from './types.js';

export { CancelledError, InvalidRequestError, Job, OverloadError, RequestIdConflictError, UnavailableError, errorText, type JobResult, type JobState, type JobTimings } from './jobs.js';
export { estimatePartitionBytes } from './partitions.js';

const verifyTask = workerTasks<typeof import('./verify-task.js')>(new URL('./verify-task.js', import.meta.url).href);

export interface EngineOptions {
  config: EngineConfig;
  /** The primary backend: host memory (witness buffers), sizes, and the first device when `devices`
   *  is absent. */
  backend: Backend;
  /** One backend per compute device (select.ts selectDevices: one per GPU), lanes bound to them
   *  (default: [backend]). */
  devices?: readonly Backend[];
  logger: Logger;
  /** Planners (default: none; src/kinds/index.ts has the built-in set). */
  planners?: Planner[];
  providers?: CircuitProvider[];
  /** Include Node's default process metrics (default true). */
  defaultMetrics?: boolean;
  /** The job journal ([daemon] state_dir): accepted jobs are recorded before submit() answers. */
  journal?: Journal;
}

function journalHeader(job: Job): Omit<JournalJob, 'state'> {
  return { id: job.id, requestId: job.requestId, kind: job.kind, kindName: job.kindName, priority: job.priority, seq: job.seq, submittedAt: job.submittedAt, digest: job.digest };
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
  readonly buffers: BufferPool;
  readonly synthPool: SynthesisPool;
  /** One worker thread verifying partition proofs (off the event loop). */
  readonly verifyPool = new SynthesisPool(1);
  /** A second one for CRITICAL jobs only (WinningPoSt): under PoRep load a WinningPoSt's verification waited
   *  for a PoRep partition's in the one worker (290 ms of its 2.04 s on the H100 machine, bench:mixed 2026-12-05). */
  readonly urgentVerifyPool = new SynthesisPool(1);
  readonly metrics: EngineMetrics;
  /** The compute devices (health, probes); lanes are bound to them. */
  readonly devices: DeviceSet;
  readonly laneCount: number;
  readonly maxInFlight: number;
  private readonly planners = new Map<number, Planner>();
  private readonly providers: CircuitProvider[] = [];
  private readonly jobs = new JobRegistry();
  private readonly queue = new PriorityQueue<Job>();
  private readonly running = new Set<Job>();
  private readonly lanes: ProverLanes;
  /** Partitions in flight across jobs (partitions.ts PipelineDeps.inFlight). */
  private readonly partitionSlots: RankedSemaphore;
  /** One large native witness at a time, by job rank (PlanContext.witnessTurn). */
  private readonly witnessSlots = new RankedSemaphore(1);
  private readonly laneOf = new WeakMap<Span, string>();
  private readonly startedAt = Date.now();
  private seq = 0;
  private closed = false;
  /** close() has waited for the running jobs: an await on an unfinished job answers UNAVAILABLE. */
  private closedFully = false;
  /** Jobs being planned (they count against [daemon] max_queued_jobs with the queued ones), the
   *  jobs restored from the journal and not planned again yet included. */
  private planning = 0;
  /** Jobs restored from the journal (restore()) until they are queued or finished. */
  private readonly restoring = new Set<Job>();
  /** Jobs not planned yet (recovering or planning): a later job of the same priority starts after them. */
  private readonly unplanned = new Set<Job>();
  /** replanRestored() while it runs (close() waits for it before closing the journal). */
  private replanning: Promise<unknown> | undefined;
  /** AwaitProof calls waiting, woken when close() ends (their jobs will not finish here). A set
   *  rather than one shared promise: each wait removes itself, nothing accumulates over a long run. */
  private readonly closeWaiters = new Set<() => void>();
  /** close()'s outcome (a second call returns the first one's). */
  private closeDone: Promise<{ stillRunning: string[] }> | undefined;
  totals = { completed: 0, failed: 0, cancelled: 0 };
  /** Proofs completed since the start with INSECURE development parameters, and their circuits. */
  private insecureProofs = 0;
  private readonly insecureCircuits = new Set<string>();
  readonly journal: Journal | undefined;

  constructor(opts: EngineOptions) {
    this.config = opts.config;
    this.journal = opts.journal;
    if (this.journal !== undefined) {
      const path = this.journal.path;
      this.journal.onStateChange = (d) =>
        d === undefined
          ? this.log.warn({ journal: path }, 'job journal: durable again (the records kept in memory are written); new jobs are accepted')
          : this.log.warn({ journal: path, err: d.error, pending: d.pending }, 'job journal: durability lost (an append failed); new jobs are refused until it can be written, records are kept in memory and retried');
    }
    this.backend = opts.backend;
    this.log = opts.logger;
    this.budget = new MemoryBudget(opts.config.memory.total_budget);
    const backends = opts.devices !== undefined && opts.devices.length > 0 ? opts.devices : [this.backend];
    this.devices = new DeviceSet(backends, {
      probeIntervalMs: opts.config.gpus.probe_interval_ms,
      log: this.log,
      onHealthy: () => this.lanes.wake(),
    });
    // gpu_workers_per_device unset (0): picked here for these devices (config.ts lanesForDevices), written back
    // so that the lanes and the status read one value
    if (opts.config.gpus.gpu_workers_per_device === 0) opts.config.gpus.gpu_workers_per_device = lanesForDevices(backends);
    this.laneCount = this.devices.count * opts.config.gpus.gpu_workers_per_device;
    // before the SRS cache: under memory pressure idle witness buffers go before cached parameters
    const pipelineDepth = opts.config.pipeline.enabled ? opts.config.pipeline.synthesis_lookahead + 1 : 1;
    this.buffers = new BufferPool(this.backend, this.budget, pipelineDepth + this.laneCount);
    this.srs = new SrsCache(() => this.providers, this.budget, backends, opts.config.memory.eviction_min_idle_ms);
    // one reserved worker: a WinningPoSt's plan and witness never wait for a long check on every other worker
    this.synthPool = new SynthesisPool(opts.config.synthesis.threads, { reserved: 1 });
    this.maxInFlight = this.laneCount + (opts.config.pipeline.enabled ? opts.config.pipeline.synthesis_concurrency : 0);
    this.partitionSlots = new RankedSemaphore(this.laneCount + (opts.config.pipeline.enabled ? opts.config.pipeline.synthesis_lookahead : 0));
    this.lanes = new ProverLanes({
      config: opts.config,
      devices: this.devices,
      srs: this.srs,
      laneOf: this.laneOf,
      moreExpected: (circuitId, inBatch) => this.moreExpected(circuitId, inBatch),
      onRetry: (r) => this.log.warn({ job: r.jobId, partition: r.partition, failedOn: r.failedOn, err: r.error }, `partition ${r.partition} failed on GPU ${r.failedOn}: retried on another GPU`),
    });
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
    // at the kind's own priority: a latency-critical kind warms the reserved worker its jobs will use
    p.warm?.({ synthPool: this.synthPool.forJob([-p.defaultPriority], isUrgent(p.defaultPriority)), buffers: this.buffers });
  }

  registerCircuits(p: CircuitProvider): void {
    this.providers.push(p);
  }

  // ---------------------------------------------------------------------------------------------
  // Submit / await / cancel

  /** Creates a job (or returns the live one with the same request id, when it is of the same kind and
   *  payload: RequestIdConflictError otherwise). Never throws for bad input: the job FAILS with a
   *  message instead. */
  async submit(req: ProofRequest): Promise<{ job: Job; existing: boolean; queuePosition: number }> {
    this.checkRequest(req);
    const digest = req.requestId === '' ? undefined : await requestDigest(req);
    if (this.closed) throw new UnavailableError('the daemon is shutting down: submit again to the next one');
    const prev = this.jobs.live(req.requestId);
    if (prev !== undefined) {
      const conflict = requestIdConflict(prev, req.proofKind, this.kindName(req.proofKind), digest);
      if (conflict !== undefined) throw new RequestIdConflictError(conflict);
      return { job: prev, existing: true, queuePosition: Math.max(0, this.queue.position(prev)) };
    }
    // a journal that cannot be written: refused now (RESOURCE_EXHAUSTED), not accepted and then FAILED
    if (this.journal?.degraded !== undefined && !(await this.journal.retry())) throw new OverloadError(this.journal.degradedError().message);
    const limit = this.config.daemon.max_queued_jobs;
    if (this.queue.length + this.planning >= limit) {
      throw new OverloadError(`${this.queue.length + this.planning} jobs waiting, the limit ([daemon] max_queued_jobs) is ${limit}: retry later`);
    }
    this.planning++;
    try {
      return await this.accept(req, digest);
    } finally {
      this.planning--;
    }
  }

  /** Refuses what the wire cannot mean (InvalidRequestError): enum values outside the proto's and
   *  oversized request ids. */
  private checkRequest(req: ProofRequest): void {
    const idBytes = Buffer.byteLength(req.requestId, 'utf8');
    if (idBytes > MAX_REQUEST_ID_BYTES) throw new InvalidRequestError(`request_id is ${idBytes} bytes; at most ${MAX_REQUEST_ID_BYTES} are accepted`);
    if (!Number.isInteger(req.priority) || req.priority < Priority.UNSPECIFIED || req.priority > Priority.CRITICAL) {
      throw new InvalidRequestError(`priority ${boundText(String(req.priority), 40)} is not a Priority (0 UNSPECIFIED, 1 LOW, 2 NORMAL, 3 HIGH, 4 CRITICAL)`);
    }
    const k = req.proofKind;
    if (!Number.isInteger(k) || (!(k in KIND_LABELS) && k !== ProofKind.UNSPECIFIED && !this.planners.has(k))) {
      throw new InvalidRequestError(
        `proof_kind ${boundText(String(k), 40)} is not a ProofKind: unknown proof_kind (expected 1 POREP_SEAL_COMMIT, 2 SNAP_DEALS_UPDATE, 3 WINDOW_POST_PARTITION or 4 WINNING_POST)`,
      );
    }
  }

  private kindName(kind: number): string {
    return this.planners.get(kind)?.name ?? KIND_LABELS[kind] ?? `kind-${kind}`;
  }

  /** The priority a request's job gets: its own, or its kind's default when UNSPECIFIED. */
  private priorityOf(kind: number, priority: number): number {
    return priority >= Priority.LOW && priority <= Priority.CRITICAL ? priority : (this.planners.get(kind)?.defaultPriority ?? Priority.NORMAL);
  }

  /** Plans and queues a request: a new job, or `restored` (a job restore() put in the table). */
  private async accept(req: ProofRequest, digest: string | undefined, restored?: Job): Promise<{ job: Job; existing: boolean; queuePosition: number }> {
    const planner = this.planners.get(req.proofKind);
    const kindName = this.kindName(req.proofKind);
    const priority = restored?.priority ?? this.priorityOf(req.proofKind, req.priority);
    const job = restored ?? new Job(`${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`, req.requestId, req.proofKind, kindName, priority, this.seq++);
    // a restored job's wait for its replan, from its restore to now
    if (restored !== undefined) new Span('recover', job.span, job.span.startMs).end();
    job.state = 'planning';
    job.digest = digest;
    this.jobs.add(job);
    this.unplanned.add(job);

    if (planner === undefined) {
      const what = req.proofKind === ProofKind.UNSPECIFIED ? 'proof_kind is PROOF_KIND_UNSPECIFIED' : `unknown proof_kind ${req.proofKind}`;
      this.finish(job, 'failed', `${what} (expected POREP_SEAL_COMMIT, SNAP_DEALS_UPDATE, WINDOW_POST_PARTITION or WINNING_POST)`);
      return { job, existing: false, queuePosition: 0 };
    }
    const validate = job.span.child('validate');
    try {
      // the job's tasks rank by its priority and submission order in the synthesis pool
      const synthPool = this.synthPool.forJob([-priority, job.seq], isUrgent(priority));
      const witnessTurn = async (rank: readonly number[] = []): Promise<() => void> => {
        await this.witnessSlots.acquire([-priority, job.seq, ...rank]);
        let released = false;
        return () => {
          if (!released) this.witnessSlots.release();
          released = true;
        };
      };
      job.work = await planner.plan(req, { synthPool, buffers: this.buffers, span: validate, witnessTurn });
    } catch (e) {
      validate.end();
      // a shutdown cut its planning short (the synthesis pool closed): a recorded job resumes at the next start
      if (this.closed && job.journaled) this.finish(job, 'cancelled');
      else this.finish(job, 'failed', errorText(e));
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
    if (this.journal !== undefined && !job.journaled) {
      // durable before SubmitProof answers: the request file and the accept record are fsync'd
      try {
        await job.span.time('journal', () => this.journal!.accept(journalHeader(job), req));
        job.journaled = true;
      } catch (e) {
        this.finish(job, 'failed', `the job could not be recorded durably: ${errorText(e)}`);
        return { job, existing: false, queuePosition: 0 };
      }
      if (job.cancelRequested) {
        this.finish(job, 'cancelled');
        return { job, existing: false, queuePosition: 0 };
      }
    }
    job.state = 'queued';
    job.queueSpan = job.span.child('queue');
    this.queue.push(job);
    this.restoring.delete(job);
    this.unplanned.delete(job);
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
      // any u64 of milliseconds: waited in timer-sized chunks (Node's timers overflow at 2^31 ms)
      const wait = timeoutMs > 0 && Number.isFinite(timeoutMs) ? timeoutMs : Infinity;
      let onClose!: () => void;
      const closing = new Promise<void>((r) => (onClose = r));
      this.closeWaiters.add(onClose);
      let timedOut: boolean;
      try {
        timedOut = this.closedFully || (this.closed && !this.running.has(job)) ? false : await waitMs(wait, Promise.race([job.done, closing]));
      } finally {
        this.closeWaiters.delete(onClose);
      }
      if (!job.finished && !timedOut) throw new UnavailableError(`the daemon is shutting down before job ${jobId} finished`);
      if (timedOut) {
        const shown = timeoutMs >= 2 ** 53 ? `${BigInt(Math.round(timeoutMs))}` : String(timeoutMs);
        return { jobId, status: AwaitStatus.TIMEOUT, proof: new Uint8Array(0), errorMessage: `job ${jobId} still ${job.state} after ${shown} ms`, timings: jobTimings(job), insecureParams: false };
      }
    }
    return this.resultOf(job);
  }

  resultOf(job: Job): JobResult {
    const status =
      job.state === 'completed' ? AwaitStatus.COMPLETED : job.state === 'failed' ? AwaitStatus.FAILED : job.state === 'cancelled' ? AwaitStatus.CANCELLED : AwaitStatus.UNKNOWN;
    return { jobId: job.id, status, proof: job.proof ?? new Uint8Array(0), errorMessage: job.error ?? '', timings: job.timings, insecureParams: job.insecureParams };
  }

  /** CancelProof. undefined when the job is unknown. `byUser` false: a shutdown's cancellation,
   *  not recorded in the journal (the job resumes at the next start). `recorded` resolves once the
   *  cancellation is in the journal (a `cancel` record, or the finish record of a job that ends now),
   *  so a kill -9 after the answer still brings the job back CANCELLED. */
  cancel(jobId: string, byUser = true): { wasRunning: boolean; recorded: Promise<void> } | undefined {
    const job = this.jobs.get(jobId);
    if (job === undefined) return undefined;
    if (job.finished) return { wasRunning: false, recorded: Promise.resolve() };
    job.cancelRequested = true;
    if (byUser) job.cancelledByUser = true;
    if (job.state === 'queued' || job.state === 'recovering') {
      // not started (a recovering job's replan skips it): it ends now
      this.queue.remove(job);
      return { wasRunning: false, recorded: this.finish(job, 'cancelled') };
    }
    // planning or running: it ends at its next step; the journal says now that it was cancelled
    const recorded =
      byUser && job.journaled && this.journal !== undefined ? this.journal.cancel(job.id).catch((e: unknown) => this.log.error({ err: errorText(e) }, 'job journal')) : Promise.resolve();
    if (job.state === 'planning') return { wasRunning: false, recorded };
    // running: drop its partitions waiting for a lane; the one proving stops at the prover's next
    // phase boundary (the abort signal), one being synthesised when its witness is made
    job.abort.abort(new CancelledError());
    this.lanes.dropJob(job);
    this.log.info({ job: job.id }, 'cancelling running job at the next phase boundary');
    return { wasRunning: true, recorded };
  }

  // ---------------------------------------------------------------------------------------------
  // Scheduling

  /** Starts queued jobs in queue order: while fewer than maxInFlight run, or beyond that a job of higher
   *  priority than one running; never before an earlier job of its priority still being planned (first
   *  come, first served: a later request whose plan was quicker does not overtake it). */
  private pump(): void {
    while (!this.closed && this.queue.length > 0) {
      const job = this.queue.peek()!;
      if (this.running.size >= this.maxInFlight && !this.outranksRunning(job)) return;
      for (const u of this.unplanned) if (u.priority === job.priority && u.seq < job.seq) return;
      this.queue.shift();
      void this.runJob(job);
    }
  }

  private outranksRunning(job: Job): boolean {
    for (const r of this.running) if (r.priority < job.priority) return true;
    return false;
  }

  private async runJob(job: Job): Promise<void> {
    const work = job.work!;
    this.running.add(job);
    job.state = 'running';
    if (job.journaled) this.journal?.running(job.id).catch((e: unknown) => this.log.error({ err: errorText(e) }, 'job journal'));
    job.startedAtMs = performance.now();
    job.queueSpan?.end();
    let entry: SrsEntry | undefined;
    let outcome: 'completed' | 'failed' | 'cancelled' = 'completed';
    let error: string | undefined;
    try {
      entry = await job.span.time('srs', (s) => this.srs.acquire(work.circuitId, s, this.lanes.preferredDevice(work.circuitId)));
      const proofs = await runPartitions(
        {
          config: this.config,
          backend: this.backend,
          budget: this.budget,
          lanes: this.lanes,
          laneOf: this.laneOf,
          inFlight: this.partitionSlots,
          verify: (e, proof, inputs, j) => this.verifyOffThread(e, proof, inputs, [-j.priority, j.seq], j.priority >= Priority.CRITICAL),
        },
        job,
        work,
        entry,
      );
      job.proof = await job.span.time('assemble', () => concatBytes(...proofs));
      job.insecureParams = this.srs.provider(work.circuitId)?.insecure?.(work.circuitId) ?? false;
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

  /** A partition proof checked in a verification worker (noble's pairing: tens of ms of JS), by rank; a
   *  CRITICAL job's in the urgent worker, which nothing else uses. */
  private async verifyOffThread(entry: SrsEntry, proof: Proof, inputs: bigint[], rank: readonly number[], urgent: boolean): Promise<{ ok: boolean; encoded: Uint8Array }> {
    const { vk, vkId } = encodedVerifyingKey(entry.vk);
    const pool = urgent ? this.urgentVerifyPool : this.verifyPool;
    return pool.run(verifyTask('verifyEncoded', { vk, vkId, proof: affineProof(proof), inputs }), { rank });
  }

  /** Whether another job of the same circuit may still hand partitions to the lanes. */
  private moreExpected(circuitId: string, inBatch: ReadonlySet<Job>): boolean {
    for (const j of this.running) {
      if (j.work?.circuitId === circuitId && !inBatch.has(j) && !j.cancelRequested) return true;
    }
    return this.queue.toArray().some((j) => j.work?.circuitId === circuitId);
  }

  // ---------------------------------------------------------------------------------------------
  // Completion, timing, logs, metrics

  /** Ends a job; resolves when its finish record is in the journal (at once without one). */
  private finish(job: Job, state: 'completed' | 'failed' | 'cancelled', error?: string): Promise<void> {
    if (job.finished) return Promise.resolve();
    this.restoring.delete(job);
    const wasUnplanned = this.unplanned.delete(job);
    job.queueSpan?.end();
    job.span.end();
    job.state = state;
    job.error = error === undefined ? undefined : boundText(error);
    job.finishedAtMs = performance.now();
    job.timings = jobTimings(job);
    try {
      job.work?.dispose?.();
    } catch {
      /* ignore */
    }
    if (state !== 'completed') {
      job.proof = undefined;
      job.insecureParams = false;
    }
    this.totals[state]++;
    if (job.insecureParams) {
      this.insecureProofs++;
      if (job.work !== undefined) this.insecureCircuits.add(job.work.circuitId);
    }
    reportFinishedJob(job, state, job.error, this.metrics, this.log);
    // a job a shutdown interrupted stays unfinished in the journal: it resumes at the next start
    const interrupted = this.closed && state === 'cancelled' && !job.cancelledByUser;
    let recorded = Promise.resolve();
    if (this.journal !== undefined && !interrupted) {
      recorded = this.journal
        .finish({
          ...journalHeader(job),
          state,
          finishedAt: Date.now(),
          proof: job.proof === undefined ? undefined : Buffer.from(job.proof).toString('base64'),
          error: job.error,
          timings: job.timings,
          ...(job.insecureParams ? { insecureParams: true as const } : {}),
        })
        .catch((e: unknown) => this.log.error({ err: errorText(e) }, 'job journal'));
    }
    job.settle();
    this.jobs.retire(job, this.config.kiln.job_retention_s * 1000, (j) => this.journal?.forget(j.id));
    if (wasUnplanned) this.pump(); // a later job of its priority may have waited for it
    return recorded;
  }

  /**
   * After a restart, before the servers listen (no await, nothing slow): every job of the journal
   * is in the job table at once. Finished ones are kept for AwaitProof until their retention ends;
   * unfinished ones (queued or running when the daemon stopped, or rebuilt from their request
   * files) are `recovering` under their ids, in their old order: they answer AwaitProof, CancelProof
   * and GetStatus while replanRestored() plans them again behind the servers. What the journal
   * could not use (dropped or repaired lines, rebuilt jobs, lost finish records, damaged request
   * files) is logged here, one line each, by job id and reason.
   */
  restore(r: JournalOpenResult): void {
    logJournalFindings(this.log, this.journal?.path, r);
    Object.assign(this.totals, r.totals);
    for (const j of [...r.unfinished, ...r.finished]) this.seq = Math.max(this.seq, j.seq + 1); // (a spread overflows the stack past ~100k jobs)
    const now = Date.now();
    for (const f of r.finished) {
      const job = this.restoredJob(f);
      job.state = f.state;
      job.proof = f.proof === undefined ? undefined : new Uint8Array(Buffer.from(f.proof, 'base64'));
      job.error = f.error;
      job.insecureParams = f.insecureParams === true;
      if (f.timings) job.timings = f.timings;
      job.span.end();
      job.settle();
      this.jobs.retire(job, (f.finishedAt ?? now) + this.config.kiln.job_retention_s * 1000 - now, (j) => this.journal?.forget(j.id));
    }
    for (const u of r.unfinished) {
      const job = this.restoredJob(u);
      job.state = 'recovering';
      this.restoring.add(job);
      this.unplanned.add(job);
      this.planning++;
    }
  }

  private restoredJob(j: JournalJob): Job {
    const job = new Job(j.id, j.requestId, j.kind, this.kindName(j.kind), this.priorityOf(j.kind, j.priority), j.seq, j.submittedAt);
    job.journaled = true;
    job.digest = j.digest;
    this.jobs.add(job);
    return job;
  }

  /**
   * Plans the jobs restore() put in the table again from their stored requests and queues them,
   * oldest first, as many at once as there are synthesis workers. Stops at close() (the jobs not
   * planned stay in the journal for the next start).
   */
  replanRestored(): Promise<{ requeued: number; failed: number; cancelled: number }> {
    const jobs = [...this.restoring].sort((a, b) => a.seq - b.seq);
    const out = { requeued: 0, failed: 0, cancelled: 0 };
    const t0 = performance.now();
    const one = async (job: Job): Promise<void> => {
      try {
        if (job.finished || this.closed) return; // cancelled meanwhile, or shutting down
        let req: ProofRequest;
        try {
          req = await this.journal!.request(job.id);
        } catch (e) {
          await this.finish(job, 'failed', `after a restart: its stored request could not be read: ${errorText(e)}`);
          return;
        }
        // the digest of the stored request (a record older than digests has none)
        const digest = req.requestId === '' ? undefined : await requestDigest(req);
        if (job.finished || this.closed) return; // cancelled while its request was read
        await this.accept(req, digest, job);
      } finally {
        this.restoring.delete(job);
        this.planning--;
        if (job.state === 'failed') out.failed++;
        else if (job.state === 'cancelled') out.cancelled++;
        else if (job.state !== 'recovering') out.requeued++;
      }
    };
    const run = inOrderBounded(jobs, this.synthPool.size, one).then(() => {
      if (jobs.length > 0) this.log.info({ ...out, ms: Math.round(performance.now() - t0) }, 'jobs recovered from the journal: planned again');
      return out;
    });
    this.replanning = run;
    return run;
  }

  /** restore() then replanRestored(), awaited (tests, and callers without servers to start first). */
  async recover(r: JournalOpenResult): Promise<{ requeued: number; kept: number; failed: number }> {
    this.restore(r);
    const { requeued, failed } = await this.replanRestored();
    return { requeued, kept: r.finished.length, failed };
  }

  // ---------------------------------------------------------------------------------------------
  // Status, SRS management, traces

  /** What the status views (status-views.ts) read. */
  private state(): EngineState {
    return {
      config: this.config,
      devices: this.devices,
      lanes: this.lanes,
      planners: this.planners,
      queue: this.queue,
      restoring: this.restoring,
      running: this.running,
      jobs: this.jobs,
      srs: this.srs,
      budget: this.budget,
      synthPool: this.synthPool,
      buffers: this.buffers,
      totals: this.totals,
      journal: this.journal,
      maxInFlight: this.maxInFlight,
      startedAt: this.startedAt,
      planning: this.planning,
      insecureCircuits: this.insecureCircuits,
      insecureProofs: this.insecureProofs,
    };
  }

  queueStats(): ReturnType<typeof queueStats> {
    return queueStats(this.state());
  }

  /** Per prover lane: its device and what it proves now (the status page's lane table). */
  lanesStatus(): ReturnType<typeof lanesStatus> {
    return lanesStatus(this.state());
  }

  /** Per device (GetStatus' gpus): status-views.ts devicesStatus. */
  devicesStatus(): ReturnType<typeof devicesStatus> {
    return devicesStatus(this.state());
  }

  /** JSON status (GET /status): status-views.ts engineStatus. */
  status(opts: { offset?: number; limit?: number; hideJobIds?: boolean } = {}): Record<string, unknown> {
    return engineStatus(this.state(), opts);
  }

  /** INSECURE development parameters in this daemon: status-views.ts insecureStatus. */
  insecureStatus(): ReturnType<typeof insecureStatus> {
    return insecureStatus(this.state());
  }

  /** True once close() was called: new work is refused (UNAVAILABLE). */
  get closing(): boolean {
    return this.closed;
  }

  get uptimeSeconds(): number {
    return Math.floor((Date.now() - this.startedAt) / 1000);
  }

  /** PreloadSRS: a copy on every device in service (so no GPU loads one when the first proof comes), the
   *  circuit on each (its matrices, the NTT's twiddles and working memory: srs-cache.ts prepareCircuit), its
   *  verifying key prepared in the verification workers, and the witness buffers of its first partitions in
   *  the pool (as much as is free now: BufferPool.warm): a first proof finds every step warm. */
  async preloadSrs(circuitId: string): Promise<{ alreadyLoaded: boolean; loadTimeMs: number }> {
    const healthy = this.devices.list.filter((d) => d.healthy).map((d) => d.index);
    const r = await this.srs.preload(circuitId, healthy.length > 0 ? healthy : undefined);
    const entry = this.srs.loaded(circuitId);
    if (entry !== undefined) {
      const t0 = performance.now();
      const { vk, vkId } = encodedVerifyingKey(entry.vk);
      // in both verification workers: a CRITICAL job's proof is verified in the urgent one
      await Promise.all(
        [this.verifyPool, this.urgentVerifyPool].map((pool) => pool.run(verifyTask('prepareKey', { vk, vkId }), { rank: [-Priority.CRITICAL] })),
      );
      const { shape } = entry.circuit;
      await this.buffers.warm((shape.numInputs + shape.numAux) * FR_BYTES);
      if (!r.alreadyLoaded) r.loadTimeMs += performance.now() - t0;
    }
    return r;
  }

  /** EvictSRS: every device's copy; with `gpu` (an ordinal), only that GPU's (the others keep theirs). */
  evictSrs(circuitId: string, gpu?: number): { wasLoaded: boolean; freedBytes: number } {
    if (gpu === undefined) return this.srs.evict(circuitId);
    const d = this.devices.list.find((x) => x.ordinal === gpu);
    if (d === undefined) throw new InvalidRequestError(`no GPU ${gpu} in this daemon (its GPUs: ${this.devices.list.map((x) => x.ordinal).join(', ')})`);
    return this.srs.evict(circuitId, d.index);
  }

  /** Chrome trace-event JSON of the given jobs (unknown ids are skipped). */
  trace(jobIds: readonly string[]): { traceEvents: TraceEvent[]; displayTimeUnit: 'ms' } {
    const jobs = jobIds.map((id) => this.jobs.get(id)).filter((j): j is Job => j !== undefined);
    return jobsTrace(jobs, (s) => this.laneOf.get(s));
  }

  /** The lane a `prove` (or its device's) span ran on: `prover N` or `urgent D`; undefined for other spans. */
  laneOfSpan(span: Span): string | undefined {
    return this.laneOf.get(span);
  }

  jobIds(): string[] {
    return this.jobs.ids();
  }

  /** The status page's jobs, read from indexes kept as jobs come and finish (never a walk over every
   *  kept job): the unfinished ones, running first, then planning and queued ones in arrival order, at
   *  most `limit`; how many are unfinished; and the last finished ones (jobs.ts RECENT_FINISHED_JOBS). */
  timelineJobs(limit: number): { live: Job[]; liveTotal: number; finished: readonly Job[] } {
    const unfinished = this.jobs.unfinishedJobs();
    const live = [...this.running].slice(0, limit);
    for (const j of unfinished) {
      if (live.length >= limit) break;
      if (!this.running.has(j)) live.push(j);
    }
    return { live, liveTotal: unfinished.size, finished: this.jobs.recentlyFinished() };
  }

  /** Per prover lane (`prover N` or `urgent D`, the trace's lane name), the time its proofs took over the last
   *  `windowMs` (at most lanes.ts BUSY_WINDOW_MS). */
  laneBusy(windowMs: number): { lane: string; busyMs: number }[] {
    const now = performance.now();
    const all = this.lanes.allLanes;
    return this.lanes.busyMs(now - windowMs, now).map((busyMs, i) => ({ lane: this.lanes.laneName(all[i]!), busyMs }));
  }

  /**
   * Stops accepting jobs, cancels queued ones (without a journal; with one they resume at the next
   * start), waits up to `graceMs` for running ones, then cancels them and waits up to `proverWaitMs`
   * for their work to end: a cancelled partition proof stops at the prover's next step, but the step
   * in flight (a native matrix-vector product, quotient or MSM; a whole partition on the GPU) cannot be
   * interrupted and runs to its end. Each wait is logged. Then frees workers, buffers and SRS.
   * Resolves with the jobs whose work had still not ended (`stillRunning`, empty when everything
   * stopped): their buffers and SRS are then left to the process's exit, which alone ends a native call.
   */
  close(graceMs = 30_000, proverWaitMs = 30_000): Promise<{ stillRunning: string[] }> {
    this.closeDone ??= this.shutDown(graceMs, proverWaitMs);
    return this.closeDone;
  }

  private async shutDown(graceMs: number, proverWaitMs: number): Promise<{ stillRunning: string[] }> {
    this.closed = true;
    // with a journal, queued jobs stay recorded and resume at the next start; without, they are cancelled
    if (this.journal === undefined) for (const j of [...this.queue.toArray()]) this.cancel(j.id);
    const running = [...this.running];
    const all = Promise.all(running.map((j) => j.done));
    const ended = (ms: number): Promise<boolean> => waitMs(ms, all).then((out) => !out);
    if (running.length > 0 && graceMs > 0) this.log.info({ jobs: running.map((j) => j.id) }, `shutdown: waiting up to ${seconds(graceMs)} for ${running.length} running job(s) to finish`);
    if (running.length > 0 && !(await ended(graceMs))) {
      for (const j of running) this.cancel(j.id, false);
      const t0 = performance.now();
      const proving = this.lanes.provingNow().map((p) => `job ${p.jobId} partition ${p.partition} on prover ${p.lane} (proving for ${seconds(t0 - p.sinceMs)})`);
      this.log.warn(
        { jobs: running.filter((j) => !j.finished).map((j) => j.id), proving },
        `shutdown: running jobs cancelled; waiting up to ${seconds(proverWaitMs)} for their work to stop (a native step in flight, such as an MSM, cannot be interrupted and ends first)`,
      );
      if (await ended(proverWaitMs)) this.log.info(`shutdown: the running jobs' work stopped after ${seconds(performance.now() - t0)}`);
    }
    const left = running.filter((j) => !j.finished);
    const stillRunning = left.map((j) => {
      const p = this.lanes.provingNow().find((x) => x.jobId === j.id);
      return p === undefined ? `job ${j.id}` : `job ${j.id} partition ${p.partition} (proving for ${seconds(performance.now() - p.sinceMs)})`;
    });
    this.closedFully = true;
    for (const wake of [...this.closeWaiters]) wake(); // AwaitProof on a job that did not finish here answers UNAVAILABLE
    this.lanes.close();
    this.devices.close();
    this.budget.close();
    if (left.length > 0) {
      // a native call still reads the SRS and a witness buffer: nothing it uses is freed, and a worker
      // thread inside native code ends only when the call returns (terminate() would wait for it)
      this.log.warn({ stillRunning }, `shutdown: ${left.length} job(s) still running after ${seconds(graceMs + proverWaitMs)}; their memory is left to the process's exit`);
      for (const pool of [this.synthPool, this.verifyPool, this.urgentVerifyPool]) pool.close().catch(() => undefined);
      await this.journal?.close();
      return { stillRunning };
    }
    await this.synthPool.close();
    await this.verifyPool.close();
    await this.urgentVerifyPool.close();
    await this.replanning?.catch(() => undefined); // its plans in flight end with the pool
    this.buffers.close();
    this.srs.clear();
    await Promise.all(this.providers.map((p) => p.close?.().catch(() => undefined)));
    await this.journal?.close();
    return { stillRunning };
  }
}

/** A job whose latency is critical (WinningPoSt's CRITICAL): reserved synthesis worker, slot in overdraft, urgent lane. */
const isUrgent = (priority: number): boolean => priority >= Priority.CRITICAL;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
