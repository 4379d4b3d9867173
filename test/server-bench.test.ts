/** The bench client's subcommands against an in-process daemon (TCP, demo kind). */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { benchBatch, benchCancel, benchEvict, benchMetrics, benchPreload, benchSingle, benchStatus, benchTrace, rustFixed } from '../src/client/grpc-client.js';
import { runDaemon, type Daemon } from '../src/server/daemon.js';
import { testDaemonDirs } from './support.js';

/**
 * A regex from one of cuzk-bench's Rust format strings (curio extern/cuzk/cuzk-bench/src/main.rs at
 * 3f08cbe951f99fa8693f8bc3600dfaf44a927e8a, copied verbatim): `{}` is an integer unless `args`
 * gives the pattern of that placeholder, `{:.N}` a decimal with N places.
 */
function fmt(rustFormat: string, ...args: string[]): RegExp {
  let k = 0;
  const body = rustFormat
    .split(/(\{\}|\{:\.\d\})/)
    .map((part) => {
      if (part === '{}') return args[k++] ?? '\\d+';
      const m = /^\{:\.(\d)\}$/.exec(part);
      if (m) return `\\d+\\.\\d{${m[1]}}`;
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${body}$`);
}

test('rustFixed rounds exact ties to even like Rust, others like toFixed', () => {
  assert.equal(rustFixed(0.25, 1), '0.2');
  assert.equal(rustFixed(0.75, 1), '0.8');
  assert.equal(rustFixed(1.25, 1), '1.2');
  assert.equal(rustFixed(0.35, 1), '0.3'); // 0.35 is 0.34999… as a double
  assert.equal(rustFixed(2.5, 0), '2');
  assert.equal(rustFixed(12.0625, 3), '12.062');
  assert.equal(rustFixed(3.14159, 3), '3.142');
});

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
      testDaemonDirs(c, dir);
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
  // print_result's lines, in order, then kiln's own block
  const single = [
    fmt(''),
    fmt('=== Proof Result ==='),
    fmt('status:    {}', '[A-Z]+'),
    fmt('job_id:    {}', '\\S+'),
    fmt('timings:   total={} ms (queue={} ms, srs={} ms, synth={} ms, gpu={} ms)'),
    fmt('wall time: {} ms'),
    fmt('proof:     {} bytes (hex: {})', '\\d+', '[0-9a-f]{256}\\.\\.\\.'),
  ];
  single.forEach((re, i) => assert.match(lines[i]!, re, `line ${i}:\n${lines.join('\n')}`));
  assert.equal(lines[2], 'status:    COMPLETED');
  assert.equal(lines[3], `job_id:    ${r.job_id}`);
  assert.equal(lines[4], `timings:   total=${r.total_ms} ms (queue=${r.queue_wait_ms} ms, srs=${r.srs_load_ms} ms, synth=${r.synthesis_ms} ms, gpu=${r.gpu_compute_ms} ms)`);
  assert.ok(lines[6]!.startsWith(`proof:     384 bytes (hex: ${Buffer.from(r.proof).subarray(0, 128).toString('hex')}...)`));
  assert.equal(lines[8], '--- kiln ---');
  // the demo kind's parameters are INSECURE development ones: said first in kiln's block (the wire: a trailer, no proto field)
  assert.equal(lines[9], 'INSECURE:   this proof was made with INSECURE development parameters: never accepted on chain');
  assert.ok(lines.includes(`proof hex:  ${Buffer.from(r.proof).toString('hex')}`));

  lines.length = 0;
  const b = await benchBatch({ addr: d.grpcAddress, type: 'demo', count: 3, concurrency: 2, out });
  assert.equal(b.completed, 3);
  const batch = [
    fmt('=== Batch Benchmark ==='),
    fmt('proof type:  {}', 'demo'),
    fmt('count:       {}', '3'),
    fmt('concurrency: {}', '2'),
    fmt(''),
    fmt('  [{}/{}] {} — {:.1}s (prove={} ms, queue={} ms)', '1', '3', 'COMPLETED'),
    fmt('  [{}/{}] {} — {:.1}s (prove={} ms, queue={} ms)', '2', '3', 'COMPLETED'),
    fmt('  [{}/{}] {} — {:.1}s (prove={} ms, queue={} ms)', '3', '3', 'COMPLETED'),
    fmt(''),
    fmt('=== Batch Summary ==='),
    fmt('total time:    {:.1}s'),
    fmt('completed:     {}', '3'),
    fmt('failed:        {}', '0'),
    fmt('wall time:     avg={:.1}s min={:.1}s max={:.1}s'),
    fmt('prove time:    avg={:.1}s min={:.1}s max={:.1}s'),
    fmt('throughput:    {:.3} proofs/min ({:.1}s/proof)'),
  ];
  batch.forEach((re, i) => assert.match(lines[i]!, re, `line ${i}:\n${lines.join('\n')}`));
  assert.equal(lines[batch.length + 1], '--- kiln ---');
  assert.equal(lines[batch.length + 2], 'INSECURE:      3 of 3 proofs made with INSECURE development parameters: never accepted on chain');

  // a circuit whose provider reports official parameters: no mark anywhere
  const provider = d.engine.srs.provider('demo-1000')!;
  const insecure = provider.insecure;
  provider.insecure = () => false;
  try {
    lines.length = 0;
    await benchSingle({ addr: d.grpcAddress, type: 'demo', out });
    assert.ok(!lines.some((l) => l.includes('INSECURE')), lines.join('\n'));
    lines.length = 0;
    await benchBatch({ addr: d.grpcAddress, type: 'demo', count: 1, concurrency: 1, out });
    assert.ok(!lines.some((l) => l.includes('INSECURE')), lines.join('\n'));
  } finally {
    provider.insecure = insecure;
  }

  const st = await benchStatus({ addr: d.grpcAddress, out: () => {} });
  assert.ok(st.total_proofs_completed >= 6);
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

test('bench --c1 takes the three C1 forms (gpuproxy\'s as it is, a raw C1 wrapped) and names the file and option when it is bad', async () => {
  const { buildRequest } = await import('../src/client/grpc-client.js');
  const { fixture } = await import('./support.js');
  const { writeFile } = await import('node:fs/promises');
  const raw = await readFile(fixture('2KiB.c1.json'));
  const gpFile = join(dir, 'gpuproxy-c2.json');
  const gp = Buffer.from(JSON.stringify({ c1out: JSON.parse(raw.toString('utf8')), prover_id: [233, 7, ...new Array(30).fill(0)], sector_id: 7, miner_id: 1001 }));
  await writeFile(gpFile, gp);
  const g = await buildRequest({ addr: '', type: 'porep', c1: gpFile });
  assert.deepEqual(Buffer.from(g.vanilla_proof), gp);
  assert.equal(g.sector_size, 2048);
  assert.equal(g.sector_number, 7);
  const w = await buildRequest({ addr: '', type: 'porep', c1: fixture('2KiB.c1.json') });
  assert.deepEqual(Buffer.from(JSON.parse(Buffer.from(w.vanilla_proof).toString('utf8')).Phase1Out, 'base64'), raw);
  const bad = join(dir, 'bad-c1.json');
  await writeFile(bad, '{"registered_proof": "StackedDrg2KiBV1_1", ');
  await assert.rejects(buildRequest({ addr: '', type: 'porep', c1: bad }), (e: Error) => e.message.startsWith(`--c1 ${bad}: (root): not valid JSON`));
  await assert.rejects(buildRequest({ addr: '', type: 'porep', c1: join(dir, 'missing.json') }), (e: Error) => e.message === `--c1 ${join(dir, 'missing.json')}: cannot read it (ENOENT)`);
});

test('kiln bench single exits non-zero when the job FAILED, cuzk-bench\'s lines printed all the same; an unreachable daemon is named', async () => {
  const { execFile } = await import('node:child_process');
  const { writeFile } = await import('node:fs/promises');
  const { repoRoot } = await import('./support.js');
  const bad = join(dir, 'bad-demo.json');
  await writeFile(bad, 'not json');
  const kiln = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) =>
      execFile(process.execPath, [join(repoRoot, 'dist/src/cli/main.js'), ...args], { env: { ...process.env, KILN_PROGRESS: '0' } }, (e, stdout, stderr) =>
        resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
  const failed = await kiln(['bench', '--addr', d.grpcAddress, 'single', '--type', 'demo', '--vanilla', bad]);
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stdout, /^=== Proof Result ===$/m);
  assert.match(failed.stdout, /^status: {4}FAILED$/m);
  assert.match(failed.stdout, /^error: {5}\S/m);
  const ok = await kiln(['bench', '--addr', d.grpcAddress, 'single', '--type', 'demo']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^status: {4}COMPLETED$/m);
  // a batch with a failed proof fails too
  const batch = await kiln(['bench', '--addr', d.grpcAddress, 'batch', '--type', 'demo', '--vanilla', bad, '-c', '1', '-j', '1']);
  assert.equal(batch.code, 1);
  assert.match(batch.stdout, /^failed: {8}1$/m);

  const sock = join(dir, 'nobody-here.sock');
  await assert.rejects(benchStatus({ addr: `unix://${sock}`, out: () => {} }), (e: Error) =>
    e.message.startsWith(`no kiln daemon answers at unix://${sock} (connect ENOENT ${sock}). Check that \`kiln daemon\` is running and that --addr is its [daemon] listen address`),
  );
  const cli = await kiln(['bench', '--addr', '127.0.0.1:1', 'status']);
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, /^kiln: no kiln daemon answers at 127\.0\.0\.1:1 \(connect ECONNREFUSED 127\.0\.0\.1:1\)/);
});

test('kiln bench single shows the wait for the daemon without a terminal: a line now and then on stderr, cuzk-bench\'s lines on stdout', async () => {
  const { execFile } = await import('node:child_process');
  const { writeFile } = await import('node:fs/promises');
  const { repoRoot } = await import('./support.js');
  const body = join(dir, 'demo-16.json');
  await writeFile(body, JSON.stringify({ seed: 77, partitions: 16 }));
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [join(repoRoot, 'dist/src/cli/main.js'), 'bench', '--addr', d.grpcAddress, 'single', '--type', 'demo', '--vanilla', body],
      { env: { ...process.env, KILN_PROGRESS: '', KILN_PROGRESS_INTERVAL: '0.05' } },
      (e, stdout, stderr) => resolve({ code: e ? 1 : 0, stdout, stderr }),
    ),
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^status: {4}COMPLETED$/m);
  assert.match(r.stderr, /^kiln: demo proof in the daemon: \d+ ms$/m);
  assert.doesNotMatch(r.stdout, /^kiln:/m, 'progress stays off stdout');
});

test('bench --miner-id takes an ID address or an actor id', async () => {
  const { buildRequest } = await import('../src/client/grpc-client.js');
  const { execFileSync } = await import('node:child_process');
  const { repoRoot } = await import('./support.js');
  const v = join(dir, 'wpost-2k.json');
  const r = '0'.repeat(64);
  execFileSync(process.execPath, [join(repoRoot, 'dist/src/cli/main.js'), 'synth-post', '--type', 'window', '--sector-size', '2KiB', '--randomness', r, '--sectors', '1', '--out', v], { stdio: 'ignore' });
  for (const [m, id] of [['f01234', 1234], ['1234', 1234], [undefined, 0]] as const) {
    const req = await buildRequest({ addr: '', type: 'wpost', vanilla: v, randomness: r, minerId: m });
    assert.equal(req.miner_id, id, String(m));
    assert.equal(req.registered_proof, 10); // StackedDrgWindow2KiBV1_1, from the vanilla proofs' size
  }
  await assert.rejects(buildRequest({ addr: '', type: 'wpost', vanilla: v, randomness: r, minerId: 'x1' }), /--miner-id must be an ID address \(f01234\) or an actor id \(1234\), got 'x1'/);
});
