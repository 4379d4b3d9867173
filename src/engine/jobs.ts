/**
 * Jobs: one proof request's state, result and timings (Job), and the registry of jobs by id and by
 * request id — the idempotency of SubmitProof (a request id with a live job returns that job when
 * the request is the same: kind and payload digest; another request under it is refused) and the
 * retention of finished jobs for AwaitProof and traces.
 */
import { createHash } from 'node:crypto';
import { sha256Each } from '../util/hash.js';
import { Span } from '../util/timing.js';
import { boundText } from '../util/limits.js';
import type { Queued } from './queue.js';
import { PRIORITY_NAMES, type ProofRequest, type ProofWork } from './types.js';

/** `recovering`: restored from the journal at start, its request not planned again yet (it answers
 *  AwaitProof, CancelProof and GetStatus meanwhile); then `planning` like a new job. */
export type JobState = 'recovering' | 'planning' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

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
  /** The proof was made with INSECURE development parameters (never accepted on chain). */
  insecureParams: boolean;
}

export class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CancelledError';
  }
}

/** The request is malformed in a way the wire can say (gRPC INVALID_ARGUMENT). */
export class InvalidRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRequestError';
  }
}

/** A request id already names a job of another request: another proof kind or payload (gRPC
 *  ALREADY_EXISTS). The message names the first job, never its proof. */
export class RequestIdConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestIdConflictError';
  }
}

/** Too many jobs waiting (gRPC RESOURCE_EXHAUSTED). */
export class OverloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OverloadError';
  }
}

/** The engine is shutting down (gRPC UNAVAILABLE). */
export class UnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnavailableError';
  }
}

export class Job implements Queued {
  state: JobState = 'planning';
  readonly span: Span;
  queueSpan: Span | undefined;
  work: ProofWork | undefined;
  proof: Uint8Array | undefined;
  error: string | undefined;
  cancelRequested = false;
  /** Aborted on cancellation: the prover checks it between its phases. */
  readonly abort = new AbortController();
  /** Cancelled by a client (CancelProof), not by a shutdown (whose jobs resume at the next start). */
  cancelledByUser = false;
  /** Recorded in the journal (accepted durably). */
  journaled = false;
  /** requestDigest of its request (undefined: no request id, or a journal record older than the digest). */
  digest: string | undefined;
  startedAtMs: number | undefined;
  finishedAtMs: number | undefined;
  partitionsDone = 0;
  /** Its proof was made with INSECURE development parameters (CircuitProvider.insecure). */
  insecureParams = false;
  /** Prover lanes proving a partition of it now. */
  readonly lanes = new Set<number>();
  /** GPU ordinals its partitions were handed to, in the order first used (SubmitProof's
   *  assigned_gpu for a running or finished job). */
  readonly gpus: number[] = [];
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
    readonly submittedAt = Date.now(),
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
      gpus: [...this.gpus],
      submittedAt: new Date(this.submittedAt).toISOString(),
      startedAtMs: this.startedAtMs === undefined ? undefined : round(this.startedAtMs),
      finishedAtMs: this.finishedAtMs === undefined ? undefined : round(this.finishedAtMs),
      timings: this.timings,
      error: this.error,
      insecureParams: this.insecureParams,
    };
  }
}

/** How many finished jobs JobRegistry.recentlyFinished keeps (the status page's timeline shows them). */
export const RECENT_FINISHED_JOBS = 5;

/** The jobs the engine knows: by id, and the live one of each request id; and two small indexes kept
 *  as jobs come and finish, so that readers of the status page never walk every kept job: the
 *  unfinished jobs, and the last RECENT_FINISHED_JOBS finished ones. */
export class JobRegistry {
  private readonly jobs = new Map<string, Job>();
  private readonly byRequest = new Map<string, Job>();
  /** Planning, queued and running jobs, in the order they were added (a job leaves at retire()). */
  private readonly unfinished = new Set<Job>();
  /** The newest finished jobs, latest end first (at most RECENT_FINISHED_JOBS). */
  private readonly recent: Job[] = [];

  /** The job a resubmitted request id returns: its latest job unless that one failed or was cancelled. */
  live(requestId: string): Job | undefined {
    if (requestId === '') return undefined;
    const prev = this.byRequest.get(requestId);
    return prev !== undefined && prev.state !== 'failed' && prev.state !== 'cancelled' ? prev : undefined;
  }

  add(job: Job): void {
    this.jobs.set(job.id, job);
    if (job.requestId !== '') this.byRequest.set(job.requestId, job);
    if (!job.finished) this.unfinished.add(job);
  }

  get(id: string): Job | undefined {
    return this.jobs.get(id);
  }

  ids(): string[] {
    return [...this.jobs.keys()];
  }

  all(): Job[] {
    return [...this.jobs.values()];
  }

  /** The jobs not finished yet (planning, queued, running), in the order they came. */
  unfinishedJobs(): ReadonlySet<Job> {
    return this.unfinished;
  }

  /** The last RECENT_FINISHED_JOBS finished jobs still kept, latest end first. */
  recentlyFinished(): readonly Job[] {
    return this.recent;
  }

  /** Forgets a finished job `retentionMs` from now (AwaitProof and traces see it until then). */
  retire(job: Job, retentionMs: number, onForget?: (job: Job) => void): void {
    this.unfinished.delete(job);
    const end = job.span.endMs ?? 0;
    const at = this.recent.findIndex((j) => (j.span.endMs ?? 0) < end);
    this.recent.splice(at < 0 ? this.recent.length : at, 0, job);
    this.recent.length = Math.min(this.recent.length, RECENT_FINISHED_JOBS);
    const timer = setTimeout(() => {
      const i = this.recent.indexOf(job);
      if (i >= 0) this.recent.splice(i, 1);
      this.jobs.delete(job.id);
      if (this.byRequest.get(job.requestId) === job) this.byRequest.delete(job.requestId);
      onForget?.(job);
    }, Math.max(0, Math.min(retentionMs, 2 ** 31 - 1)));
    timer.unref();
  }
}

/** Why `prev` (the live job of a request id) cannot answer this request: it is of another proof
 *  kind, or carries another payload (digest); undefined when it can. A job whose digest is unknown (a
 *  journal record older than digests) is compared by kind only. Names the job, never its proof. */
export function requestIdConflict(prev: Job, kind: number, kindName: string, digest: string | undefined): string | undefined {
  const first = `request_id ${JSON.stringify(boundText(prev.requestId, 80))} is already job ${prev.id} (${prev.kindName}, ${prev.state})`;
  if (prev.kind !== kind) return `${first}: this request is ${kindName}; submit it under a new request_id`;
  if (prev.digest !== undefined && digest !== undefined && prev.digest !== digest) return `${first}: this request carries another payload; submit it under a new request_id`;
  return undefined;
}

/**
 * SHA-256 (hex) of what defines a request's proof: its kind and every field but request_id and
 * priority (the scalars and field lengths as JSON, then the SHA-256 of each byte field).
 */
export async function requestDigest(r: ProofRequest): Promise<string> {
  const fields = [r.vanillaProof, ...r.vanillaProofs, r.randomness, r.commROld, r.commRNew, r.commDNew];
  const h = createHash('sha256').update(
    JSON.stringify({
      proofKind: r.proofKind,
      sectorSize: r.sectorSize,
      registeredProof: r.registeredProof,
      sectorNumber: r.sectorNumber,
      minerId: r.minerId,
      partitionIndex: r.partitionIndex,
      vanillaProofs: r.vanillaProofs.length,
      lengths: fields.map((f) => f.length),
    }),
  );
  // a slice at a time, the event loop running in between (util/hash.ts): requests reach 256 MiB
  for (const d of await sha256Each(fields)) h.update(d);
  return h.digest('hex');
}

/** An error's message, bounded (limits.ts MAX_ERROR_CHARS: a 4 MB message stays out of logs and answers). */
export function errorText(e: unknown): string {
  return boundText(e instanceof Error ? e.message : String(e));
}

export const round = (x: number): number => Math.round(x * 100) / 100;
