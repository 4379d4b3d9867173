/**
 * The job journal on a full disk (issue 30, item 1): appends that hit short writes and ENOSPC leave
 * no torn record, the journal becomes degraded (new jobs refused up front, naming the reason and the
 * state_dir; finish records kept in memory), and recovers by itself once a write succeeds again;
 * a restart then reads every job back. Write errors are injected through Journal.open's `io` hook.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { nativeAvailable } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import { defaultConfig } from '../src/engine/config.js';
import { Engine } from '../src/engine/engine.js';
import { OverloadError } from '../src/engine/jobs.js';
import { Journal, JournalDegradedError, type JournalIo } from '../src/engine/journal.js';
import { AwaitStatus, ProofKind, proofRequest } from '../src/engine/types.js';
import { createDemoKind } from '../src/kinds/demo-circuit.js';

const GIB = 1024 ** 3;

/** A disk that writes `chunk` bytes per call ('short'), or one short write of 36 bytes then ENOSPC ('full'). */
function fakeDisk(): { io: JournalIo; mode: 'ok' | 'short' | 'full'; calls: number } {
  const d = {
    mode: 'ok' as 'ok' | 'short' | 'full',
    calls: 0,
    io: {
      write: async (fh, buf, offset, length) => {
        d.calls++;
        if (d.mode === 'ok') return (await fh.write(buf, offset, length, null)).bytesWritten;
        if (d.mode === 'short') return (await fh.write(buf, offset, Math.min(length, 7), null)).bytesWritten;
        if (length > 36) return (await fh.write(buf, offset, 36, null)).bytesWritten; // the 36 bytes the issue measured
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    } as JournalIo,
  };
  return d;
}

/** Every line of journal.log: whole (newline-terminated), checksummed and JSON. */
async function records(dir: string): Promise<Array<{ t: string; id?: string; job?: { id: string; state: string } }>> {
  const text = await readFile(join(dir, 'journal.log'), 'utf8');
  assert.ok(text === '' || text.endsWith('\n'), `a torn last record: ${JSON.stringify(text.slice(-60))}`);
  return text
    .split('\n')
    .slice(0, -1)
    .map((l) => {
      const body = l.slice(17);
      assert.equal(l.slice(0, 16), createHash('sha256').update(body).digest('hex').slice(0, 16), `bad checksum: ${l.slice(0, 80)}`);
      return JSON.parse(body);
    });
}

const header = (id: string, seq: number) => ({ id, requestId: '', kind: ProofKind.KILN_DEMO, kindName: 'demo', priority: 2, seq, submittedAt: Date.now() });
const req = () => proofRequest({ proofKind: ProofKind.KILN_DEMO, vanillaProof: Buffer.from('{"seed":1}') });

test('journal: short writes are continued; a short write then ENOSPC leaves no torn record, degrades, keeps the finish record, recovers', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-enospc-'));
  try {
    const disk = fakeDisk();
    const { journal } = await Journal.open(dir, { retentionMs: 3_600_000, io: disk.io, retryMs: 60_000 });
    const states: Array<string | undefined> = [];
    journal.onStateChange = (d) => states.push(d?.error);
    disk.mode = 'short';
    await journal.accept(header('a', 1), req());
    assert.ok(disk.calls > 10, 'the accept record took several short writes');
    assert.deepEqual((await records(dir)).map((r) => r.t), ['totals', 'accept']);

    disk.mode = 'full';
    await journal.finish({ ...header('a', 1), state: 'completed', finishedAt: Date.now(), proof: 'AAAA' }); // kept, not thrown
    const d = journal.degraded;
    assert.ok(d !== undefined, 'degraded after a failed append');
    assert.match(d.error, /ENOSPC/);
    assert.ok(d.error.includes(join(dir, 'journal.log')), `names the path: ${d.error}`);
    assert.equal(d.pending, 1);
    assert.equal(states.length, 1);
    // the 36 bytes written before ENOSPC were cut back: every line is whole, the last is a's accept
    const recs = await records(dir);
    assert.deepEqual(recs.map((r) => r.t), ['totals', 'accept']);
    await assert.rejects(journal.accept(header('b', 2), req()), (e: unknown) => e instanceof JournalDegradedError && /ENOSPC/.test(e.message) && e.message.includes(`state_dir ${dir}`));

    disk.mode = 'ok';
    assert.equal(await journal.retry(), true);
    assert.equal(journal.degraded, undefined);
    assert.equal(states.length, 2);
    assert.equal(states[1], undefined);
    await journal.accept(header('b', 2), req());
    assert.deepEqual((await records(dir)).map((r) => `${r.t}:${r.job?.id ?? ''}`), ['totals:', 'accept:a', 'finish:a', 'accept:b']);
    await journal.close();

    const again = await Journal.open(dir, { retentionMs: 3_600_000 });
    assert.equal(again.badLines, 0);
    assert.deepEqual(again.finished.map((j) => `${j.id}:${j.state}:${j.proof}`), ['a:completed:AAAA']);
    assert.deepEqual(again.unfinished.map((j) => j.id), ['b']);
    await again.journal.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('engine: while the journal is degraded new submits are refused (RESOURCE_EXHAUSTED), running jobs finish; after the error clears the pending records are written, submits accepted, a restart reads every job', { timeout: 300_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-enospc-engine-'));
  const state = join(dir, 'state');
  const backend = selectBackend(nativeAvailable() ? 'native' : 'reference');
  const demo = createDemoKind({ constraints: 1000, partitions: 1, cacheDir: dir, backend });
  const start = async (io?: JournalIo) => {
    const opened = await Journal.open(state, { retentionMs: 3_600_000, io, retryMs: 60_000 });
    const engine = new Engine({ config: defaultConfig(64 * GIB), backend, logger: pino({ level: 'silent' }), planners: [demo.planner], providers: [demo.circuits], defaultMetrics: false, journal: opened.journal });
    await engine.recover(opened);
    return engine;
  };
  const demoReq = (seed: number) => proofRequest({ proofKind: ProofKind.KILN_DEMO, requestId: `r${seed}`, vanillaProof: Buffer.from(`{"seed":${seed}}`) });
  const disk = fakeDisk();
  let engine = await start(disk.io);
  try {
    const a = (await engine.submit(demoReq(1))).job.id; // accepted durably
    disk.mode = 'full'; // its running and finish records hit ENOSPC
    const ra = await engine.await(a);
    assert.equal(ra?.status, AwaitStatus.COMPLETED, ra?.errorMessage);
    await engine.journal!.flush();
    const st = engine.status() as { durability: { state: string; error: string; pendingRecords: number; journal: string } };
    assert.equal(st.durability.state, 'lost');
    assert.match(st.durability.error, /ENOSPC/);
    // its finish record (and its running record, unless that was written before the disk filled) waits in memory
    assert.ok(st.durability.pendingRecords >= 1, `pending ${st.durability.pendingRecords}`);
    assert.ok(!(await records(state)).some((r) => r.t === 'finish'), 'no finish record on disk yet');
    // (b) refused up front, with the reason and the state_dir; no job made
    const before = (engine.status() as { jobCounts: { total: number } }).jobCounts.total;
    await assert.rejects(engine.submit(demoReq(2)), (e: unknown) => e instanceof OverloadError && /ENOSPC/.test(e.message) && e.message.includes(`state_dir ${state}`));
    assert.equal((engine.status() as { jobCounts: { total: number } }).jobCounts.total, before);
    // (c) space again: the next submit writes the pending records and is accepted
    disk.mode = 'ok';
    const c = (await engine.submit(demoReq(3))).job.id;
    assert.equal((engine.status() as { durability: { state: string } }).durability.state, 'ok');
    const rc = await engine.await(c);
    assert.equal(rc?.status, AwaitStatus.COMPLETED, rc?.errorMessage);
    await engine.journal!.flush();
    assert.deepEqual((await records(state)).map((r) => `${r.t}:${r.job?.id ?? r.id ?? ''}`), ['totals:', `accept:${a}`, `running:${a}`, `finish:${a}`, `accept:${c}`, `running:${c}`, `finish:${c}`]);
  } finally {
    await engine.close(0);
  }
  // (d) a restart reads both jobs back, finished, with their proofs
  engine = await start();
  try {
    const jobs = engine.status({ limit: 10 }).jobs as Array<{ id: string; state: string }>;
    assert.deepEqual(jobs.map((j) => j.state), ['completed', 'completed']);
    assert.deepEqual(engine.totals, { completed: 2, failed: 0, cancelled: 0 });
    for (const j of jobs) {
      const r = await engine.await(j.id);
      assert.equal(r?.status, AwaitStatus.COMPLETED);
      assert.ok((r?.proof?.length ?? 0) > 0, `the proof of ${j.id} came back`);
    }
  } finally {
    await engine.close(0);
    await rm(dir, { recursive: true, force: true });
  }
});
