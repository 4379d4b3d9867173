/** Worker side of poseidon-pool.ts: hashes the groups [from, to) it is sent, then signals. */
import { parentPort } from 'node:worker_threads';
import { hashGroupsInto } from './poseidon-fast.js';

interface Task {
  readonly input: Uint8Array;
  readonly output: Uint8Array;
  readonly ctl: Int32Array;
  readonly arity: number;
  readonly from: number;
  readonly to: number;
}

parentPort?.on('message', (t: Task) => {
  try {
    hashGroupsInto(t.input, t.arity, t.output, t.from, t.to, (n) => Atomics.add(t.ctl, 1, n));
  } catch {
    Atomics.store(t.ctl, 2, 1); // the caller is blocked in Atomics.wait and cannot see 'error' events
  }
  Atomics.add(t.ctl, 0, 1);
  Atomics.notify(t.ctl, 0);
});
