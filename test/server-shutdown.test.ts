/**
 * Shutdown mid-proof (issue 30 item 8): the daemon cancels running jobs, waits (bounded, and says so)
 * for the prover's step in flight, which a native call cannot interrupt, and says "kiln daemon stopped"
 * only once no proof work runs. The prover's backend is the native one with a gate on `quotient`: the
 * call runs, then holds until the test opens the gate, as a long native step would; `inside` counts the
 * calls that have not returned.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import type { Backend } from '../src/backend/backend.js';
import { nativeAvailable } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import { connectEngine } from '../src/client/grpc-client.js';
import { runDaemon, type Daemon, type DaemonStop } from '../src/server/daemon.js';
import { testDaemonDirs } from './support.js';

/** A backend whose `quotient` (one native step of every partition proof) holds until released. */
function gatedBackend(): { backend: Backend; inside: () => number; release: () => void } {
  const real = selectBackend(nativeAvailable() ? 'native' : 'reference');
  let inside = 0;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const backend = new Proxy(real, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv);
      if (typeof v !== 'function') return v;
      if (prop !== 'quotient') return v.bind(target);
      return async (...args: unknown[]) => {
        inside++;
        try {
          const r = await v.apply(target, args);
          await gate;
          return r;
        } finally {
          inside--;
        }
      };
    },
  }) as Backend;
  return { backend, inside: () => inside, release: open };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-shutdown-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A daemon on the gated backend with one demo job proving (held in its quotient); its log lines. */
async function daemonMidProof(proverWaitSeconds: number): Promise<{ d: Daemon; gated: ReturnType<typeof gatedBackend>; lines: { msg: string; at: number; inside: number }[] }> {
  const gated = gatedBackend();
  const lines: { msg: string; at: number; inside: number }[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push({ msg: JSON.parse(s).msg, at: performance.now(), inside: gated.inside() }) });
  const d = await runDaemon({
    listen: '127.0.0.1:0',
    httpListen: '',
    logger,
    handleSignals: false,
    shutdownGraceSeconds: 0,
    proverWaitSeconds,
    devices: [gated.backend],
    demo: { constraints: 1000, partitions: 1, cacheDir: join(dir, 'params') },
    configure: (c) => {
      testDaemonDirs(c, join(dir, 'params'));
      c.synthesis.threads = 1;
    },
  });
  const c = connectEngine(d.grpcAddress);
  try {
    await c.call('SubmitProof', { proof_kind: 1000, vanilla_proof: Buffer.from('{"seed": 3}') });
  } finally {
    c.close();
  }
  const t0 = Date.now();
  while (gated.inside() === 0) {
    assert.ok(Date.now() - t0 < 120_000, 'the proof reached its quotient within 120 s');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { d, gated, lines };
}

test('stopped mid-proof: the daemon waits for the native step in flight, says so, and says "stopped" only after it ended', async () => {
  const { d, gated, lines } = await daemonMidProof(60);
  try {
    await stopsAfterTheStep(d, gated, lines);
  } finally {
    gated.release();
  }
});

async function stopsAfterTheStep(d: Daemon, gated: ReturnType<typeof gatedBackend>, lines: { msg: string; at: number; inside: number }[]): Promise<void> {
  let stop: DaemonStop | undefined;
  let resolved = false;
  let insideAtStop = -1;
  const t0 = performance.now();
  const closing = d.close().then((r) => {
    insideAtStop = gated.inside();
    resolved = true;
    stop = r;
  });
  // longer than any fixed wait the shutdown could take on its own (the old one gave up after 5 s)
  await new Promise((r) => setTimeout(r, 6_000));
  assert.equal(resolved, false, 'close() has not resolved while the prover step runs');
  assert.equal(gated.inside(), 1);
  assert.ok(!lines.some((l) => /kiln daemon stopped/.test(l.msg)), 'no "stopped" while the prover step runs');
  assert.ok(
    lines.some((l) => /running jobs cancelled; waiting up to 60 s for their work to stop/.test(l.msg)),
    `the wait is logged:\n${lines.map((l) => l.msg).join('\n')}`,
  );
  const released = performance.now();
  gated.release();
  await closing;
  const afterRelease = performance.now() - released;
  console.log(`# stop mid-proof: close() returned ${afterRelease.toFixed(0)} ms after the native step ended (${((performance.now() - t0) / 1000).toFixed(1)} s after close())`);
  assert.equal(insideAtStop, 0, 'no prover step runs when close() resolves');
  assert.deepEqual(stop, { stillRunning: [] });
  const stopped = lines.find((l) => /kiln daemon stopped/.test(l.msg));
  assert.ok(stopped !== undefined && stopped.inside === 0 && stopped.at >= released, 'stopped is said after the step ended');
  assert.ok(lines.some((l) => /shutdown: the running jobs' work stopped after/.test(l.msg)));
  assert.ok(afterRelease < 3_000, `close() returned ${afterRelease.toFixed(0)} ms after the step ended`);
}

test('a prover step that outlasts proverWaitSeconds: close() returns at the bound naming the job, and never says "stopped"', async () => {
  const { d, gated, lines } = await daemonMidProof(1);
  try {
    const t0 = performance.now();
    const stop = await d.close();
    const ms = performance.now() - t0;
    console.log(`# stop with a step that outlasts the 1 s bound: close() returned after ${ms.toFixed(0)} ms`);
    assert.ok(ms >= 1_000 && ms < 4_000, `close() returned after ${ms.toFixed(0)} ms`);
    assert.equal(gated.inside(), 1, 'the step still runs');
    assert.equal(stop.stillRunning.length, 1);
    assert.match(stop.stillRunning[0], /^job \S+ partition 0 \(proving for \d+\.\d s\)$/);
    assert.ok(!lines.some((l) => /kiln daemon stopped/.test(l.msg)), lines.map((l) => l.msg).join('\n'));
    assert.ok(lines.some((l) => /proof work still running .*only the process's exit ends it/.test(l.msg)));
  } finally {
    gated.release();
    while (gated.inside() > 0) await new Promise((r) => setTimeout(r, 20));
  }
});
