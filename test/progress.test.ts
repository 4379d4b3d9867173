/** The shared progress helper (off when stdout is not a terminal) and the shape compile's steps. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { porepInfoForSize, porepShape } from '../src/kinds/porep/porep-c2.js';
import { cliProgressRenderer, progressLine, progressWanted } from '../src/util/progress.js';
import { formatDuration } from '../src/util/timing.js';

test('bars are off when stdout is not a terminal, unless KILN_PROGRESS=1; KILN_PROGRESS=0 turns them off', () => {
  const saved = process.env.KILN_PROGRESS;
  try {
    delete process.env.KILN_PROGRESS;
    const tty = { isTTY: true } as NodeJS.WriteStream;
    assert.equal(progressWanted(tty), Boolean(process.stdout.isTTY));
    process.env.KILN_PROGRESS = '1';
    assert.equal(progressWanted(tty), true);
    process.env.KILN_PROGRESS = '0';
    assert.equal(progressWanted(tty), false);
  } finally {
    if (saved === undefined) delete process.env.KILN_PROGRESS;
    else process.env.KILN_PROGRESS = saved;
  }
  const off = cliProgressRenderer(process.stderr, false);
  assert.equal(off.enabled, false);
  off.progress('x', 1, 2); // no-op
  off.stop();
});

test('an enabled bar draws on its stream, one bar per stage', () => {
  const written: string[] = [];
  const stream = Object.assign(Object.create(process.stderr) as NodeJS.WriteStream, {
    isTTY: true,
    columns: 100,
    write: (s: string): boolean => {
      written.push(String(s));
      return true;
    },
    cursorTo: (): boolean => true,
    clearLine: (): boolean => true,
    moveCursor: (): boolean => true,
  });
  const r = cliProgressRenderer(stream, true);
  r.progress('stage one', 0, 10);
  r.progress('stage one', 10, 10);
  r.progress('stage two', 1, 4);
  r.stop();
  const text = written.join('');
  assert.match(text, /stage one .*100% \| 10\/10/);
  assert.match(text, /stage two .*25% \| 1\/4/);
});

test('a PoRep shape compile reports its steps in order (the bar of kiln setup, the daemon\'s log lines)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-shape-steps-'));
  try {
    const steps: [string, number, number][] = [];
    const { cached } = porepShape(porepInfoForSize(2048), dir, (s, k, n) => void steps.push([s, k, n]));
    assert.equal(cached, false);
    assert.deepEqual(steps.map(([, k, n]) => [k, n]), [[0, 6], [1, 6], [2, 6], [3, 6], [4, 6], [5, 6], [6, 6]]);
    assert.match(steps[1]![0], /replicate the shape × 2 challenges/);
    const again: unknown[] = [];
    assert.equal(porepShape(porepInfoForSize(2048), dir, (...a) => void again.push(a)).cached, true);
    assert.deepEqual(again, []); // a cached shape is read, not compiled
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('without a terminal, a line now and then: the stage, counts, time spent and an ETA; none for short work; KILN_PROGRESS=0 silences it', async () => {
  const lines: string[] = [];
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  const r = cliProgressRenderer(process.stderr, false, { intervalMs: 60, print: (l) => void lines.push(l), lines: true });
  assert.equal(r.enabled, false);
  r.progress('proving partitions', 0, 10);
  assert.deepEqual(lines, [], 'nothing before the interval');
  await sleep(40);
  r.progress('proving partitions', 4, 10);
  await sleep(150); // the timer prints while nothing is reported
  r.stop();
  const n = lines.length;
  assert.ok(n >= 1, 'a line after the interval');
  assert.match(lines[0]!, /^kiln: proving partitions: 4\/10 \(40 %\), \d+ ms, about \d+ ms left$/);
  await sleep(150);
  assert.equal(lines.length, n, 'no line after stop');
  // an unknown total: what was counted and the time spent
  const u: string[] = [];
  const r2 = cliProgressRenderer(process.stderr, false, { intervalMs: 1, print: (l) => void u.push(l), lines: true });
  await sleep(5);
  r2.progress('counting constraints', 16384, 0);
  r2.stop();
  assert.match(u[0]!, /^kiln: counting constraints: 16384 so far, \d+ ms$/);
  assert.equal(progressLine('x', 0, 0, 75_000, undefined), 'kiln: x: 1 min 15 s');
  assert.equal(progressLine('x', 1, 4, 12_000, 36_000), 'kiln: x: 1/4 (25 %), 12 s, about 36 s left');
  assert.equal(progressLine('dev setup (%)', 10, 100, 130_000, 600_000), 'kiln: dev setup: 10 %, 2 min 10 s, about 10 min 00 s left');
  assert.deepEqual([850, 4200, 42_000, 185_000, 3_720_000].map(formatDuration), ['850 ms', '4.2 s', '42 s', '3 min 05 s', '1 h 02 min']);
  const saved = process.env.KILN_PROGRESS;
  process.env.KILN_PROGRESS = '0';
  try {
    const quiet: string[] = [];
    const r3 = cliProgressRenderer(process.stderr, false, { intervalMs: 1, print: (l) => void quiet.push(l) });
    await sleep(5);
    r3.progress('x', 1, 2);
    r3.stop();
    assert.deepEqual(quiet, []);
  } finally {
    if (saved === undefined) delete process.env.KILN_PROGRESS;
    else process.env.KILN_PROGRESS = saved;
  }
});

test('the CPU development setup reports its steps in weighted work, through a worker thread too', async () => {
  const { DemoCircuit } = await import('../src/r1cs/demo-circuit.js');
  const { recordShape } = await import('../src/r1cs/shape.js');
  const { cpuSetupSteps, writeInsecureDevParamsCpu } = await import('../src/groth16/setup.js');
  const { selectBackend } = await import('../src/backend/select.js');
  const { runOffThread } = await import('../src/engine/task-worker.js');
  const circuit = new DemoCircuit({ constraints: 3000, seed: 1 });
  const shape = recordShape((cs) => circuit.synthesize(cs));
  const dir = await mkdtemp(join(tmpdir(), 'kiln-setup-steps-'));
  try {
    const seen: [string, number, number][] = [];
    const backend = selectBackend('native', { warn: () => {} });
    await writeInsecureDevParamsCpu(shape, backend, join(dir, 'p.params'), { onStep: (s, d, t) => void seen.push([s, d, t]) });
    const steps = cpuSetupSteps(shape, backend.devSetupScalars !== undefined);
    assert.deepEqual(seen.map(([s]) => s), [...steps.map((x) => x.step), 'done']);
    const total = steps.reduce((a, x) => a + x.work, 0);
    assert.ok(seen.every(([, d, t], i) => t === total && (i === 0 || d >= seen[i - 1]![1])));
    assert.deepEqual(seen.at(-1), ['done', total, total]);
    assert.equal(seen[0]![1], 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // a task in a worker thread reports through runOffThread's progress channel
  const got: unknown[] = [];
  const task = runOffThread<number>(new URL('./support.js', import.meta.url).href, 'progressTask', { n: 3 }, (p) => void got.push(p));
  assert.equal(await task.result, 3);
  assert.deepEqual(got, [1, 2, 3].map((k) => ({ step: `step ${k}`, done: k, total: 3 })));
});

test('an in-process engine job is shown while it runs: checking the input, the circuit and its parameters, then partitions done of all', async () => {
  const { pino } = await import('pino');
  const { Engine } = await import('../src/engine/engine.js');
  const { defaultConfig } = await import('../src/engine/config.js');
  const { createDemoKind } = await import('../src/kinds/demo-circuit.js');
  const { proofRequest, AwaitStatus } = await import('../src/engine/types.js');
  const { selectBackend } = await import('../src/backend/select.js');
  const { watchJob } = await import('../src/cli/local-engine.js');
  const { slowProver } = await import('./support.js');
  const dir = await mkdtemp(join(tmpdir(), 'kiln-watch-'));
  const config = defaultConfig();
  config.synthesis.threads = 1;
  config.gpus.gpu_workers_per_device = 1;
  const backend = slowProver(selectBackend('native', { warn: () => {} }), 40);
  const demo = createDemoKind({ constraints: 500, partitions: 4, cacheDir: dir, backend });
  const engine = new Engine({ config, backend, logger: pino({ level: 'silent' }), planners: [demo.planner], providers: [demo.circuits], defaultMetrics: false });
  try {
    const { job } = await engine.submit(proofRequest({ proofKind: 1000, vanillaProof: Buffer.from(JSON.stringify({ seed: 3, partitions: 4 })) }));
    const seen: [string, number, number][] = [];
    const unwatch = watchJob(job, (s, d, t) => void seen.push([s, d, t]), 'proving');
    const r = await engine.await(job.id).finally(unwatch);
    assert.equal(r?.status, AwaitStatus.COMPLETED);
    assert.ok(seen.every(([s]) => ['checking the input', 'circuit and parameters', 'proving partitions'].includes(s)), JSON.stringify(seen));
    const parts = seen.filter(([s]) => s === 'proving partitions');
    assert.ok(parts.length > 0, JSON.stringify(seen));
    assert.ok(parts.every(([, d, t]) => t === 4 && d <= 4));
    const n = seen.length;
    await new Promise((res) => setTimeout(res, 700));
    assert.equal(seen.length, n, 'no ticks after unwatch');
  } finally {
    await engine.close(0);
    await rm(dir, { recursive: true, force: true });
  }
});

test('the span tree: ms below 10 s, s above; the gaps (a debug detail) only when asked for', async () => {
  const { Span, formatSpanTree } = await import('../src/util/timing.js');
  const root = new Span('job', undefined, 0);
  root.record('synth', 2_500);
  root.record('prove', 57_300);
  root.endMs = 62_000;
  const text = formatSpanTree(root);
  assert.match(text, /^job +62\.0 s $/m);
  assert.match(text, /^  synth +2500\.0 ms +4\.0%$/m);
  assert.match(text, /^  prove +57\.3 s +92\.4%$/m);
  assert.doesNotMatch(text, /\(gap\)|over 2 %/);
  const debug = formatSpanTree(root, { gaps: true });
  assert.match(debug, /^  \(gap\) +2200\.0 ms  <-- over 2 %$/m);
});
