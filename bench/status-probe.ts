/** GetStatus latency as the benches measure it, from a client thread of its own. */
import { Worker } from 'node:worker_threads';

/**
 * Calls GetStatus at `address` in a loop, `intervalMs` apart, from a worker thread (the calling
 * thread's work, e.g. sending large requests, must not count as the daemon's latency), until stop():
 * each call's latency in ms, and the errors.
 */
export function startStatusProbe(address: string, intervalMs: number): { stop(): Promise<{ latMs: number[]; errors: string[] }> } {
  const w = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     import(workerData.bench).then(async ({ connectEngine }) => {
       const c = connectEngine(workerData.address);
       const latMs = [], errors = [];
       let stop = false;
       parentPort.once('message', () => (stop = true));
       while (!stop) {
         const t = performance.now();
         try { await c.call('GetStatus', {}, 10000); latMs.push(performance.now() - t); } catch (e) { errors.push(String(e.message)); }
         await new Promise((r) => setTimeout(r, workerData.intervalMs));
       }
       c.close();
       parentPort.postMessage({ latMs, errors });
     });`,
    { eval: true, workerData: { bench: new URL('../src/client/grpc-client.js', import.meta.url).href, address, intervalMs } },
  );
  const failed = new Promise<never>((_, reject) => w.once('error', reject));
  return {
    stop: () =>
      Promise.race([
        failed,
        new Promise<{ latMs: number[]; errors: string[] }>((resolve) => {
          w.once('message', (m: { latMs: number[]; errors: string[] }) => void w.terminate().then(() => resolve(m)));
          w.postMessage('stop');
        }),
      ]),
  };
}

/** The p-th percentile of `xs` (NaN when empty). */
export const pct = (xs: number[], p: number): number => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]);
