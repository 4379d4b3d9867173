/**
 * Poseidon over many independent groups (column hashes, tree levels) on worker threads, behind a
 * synchronous call: the inputs go to the workers in a SharedArrayBuffer and the calling thread sleeps
 * in `Atomics.wait` (allowed on Node's main thread) until every chunk is done, waking every 200 ms to
 * report progress. With `threads <= 1`, or when the compiled worker module is absent (running the
 * TypeScript sources directly), the same function runs in-thread.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { hashGroupsInto } from './poseidon-fast.js';

/** Control words in the shared Int32Array. */
const DONE = 0;
const HASHED = 1;
const FAILED = 2;

export interface PoseidonBatch {
  /** Hashes `count = input.length / 32 / arity` groups; returns `count` 32-byte LE elements. */
  hashGroups(input: Uint8Array, arity: number, progress?: (done: number, total: number) => void): Uint8Array;
  close(): void;
  readonly threads: number;
}

/** A zeroed buffer the pool can hand to workers without copying it (plain memory otherwise). */
export function sharedBytes(length: number): Uint8Array {
  return new Uint8Array(new SharedArrayBuffer(length));
}

export function inThreadBatch(): PoseidonBatch {
  return {
    threads: 1,
    hashGroups(input, arity, progress) {
      const count = input.length / 32 / arity;
      const out = new Uint8Array(count * 32);
      let done = 0;
      hashGroupsInto(input, arity, out, 0, count, progress && ((n) => progress((done += n), count)));
      return out;
    },
    close() { /* nothing to release */ },
  };
}

function workerFile(): string | undefined {
  const f = fileURLToPath(new URL('./poseidon-worker.js', import.meta.url));
  return existsSync(f) ? f : undefined;
}

/**
 * A pool of `threads` workers (default: the machine's parallelism); close() it when done. Batches of
 * fewer than `minGroups` groups are hashed in-thread (not worth the copies).
 */
export function poseidonPool(threads = availableParallelism(), minGroups = 4096): PoseidonBatch {
  const file = workerFile();
  if (threads <= 1 || file === undefined) return inThreadBatch();
  const workers = Array.from({ length: threads }, () => {
    const w = new Worker(file);
    w.unref();
    return w;
  });
  let failure: Error | undefined;
  for (const w of workers) w.on('error', (e: Error) => { failure = e; });
  return {
    threads,
    hashGroups(input, arity, progress) {
      const count = input.length / 32 / arity;
      if (count < minGroups) return inThreadBatch().hashGroups(input, arity, progress);
      let shared = input;
      if (!(input.buffer instanceof SharedArrayBuffer)) {
        shared = new Uint8Array(new SharedArrayBuffer(input.length));
        shared.set(input);
      }
      const out = new Uint8Array(new SharedArrayBuffer(count * 32));
      const ctl = new Int32Array(new SharedArrayBuffer(12));
      const chunks = threads * 4;
      const per = Math.ceil(count / chunks);
      let posted = 0;
      for (let c = 0; c < chunks; c++) {
        const from = c * per;
        const to = Math.min(count, from + per);
        if (from >= to) break;
        workers[c % threads].postMessage({ input: shared, output: out, ctl, arity, from, to });
        posted++;
      }
      while (Atomics.load(ctl, DONE) < posted) {
        if (failure !== undefined) throw failure;
        if (Atomics.load(ctl, FAILED) !== 0) throw new Error('Poseidon worker failed');
        Atomics.wait(ctl, DONE, Atomics.load(ctl, DONE), 200);
        progress?.(Atomics.load(ctl, HASHED), count);
      }
      if (Atomics.load(ctl, FAILED) !== 0) throw new Error('Poseidon worker failed');
      progress?.(count, count);
      return out; // SharedArrayBuffer-backed: the next level goes to the workers without a copy
    },
    close() {
      for (const w of workers) void w.terminate();
    },
  };
}
