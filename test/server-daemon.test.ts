/**
 * The whole daemon, in-process, over real gRPC (a client built at run time from proto/cuzk.proto
 * with @grpc/proto-loader, as Curio's generated client would see the wire) and HTTP. Proofs are of
 * the demo kind (proof_kind 1000: 2,000-constraint demo circuits, INSECURE dev params cached in a
 * temp dir); PoRep requests are exercised for their error paths.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { selectBackend } from '../src/backend/select.js';
import { decodeProofs, loadOrCreateDevParams, prepareVerifyingKey, verifyProof } from '../src/groth16/index.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import { snapHDefault, snapProofById } from '../src/filecoin/snap/registry.js';
import { syntheticSnapUpdate } from '../src/filecoin/snap/synthetic.js';
import { snapPartitionProof } from '../src/filecoin/snap/update.js';
import { serializeSnapPartitionProof } from '../src/filecoin/snap/vanilla.js';
import { recordShape } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { runDaemon, type Daemon } from '../src/server/daemon.js';
import { PlanError } from '../src/engine/types.js';
import { fixture, repoRoot, testDaemonDirs } from './support.js';

/** Collects a warning of the listen tests: the start-up check of the (empty) parameter directory every test daemon
 *  gets (`[srs] param_cache: …`, tested in test/daemon-defaults.test.ts) is not one of theirs. */
function keepListenWarning(warnings: string[], msg: string): void {
  if (!msg.startsWith('[srs] param_cache:')) warnings.push(msg);
}

const ROOT = repoRoot;
const DEMO = 1000;
const CONSTRAINTS = 2000;
const STATUS = { UNKNOWN: 0, COMPLETED: 1, FAILED: 2, CANCELLED: 3, TIMEOUT: 4 };

type Msg = Record<string, any>;

function makeClient(address: string): { call: (m: string, req: Msg, deadlineMs?: number) => Promise<Msg>; close: () => void } {
  const def = protoLoader.loadSync(join(ROOT, 'proto', 'cuzk.proto'), { keepCase: true, longs: Number, enums: Number, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const client = new pkg.cuzk.v1.ProvingEngine(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 256 << 20,
    'grpc.max_send_message_length': 256 << 20,
  });
  return {
    call: (m, req, deadlineMs = 60_000) =>
      new Promise((resolve, reject) =>
        client[m](req, { deadline: Date.now() + deadlineMs }, (err: Error | null, res: Msg) => (err ? reject(err) : resolve(res))),
      ),
    close: () => client.close(),
  };
}

async function http(d: Daemon, path: string): Promise<any> {
  const res = await fetch(`http://${d.httpAddress}${path}`);
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return res.headers.get('content-type')?.includes('json') ? res.json() : res.text();
}

const demoReq = (o: Msg = {}, body: Msg = {}): Msg => ({
  proof_kind: DEMO,
  vanilla_proof: Buffer.from(JSON.stringify(body)),
  ...o,
});

let dir: string;
let daemon: Daemon;
let rpc: ReturnType<typeof makeClient>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-test-'));
  daemon = await runDaemon({
    listen: `unix://${join(dir, 'kiln.sock')}`,
    httpListen: '127.0.0.1:0',
    logLevel: 'silent',
    handleSignals: false,
    shutdownGraceSeconds: 5,
    demo: { constraints: CONSTRAINTS, partitions: 2, cacheDir: join(dir, 'params') },
    configure: (c) => {
      c.gpus.gpu_workers_per_device = 1; // one prover lane: two jobs in flight, the rest queued
      c.synthesis.threads = 1;
      testDaemonDirs(c, join(dir, 'params'));
    },
  });
  rpc = makeClient(daemon.grpcAddress);
});

after(async () => {
  rpc?.close();
  await daemon?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('kiln daemon over gRPC', () => {
  test('listens on a unix socket with mode 0600', async () => {
    assert.match(daemon.grpcAddress, /^unix:\/\//);
    const st = await stat(daemon.grpcAddress.slice('unix://'.length));
    assert.ok(st.isSocket());
    assert.equal(st.mode & 0o777, 0o600);
  });

  test('Prove returns a proof that verifies, with timings that add up', async () => {
    const seed = 11;
    const res = (await rpc.call('Prove', { submit: demoReq({ request_id: 'verify-1' }, { seed }) })).result;
    assert.equal(res.status, STATUS.COMPLETED, res.error_message);
    assert.equal(res.proof.length, 2 * 192);
    // verify independently: the same circuit, its dev parameters and the demo witness's inputs
    const backend = selectBackend('reference');
    const circuit = (s: number) => new DemoCircuit({ constraints: CONSTRAINTS, seed: s, publicInputs: 2 });
    const shape = recordShape((cs) => circuit(seed).synthesize(cs));
    const params = await loadOrCreateDevParams(shape, backend, join(dir, 'params'));
    const pvk = prepareVerifyingKey(params.vk);
    const proofs = decodeProofs(new Uint8Array(res.proof));
    proofs.forEach((p, k) => {
      const wg = new WitnessGenerator(shape.numInputs);
      circuit(seed + k).synthesize(wg);
      assert.ok(verifyProof(pvk, p, wg.inputs()), `partition ${k} verifies`);
    });
    for (const f of ['queue_wait_ms', 'srs_load_ms', 'synthesis_ms', 'gpu_compute_ms', 'total_ms']) assert.ok(res[f] > 0, `${f} = ${res[f]}`);
    const slack = 3; // whole-millisecond rounding
    assert.ok(res.total_ms + slack >= res.queue_wait_ms + res.srs_load_ms + res.gpu_compute_ms, JSON.stringify(res));
    assert.ok(res.total_ms + slack >= res.queue_wait_ms + res.srs_load_ms + res.synthesis_ms, JSON.stringify(res));
    // the job's span tree and log line carry the prover phases
    const job = await http(daemon, `/jobs/${res.job_id}`);
    const part = job.spans.children.find((c: any) => c.name === 'partition[0]');
    const proveSpan = part.children.find((c: any) => c.name === 'prove');
    assert.deepEqual(
      proveSpan.children.map((c: any) => c.name),
      ['matvec', 'ntt_h', 'msm_h', 'msm_l', 'msm_a', 'msm_b1', 'msm_b2', 'batch_add', 'assemble', 'release'],
    );
  });

  test('the same request_id twice gives one job', async () => {
    const a = await rpc.call('SubmitProof', demoReq({ request_id: 'dedup-1' }, { seed: 3 }));
    const b = await rpc.call('SubmitProof', demoReq({ request_id: 'dedup-1' }, { seed: 3 }));
    assert.equal(a.job_id, b.job_id);
    const r = await rpc.call('AwaitProof', { job_id: a.job_id });
    assert.equal(r.status, STATUS.COMPLETED, r.error_message);
    const c = (await rpc.call('Prove', { submit: demoReq({ request_id: 'dedup-1' }, { seed: 3 }) })).result;
    assert.equal(c.job_id, a.job_id);
    assert.deepEqual(Buffer.from(c.proof), Buffer.from(r.proof));
    // the priority does not change the proof: the same job
    assert.equal((await rpc.call('SubmitProof', demoReq({ request_id: 'dedup-1', priority: 4 }, { seed: 3 }))).job_id, a.job_id);
  });

  test("a request_id reused by another proof kind or payload is refused (ALREADY_EXISTS, naming the first job), never answered with that job's proof", async () => {
    const first = await rpc.call('SubmitProof', demoReq({ request_id: 'reuse-1' }, { seed: 8, partitions: 1 }));
    const refused = (kind: string) => (e: any) =>
      e.code === grpc.status.ALREADY_EXISTS && e.details.includes(first.job_id) && e.details.includes('(demo, ') && e.details.includes(kind);
    // while the first job is in flight, and after it completed
    await assert.rejects(rpc.call('SubmitProof', demoReq({ request_id: 'reuse-1' }, { seed: 9, partitions: 1 })), refused('another payload'));
    const done = await rpc.call('AwaitProof', { job_id: first.job_id });
    assert.equal(done.status, STATUS.COMPLETED, done.error_message);
    // another kind (a WinningPoSt under the demo job's id) through Prove and SubmitProof
    const winning = { request_id: 'reuse-1', proof_kind: 4, registered_proof: 0, vanilla_proofs: [Buffer.from('{}')], randomness: Buffer.alloc(32) };
    await assert.rejects(rpc.call('Prove', { submit: winning }), refused('winning-post'));
    await assert.rejects(rpc.call('SubmitProof', winning), refused('winning-post'));
    // the same kind with another payload (vanilla_proof, then a field besides it)
    await assert.rejects(rpc.call('Prove', { submit: demoReq({ request_id: 'reuse-1' }, { seed: 10, partitions: 1 }) }), refused('another payload'));
    await assert.rejects(rpc.call('SubmitProof', demoReq({ request_id: 'reuse-1', sector_number: 5 }, { seed: 8, partitions: 1 })), refused('another payload'));
    // the same request again: the same job and proof
    const again = (await rpc.call('Prove', { submit: demoReq({ request_id: 'reuse-1' }, { seed: 8, partitions: 1 }) })).result;
    assert.equal(again.job_id, first.job_id);
    assert.deepEqual(Buffer.from(again.proof), Buffer.from(done.proof));
  });

  test('AwaitProof with a short timeout reports TIMEOUT while the job goes on', async () => {
    const { job_id } = await rpc.call('SubmitProof', demoReq({}, { seed: 5 }));
    const t = await rpc.call('AwaitProof', { job_id, timeout_ms: 1 });
    assert.equal(t.status, STATUS.TIMEOUT);
    const r = await rpc.call('AwaitProof', { job_id, timeout_ms: 0 });
    assert.equal(r.status, STATUS.COMPLETED, r.error_message);
    await assert.rejects(rpc.call('AwaitProof', { job_id: 'no-such-job' }), (e: any) => e.code === grpc.status.NOT_FOUND);
  });

  test('CancelProof: a queued job → CANCELLED (was_running false); a running one → CANCELLED (was_running true)', async () => {
    const running = await rpc.call('SubmitProof', demoReq({}, { seed: 20, partitions: 6 }));
    const second = await rpc.call('SubmitProof', demoReq({}, { seed: 30, partitions: 2 }));
    const queued = await rpc.call('SubmitProof', demoReq({}, { seed: 40, partitions: 2 }));
    const c1 = await rpc.call('CancelProof', { job_id: queued.job_id });
    assert.equal(c1.was_running, false);
    assert.equal((await rpc.call('AwaitProof', { job_id: queued.job_id })).status, STATUS.CANCELLED);
    const c2 = await rpc.call('CancelProof', { job_id: running.job_id });
    assert.equal(c2.was_running, true);
    const r = await rpc.call('AwaitProof', { job_id: running.job_id });
    assert.equal(r.status, STATUS.CANCELLED);
    assert.equal(r.proof.length, 0);
    assert.equal((await rpc.call('AwaitProof', { job_id: second.job_id })).status, STATUS.COMPLETED);
  });

  test('a CRITICAL job submitted behind three NORMAL ones starts before the NORMAL ones still queued', async () => {
    const busy = await rpc.call('SubmitProof', demoReq({ priority: 2 }, { seed: 50, partitions: 4 }));
    const normals: string[] = [];
    for (let i = 0; i < 3; i++) normals.push((await rpc.call('SubmitProof', demoReq({ priority: 2 }, { seed: 60 + i }))).job_id);
    const queuedAtSubmit = new Set(
      (await http(daemon, '/status')).jobs.filter((j: any) => j.state === 'queued').map((j: any) => j.id),
    );
    const critical = await rpc.call('SubmitProof', demoReq({ priority: 4 }, { seed: 70 }));
    for (const id of [busy.job_id, ...normals, critical.job_id]) {
      assert.equal((await rpc.call('AwaitProof', { job_id: id })).status, STATUS.COMPLETED);
    }
    const started = async (id: string): Promise<number> => (await http(daemon, `/jobs/${id}`)).startedAtMs;
    const stillQueued = normals.filter((id) => queuedAtSubmit.has(id));
    assert.ok(stillQueued.length >= 1, 'some NORMAL jobs were still queued');
    const tc = await started(critical.job_id);
    for (const id of stillQueued) assert.ok(tc < (await started(id)), `CRITICAL started before NORMAL ${id}`);
  });

  test('with two jobs in flight, synthesis of one overlaps proving of the other (trace)', async () => {
    // Whether a synth span of one job meets a prove span of the other depends on timing (how fast
    // the second job is planned against the first's partitions): on a loaded 2-core machine one run
    // in several showed none, so the scenario runs up to three times; every other check holds on
    // each run.
    let overlaps = false;
    for (let attempt = 0; attempt < 3 && !overlaps; attempt++) {
      const a = await rpc.call('SubmitProof', demoReq({}, { seed: 80 + 20 * attempt, partitions: 6 }));
      const b = await rpc.call('SubmitProof', demoReq({}, { seed: 90 + 20 * attempt, partitions: 6 }));
      for (const j of [a, b]) assert.equal((await rpc.call('AwaitProof', { job_id: j.job_id })).status, STATUS.COMPLETED);
      const trace = await http(daemon, `/trace?jobs=${a.job_id},${b.job_id}`);
      const ev = trace.traceEvents.filter((e: any) => e.ph === 'X');
      assert.ok(ev.every((e: any) => Number.isInteger(e.ts) && Number.isInteger(e.dur) && e.pid >= 1 && e.tid >= 1));
      const lanes = new Map(trace.traceEvents.filter((e: any) => e.name === 'thread_name').map((e: any) => [`${e.pid}/${e.tid}`, e.args.name]));
      const synth = ev.filter((e: any) => e.name === 'synth');
      const prove = ev.filter((e: any) => e.name === 'prove');
      assert.ok(synth.every((e: any) => lanes.get(`${e.pid}/${e.tid}`) === 'synthesis'));
      assert.ok(prove.every((e: any) => String(lanes.get(`${e.pid}/${e.tid}`)).startsWith('prover')));
      overlaps = synth.some((s: any) =>
        prove.some((p: any) => p.pid !== s.pid && s.ts < p.ts + p.dur && p.ts < s.ts + s.dur),
      );
      // across both jobs at most lanes + synthesis_lookahead = 2 partitions are in flight (from the
      // start of a witness to the end of its proof): witnesses are made as fast as the lane takes them
      const intervals: [number, number][] = [];
      for (const pid of new Set(synth.map((e: any) => e.pid))) {
        const ss = synth.filter((e: any) => e.pid === pid).sort((x: any, y: any) => x.ts - y.ts);
        const ps = prove.filter((e: any) => e.pid === pid).sort((x: any, y: any) => x.ts - y.ts);
        assert.equal(ss.length, ps.length);
        ss.forEach((e: any, k: number) => intervals.push([e.ts, ps[k].ts + ps[k].dur]));
      }
      const maxInFlight = Math.max(...intervals.map(([t]) => intervals.filter(([a, b]) => a <= t && t < b).length));
      assert.ok(maxInFlight <= 2, `${maxInFlight} partitions in flight at once (lanes 1 + lookahead 1)`);
      // a slot that is free is taken at once (both jobs start a partition), but slots waited for go
      // to the older job first: every partition of A starts before B's second one
      const starts = (pid: number) => synth.filter((e: any) => e.pid === pid).map((e: any) => e.ts).sort((x: number, y: number) => x - y);
      const [pa, pb] = [...new Set(synth.map((e: any) => e.pid))].sort((x: any, y: any) => starts(x)[0] - starts(y)[0]) as number[];
      assert.ok(Math.max(...starts(pa)) <= starts(pb)[1], `the first job's partitions start before the second job's second (${starts(pa)} / ${starts(pb)})`);
    }
    assert.ok(overlaps, 'a synth span of one job overlaps a prove span of the other (in one of three runs)');
  });

  test('bad PoRep requests FAIL with a message naming the problem; the daemon keeps serving', async () => {
    const c2in = await readFile(fixture('2KiB.commit2in.json'));
    const cases: [string, Msg, RegExp][] = [
      ['garbage', { vanilla_proof: Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00, 0xff]) }, /vanilla_proof/],
      ['truncated', { vanilla_proof: c2in.subarray(0, fixture.length >> 1) }, /vanilla_proof.*(JSON|json)/],
      ['empty', {}, /vanilla_proof is empty/],
      ['wrong sector size', { vanilla_proof: c2in, sector_size: 8 << 20 }, /sector_size 8388608 does not match.*2048/],
      ['wrong registered proof', { vanilla_proof: c2in, registered_proof: 6 }, /registered_proof 6 \(StackedDrg8MiBV1_1\) does not match/],
      // no parameters for the size the request names: refused before its (here 30 MiB, malformed) body is read
      ['no parameters', { vanilla_proof: Buffer.alloc(30 << 20, 0x5b), sector_size: 32 * 2 ** 30 }, /^no parameters for porep-32g: looked for /],
    ];
    // parameters "found" for the size the mismatching requests name (planning looks for them first; nothing is
    // loaded); the kind remembers a file it found: no other test of this daemon uses porep-8m
    await writeFile(join(dir, 'params', 'porep-8m.params'), '');
    for (const [what, fields, re] of cases) {
      const t0 = performance.now();
      const r = (await rpc.call('Prove', { submit: { proof_kind: 1, ...fields } })).result;
      assert.equal(r.status, STATUS.FAILED, what);
      assert.match(r.error_message, re, what);
      if (what === 'no parameters') assert.ok(performance.now() - t0 < 5000, `${what}: ${performance.now() - t0} ms`);
    }
    // a value outside the ProofKind enum is refused outright (INVALID_ARGUMENT), no job made
    await assert.rejects(rpc.call('Prove', { submit: { proof_kind: 77, vanilla_proof: c2in } }), (e: any) => e.code === grpc.status.INVALID_ARGUMENT && /unknown proof_kind/.test(e.details));
    for (const [kind, re] of [
      [2, /comm_r_old must be 32 bytes, got 0/],
      [3, /registered_proof 0 is StackedDrgWinning2KiBV1, not a WindowPoSt proof/],
      [4, /randomness must be 32 bytes, got 0/],
    ] as const) {
      const r = (await rpc.call('Prove', { submit: { proof_kind: kind } })).result;
      assert.equal(r.status, STATUS.FAILED);
      assert.match(r.error_message, re);
    }
    const ok = (await rpc.call('Prove', { submit: demoReq({}, { seed: 99, partitions: 1 }) })).result;
    assert.equal(ok.status, STATUS.COMPLETED);
  });

  test('GetStatus, GetMetrics, PreloadSRS, EvictSRS, and the HTTP status server', async () => {
    const st = await rpc.call('GetStatus', {});
    const kinds = st.queues.map((q: any) => q.proof_kind);
    for (const k of ['porep-c2', 'snap-update', 'window-post', 'winning-post', 'demo']) assert.ok(kinds.includes(k), k);
    assert.ok(st.total_proofs_completed >= 1);
    assert.ok(st.total_proofs_failed >= 1);
    assert.ok(st.pinned_memory_limit_bytes > 0);
    assert.equal(st.gpus.length, 1);
    assert.ok(st.loaded_srs.some((s: any) => s.circuit_id === `demo-${CONSTRAINTS}` && s.size_bytes > 0 && s.tier === 0));

    const m = await rpc.call('GetMetrics', {});
    assert.match(m.prometheus_text, /kiln_stage_duration_seconds_bucket\{[^}]*stage="prove"/);
    assert.match(m.prometheus_text, /kiln_proofs_completed_total\{proof_kind="demo"\} \d+/);
    assert.match(m.prometheus_text, /kiln_proofs_failed_total\{proof_kind="porep-c2"\} \d+/);
    assert.match(m.prometheus_text, /kiln_queue_pending/);
    assert.match(await http(daemon, '/metrics'), /kiln_prover_phase_seconds/);

    const p1 = await rpc.call('PreloadSRS', { circuit_id: 'demo-1500' });
    assert.equal(p1.already_loaded, false);
    assert.ok(p1.load_time_ms > 0);
    assert.equal((await rpc.call('PreloadSRS', { circuit_id: 'demo-1500' })).already_loaded, true);
    const e1 = await rpc.call('EvictSRS', { circuit_id: 'demo-1500' });
    assert.equal(e1.was_loaded, true);
    assert.ok(e1.freed_bytes > 0);
    assert.deepEqual(await rpc.call('EvictSRS', { circuit_id: 'demo-1500' }), { was_loaded: false, freed_bytes: 0 });
    await assert.rejects(rpc.call('PreloadSRS', { circuit_id: 'nonsense-1g' }), (e: any) => e.code === grpc.status.NOT_FOUND);
    await assert.rejects(rpc.call('PreloadSRS', { circuit_id: 'porep-2k' }), /no parameters for porep-2k/);

    const status = await http(daemon, '/status');
    for (const k of ['queues', 'jobs', 'srs', 'memory', 'lanes', 'totals']) assert.ok(k in status, k);
    assert.ok(status.jobs.some((j: any) => j.partitions.total === 2 && j.partitions.done === 2));
  });
});

describe('daemon lifecycle', () => {
  test('TCP on an ephemeral port; a stale unix socket is replaced; close() stops serving', async () => {
    const d2dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-test2-'));
    try {
      const { createServer } = await import('node:net');
      const { rename } = await import('node:fs/promises');
      // make a stale socket file: bind, move the file away from under the server, close
      const sock = join(d2dir, 'stale.sock');
      const s = createServer();
      await new Promise<void>((r) => s.listen(join(d2dir, 'tmp.sock'), r));
      await rename(join(d2dir, 'tmp.sock'), sock);
      await new Promise<void>((r) => s.close(() => r()));
      assert.ok((await stat(sock)).isSocket());
      const d = await runDaemon({ listen: `unix://${sock}`, logLevel: 'silent', handleSignals: false, configure: (c) => testDaemonDirs(c, d2dir) });
      const c = makeClient(d.grpcAddress);
      assert.ok((await c.call('GetStatus', {})).uptime_seconds >= 0);
      c.close();
      await d.close();
      const d3 = await runDaemon({ listen: '127.0.0.1:0', logLevel: 'silent', handleSignals: false, configure: (c) => testDaemonDirs(c, d2dir) });
      assert.match(d3.grpcAddress, /^127\.0\.0\.1:\d+$/);
      assert.ok(!d3.grpcAddress.endsWith(':0'));
      const c3 = makeClient(d3.grpcAddress);
      assert.equal((await c3.call('GetStatus', {})).queues.length, 4);
      await d3.close();
      await assert.rejects(c3.call('GetStatus', {}, 1000));
      c3.close();
    } finally {
      await rm(d2dir, { recursive: true, force: true });
    }
  });
});

/**
 * GetStatus round trips while `pending` is unsettled: how many answers came back before it settled (at most
 * `enough`; it stops asking then) and each one's latency (ms, printed, not asserted: a latency bound belongs in a
 * benchmark). The daemon runs in this process: work that held its event loop would hold these answers too, so
 * answers that arrive while the work is still pending show it runs elsewhere (a worker thread), whatever the
 * machine's load.
 */
async function answersWhilePending(c: ReturnType<typeof makeClient>, pending: Promise<unknown>, enough = Infinity): Promise<{ answers: number; settled: boolean; lat: number[] }> {
  const lat: number[] = [];
  let settled = false;
  let answers = 0;
  pending.then(() => (settled = true), () => (settled = true));
  while (!settled && answers < enough) {
    const t0 = performance.now();
    await c.call('GetStatus', {});
    lat.push(performance.now() - t0);
    if (!settled) answers++;
    await new Promise((r) => setTimeout(r, 5));
  }
  return { answers, settled, lat };
}
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const latencyLine = (lat: number[]): string =>
  `${lat.length} calls, p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms`;

/** Preloads `circuitId` in `d` (dev parameters allowed) and asks GetStatus while its shape compiles: the compile
 *  (the kind's own promise, shared with the preload) is still pending after `enough` answers. */
async function statusWhileShapeCompiles(d: Awaited<ReturnType<typeof runDaemon>>, circuitId: string, enough = 20): Promise<void> {
  const c = makeClient(d.grpcAddress);
  try {
    const preload = c.call('PreloadSRS', { circuit_id: circuitId }, 600_000);
    preload.catch(() => {});
    const provider = d.engine.srs.provider(circuitId);
    assert.ok(provider, `a provider knows ${circuitId}`);
    const compiling = provider.compiled(circuitId);
    const { answers, settled, lat } = await answersWhilePending(c, compiling, enough);
    console.log(`# GetStatus while the ${circuitId} shape compiles: ${latencyLine(lat)}`);
    assert.ok(!settled && answers >= enough, `${answers} GetStatus answers before the ${circuitId} shape was compiled`);
  } finally {
    c.close();
  }
}

describe('no blocking work on the event loop', () => {
  test('a large request arrives in shared memory, joined frame by frame rather than copied whole on the event loop (src/server/stream-decoder.ts)', async () => {
    let seen: Uint8Array | undefined;
    daemon.engine.registerPlanner({
      kind: 2000,
      name: 'spy',
      defaultPriority: 2,
      plan: async (req) => {
        seen = req.vanillaProof;
        throw new PlanError('seen');
      },
    });
    const body = Buffer.alloc(24 << 20);
    for (let i = 0; i < body.length; i += 4096) body[i] = i >> 12;
    const r = (await rpc.call('Prove', { submit: { proof_kind: 2000, request_id: 'large-spied', vanilla_proof: body } })).result;
    assert.equal(r.status, STATUS.FAILED);
    assert.equal(r.error_message, 'seen');
    assert.ok(seen!.buffer instanceof SharedArrayBuffer, 'in shared memory: it reaches worker threads without a copy');
    assert.ok(Buffer.from(seen!.buffer, seen!.byteOffset, seen!.byteLength).equals(body));
  });

  test('PreloadSRS porep-32g without parameters answers FAILED_PRECONDITION before compiling the circuit', async () => {
    const t0 = performance.now();
    const preload = rpc.call('PreloadSRS', { circuit_id: 'porep-32g' });
    await assert.rejects(preload, (e: any) => e.code === grpc.status.FAILED_PRECONDITION && /no parameters for porep-32g/.test(e.details));
    const ms = performance.now() - t0;
    console.log(`# PreloadSRS porep-32g without parameters: ${ms.toFixed(0)} ms`);
    // compiling the 32 GiB shape first (130 M constraints) would take many minutes here: the refusal needed none
    assert.ok(ms < 60_000, `answered in ${ms} ms`);
    const shapes = join(daemon.engine.config.kiln.cache_dir, 'shapes');
    assert.ok(!existsSync(shapes) || !readdirSync(shapes).some((f) => f.startsWith('porep-32g')), 'no porep-32g shape recorded');
  });

  test('a PoRep shape compiles in a worker thread: GetStatus keeps answering meanwhile', async () => {
    const d3dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-shape-'));
    const d = await runDaemon({
      listen: `unix://${join(d3dir, 'k.sock')}`,
      logLevel: 'silent',
      handleSignals: false,
      shutdownGraceSeconds: 1,
      configure: (c) => {
        testDaemonDirs(c, d3dir);
        c.srs.dev_params = true; // parameters can be had: the 2 KiB shape (2.7 M constraints) is compiled first
      },
    });
    try {
      await statusWhileShapeCompiles(d, 'porep-2k');
    } finally {
      await d.close(); // terminates the compiling worker
      await rm(d3dir, { recursive: true, force: true });
    }
  });

  test('a PoSt shape (wpost-512m) compiles in a worker thread: GetStatus keeps answering meanwhile', async () => {
    const d4dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-post-shape-'));
    const d = await runDaemon({
      listen: `unix://${join(d4dir, 'k.sock')}`,
      logLevel: 'silent',
      handleSignals: false,
      shutdownGraceSeconds: 1,
      configure: (c) => {
        testDaemonDirs(c, d4dir);
        c.srs.dev_params = true; // parameters can be had: the shape is compiled first (~2 s here)
      },
    });
    try {
      await statusWhileShapeCompiles(d, 'wpost-512m');
    } finally {
      await d.close(); // terminates the compiling worker
      await rm(d4dir, { recursive: true, force: true });
    }
  });

  test('a full 2,349-sector 32 GiB WindowPoSt request is validated off the event loop: GetStatus keeps answering meanwhile', async () => {
    // one synthetic 32 GiB sector (V1_1: its challenges depend on the sector id and challenge number only),
    // 2,349 times: every element is parsed and checked (paths, challenges, comm_r) and its public inputs derived
    const info = postProofById(13)!;
    const randomness = new Uint8Array(32).fill(5);
    randomness[31] = 0x0f;
    const one = synthPoSt({ info, randomness, sectors: 1, firstSectorId: 42n, threads: 1 }).elements[0]!;
    const vanilla = Array.from({ length: info.sectorCount }, () => Buffer.from(one));
    vanilla[info.sectorCount - 1]![8] ^= 1; // the last sector's comm_r: the whole request is validated before it fails
    const submit = { proof_kind: 3, registered_proof: info.id, sector_size: 0, vanilla_proofs: vanilla, randomness: Buffer.from(randomness), partition_index: 0 };
    // parameters "found" (planning looks for them first; nothing is loaded: the request fails its validation)
    const params = join(dir, 'params', 'wpost-32g.params');
    await writeFile(params, '');
    const t0 = performance.now();
    const prove = rpc.call('Prove', { submit }, 120_000);
    const { answers, lat } = await answersWhilePending(rpc, prove);
    const res = await prove.then((r) => r.result, (e: any) => ({ status: -1, error_message: String(e.details ?? e.message) }));
    const ms = performance.now() - t0;
    await rm(params);
    console.log(`# GetStatus while a 2349-sector wpost-32g request is validated (${ms.toFixed(0)} ms): ${latencyLine(lat)}`);
    assert.match(res.error_message, /proof 2348\): comm_r is not Poseidon/, 'the request was validated to its last sector');
    assert.ok(answers >= 5, `${answers} GetStatus answers while the request was validated`);
  });

  test('a SnapDeals shape (snap-8m: ~30 s here) compiles in a worker thread: GetStatus keeps answering meanwhile', async () => {
    const d5dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-snap-shape-'));
    const d = await runDaemon({
      listen: `unix://${join(d5dir, 'k.sock')}`,
      logLevel: 'silent',
      handleSignals: false,
      shutdownGraceSeconds: 1,
      configure: (c) => {
        testDaemonDirs(c, d5dir);
        c.srs.dev_params = true; // parameters can be had: the shape is compiled first
      },
    });
    try {
      await statusWhileShapeCompiles(d, 'snap-8m');
    } finally {
      await d.close(); // terminates the compiling worker
      await rm(d5dir, { recursive: true, force: true });
    }
  });

  test('a 32 GiB SnapDeals request (16 × 561,768 B partition proofs) is validated off the event loop: GetStatus keeps answering meanwhile', async () => {
    // a synthetic update (region-uniform trees): every partition proof is parsed and checked as vanilla.rs does
    const info = snapProofById(3)!;
    const p = info.params;
    const u = syntheticSnapUpdate(p, snapHDefault(p.sectorNodes), 9n);
    const vanilla = Array.from({ length: p.partitionCount }, (_, k) => Buffer.from(serializeSnapPartitionProof(snapPartitionProof(p, k, u.commRNew, u.trees), p)));
    assert.equal(vanilla[0]!.length, 561_768);
    const le = (x: bigint): Buffer => {
      const b = Buffer.alloc(32);
      for (let i = 0; i < 32; i++) b[i] = Number((x >> BigInt(8 * i)) & 0xffn);
      return b;
    };
    vanilla[15] = vanilla[14]!; // the last partition's proof is another's: the whole request is validated before it fails
    const submit = { proof_kind: 2, registered_proof: info.id, sector_size: 0, vanilla_proofs: vanilla, comm_r_old: le(u.commROld), comm_d_new: le(u.commDNew), comm_r_new: le(u.commRNew) };
    // parameters "found" (planning looks for them first; nothing is loaded: the request fails its validation)
    const params = join(dir, 'params', 'snap-32g.params');
    await writeFile(params, '');
    const t0 = performance.now();
    const prove = rpc.call('Prove', { submit }, 300_000);
    const { answers, lat } = await answersWhilePending(rpc, prove);
    const res = await prove.then((r) => r.result, (e: any) => ({ status: -1, error_message: String(e.details ?? e.message) }));
    const ms = performance.now() - t0;
    await rm(params);
    console.log(`# GetStatus while a 16-partition snap-32g request is validated (${ms.toFixed(0)} ms): ${latencyLine(lat)}`);
    assert.match(res.error_message, /vanilla_proofs\[15\]/, 'the request was validated to its last partition');
    // validated on the event loop, the request held GetStatus back until it was done (15 answers in 48 s here,
    // each after a chunk); off it, thousands
    assert.ok(answers >= 50, `${answers} GetStatus answers while the request was validated (${ms.toFixed(0)} ms)`);
  });
});

describe('limits', () => {
  test('request_id, priority and proof_kind are checked (INVALID_ARGUMENT); timeouts of any u64 wait', async () => {
    const bad = (m: Msg, re: RegExp) =>
      assert.rejects(rpc.call('SubmitProof', m), (e: any) => e.code === grpc.status.INVALID_ARGUMENT && re.test(e.details));
    await bad(demoReq({ request_id: 'x'.repeat(257) }), /request_id is 257 bytes; at most 256/);
    await bad(demoReq({ priority: 9 }), /priority 9 is not a Priority/);
    await bad(demoReq({ proof_kind: 1001 }), /proof_kind 1001 is not a ProofKind/);
    assert.ok((await rpc.call('SubmitProof', demoReq({ request_id: 'y'.repeat(256) }, { seed: 1, partitions: 1 }))).job_id);
    // 2^63 and 2^64 − 1 ms: the wait is chunked, the job's answer comes (no TIMEOUT after 23 ms)
    for (const t of ['9223372036854775808', '18446744073709551615']) {
      const { job_id } = await rpc.call('SubmitProof', demoReq({}, { seed: 7, partitions: 3 }));
      const r = await rpc.call('AwaitProof', { job_id, timeout_ms: t });
      assert.equal(r.status, STATUS.COMPLETED, `${t}: ${r.error_message}`);
    }
  });

  test('u64 fields are named exactly: one beyond 2^53 − 1 is refused (INVALID_ARGUMENT) with its digits; 2^53 − 1 reaches the planner exactly', async () => {
    const cases = [
      ['registered_proof', '18446744073709551615'],
      ['sector_size', '9007199254740993'],
      ['sector_number', '18446744073709551615'],
      ['miner_id', '9223372036854775807'],
    ];
    for (const [field, v] of cases) {
      await assert.rejects(rpc.call('SubmitProof', { proof_kind: 4, [field]: v }), (e: any) => {
        assert.equal(e.code, grpc.status.INVALID_ARGUMENT, `${field}: ${e.details}`);
        assert.equal(e.details, `${field} ${v} is above 2^53 − 1 (9007199254740991), the largest value kiln takes in a proof request`);
        return true;
      });
    }
    const r = (await rpc.call('Prove', { submit: { proof_kind: 4, registered_proof: '9007199254740991' } })).result;
    assert.equal(r.status, STATUS.FAILED);
    assert.match(r.error_message, /^registered_proof 9007199254740991 is not a RegisteredPoStProof/);
  });

  test('deep nesting and huge values get a short, clear error; /jobs/%ZZ is 400; /status is one page', async () => {
    const deep = (await rpc.call("Prove", { submit: { proof_kind: DEMO, vanilla_proof: Buffer.from("[".repeat(200_000)) } })).result;
    assert.equal(deep.status, STATUS.FAILED);
    assert.match(deep.error_message, /nested deeper than 64 levels/);
    const c1deep = (await rpc.call('Prove', { submit: { proof_kind: 1, vanilla_proof: Buffer.from('{"a":'.repeat(100_000)) } })).result;
    assert.match(c1deep.error_message, /nested deeper than 64 levels/);
    const huge = (await rpc.call('Prove', { submit: demoReq({}, { seed: 'z'.repeat(5_000_000) }) })).result;
    assert.equal(huge.status, STATUS.FAILED);
    assert.ok(huge.error_message.length < 4200, `${huge.error_message.length} characters`);
    assert.match(huge.error_message, /more characters cut\]$/);
    const res = await fetch(`http://${daemon.httpAddress}/jobs/%ZZ`);
    assert.equal(res.status, 400);
    const st = await http(daemon, '/status?limit=3');
    assert.equal(st.jobs.length, 3);
    assert.ok(st.jobCounts.total > 3);
    assert.equal(st.jobsPage.limit, 3);
    assert.ok(st.jobCounts.byState.completed >= 1);
    assert.equal((await http(daemon, '/status?limit=100000')).jobsPage.limit, 500);
  });

  test('overload answers RESOURCE_EXHAUSTED with the configured limit; shutdown answers UNAVAILABLE', async () => {
    const d4dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-limits-'));
    const d = await runDaemon({
      listen: `unix://${join(d4dir, 'k.sock')}`,
      logLevel: 'silent',
      handleSignals: false,
      shutdownGraceSeconds: 3,
      demo: { constraints: CONSTRAINTS, partitions: 2, cacheDir: join(dir, 'params') },
      configure: (c) => {
        testDaemonDirs(c, join(dir, 'params'));
        c.gpus.gpu_workers_per_device = 1;
        c.pipeline.enabled = false; // one job in flight
        c.daemon.max_queued_jobs = 2;
      },
    });
    const c = makeClient(d.grpcAddress);
    try {
      const ids: string[] = [];
      let refused: any;
      for (let i = 0; i < 6 && refused === undefined; i++) {
        try {
          ids.push((await c.call('SubmitProof', demoReq({}, { seed: 100 + i, partitions: 4 }))).job_id);
        } catch (e) {
          refused = e;
        }
      }
      assert.ok(refused, 'a submission was refused');
      assert.equal(refused.code, grpc.status.RESOURCE_EXHAUSTED);
      assert.match(refused.details, /max_queued_jobs\) is 2/);
      const closing = d.close();
      await new Promise((r) => setTimeout(r, 20));
      await assert.rejects(c.call('SubmitProof', demoReq({}, { seed: 1 })), (e: any) => e.code === grpc.status.UNAVAILABLE);
      await assert.rejects(c.call('PreloadSRS', { circuit_id: 'demo-100' }), (e: any) => e.code === grpc.status.UNAVAILABLE);
      await closing;
    } finally {
      c.close();
      await d.close();
      await rm(d4dir, { recursive: true, force: true });
    }
  });
});

describe('access control', () => {
  test('TCP with a token: calls without it (or with another) are UNAUTHENTICATED, with it served; HTTP checks Host and hides job details', async () => {
    const d5dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-auth-'));
    const warnings: string[] = [];
    const { pino } = await import('pino');
    const logger = pino({ level: 'warn' }, { write: (s: string) => void keepListenWarning(warnings, JSON.parse(s).msg) });
    const d = await runDaemon({
      listen: '127.0.0.1:0',
      httpListen: ':0', // loopback by default
      handleSignals: false,
      logger,
      configure: (c) => {
        testDaemonDirs(c, d5dir);
        c.daemon.auth_token = 's3cret-token';
      },
    });
    const c = makeClient(d.grpcAddress);
    try {
      await assert.rejects(c.call('GetStatus', {}), (e: any) => e.code === grpc.status.UNAUTHENTICATED && /bearer token/.test(e.details));
      await assert.rejects(c.call('SubmitProof', { proof_kind: 1 }), (e: any) => e.code === grpc.status.UNAUTHENTICATED);
      const callWith = (tok: string) =>
        new Promise<Msg>((resolve, reject) => {
          const md = new grpc.Metadata();
          md.set('authorization', `Bearer ${tok}`);
          const def = protoLoader.loadSync(join(ROOT, 'proto', 'cuzk.proto'), { keepCase: true, longs: Number, enums: Number, defaults: true });
          const pkg = grpc.loadPackageDefinition(def) as any;
          const cl = new pkg.cuzk.v1.ProvingEngine(d.grpcAddress, grpc.credentials.createInsecure());
          cl.GetStatus({}, md, (err: Error | null, res: Msg) => {
            cl.close();
            err ? reject(err) : resolve(res);
          });
        });
      await assert.rejects(callWith('wrong'), (e: any) => e.code === grpc.status.UNAUTHENTICATED);
      assert.ok((await callWith('s3cret-token')).queues.length >= 4);
      assert.match(d.httpAddress!, /^127\.0\.0\.1:\d+$/);
      assert.deepEqual(warnings, [], 'loopback listeners: no warning');
      const get = (path: string, headers: Record<string, string> = {}) => fetch(`http://${d.httpAddress}${path}`, { headers });
      // Host allow-list (DNS rebinding): fetch cannot set Host, node:http can
      const { request } = await import('node:http');
      const withHost = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const [hn, port] = d.httpAddress!.split(':');
          const r = request({ host: hn, port: Number(port), path: '/status', headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode!);
          });
          r.on('error', reject);
          r.end();
        });
      assert.equal(await withHost('evil.example'), 403);
      assert.equal(await withHost('evil.example:80'), 403);
      assert.equal(await withHost('localhost:1234'), 200);
      assert.equal(await withHost('[::1]:1'), 200);
      const st = await (await get('/status')).json();
      assert.ok(!('jobs' in st) && /Bearer/.test(st.jobsHidden) && st.jobCounts !== undefined);
      assert.equal((await get('/jobs/abc')).status, 401);
      assert.equal((await get('/trace')).status, 401);
      assert.equal((await get('/jobs/abc', { authorization: 'Bearer s3cret-token' })).status, 404);
      assert.ok(Array.isArray((await (await get('/status', { authorization: 'Bearer s3cret-token' })).json()).jobs));
      assert.equal((await get('/metrics')).status, 200);
      // the bench client: --token-file sends the token; without it the daemon refuses
      const { execFile } = await import('node:child_process');
      const { writeFile } = await import('node:fs/promises');
      await writeFile(join(d5dir, 'token'), 's3cret-token\n');
      const kiln = (args: string[]) =>
        new Promise<{ code: number; out: string }>((resolve) =>
          execFile(process.execPath, [join(ROOT, 'dist/src/cli/main.js'), 'bench', '--addr', d.grpcAddress, ...args, 'status'], (err, stdout, stderr) =>
            resolve({ code: err ? Number((err as any).code ?? 1) : 0, out: stdout + stderr }),
          ),
        );
      const withToken = await kiln(['--token-file', join(d5dir, 'token')]);
      assert.equal(withToken.code, 0, withToken.out);
      const without = await kiln([]);
      assert.notEqual(without.code, 0);
      assert.match(without.out, /UNAUTHENTICATED|bearer token/);
    } finally {
      c.close();
      await d.close();
    }
    // a non-loopback listener without credentials gets a loud warning
    warnings.length = 0;
    const d2 = await runDaemon({ listen: '0.0.0.0:0', httpListen: '', handleSignals: false, logger, configure: (c) => testDaemonDirs(c, d5dir) });
    await d2.close();
    assert.ok(warnings.some((w) => /reachable from other machines, WITHOUT TLS OR A TOKEN/.test(w)), warnings.join('\n'));
    await rm(d5dir, { recursive: true, force: true });
  });

  /** A daemon of the access-control tests: its warnings collected, no demo kind. */
  async function listening(o: { listen: string; http: string; token?: string }, warnings: string[]): Promise<Daemon> {
    const { pino } = await import('pino');
    const logger = pino({ level: 'warn' }, { write: (s: string) => void keepListenWarning(warnings, JSON.parse(s).msg) });
    return runDaemon({ listen: o.listen, httpListen: o.http, handleSignals: false, logger, configure: (c) => (testDaemonDirs(c, dir), (c.daemon.auth_token = o.token ?? '')) });
  }

  test('":PORT" is loopback (127.0.0.1) for gRPC and HTTP alike', async () => {
    const warnings: string[] = [];
    const d = await listening({ listen: ':0', http: ':0' }, warnings);
    try {
      assert.match(d.grpcAddress, /^127\.0\.0\.1:\d+$/);
      assert.match(d.httpAddress!, /^127\.0\.0\.1:\d+$/);
      assert.deepEqual(warnings, []);
      const c = makeClient(d.grpcAddress);
      assert.ok((await c.call('GetStatus', {})).queues.length >= 4);
      c.close();
    } finally {
      await d.close();
    }
  });

  test('the HTTP status server has no TLS: with a token, a status_listen other machines reach is refused; without one, warned', async () => {
    const warnings: string[] = [];
    for (const http of ['0.0.0.0:0', '[::]:0']) {
      // (a daemon that starts all the same is closed, then the test fails)
      const refused = await listening({ listen: '127.0.0.1:0', http, token: 's3cret' }, warnings).then(
        (d) => d.close().then(() => undefined),
        (e: Error) => e,
      );
      assert.ok(refused instanceof Error, `status_listen ${http} with a token: the daemon started`);
      assert.match(refused.message, new RegExp(`^config daemon\\.status_listen = "${http.replace(/[[\]]/g, '\\$&')}" is reachable from other machines, and the HTTP status server has no TLS: the bearer token`));
    }
    // loopback with the token: served; another interface without one: served, with a warning
    await (await listening({ listen: '127.0.0.1:0', http: '127.0.0.1:0', token: 's3cret' }, warnings)).close();
    const open = await listening({ listen: '127.0.0.1:0', http: '0.0.0.0:0' }, warnings);
    await open.close();
    assert.match(open.httpAddress!, /^0\.0\.0\.0:\d+$/);
    assert.ok(warnings.some((w) => /reachable from other machines and WITHOUT A TOKEN/.test(w)), warnings.join('\n'));
  });

  test('TLS from config: a client trusting the certificate is served, a plaintext one is not', async () => {
    const d6dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-tls-'));
    const { execFileSync } = await import('node:child_process');
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout', join(d6dir, 'key.pem'), '-out', join(d6dir, 'cert.pem')], { stdio: 'ignore' });
    } catch {
      assert.fail('openssl is needed to make a test certificate');
    }
    const d = await runDaemon({
      listen: '127.0.0.1:0',
      httpListen: '',
      logLevel: 'silent',
      handleSignals: false,
      configure: (c) => {
        testDaemonDirs(c, d6dir);
        c.daemon.tls_cert = join(d6dir, 'cert.pem');
        c.daemon.tls_key = join(d6dir, 'key.pem');
      },
    });
    try {
      const def = protoLoader.loadSync(join(ROOT, 'proto', 'cuzk.proto'), { keepCase: true, longs: Number, enums: Number, defaults: true });
      const pkg = grpc.loadPackageDefinition(def) as any;
      const ca = await readFile(join(d6dir, 'cert.pem'));
      const call = (creds: grpc.ChannelCredentials) =>
        new Promise<Msg>((resolve, reject) => {
          const cl = new pkg.cuzk.v1.ProvingEngine(d.grpcAddress, creds);
          cl.GetStatus({}, { deadline: Date.now() + 5000 }, (err: Error | null, res: Msg) => {
            cl.close();
            err ? reject(err) : resolve(res);
          });
        });
      assert.ok((await call(grpc.credentials.createSsl(ca))).queues.length >= 4);
      await assert.rejects(call(grpc.credentials.createInsecure()));
    } finally {
      await d.close();
      await rm(d6dir, { recursive: true, force: true });
    }
  });
});
