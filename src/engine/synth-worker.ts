/**
 * Body of a synthesis worker thread (see synth-pool.ts): imports the task's module, runs the named
 * function and posts back { ok, value } (transferring the buffers of Uint8Array fields) or
 * { ok: false, error }.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

// Below the event loop thread (Linux nice values are per thread; 0 = this thread): when the CPU is
// oversubscribed, GetStatus and the prover's scheduling go first, witnesses still use every idle core.
// A pool's reserved workers (urgent tasks: a WinningPoSt's) stay at the event loop's level (workerData.nice 0).
try {
  const nice = (workerData as { nice?: unknown } | null)?.nice;
  setPriority(0, typeof nice === 'number' ? nice : 5);
} catch {
  /* not permitted: the default priority */
}

const modules = new Map<string, Promise<Record<string, unknown>>>();

parentPort?.on('message', async (task: { module: string; fn: string; arg: unknown }) => {
  try {
    let mod = modules.get(task.module);
    if (mod === undefined) {
      mod = import(task.module) as Promise<Record<string, unknown>>;
      modules.set(task.module, mod);
    }
    const fn = (await mod)[task.fn];
    if (typeof fn !== 'function') throw new Error(`${task.module} has no exported function ${task.fn}`);
    const value: unknown = await (fn as (a: unknown) => unknown)(task.arg);
    const transfer: ArrayBuffer[] = [];
    if (value !== null && typeof value === 'object') {
      for (const v of Object.values(value)) {
        if (v instanceof Uint8Array && v.buffer instanceof ArrayBuffer && !transfer.includes(v.buffer)) transfer.push(v.buffer);
      }
    }
    parentPort!.postMessage({ ok: true, value }, transfer);
  } catch (e) {
    parentPort!.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
