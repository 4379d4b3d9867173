/** The bench client's subcommands against an in-process daemon (TCP, demo kind). */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { benchBatch, benchCancel, benchEvict, benchMetrics, benchPreload, benchSingle, benchStatus, benchTrace } from '../src/client/bench.js';
import { runDaemon, type Daemon } from '../src/server/daemon.js';

let dir: string;
let d: Daemon;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-bench-test-'));
  d = await runDaemon({
    listen: '127.0.0.1:0',
    httpListen: '127.0.0.1:0',
    logLevel: 'silent',
    handleSignals: false,
    demo: { constraints: 1000, partitions: 2, cacheDir: dir },
    configure: (c) => {
      c.srs.param_cache = dir;
      c.synthesis.threads = 1;
    },
  });
});

after(async () => {
  await d?.close();
  await rm(dir, { recursive: true, force: true });
});

test('bench single / batch / status / preload / evict / cancel / metrics / trace', async () => {
  const lines: string[] = [];
  const out = (l: string): void => void lines.push(l);
  const r = await benchSingle({ addr: d.grpcAddress, type: 'demo', out });
  assert.equal(r.status, 1);
  assert.ok(lines.some((l) => /^timings: total=\d+ ms \(queue=\d+, srs=\d+, synth=\d+, gpu=\d+\)$/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /^wall: \d+ ms$/.test(l)));
  assert.ok(lines.includes('proof: 384 bytes'));
  assert.ok(lines.some((l) => /^[0-9a-f]{768}$/.test(l)));

  lines.length = 0;
  const b = await benchBatch({ addr: d.grpcAddress, type: 'demo', count: 3, concurrency: 2, out });
  assert.equal(b.completed, 3);
  assert.ok(lines.some((l) => /proofs\/min, [\d.]+ s\/proof$/.test(l)));

  const st = await benchStatus({ addr: d.grpcAddress, out: () => {} });
  assert.ok(st.total_proofs_completed >= 4);
  assert.equal((await benchPreload({ addr: d.grpcAddress, circuitId: 'demo-1000', out: () => {} })).already_loaded, true);
  assert.equal((await benchEvict({ addr: d.grpcAddress, circuitId: 'demo-1000', out: () => {} })).was_loaded, true);
  await assert.rejects(benchCancel({ addr: d.grpcAddress, jobId: 'nope', out: () => {} }), /not found/);
  assert.match(await benchMetrics({ addr: d.grpcAddress, out: () => {} }), /kiln_proofs_completed_total/);

  const file = join(dir, 'trace.json');
  const n = await benchTrace({ http: d.httpAddress!, jobIds: [r.job_id], outFile: file, out: () => {} });
  assert.ok(n > 10);
  const trace = JSON.parse(await readFile(file, 'utf8'));
  assert.ok(trace.traceEvents.some((e: any) => e.ph === 'X' && e.name === 'msm_h'));
});
