/**
 * One-shot worker threads for work too large for the event loop that is not synthesis: compiling a
 * circuit shape (seconds to minutes, gigabytes), reading a cached one. `runOffThread` starts a
 * worker, which imports the named module, calls the named export with the (structured-cloned)
 * argument, posts the result back transferring every typed array's buffer inside it (no copy), and
 * ends. The daemon's GetStatus keeps answering meanwhile. `terminate()` stops the work (shutdown).
 */
import { setPriority } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

export interface OffThreadTask<T> {
  readonly result: Promise<T>;
  /** Stops the worker; `result` rejects. */
  terminate(): Promise<void>;
}

const live = new Set<Worker>();

/** Runs `fn` of `module` (a file: URL) with `arg` in a new worker thread. `fn` gets a second argument, a
 *  function whose (structured-cloned) calls reach `onProgress` here while it runs. */
export function runOffThread<T>(module: string, fn: string, arg: unknown, onProgress?: (p: unknown) => void): OffThreadTask<T> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { module, fn, arg } });
  live.add(worker);
  const result = new Promise<T>((resolve, reject) => {
    let settled = false;
    worker.on('message', (msg: { ok: boolean; value?: T; error?: string; progress?: unknown }) => {
      if (msg.progress !== undefined) {
        if (!settled) onProgress?.(msg.progress);
        return;
      }
      settled = true;
      if (msg.ok) resolve(msg.value as T);
      else reject(new Error(msg.error ?? `${fn} failed in its worker`));
    });
    worker.once('error', (e) => {
      settled = true;
      reject(e);
    });
    worker.once('exit', (code) => {
      live.delete(worker);
      if (!settled) reject(new Error(`${fn}: its worker stopped (exit code ${code})`));
    });
  });
  result.catch(() => {});
  return { result, terminate: () => worker.terminate().then(() => undefined) };
}

/** Stops every one-shot worker still running (daemon shutdown). */
export async function terminateOffThreadTasks(): Promise<void> {
  await Promise.all([...live].map((w) => w.terminate()));
}

/** The buffers of every typed array reachable from `v` (each once). */
function buffersOf(v: unknown, out = new Set<ArrayBuffer>(), seen = new Set<object>()): Set<ArrayBuffer> {
  if (v === null || typeof v !== 'object' || seen.has(v)) return out;
  seen.add(v);
  if (ArrayBuffer.isView(v)) {
    if (v.buffer instanceof ArrayBuffer) out.add(v.buffer);
    return out;
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) buffersOf(x, out, seen);
  return out;
}

if (!isMainThread && parentPort !== null && workerData?.module !== undefined) {
  const { module, fn, arg } = workerData as { module: string; fn: string; arg: unknown };
  // Background work: on Linux the nice value is per thread and pid 0 is this thread, so the event
  // loop thread (GetStatus, the prover's scheduling) keeps its priority over this one.
  try {
    setPriority(0, 10);
  } catch {
    /* not permitted: run at the default priority */
  }
  void (async () => {
    try {
      const mod = (await import(module)) as Record<string, unknown>;
      const f = mod[fn];
      if (typeof f !== 'function') throw new Error(`${module} has no exported function ${fn}`);
      const progress = (p: unknown): void => parentPort!.postMessage({ progress: p });
      const value: unknown = await (f as (a: unknown, progress: (p: unknown) => void) => unknown)(arg, progress);
      try {
        parentPort!.postMessage({ ok: true, value }, [...buffersOf(value)]);
      } catch {
        parentPort!.postMessage({ ok: true, value }); // a buffer that cannot be transferred: copied
      }
    } catch (e) {
      parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
    }
  })();
}
