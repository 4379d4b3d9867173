/**
 * A storage provider's mixed load on the engine (issue 29), on the CPU with small circuits: PoRep-priority work
 * (NORMAL) and WinningPoSt-priority work (CRITICAL) as demo circuits under the real kinds and priorities, every
 * prover step slowed (test/support.ts slowProver) so that a partition proof takes a known while.
 *  - a WinningPoSt overtakes queued PoRep partitions while every job slot is taken by running PoRep jobs, and
 *    after a restart whose recovered PoRep jobs took them: it proves on the device's urgent lane at once, which
 *    no PoRep partition takes; on the CPU the PoRep partitions proving meanwhile pause at their next step
 *    (urgent_wait) until its proof is made (on a GPU the device lock lets it go next);
 *  - equal priorities finish in submission order, even when a later request is planned sooner;
 *  - a partition's slot is given back when its proof is made: the next partition proves while it is verified;
 *  - the span tree of a real 2 KiB WinningPoSt job accounts for its time (its validate span included).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { nativeAvailable } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import { defaultConfig, type EngineConfig } from '../src/engine/config.js';
import { Engine, type Job } from '../src/engine/engine.js';
import { Journal } from '../src/engine/journal.js';
import { AwaitStatus, Priority, ProofKind, proofRequest, type Planner } from '../src/engine/types.js';
import { createDemoKind } from '../src/kinds/demo-circuit.js';
import { createPoStKind } from '../src/kinds/post/planner.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import { testRandomness } from './post-support.js';
import { formatSpanTree, type Span } from '../src/util/timing.js';
import { slowProver } from './support.js';

const GIB = 1024 ** 3;
/** Each prover step (3 matrix-vector products, the quotient, 5 MSMs) takes this much more: ~0.6 s a partition. */
const STEP_MS = 60;
const POREP_CONSTRAINTS = 1200;
const WINNING_CONSTRAINTS = 600;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-mixed-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const real = selectBackend(nativeAvailable() ? 'native' : 'reference');

/** The demo kind under PoRep's and WinningPoSt's kinds and default priorities (their circuits: demo ones). */
function kinds(planDelay?: (req: { vanillaProof: Uint8Array }) => number): { planners: Planner[]; providers: ReturnType<typeof createDemoKind>['circuits'][] } {
  const demo = createDemoKind({ constraints: POREP_CONSTRAINTS, partitions: 4, cacheDir: join(dir, 'demo-params'), backend: real });
  const porep: Planner = {
    ...demo.planner,
    kind: ProofKind.POREP_SEAL_COMMIT,
    name: 'porep-c2',
    defaultPriority: Priority.NORMAL,
    async plan(req, ctx) {
      const ms = planDelay?.(req) ?? 0;
      if (ms > 0) await new Promise((r) => setTimeout(r, ms));
      return demo.planner.plan(req, ctx);
    },
  };
  const winning: Planner = { ...demo.planner, kind: ProofKind.WINNING_POST, name: 'winning-post', defaultPriority: Priority.CRITICAL };
  return { planners: [porep, winning], providers: [demo.circuits] };
}

function config(): EngineConfig {
  const c = defaultConfig(64 * GIB);
  c.gpus.gpu_workers_per_device = 1; // one lane: "the partition proving now" is one partition
  c.synthesis.threads = 1;
  return c; // pipeline: lookahead 1, concurrency 1 → 2 job slots, 2 partition slots
}

function engineWith(c: EngineConfig, journal?: Journal, planDelay?: (req: { vanillaProof: Uint8Array }) => number): Engine {
  return new Engine({ config: c, backend: slowProver(real, STEP_MS), logger: pino({ level: 'silent' }), ...kinds(planDelay), defaultMetrics: false, journal });
}

const porepReq = (seed: number, partitions = 4, extra: Record<string, unknown> = {}) =>
  proofRequest({ proofKind: ProofKind.POREP_SEAL_COMMIT, vanillaProof: Buffer.from(JSON.stringify({ seed, partitions, ...extra })) });
const winningReq = () =>
  proofRequest({ proofKind: ProofKind.WINNING_POST, vanillaProof: Buffer.from(JSON.stringify({ seed: 900, partitions: 1, constraints: WINNING_CONSTRAINTS })) });

const spansNamed = (root: Span, name: string): Span[] => [
  ...(root.name === name ? [root] : []),
  ...root.children.flatMap((c) => spansNamed(c, name)),
];

async function until(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Submits a WinningPoSt while `porep` jobs hold every job slot and partitions wait behind the one proving; checks
 * that it proves on the device's urgent lane without waiting for a lane, and that every PoRep partition proving
 * while it proved paused at a step boundary for it (on the CPU: it waits at most for one step of a PoRep
 * partition, not for the partition). Returns its latency.
 */
async function winningOvertakes(engine: Engine, porep: Job[]): Promise<number> {
  await until('a PoRep partition proving with every job slot taken', () => engine.status().queues !== undefined && porep.filter((j) => j.state === 'running').length >= engine.maxInFlight && porep.some((j) => spansNamed(j.span, 'prove').length > 0));
  assert.ok(porep.some((j) => j.state === 'queued'), 'PoRep jobs wait for a job slot');
  const sentMs = performance.now();
  const { job } = await engine.submit(winningReq());
  assert.equal(job.priority, Priority.CRITICAL);
  const r = await engine.await(job.id);
  assert.equal(r?.status, AwaitStatus.COMPLETED, r?.errorMessage);
  const latency = performance.now() - sentMs;
  const prove = spansNamed(job.span, 'prove')[0]!;
  // its own lane: it proves on the device's urgent lane without waiting for one, and no PoRep partition ever did
  assert.equal(engine.laneOfSpan(prove), 'urgent 0');
  const porepProves = porep.flatMap((j) => spansNamed(j.span, 'prove'));
  assert.deepEqual([...new Set(porepProves.map((s) => engine.laneOfSpan(s)))], ['prover 0']);
  const laneWait = spansNamed(job.span, 'lane_wait')[0]!;
  assert.ok(laneWait.durationMs < STEP_MS, `the WinningPoSt waited ${laneWait.durationMs.toFixed(0)} ms for a lane`);
  // on the CPU every PoRep partition proving while it proved paused at its next step until its proof was made
  const beside = porepProves.filter((s) => s.startMs < prove.endMs! && (s.endMs ?? Infinity) > prove.startMs);
  assert.ok(beside.length > 0, 'a PoRep partition was proving while the WinningPoSt proved');
  await until('the PoRep partitions beside it proved', () => beside.every((s) => s.endMs !== undefined));
  for (const s of beside) {
    const paused = spansNamed(s, 'urgent_wait');
    assert.ok(paused.length === 1 && paused[0]!.durationMs > 0, 'a PoRep partition proving beside the WinningPoSt paused for it (urgent_wait)');
  }
  const porepProve = porepProves.map((s) => s.durationMs);
  console.log(`# WinningPoSt: request → verified proof ${latency.toFixed(0)} ms (its prove ${prove.durationMs.toFixed(0)} ms; a PoRep partition's prove ${Math.max(...porepProve).toFixed(0)} ms at most)`);
  return latency;
}

describe('mixed load: WinningPoSt ahead of PoRep', () => {
  test('a WinningPoSt overtakes queued PoRep partitions while running PoRep jobs hold every job slot', async () => {
    const engine = engineWith(config());
    try {
      await engine.preloadSrs(`demo-${POREP_CONSTRAINTS}`);
      const warm = engine.buffers.allocated;
      assert.ok(warm >= 1 && engine.buffers.idleBytes > 0, `PreloadSRS made witness buffers ahead (${warm})`);
      await engine.preloadSrs(`demo-${WINNING_CONSTRAINTS}`);
      const porep: Job[] = [];
      for (let i = 0; i < 3; i++) porep.push((await engine.submit(porepReq(10 + i))).job);
      await winningOvertakes(engine, porep);
      for (const j of porep) engine.cancel(j.id);
      await Promise.all(porep.map((j) => engine.await(j.id)));
    } finally {
      await engine.close(0);
    }
  });

  test('after a restart: the PoRep jobs recovered from the journal take every job slot; a WinningPoSt still overtakes them', async () => {
    const state = join(dir, 'state');
    let opened = await Journal.open(state, { retentionMs: 3_600_000 });
    let engine = engineWith(config(), opened.journal);
    await engine.recover(opened);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 3; i++) ids.push((await engine.submit(porepReq(20 + i))).job.id);
      await until('a PoRep partition proving', () => engine.getJob(ids[0]!)!.span.children.some((c) => c.name.startsWith('partition[')));
    } finally {
      await engine.close(0); // running jobs are interrupted, queued ones stay: all three come back
    }
    opened = await Journal.open(state, { retentionMs: 3_600_000 });
    assert.deepEqual(opened.unfinished.map((j) => j.id).sort(), [...ids].sort());
    engine = engineWith(config(), opened.journal);
    try {
      await engine.preloadSrs(`demo-${WINNING_CONSTRAINTS}`);
      await engine.recover(opened);
      const porep = ids.map((id) => engine.getJob(id)!);
      assert.ok(porep.every((j) => j.span.children.some((c) => c.name === 'recover')), 'a recovered job shows its wait for the replan');
      await winningOvertakes(engine, porep);
      for (const j of porep) engine.cancel(j.id);
      await Promise.all(porep.map((j) => engine.await(j.id)));
    } finally {
      await engine.close(0);
    }
  });
});

describe('mixed load: WinningPoSt stays warm', () => {
  test("a circuit its provider keeps resident (WinningPoSt's) survives memory pressure; EvictSRS still frees it", async () => {
    const c = config();
    c.memory.eviction_min_idle_ms = 0;
    const k = kinds();
    const demo = k.providers[0]!;
    const winningId = `demo-${WINNING_CONSTRAINTS}`;
    const engine = new Engine({ config: c, backend: real, logger: pino({ level: 'silent' }), planners: k.planners, providers: [{ ...demo, keepResident: (id: string) => id === winningId }], defaultMetrics: false });
    try {
      await engine.preloadSrs(winningId);
      await engine.preloadSrs(`demo-${POREP_CONSTRAINTS}`);
      assert.ok(engine.srs.evictIdle(Number.MAX_SAFE_INTEGER) > 0, 'the PoRep-like circuit is evicted');
      assert.deepEqual(engine.srs.status().map((x) => x.circuitId), [winningId]);
      assert.equal(engine.evictSrs(winningId).wasLoaded, true);
      assert.deepEqual(engine.srs.status(), []);
    } finally {
      await engine.close(0);
    }
  });
});

describe('mixed load: order and overlap', () => {
  test('equal priorities finish in submission order, though a later request is planned sooner', async () => {
    // the first request's plan takes longest (a big C1's parse), the last one's none
    const delays = [300, 200, 100, 0];
    const engine = engineWith(config(), undefined, (req) => (JSON.parse(Buffer.from(req.vanillaProof).toString()) as { delay: number }).delay);
    try {
      await engine.preloadSrs(`demo-${POREP_CONSTRAINTS}`);
      const order: number[] = [];
      const submitted = await Promise.all(delays.map((delay, i) => engine.submit(porepReq(30 + i, 2, { delay }))));
      await Promise.all(submitted.map(({ job }, i) => job.done.then(() => order.push(i))));
      for (const { job } of submitted) assert.equal(engine.resultOf(job).status, AwaitStatus.COMPLETED, job.error);
      assert.deepEqual(order, [0, 1, 2, 3], 'answered in submission order');
    } finally {
      await engine.close(0);
    }
  });

  test('a partition gives its slot back when its proof is made: the next job proves while it is verified', async () => {
    const c = config();
    c.pipeline.synthesis_lookahead = 0; // one partition slot: the next partition waits for it
    const engine = engineWith(c);
    // a slow verification worker (a big key's first use)
    const run = engine.verifyPool.run.bind(engine.verifyPool);
    engine.verifyPool.run = (async (task: Parameters<typeof run>[0], opts: Parameters<typeof run>[1]) => {
      await new Promise((r) => setTimeout(r, 1500));
      return run(task, opts);
    }) as typeof run;
    try {
      await engine.preloadSrs(`demo-${POREP_CONSTRAINTS}`);
      const high = (seed: number) => ({ ...porepReq(seed, 1), priority: Priority.HIGH });
      const [a, b] = await Promise.all([engine.submit(high(40)), engine.submit(high(41))]);
      const ra = await engine.await(a.job.id);
      const rb = await engine.await(b.job.id);
      assert.equal(ra?.status, AwaitStatus.COMPLETED, ra?.errorMessage);
      assert.equal(rb?.status, AwaitStatus.COMPLETED, rb?.errorMessage);
      const verifyA = spansNamed(a.job.span, 'verify')[0]!;
      const proveB = spansNamed(b.job.span, 'prove')[0]!;
      assert.ok(proveB.startMs < verifyA.endMs!, `the second job proved from ${(proveB.startMs - verifyA.startMs).toFixed(0)} ms after the first one's verification began (it lasted ${verifyA.durationMs.toFixed(0)} ms)`);
    } finally {
      await engine.close(0);
    }
  });
});

describe('mixed load: verification', () => {
  test("a CRITICAL job's proof is verified in its own worker: it does not wait behind a NORMAL job's verification", async () => {
    const engine = engineWith(config());
    // the shared verification worker is slow (a PoRep partition's pairing on a loaded machine)
    const run = engine.verifyPool.run.bind(engine.verifyPool);
    let shared = 0;
    engine.verifyPool.run = (async (task: Parameters<typeof run>[0], opts: Parameters<typeof run>[1]) => {
      if (task.fn === 'verifyEncoded') {
        shared++;
        await new Promise((r) => setTimeout(r, 3000));
      }
      return run(task, opts);
    }) as typeof run;
    try {
      await engine.preloadSrs(`demo-${POREP_CONSTRAINTS}`);
      const normal = await engine.submit(porepReq(50, 1));
      // once the NORMAL job's verification has begun, a CRITICAL one
      while (shared === 0) await new Promise((r) => setTimeout(r, 10));
      const critical = await engine.submit({ ...porepReq(51, 1), priority: Priority.CRITICAL });
      const rc = await engine.await(critical.job.id);
      assert.equal(rc?.status, AwaitStatus.COMPLETED, rc?.errorMessage);
      assert.equal(normal.job.finished, false, 'the CRITICAL job answered while the NORMAL one was still being verified');
      const verify = spansNamed(critical.job.span, 'verify')[0]!;
      assert.ok(verify.durationMs < 2000, `the CRITICAL job's verification took ${verify.durationMs.toFixed(0)} ms`);
      assert.equal(shared, 1, 'only the NORMAL job used the shared worker');
      const rn = await engine.await(normal.job.id);
      assert.equal(rn?.status, AwaitStatus.COMPLETED, rn?.errorMessage);
    } finally {
      await engine.close(0);
    }
  });
});

/** Where a span tree does not account for its time: a child outside its parent, or a parent with more time
 *  than its children cover (beyond 5 ms and 5 %). */
function unaccounted(span: Span, path = span.name): string[] {
  if (span.children.length === 0) return [];
  const end = span.endMs ?? performance.now();
  const out: string[] = [];
  for (const c of span.children) {
    if (c.startMs < span.startMs - 0.5 || (c.endMs ?? end) > end + 0.5) out.push(`${path}/${c.name} lies outside its parent (${(c.startMs - span.startMs).toFixed(1)} → ${((c.endMs ?? end) - span.startMs).toFixed(1)} ms of ${span.durationMs.toFixed(1)})`);
  }
  if (span.gapMs > Math.max(5, 0.05 * span.durationMs)) out.push(`${path}: ${span.gapMs.toFixed(1)} of ${span.durationMs.toFixed(1)} ms in no child`);
  return [...out, ...span.children.flatMap((c) => unaccounted(c, `${path}/${c.name}`))];
}

describe('mixed load: timing that covers every step', () => {
  test('the span tree of a WinningPoSt job accounts for its time: validate has its steps, synth only its own', async () => {
    const c = config();
    c.srs.param_cache = join(dir, 'post-params');
    c.srs.dev_params = true;
    const post = createPoStKind({ config: c, backend: real });
    const engine = new Engine({ config: c, backend: real, logger: pino({ level: 'silent' }), planners: [post.winning, post.window], providers: [post.circuits], defaultMetrics: false });
    try {
      const info = postProofById(0)!; // StackedDrgWinning2KiBV1
      const randomness = testRandomness(29);
      const { elements } = synthPoSt({ info, randomness, rngSeed: 'engine-mixed' });
      await engine.preloadSrs('winning-2k'); // shape, INSECURE development parameters, the verifying key in the verification worker
      const { job } = await engine.submit(proofRequest({ proofKind: ProofKind.WINNING_POST, registeredProof: info.id, vanillaProofs: elements, randomness, minerId: 1000 }));
      const r = await engine.await(job.id);
      assert.equal(r?.status, AwaitStatus.COMPLETED, r?.errorMessage);
      const validate = job.span.children.find((x) => x.name === 'validate')!;
      assert.deepEqual(validate.children.map((x) => x.name), ['worker_wait', 'checks', 'tape']);
      const synth = spansNamed(job.span, 'synth')[0]!;
      assert.ok(!synth.children.some((x) => x.name === 'tape'), 'the tape was made with the plan: counted in validate, not again in synth');
      console.log(formatSpanTree(job.span).replace(/^/gm, '# '));
      assert.deepEqual(unaccounted(job.span), []);
    } finally {
      await engine.close(0);
    }
  });
});
