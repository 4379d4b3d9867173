/**
 * Synthesis worker pool (node:worker_threads). A task names a module (file URL) and one of its
 * exported functions; the worker imports the module, calls the function with the (structured-
 * cloned) argument and posts the result back, transferring the assignment's buffer rather than
 * copying it. Witness generation therefore runs off the JS thread that drives the prover, which is
 * what lets synthesis of one partition overlap the proving of another.
 *
 * Functions run in a worker must be pure with respect to their argument (no shared state).
 * Workers are started lazily and kept; `close()` terminates them.
 */
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';

export interface SynthTask {
  /** file: URL of the module (e.g. new URL('../kinds/demo-circuit-worker.js', import.meta.url).href). */
  module: string;
  /** Name of the exported function; it receives `arg` and returns (a promise of) the result. */
  fn: string;
  arg: unknown;
}

interface Pending {
  task: SynthTask;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  busy: Pending | undefined;
}

const WORKER_URL = new URL('./synth-worker.js', import.meta.url);

export class SynthesisPool {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;

  /** threads 0 = auto: half the CPUs, at least 1. */
  constructor(threads = 0) {
    this.size = threads > 0 ? threads : Math.max(1, Math.floor(availableParallelism() / 2));
  }

  get busy(): number {
    return this.slots.filter((s) => s.busy !== undefined).length;
  }

  get queued(): number {
    return this.queue.length;
  }

  run<T>(task: SynthTask): Promise<T> {
    if (this.closed) return Promise.reject(new Error('synthesis pool is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ task, resolve: resolve as (v: unknown) => void, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.busy === undefined);
      if (slot === undefined && this.slots.length < this.size) slot = this.spawn();
      if (slot === undefined) return;
      const p = this.queue.shift()!;
      slot.busy = p;
      slot.worker.postMessage(p.task);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL);
    worker.unref();
    const slot: Slot = { worker, busy: undefined };
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
    for (const p of this.queue.splice(0)) p.reject(new Error('synthesis pool closed'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }
}
