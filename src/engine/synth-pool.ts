/**
 * Synthesis worker pool (node:worker_threads). A task names a module (file URL) and one of its
 * exported functions; the worker imports the module, calls the function with the (structured-
 * cloned) argument and posts the result back, transferring the assignment's buffer rather than
 * copying it. Witness generation therefore runs off the JS thread that drives the prover, which is
 * what lets synthesis of one partition overlap the proving of another.
 *
 * Waiting tasks run by rank (queue.ts: the engine ranks a job's tasks [-priority, job seq, …], so a
 * WinningPoSt's checks and witness jump a queue of PoRep C1 checks, and one job's partitions go in
 * order), ties in arrival order; unranked tasks after ranked ones. `reserved` workers beyond `size`
 * take only urgent tasks (a latency-critical job's), so such a task starts at once even while every
 * other worker runs a long check (a 32 GiB C1 partition check takes seconds); they run at the event
 * loop's nice level (0) rather than 5, and an urgent task prefers them (their modules are warm).
 * A task that waits can be dropped (its signal aborted); one that runs finishes.
 *
 * Functions run in a worker must be pure with respect to their argument (no shared state).
 * Workers are started lazily and kept; `close()` terminates them.
 */
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { insertByRank, type Rank } from './queue.js';

export interface SynthTask {
  /** file: URL of the module (e.g. new URL('../kinds/demo-circuit-tasks.js', import.meta.url).href). */
  module: string;
  /** Name of the exported function; it receives `arg` and returns (a promise of) the result. */
  fn: string;
  arg: unknown;
}

/** The names of a module's exported functions (`M`: its type, `typeof import('…')`), what a worker can run. */
export type TaskName<M> = { [K in keyof M & string]: M[K] extends (...args: never[]) => unknown ? K : never }[keyof M & string];
/** The argument of a module's exported function (unknown for one without). */
export type TaskArg<M, F extends keyof M> = M[F] extends (arg: infer A) => unknown ? A : never;
/** What it returns, awaited. */
export type TaskResult<M, F extends keyof M> = M[F] extends (...args: never[]) => infer R ? Awaited<R> : never;

/** A task whose function the compiler has seen: its name is one the module exports, its argument that function's,
 *  and SynthRunner.run's result its return type. */
export interface TypedTask<R> extends SynthTask {
  /** Type only (never set): the task's result. */
  readonly __result?: R;
}

/** The typed tasks of one worker module: `const task = workerTasks<typeof import('./tasks.js')>(URL_OF_IT)`, then
 *  `pool.run(task('porepCheckPartition', arg))` (an unknown name or a wrong argument does not compile). */
export function workerTasks<M>(module: string): <F extends TaskName<M>>(fn: F, arg: TaskArg<M, F>) => TypedTask<TaskResult<M, F>> {
  return (fn, arg) => ({ module, fn, arg });
}

/** The name of one of a module's exported functions, checked by the compiler (for tasks run by name elsewhere). */
export function taskName<M>(fn: TaskName<M>): string {
  return fn;
}

export interface SynthRunOptions {
  /** Lower runs first (queue.ts compareRank), ties in arrival order; unranked tasks run after ranked ones. */
  rank?: Rank;
  /** May run on a reserved worker (a latency-critical job's task). */
  urgent?: boolean;
  /** Aborted while the task waits: it is dropped and rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** What a planner gets of the pool (PlanContext.synthPool): the engine hands each job a view that ranks
 *  its tasks (SynthesisPool.forJob). */
export interface SynthRunner {
  /** General workers (the ones any task may use). */
  readonly size: number;
  /** General workers free now, less the tasks waiting for one (0 when the pool is busy). */
  readonly idle: number;
  run<T>(task: SynthTask & { readonly __result?: T }, opts?: SynthRunOptions): Promise<T>;
}

interface Pending {
  task: SynthTask;
  rank: Rank;
  urgent: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  /** Removes the abort listener. */
  detach: () => void;
}

interface Slot {
  worker: Worker;
  busy: Pending | undefined;
  reserved: boolean;
}

const WORKER_URL = new URL('./synth-worker.js', import.meta.url);
const UNRANKED: Rank = [Number.POSITIVE_INFINITY];

export class SynthesisPool implements SynthRunner {
  readonly size: number;
  /** Workers that take urgent tasks only. */
  readonly reserved: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;

  /** threads 0 = auto: half the CPUs, at least 1. `reserved` (default 0): workers for urgent tasks only. */
  constructor(threads = 0, opts: { reserved?: number } = {}) {
    this.size = threads > 0 ? threads : Math.max(1, Math.floor(availableParallelism() / 2));
    this.reserved = Math.max(0, Math.floor(opts.reserved ?? 0));
  }

  get busy(): number {
    return this.slots.filter((s) => s.busy !== undefined).length;
  }

  get queued(): number {
    return this.queue.length;
  }

  get idle(): number {
    return Math.max(0, this.size - this.slots.filter((s) => !s.reserved && s.busy !== undefined).length - this.queue.length);
  }

  run<T>(task: SynthTask & { readonly __result?: T }, opts: SynthRunOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('synthesis pool is closed'));
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const p: Pending = { task, rank: opts.rank ?? UNRANKED, urgent: opts.urgent === true, resolve: resolve as (v: unknown) => void, reject, detach: () => undefined };
      if (signal !== undefined) {
        const onAbort = (): void => {
          const i = this.queue.indexOf(p);
          if (i < 0) return; // running: it finishes
          this.queue.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        p.detach = () => signal.removeEventListener('abort', onAbort);
      }
      insertByRank(this.queue, p);
      this.dispatch();
    });
  }

  /** A view whose tasks rank at `rank` (a task's own rank is appended) and are `urgent` unless said otherwise. */
  forJob(rank: Rank, urgent = false): SynthRunner {
    const pool = this;
    return {
      size: this.size,
      get idle() {
        return pool.idle;
      },
      run: <T>(task: SynthTask, opts: SynthRunOptions = {}) => this.run<T>(task, { ...opts, rank: [...rank, ...(opts.rank ?? [])], urgent: opts.urgent ?? urgent }),
    };
  }

  /** A free worker for a task (started when the pool has room): urgent tasks prefer a reserved one. */
  private slotFor(urgent: boolean): Slot | undefined {
    const free = (reserved: boolean): Slot | undefined => {
      const s = this.slots.find((x) => x.busy === undefined && x.reserved === reserved);
      if (s !== undefined) return s;
      const count = this.slots.filter((x) => x.reserved === reserved).length;
      return count < (reserved ? this.reserved : this.size) ? this.spawn(reserved) : undefined;
    };
    return urgent ? (free(true) ?? free(false)) : free(false);
  }

  private dispatch(): void {
    // in rank order; a task that finds no worker is passed over only for a later urgent one (a reserved worker)
    for (let i = 0; i < this.queue.length; ) {
      const p = this.queue[i]!;
      const slot = this.slotFor(p.urgent);
      if (slot === undefined) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      p.detach();
      slot.busy = p;
      slot.worker.postMessage(p.task);
    }
  }

  private spawn(reserved: boolean): Slot {
    // the reserved workers run at the event loop's nice level, the others below it (synth-worker.ts)
    const worker = new Worker(WORKER_URL, { workerData: { nice: reserved ? 0 : 5 } });
    worker.unref();
    const slot: Slot = { worker, busy: undefined, reserved };
    worker.on('message', (msg: { ok: boolean; value?: unknown; error?: string }) => {
      const p = slot.busy;
      slot.busy = undefined;
      if (p) {
        if (msg.ok) p.resolve(msg.value);
        else p.reject(new Error(msg.error ?? 'synthesis worker failed'));
      }
      this.dispatch();
    });
    const fail = (err: Error): void => {
      const p = slot.busy;
      slot.busy = undefined;
      const i = this.slots.indexOf(slot);
      if (i >= 0) this.slots.splice(i, 1);
      p?.reject(new Error(`synthesis worker died: ${err.message}`));
      if (!this.closed) this.dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (slot.busy) fail(new Error(`exit code ${code}`));
    });
    this.slots.push(slot);
    return slot;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) {
      p.detach();
      p.reject(new Error('synthesis pool closed'));
    }
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }
}
