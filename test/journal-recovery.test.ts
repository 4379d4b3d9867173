/**
 * Recovery from a damaged journal (issue 30, items 4 and 7): a flipped bit in an accept or a finish
 * line, a line damaged beyond repair, a journal truncated mid-file, a journal that is a directory or
 * immutable, a 600 MB journal, the counters across restarts, and a cancellation that must survive a
 * kill -9. Jobs go through the real engine with the demo proof kind; a crash is simulated by
 * copying state_dir at the instant of the kill (what a new daemon would find on disk).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, open, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, test } from 'node:test';
import { pino } from 'pino';
import type { Backend } from '../src/backend/backend.js';
import { nativeAvailable } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import { defaultConfig } from '../src/engine/config.js';
import { Engine } from '../src/engine/engine.js';
import { Journal, type JournalOpenResult } from '../src/engine/journal.js';
import { checksum } from '../src/engine/journal-read.js';
import { AwaitStatus, ProofKind, proofRequest, type ProofRequest } from '../src/engine/types.js';
import { createDemoKind } from '../src/kinds/demo-circuit.js';
import { repoRoot, slowProver } from './support.js';

const GIB = 1024 ** 3;
const HOUR = 3_600_000;
const real = selectBackend(nativeAvailable() ? 'native' : 'reference');
const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'kiln-recovery-'));
  dirs.push(d);
  return d;
}

const demoReq = (requestId: string, seed: number, partitions = 1): ProofRequest =>
  proofRequest({ proofKind: ProofKind.KILN_DEMO, requestId, vanillaProof: Buffer.from(JSON.stringify({ seed, partitions })) });
const header = (id: string, requestId: string, seq: number) => ({ id, requestId, kind: ProofKind.KILN_DEMO, kindName: 'demo', priority: 2, seq, submittedAt: Date.now() });

/** Demo jobs job-<x> with request id req-<x>, one per letter. */
const demoJobs = (letters: string, seed = 1) => [...letters].map((x, i) => ({ id: `job-${x}`, requestId: `req-${x}`, seed: seed + i }));

/** A journal with these unfinished demo jobs (what a daemon killed before proving them leaves). */
async function journalWith(state: string, jobs: Array<{ id: string; requestId: string; seed: number }>): Promise<void> {
  const { journal } = await Journal.open(state, { retentionMs: HOUR });
  for (const [i, j] of jobs.entries()) await journal.accept(header(j.id, j.requestId, i), demoReq(j.requestId, j.seed));
  await journal.close();
}

/** An engine over `state` (demo kind, a log kept in memory), recovered and re-planned. */
async function startEngine(dir: string, state: string, backend: Backend = real): Promise<{ engine: Engine; opened: JournalOpenResult; log: Array<Record<string, unknown>> }> {
  const log: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void log.push(JSON.parse(s) as Record<string, unknown>) });
  const opened = await Journal.open(state, { retentionMs: HOUR });
  const demo = createDemoKind({ constraints: 1000, partitions: 1, cacheDir: join(dir, 'demo'), backend: real });
  const config = defaultConfig(64 * GIB);
  config.gpus.gpu_workers_per_device = 1;
  config.pipeline.enabled = false;
  const engine = new Engine({ config, backend, logger, planners: [demo.planner], providers: [demo.circuits], defaultMetrics: false, journal: opened.journal });
  await engine.recover(opened);
  return { engine, opened, log };
}

/** The journal's lines (without their newlines). */
async function lines(state: string): Promise<string[]> {
  return (await readFile(join(state, 'journal.log'), 'utf8')).split('\n').slice(0, -1);
}

/** Flips bit `bit` of the byte at `at` (an offset in the file). */
async function flip(file: string, at: number, bit: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, at);
    b[0] ^= 1 << bit;
    await fh.write(b, 0, 1, at);
  } finally {
    await fh.close();
  }
}

/** The file offset of the line that contains `needle` and the needle's offset in it. */
async function find(state: string, needle: string): Promise<{ line: number; start: number; at: number }> {
  const all = await lines(state);
  let start = 0;
  for (const [i, l] of all.entries()) {
    const k = l.indexOf(needle);
    if (k >= 0) return { line: i + 1, start, at: start + Buffer.byteLength(l.slice(0, k)) };
    start += Buffer.byteLength(l) + 1;
  }
  throw new Error(`no line with ${needle}`);
}

const warnings = (log: Array<Record<string, unknown>>, msg: RegExp) => log.filter((l) => typeof l.msg === 'string' && msg.test(l.msg));

test('one flipped bit in an accept line is repaired: the job is recovered and completes', async () => {
  const dir = await tempDir();
  const state = join(dir, 'state');
  await journalWith(state, demoJobs('ab'));
  const hit = await find(state, '"requestId":"req-a"');
  await flip(join(state, 'journal.log'), hit.at + 14, 1); // inside the request id: the line fails its checksum
  const { engine, opened, log } = await startEngine(dir, state);
  try {
    assert.equal(opened.badLines, 0);
    assert.deepEqual(opened.repaired.map((r) => `${r.line}:${r.type}:${r.jobId}`), [`${hit.line}:accept:job-a`]);
    assert.equal(opened.rebuilt.length, 0);
    assert.equal(warnings(log, /one flipped bit was repaired/).length, 1);
    for (const id of ['job-a', 'job-b']) {
      const r = await engine.await(id);
      assert.equal(r?.status, AwaitStatus.COMPLETED, `${id}: ${r?.errorMessage}`);
    }
    assert.equal(engine.getJob('job-a')?.requestId, 'req-a', 'the repaired record, not the damaged one');
  } finally {
    await engine.close(0);
  }
});

test('an accept line damaged beyond repair: the job is rebuilt from its request file (same id, request id, kind) and completes; the log names the line, the reason and the job', async () => {
  const dir = await tempDir();
  const state = join(dir, 'state');
  await journalWith(state, demoJobs('abc'));
  const hit = await find(state, '"requestId":"req-b"');
  // two damaged bytes: no single flip explains them
  await flip(join(state, 'journal.log'), hit.at + 14, 0);
  await flip(join(state, 'journal.log'), hit.at + 15, 3);
  // and a request file that is damaged too, of a job the journal never recorded: moved aside, never deleted
  await writeFile(join(state, 'requests', 'job-x'), 'KLNREQ1\ngarbage');
  const { engine, opened, log } = await startEngine(dir, state);
  try {
    for (const id of ['job-a', 'job-b', 'job-c']) {
      const r = await engine.await(id);
      assert.equal(r?.status, AwaitStatus.COMPLETED, `${id}: ${r?.errorMessage}`);
    }
    assert.equal(opened.badLines, 1);
    assert.deepEqual(opened.dropped.map((d) => [d.line, d.jobId, d.type]), [[hit.line, 'job-b', 'accept']]);
    assert.match(opened.dropped[0]!.reason, /checksum mismatch/);
    assert.deepEqual(opened.rebuilt, ['job-b']);
    const dropped = warnings(log, /record dropped/);
    assert.equal(dropped.length, 1);
    assert.equal(dropped[0]!.job, 'job-b');
    assert.equal(dropped[0]!.line, hit.line);
    assert.match(String(dropped[0]!.reason), /checksum mismatch/);
    assert.equal(warnings(log, /rebuilt from its request file/)[0]?.job, 'job-b');
    assert.deepEqual(opened.damagedRequests.map((d) => [d.id, d.movedTo]), [['job-x', join(state, 'damaged', 'job-x')]]);
    assert.ok(existsSync(join(state, 'damaged', 'job-x')));
    const b = engine.getJob('job-b')!;
    assert.equal(b.requestId, 'req-b');
    assert.equal(b.kind, ProofKind.KILN_DEMO);
    // the same request under its id maps to the rebuilt job; another payload is refused
    assert.equal((await engine.submit(demoReq('req-b', 2))).job.id, 'job-b');
    await assert.rejects(engine.submit(demoReq('req-b', 99)), /already job job-b/);
  } finally {
    await engine.close(0);
  }
});

test('a journal truncated mid-file: the unfinished jobs it lost are rebuilt from their request files, none is deleted, all complete', async () => {
  const dir = await tempDir();
  const state = join(dir, 'state');
  const jobs = demoJobs('abcde', 10);
  await journalWith(state, jobs);
  // cut in the middle of job-c's accept record: job-c, job-d and job-e lose theirs
  const hit = await find(state, '"id":"job-c"');
  await truncate(join(state, 'journal.log'), hit.at + 14);
  const opened = await Journal.open(state, { retentionMs: HOUR });
  assert.deepEqual(opened.unfinished.map((j) => j.id), jobs.map((j) => j.id));
  assert.deepEqual(opened.rebuilt, ['job-c', 'job-d', 'job-e']);
  assert.deepEqual(opened.unfinished.map((j) => j.requestId), jobs.map((j) => j.requestId));
  assert.equal(opened.badLines, 1);
  assert.equal(opened.dropped[0]?.jobId, 'job-c');
  assert.match(opened.dropped[0]!.reason, /no newline/);
  assert.deepEqual((await readdir(join(state, 'requests'))).sort(), jobs.map((j) => j.id), 'every request file is kept');
  await opened.journal.close();
  // the compaction at start wrote their accept records again: the next start needs no rebuilding
  const { engine, opened: again } = await startEngine(dir, state);
  try {
    assert.deepEqual(again.rebuilt, []);
    assert.equal(again.badLines, 0);
    for (const j of jobs) {
      const r = await engine.await(j.id);
      assert.equal(r?.status, AwaitStatus.COMPLETED, `${j.id}: ${r?.errorMessage}`);
    }
  } finally {
    await engine.close(0);
  }
});

/** A COMPLETED demo job in `state`'s journal (its finish record written, its request file removed). */
async function completedJob(dir: string, state: string): Promise<{ id: string; proof: Uint8Array }> {
  const { engine } = await startEngine(dir, state);
  try {
    const { job } = await engine.submit(demoReq('done-1', 7));
    const r = await engine.await(job.id);
    assert.equal(r?.status, AwaitStatus.COMPLETED, r?.errorMessage);
    await engine.journal!.flush();
    assert.deepEqual(await readdir(join(state, 'requests')), [], 'a finished job keeps no request file');
    return { id: job.id, proof: r!.proof };
  } finally {
    await engine.close(0);
  }
}

/** A COMPLETED job whose finish line then has these bits flipped (offsets in its proof's base64), and an engine started over it. */
async function damagedFinish(flips: Array<[number, number]>) {
  const dir = await tempDir();
  const state = join(dir, 'state');
  const done = await completedJob(dir, state);
  const hit = await find(state, '"proof":"');
  for (const [at, bit] of flips) await flip(join(state, 'journal.log'), hit.at + 9 + at, bit);
  return { state, done, hit, ...(await startEngine(dir, state)) };
}

test('one flipped bit in the finish line of a COMPLETED job is repaired: it stays COMPLETED with its proof', async () => {
  const { done, engine, opened } = await damagedFinish([[11, 2]]);
  try {
    const r = await engine.await(done.id);
    assert.equal(r?.status, AwaitStatus.COMPLETED, r?.errorMessage);
    assert.deepEqual(Buffer.from(r!.proof), Buffer.from(done.proof), 'the proof as it was written');
    assert.deepEqual(opened.repaired.map((x) => `${x.type}:${x.jobId}`), [`finish:${done.id}`]);
  } finally {
    await engine.close(0);
  }
});

test('the finish line of a COMPLETED job damaged beyond repair: FAILED saying its finish record was lost (which line), not ENOENT', async () => {
  const { state, done, hit, engine, opened, log } = await damagedFinish([
    [11, 2],
    [21, 4],
  ]);
  try {
    const r = await engine.await(done.id);
    assert.equal(r?.status, AwaitStatus.FAILED);
    assert.doesNotMatch(r!.errorMessage, /ENOENT|could not be read/);
    assert.deepEqual(opened.dropped.map((d) => [d.line, d.jobId, d.type]), [[hit.line, done.id, 'finish']]);
    assert.deepEqual(opened.lost.map((l) => l.id), [done.id]);
    assert.match(r!.errorMessage, new RegExp(`the job had finished .*its finish record \\(journal line ${hit.line}\\) is damaged: checksum mismatch.*submit the request again`));
    assert.equal(warnings(log, /result of a finished job was lost/)[0]?.job, done.id);
    assert.equal(warnings(log, /record dropped/)[0]?.job, done.id);
  } finally {
    await engine.close(0);
  }
  // the verdict is recorded: the next start reads a clean journal with the same answer
  const again = await Journal.open(state, { retentionMs: HOUR });
  assert.equal(again.badLines, 0);
  assert.deepEqual(again.finished.map((j) => `${j.id}:${j.state}`), [`${done.id}:failed`]);
  await again.journal.close();
});

test('the counters stay what they were across restarts (the compaction does not count retained jobs twice)', async () => {
  const dir = await tempDir();
  const state = join(dir, 'state');
  await completedJob(dir, state);
  for (let i = 0; i < 3; i++) {
    const o = await Journal.open(state, { retentionMs: HOUR });
    assert.deepEqual(o.totals, { completed: 1, failed: 0, cancelled: 0 }, `start ${i + 1}`);
    await o.journal.close();
  }
});

test('errors name the journal: a journal.log that is a directory (EISDIR), an immutable one (EPERM) or an unwritable state_dir (EACCES)', async () => {
  const dir = await tempDir();
  const state = join(dir, 'state');
  await mkdir(join(state, 'journal.log'), { recursive: true });
  await assert.rejects(Journal.open(state, { retentionMs: HOUR }), (e: NodeJS.ErrnoException) => e.code === 'EISDIR' && e.message.includes(join(state, 'journal.log')));
  await rm(join(state, 'journal.log'), { recursive: true });
  await completedJob(dir, state);
  const path = join(state, 'journal.log');
  const chattr = await promisify(execFile)('chattr', ['+i', path]).then(
    () => true,
    () => false,
  );
  if (!chattr) await chmod(state, 0o500); // not root: a state_dir it cannot write
  try {
    await assert.rejects(Journal.open(state, { retentionMs: HOUR }), (e: NodeJS.ErrnoException) => e.code === (chattr ? 'EPERM' : 'EACCES') && e.message.includes(path));
  } finally {
    if (chattr) await promisify(execFile)('chattr', ['-i', path]);
    else await chmod(state, 0o700);
  }
});

test('CancelProof survives a kill -9: a running job and a queued one come back CANCELLED, not proved again', async () => {
  const dir = await tempDir();
  const state = join(dir, 'state');
  // every prover step takes ≥ 400 ms more: the running job cannot end (and write its finish record) right after the cancel
  const slow = slowProver(real, 400);
  const { engine } = await startEngine(dir, state, slow);
  const crash = join(dir, 'crash');
  const ids: string[] = [];
  try {
    const running = (await engine.submit(demoReq('run-1', 1, 4))).job;
    const queued = (await engine.submit(demoReq('queue-1', 2))).job;
    while (running.partitionsDone === 0 && running.lanes.size === 0) await new Promise((r) => setTimeout(r, 10));
    ids.push(running.id, queued.id);
    assert.equal(running.state, 'running');
    assert.equal(queued.state, 'queued');
    const c1 = engine.cancel(running.id)!;
    const c2 = engine.cancel(queued.id)!;
    assert.equal(c1.wasRunning, true);
    await Promise.all([c1.recorded, c2.recorded]);
    // kill -9 now: what is on disk at this instant is what the next daemon finds
    cpSync(state, crash, { recursive: true });
    assert.ok(!running.finished, 'the running job had not ended yet (its finish record was not written)');
  } finally {
    await engine.close(0);
  }
  const recs = (await lines(crash)).map((l) => JSON.parse(l.slice(17)) as { t: string; id?: string });
  const { engine: after, opened } = await startEngine(dir, crash);
  try {
    for (const id of ids) {
      const r = await after.await(id);
      assert.equal(r?.status, AwaitStatus.CANCELLED, `${id}: ${r?.errorMessage}`);
    }
    assert.deepEqual(opened.unfinished, [], 'nothing to prove again');
    assert.ok(recs.some((r) => r.t === 'cancel'), 'a cancel record is on disk');
    assert.equal(opened.cancelled.length, 1);
    assert.equal(opened.finished.length, 2);
    assert.equal(after.totals.cancelled, 2);
    assert.deepEqual(await readdir(join(crash, 'requests')), [], 'their request files are gone');
  } finally {
    await after.close(0);
  }
});

test('a 600 MB journal (mostly finished jobs past retention) starts: read streaming, its live jobs recovered, bounded memory', { timeout: 300_000 }, async () => {
  const dir = await tempDir();
  const state = join(dir, 'state');
  await journalWith(state, [{ id: 'live-1', requestId: 'live-req-1', seed: 1 }]);
  // ~600 MB of finish records of jobs that ended two days ago (each with a 4 KB error), the live job's accept record in the middle
  const accept = (await lines(state)).find((l) => l.includes('"t":"accept"'))!;
  const old = Date.now() - 48 * HOUR;
  const pad = 'x'.repeat(4000);
  const fh = await open(join(state, 'journal.log'), 'w');
  const TARGET = 600 * 1024 * 1024;
  let written = 0;
  let n = 0;
  try {
    while (written < TARGET) {
      const batch: string[] = [];
      for (let k = 0; k < 2000; k++, n++) {
        const body = JSON.stringify({ t: 'finish', job: { ...header(`old-${n}`, `old-req-${n}`, n), submittedAt: old, state: 'failed', finishedAt: old, error: pad } });
        batch.push(`${checksum(body)} ${body}\n`);
        if (n === 70_000) batch.push(`${accept}\n`); // the live job, half way
      }
      const buf = Buffer.from(batch.join(''));
      await fh.write(buf);
      written += buf.length;
    }
  } finally {
    await fh.close();
  }
  assert.ok(written > TARGET, `${written} bytes`);
  // in a child process: its time and its peak memory are the journal's
  const script = `
    import { Journal } from ${JSON.stringify(join(repoRoot, 'dist/src/engine/journal.js'))};
    const t0 = performance.now();
    const o = await Journal.open(${JSON.stringify(state)}, { retentionMs: ${HOUR} });
    const ms = performance.now() - t0;
    await o.journal.close();
    console.log(JSON.stringify({ ms, maxRssKiB: process.resourceUsage().maxRSS, unfinished: o.unfinished.map((j) => j.id), finished: o.finished.length, bad: o.badLines, totals: o.totals, read: o.read }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout) as { ms: number; maxRssKiB: number; unfinished: string[]; finished: number; bad: number; totals: { failed: number }; read: { bytes: number; lines: number } };
  console.log(`# ${(written / 2 ** 20).toFixed(0)} MiB journal (${r.read.lines} lines) opened in ${(r.ms / 1000).toFixed(1)} s, peak RSS ${(r.maxRssKiB / 1024).toFixed(0)} MiB`);
  assert.equal(r.read.bytes, written);
  assert.deepEqual(r.unfinished, ['live-1']);
  assert.equal(r.finished, 0, 'past their retention: forgotten');
  assert.equal(r.bad, 0);
  assert.equal(r.totals.failed, n, 'every finish record counted once');
  assert.ok(r.maxRssKiB < 400 * 1024, `peak RSS ${r.maxRssKiB} KiB: the journal was not held whole`);
  assert.ok((await readFile(join(state, 'journal.log'))).length < 4096, 'compacted at start');
  assert.deepEqual(await readdir(join(state, 'requests')), ['live-1']);
});

test('a shutdown while the recovered jobs are planned again leaves them to the next start: none is recorded FAILED or CANCELLED', async () => {
  const dir = await tempDir();
  const state = join(dir, 'state');
  const jobs = Array.from({ length: 30 }, (_, i) => ({ id: `job-${i}`, requestId: `req-${i}`, seed: 100 + i }));
  await journalWith(state, jobs);
  const opened = await Journal.open(state, { retentionMs: HOUR });
  const demo = createDemoKind({ constraints: 1000, partitions: 1, cacheDir: join(dir, 'demo'), backend: real });
  const engine = new Engine({ config: defaultConfig(64 * GIB), backend: real, logger: pino({ level: 'silent' }), planners: [demo.planner], providers: [demo.circuits], defaultMetrics: false, journal: opened.journal });
  engine.restore(opened);
  assert.equal(engine.getJob('job-29')?.state, 'recovering');
  const replan = engine.replanRestored();
  await engine.close(0);
  await replan;
  const again = await Journal.open(state, { retentionMs: HOUR });
  try {
    assert.deepEqual(again.finished.filter((j) => j.state !== 'completed').map((j) => `${j.id}:${j.state}:${j.error}`), []);
    assert.equal(again.unfinished.length + again.finished.length, 30);
    assert.ok(again.unfinished.length > 0, 'the shutdown came before every job was proved');
    assert.deepEqual(again.totals, { completed: again.finished.length, failed: 0, cancelled: 0 });
  } finally {
    await again.journal.close();
  }
});
