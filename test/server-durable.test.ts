/**
 * Durable jobs, end to end: the real `kiln daemon` CLI in a child process with a job journal
 * ([daemon] state_dir), an independent client loaded from proto/cuzk.proto, `kill -9` of the daemon
 * while it proves, a restart, and AwaitProof on the ids it had accepted: the interrupted job and the
 * one queued behind it finish, and their proofs verify (checked here with the reference backend and
 * the development parameters the daemon cached, not by the daemon). Then a daemon started over a
 * journal of 60 unfinished 2 KiB PoRep jobs: it answers at once and plans them again behind.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { selectBackend } from '../src/backend/select.js';
import { decodeProofs, loadOrCreateDevParams, prepareVerifyingKey, verifyProof } from '../src/groth16/index.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { recordShape } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { Journal, decodeRequest, encodeRequest } from '../src/engine/journal.js';
import { Priority, ProofKind, proofRequest } from '../src/engine/types.js';
import { runDaemon } from '../src/server/daemon.js';
import { fixture, repoRoot, testDaemonDirs } from './support.js';

type Msg = Record<string, any>;
const STATUS = { COMPLETED: 1, FAILED: 2, CANCELLED: 3, TIMEOUT: 4 };
const CONSTRAINTS = 16384;
const DEMO = 1000;

function client(address: string) {
  const def = protoLoader.loadSync(join(repoRoot, 'proto', 'cuzk.proto'), { keepCase: true, longs: Number, enums: Number, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const c = new pkg.cuzk.v1.ProvingEngine(address, grpc.credentials.createInsecure());
  return {
    call: (m: string, req: Msg, deadlineMs = 120_000): Promise<Msg> =>
      new Promise((resolve, reject) => c[m](req, { deadline: Date.now() + deadlineMs }, (err: Error | null, res: Msg) => (err ? reject(err) : resolve(res)))),
    close: () => c.close(),
  };
}

const dirs: string[] = [];
const children: ChildProcess[] = [];
after(async () => {
  for (const ch of children) if (ch.exitCode === null && ch.signalCode === null) ch.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function startDaemon(dir: string): { child: ChildProcess; log: () => string } {
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'dist/src/cli/main.js'), 'daemon', '--config', join(dir, 'kiln.toml'), '--listen', `unix://${join(dir, 'kiln.sock')}`, '--demo-kind', String(CONSTRAINTS), '--demo-cache', join(dir, 'demo')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  return { child, log: () => out };
}

async function ready(c: ReturnType<typeof client>, log: () => string): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    try {
      await c.call('GetStatus', {}, 1000);
      return;
    } catch {
      if (Date.now() - t0 > 60_000) throw new Error(`daemon not ready after 60 s:\n${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function verifyDemo(proof: Uint8Array, seed: number, params: Awaited<ReturnType<typeof loadOrCreateDevParams>>): boolean[] {
  const pvk = prepareVerifyingKey(params.vk);
  return decodeProofs(proof).map((p, k) => {
    const wg = new WitnessGenerator(3);
    new DemoCircuit({ constraints: CONSTRAINTS, seed: seed + k, publicInputs: 2 }).synthesize(wg);
    return verifyProof(pvk, p, wg.inputs());
  });
}

test('request files round-trip (every field, several vanilla proofs)', () => {
  const r = proofRequest({
    requestId: 'ü-1',
    proofKind: 3,
    sectorSize: 2048,
    registeredProof: 5,
    priority: 4,
    vanillaProof: new Uint8Array([1, 2, 3]),
    vanillaProofs: [new Uint8Array([4]), new Uint8Array(0), new Uint8Array([5, 6])],
    sectorNumber: 7,
    minerId: 1001,
    randomness: new Uint8Array(32).fill(9),
    partitionIndex: 2,
    commDNew: new Uint8Array([8]),
  });
  assert.deepEqual(decodeRequest(encodeRequest(r)), r);
  const bad = encodeRequest(r);
  bad[20] ^= 1;
  assert.throws(() => decodeRequest(bad), /checksum/);
});

test('kill -9 during a proof: after a restart the accepted jobs finish and AwaitProof returns verified proofs', { timeout: 600_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-durable-'));
  dirs.push(dir);
  await writeFile(
    join(dir, 'kiln.toml'),
    [
      '[daemon]',
      `state_dir = "${join(dir, 'state')}"`,
      '[srs]',
      `param_cache = "${join(dir, 'params')}"`,
      '[gpus]',
      'gpu_workers_per_device = 1',
      '[synthesis]',
      'threads = 1',
      '[pipeline]',
      'enabled = false',
      '[logging]',
      'level = "info"',
      '',
    ].join('\n'),
  );
  // a partial development-parameter file of a process that died mid-write: removed at start
  await mkdir(join(dir, 'demo'), { recursive: true });
  const leftover = join(dir, 'demo', `demo.params.tmp-4194303-0123456789ab`);
  await writeFile(leftover, Buffer.alloc(4096));

  let d = startDaemon(dir);
  let c = client(`unix://${join(dir, 'kiln.sock')}`);
  await ready(c, d.log);
  assert.ok(!existsSync(leftover), 'the partial file of a dead process was removed');
  // A: finishes before the crash (its proof must be served after the restart)
  const a = await c.call('SubmitProof', { proof_kind: DEMO, request_id: 'durable-a', vanilla_proof: Buffer.from(JSON.stringify({ seed: 1, partitions: 1 })) });
  const ra = await c.call('AwaitProof', { job_id: a.job_id });
  assert.equal(ra.status, STATUS.COMPLETED, ra.error_message);
  // B: many partitions, killed while proving; C: queued behind it
  const b = await c.call('SubmitProof', { proof_kind: DEMO, request_id: 'durable-b', vanilla_proof: Buffer.from(JSON.stringify({ seed: 100, partitions: 16 })) });
  const cc = await c.call('SubmitProof', { proof_kind: DEMO, request_id: 'durable-c', priority: 1, vanilla_proof: Buffer.from(JSON.stringify({ seed: 200, partitions: 2 })) });
  for (;;) {
    const st = await c.call('GetStatus', {});
    if (st.gpus.some((g: any) => g.current_job_id === b.job_id)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 300));
  const beforeKill = await c.call('AwaitProof', { job_id: b.job_id, timeout_ms: 1 });
  assert.equal(beforeKill.status, STATUS.TIMEOUT, 'B was still proving when killed');
  d.child.kill('SIGKILL');
  await new Promise((r) => d.child.once('exit', r));
  c.close();
  // a record torn by the crash (no newline): skipped with a warning
  await appendFile(join(dir, 'state', 'journal.log'), '0123456789abcdef {"t":"fin');

  const t0 = performance.now();
  d = startDaemon(dir);
  c = client(`unix://${join(dir, 'kiln.sock')}`);
  await ready(c, d.log);
  const readyMs = performance.now() - t0;
  const rb = await c.call('AwaitProof', { job_id: b.job_id, timeout_ms: '18446744073709551615' });
  const doneMs = performance.now() - t0;
  assert.equal(rb.status, STATUS.COMPLETED, rb.error_message);
  const rc = await c.call('AwaitProof', { job_id: cc.job_id });
  assert.equal(rc.status, STATUS.COMPLETED, rc.error_message);
  const ra2 = await c.call('AwaitProof', { job_id: a.job_id });
  assert.equal(ra2.status, STATUS.COMPLETED);
  assert.deepEqual(Buffer.from(ra2.proof), Buffer.from(ra.proof), 'the finished proof is kept across the restart');
  // the same request id and request map to the recovered job; another payload under it is refused,
  // for a job recovered unfinished (digest of its stored request) and a finished one (its journal record)
  assert.equal((await c.call('SubmitProof', { proof_kind: DEMO, request_id: 'durable-b', vanilla_proof: Buffer.from(JSON.stringify({ seed: 100, partitions: 16 })) })).job_id, b.job_id);
  assert.equal((await c.call('SubmitProof', { proof_kind: DEMO, request_id: 'durable-a', vanilla_proof: Buffer.from(JSON.stringify({ seed: 1, partitions: 1 })) })).job_id, a.job_id);
  for (const [rid, id] of [['durable-b', b.job_id], ['durable-a', a.job_id]]) {
    await assert.rejects(c.call('SubmitProof', { proof_kind: DEMO, request_id: rid, vanilla_proof: Buffer.from('{}') }), (e: any) => e.code === grpc.status.ALREADY_EXISTS && e.details.includes(id));
  }
  const st = await c.call('GetStatus', {});
  assert.ok(st.total_proofs_completed >= 3, `completed ${st.total_proofs_completed}`);
  assert.match(d.log(), /failed their checksum/);
  console.log(`# kill -9 recovery: daemon answering ${readyMs.toFixed(0)} ms after the restart, the interrupted 16-partition job done ${doneMs.toFixed(0)} ms after it`);

  // independent verification with the development parameters the daemon cached
  const shape = recordShape((cs) => new DemoCircuit({ constraints: CONSTRAINTS, seed: 1, publicInputs: 2 }).synthesize(cs));
  const params = await loadOrCreateDevParams(shape, selectBackend('reference'), join(dir, 'demo'));
  assert.equal(rb.proof.length, 16 * 192);
  assert.deepEqual(verifyDemo(new Uint8Array(rb.proof), 100, params), Array(16).fill(true));
  assert.deepEqual(verifyDemo(new Uint8Array(rc.proof), 200, params), [true, true]);
  assert.deepEqual(verifyDemo(new Uint8Array(ra.proof), 1, params), [true]);

  // SIGTERM: a clean stop; the journal was compacted at start (no torn line left)
  d.child.kill('SIGTERM');
  await new Promise((r) => d.child.once('exit', r));
  c.close();
  const journal = await readFile(join(dir, 'state', 'journal.log'), 'utf8');
  assert.ok(journal.endsWith('\n') && !journal.includes('"t":"fin\n'));
});

test('listen first, recover behind: with 60 unfinished 2 KiB PoRep jobs in the journal the daemon answers GetStatus and /status within 1 s; the recovering jobs answer AwaitProof and CancelProof, then are planned again (C1 checks passed) and a recovered job completes', { timeout: 600_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-listen-first-'));
  dirs.push(dir);
  const state = join(dir, 'state');
  const commit2in = await readFile(fixture('2KiB.commit2in.json'));
  // what a daemon killed with 60 PoRep jobs waiting leaves behind; a demo job first (it completes here)
  const { journal } = await Journal.open(state, { retentionMs: 3_600_000 });
  const head = (id: string, requestId: string, kind: number, priority: number, seq: number) => ({ id, requestId, kind, kindName: kind === DEMO ? 'demo' : 'porep-c2', priority, seq, submittedAt: Date.now() });
  await journal.accept(head('demo-0', 'demo-0', DEMO, Priority.CRITICAL, 0), proofRequest({ proofKind: DEMO, requestId: 'demo-0', priority: Priority.CRITICAL, vanillaProof: Buffer.from(JSON.stringify({ seed: 5, partitions: 1 })) }));
  const porep: string[] = [];
  for (let i = 1; i <= 60; i++) {
    const id = `porep-${String(i).padStart(2, '0')}`;
    await journal.accept(head(id, `req-${id}`, ProofKind.POREP_SEAL_COMMIT, Priority.NORMAL, i), proofRequest({ proofKind: ProofKind.POREP_SEAL_COMMIT, requestId: `req-${id}`, sectorSize: 2048, vanillaProof: commit2in }));
    porep.push(id);
  }
  await journal.close();

  const log: string[] = [];
  const t0 = performance.now();
  const daemon = await runDaemon({
    listen: `unix://${join(dir, 'kiln.sock')}`,
    httpListen: '127.0.0.1:0',
    handleSignals: false,
    shutdownGraceSeconds: 0,
    demo: { constraints: 1000, partitions: 1, cacheDir: join(dir, 'demo') },
    logger: (await import('pino')).pino({ level: 'info' }, { write: (m: string) => void log.push(m) }),
    configure: (c) => {
      testDaemonDirs(c, join(dir, 'params'));
      c.daemon.state_dir = state;
      c.srs.dev_params = true;
    },
  });
  const c = client(daemon.grpcAddress);
  try {
    const st = await c.call('GetStatus', {}, 5000);
    const firstMs = performance.now() - t0;
    const page = (await (await fetch(`http://${daemon.httpAddress}/status`)).json()) as { jobCounts: { byState: Record<string, number> } };
    const httpMs = performance.now() - t0;
    const recovering = page.jobCounts.byState.recovering ?? 0;
    console.log(`# 60 unfinished 2 KiB PoRep jobs in the journal: GetStatus answered ${firstMs.toFixed(0)} ms after the daemon started, /status ${httpMs.toFixed(0)} ms (${recovering} jobs still recovering then)`);
    assert.ok(firstMs < 1000, `GetStatus answered ${firstMs.toFixed(0)} ms after start`);
    assert.ok(httpMs < 1000, `/status answered ${httpMs.toFixed(0)} ms after start`);
    // the jobs are there, waiting for their C1 checks (every one of them, for all a 2-core machine does in that time)
    assert.ok(recovering > 0, `recovering: ${recovering}`);
    const pending = st.queues.find((q: any) => q.proof_kind === 'porep-c2')?.pending ?? 0;
    assert.ok(pending > 0, `GetStatus counts the recovering PoRep jobs as pending (${pending})`);
    const last = await c.call('AwaitProof', { job_id: 'porep-60', timeout_ms: 1 });
    assert.equal(last.status, STATUS.TIMEOUT);
    assert.match(last.error_message, /still (recovering|planning|queued)/);
    const cancel = await c.call('CancelProof', { job_id: 'porep-59' });
    assert.equal(cancel.was_running, false);
    assert.equal((await c.call('AwaitProof', { job_id: 'porep-59' })).status, STATUS.CANCELLED);
    // the same request_id maps to its recovering job
    assert.equal((await c.call('SubmitProof', { proof_kind: ProofKind.POREP_SEAL_COMMIT, request_id: 'req-porep-60', sector_size: 2048, vanilla_proof: commit2in })).job_id, 'porep-60');
    // a recovered job completes
    const demo = await c.call('AwaitProof', { job_id: 'demo-0' });
    assert.equal(demo.status, STATUS.COMPLETED, demo.error_message);
    // every PoRep job is planned again: its C1 checked, queued or proving, none failed or lost
    const t1 = performance.now();
    const states = () => porep.map((id) => daemon.engine.getJob(id)?.state ?? 'missing');
    while (states().some((s) => s === 'recovering' || s === 'planning')) {
      if (performance.now() - t1 > 400_000) throw new Error(`still recovering: ${states().join(',')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const recoveredMs = performance.now() - t0;
    const final = states();
    assert.equal(final[58], 'cancelled');
    final.splice(58, 1);
    assert.ok(final.every((s) => s === 'queued' || s === 'running'), final.join(','));
    for (const id of porep.filter((x) => x !== 'porep-59')) {
      const j = daemon.engine.getJob(id)!;
      assert.equal(j.work?.circuitId, 'porep-2k', id);
    }
    assert.ok(log.some((l) => l.includes('planned again')));
    console.log(`# all 60 planned again (C1 checks) ${(recoveredMs / 1000).toFixed(1)} s after start, the port open all along`);
  } finally {
    c.close();
    await daemon.close();
  }
});
