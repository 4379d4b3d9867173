/**
 * Fuzz test of the daemon's gRPC surface (seeded, ≥ 2,000 cases, bounded in time): every malformed
 * request of src/client/malformed.ts's classes (random bytes, truncated and mistyped JSON, corrupted
 * base64, C1 mutations, enum values outside the proto's, oversized ids, 100 MB inputs, unicode, deep
 * nesting, unknown job and circuit ids) gets a clean answer — a gRPC status other than INTERNAL with
 * a bounded message, or a job that FAILS with a bounded message — while the daemon keeps serving
 * (GetStatus between batches, a valid proof at the end) and its RSS stays bounded.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { malformedCase, MALFORMED_CLASSES } from '../src/client/malformed.js';
import { runDaemon } from '../src/server/daemon.js';
import { fixture, repoRoot, rng, testDaemonDirs } from './support.js';

type Msg = Record<string, any>;
const CASES = Number(process.env.KILN_FUZZ_CASES ?? 2000);
const SEED = Number(process.env.KILN_FUZZ_SEED ?? 20261202);
const CONCURRENCY = 16;
const MAX_DETAILS = 4096 + 64;

test(`fuzz: ${CASES} malformed requests (seed ${SEED}) each get a clean error; the daemon keeps serving with bounded RSS`, { timeout: 240_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-fuzz-'));
  const d = await runDaemon({
    listen: `unix://${join(dir, 'k.sock')}`,
    logLevel: 'silent',
    handleSignals: false,
    demo: { constraints: 500, partitions: 1, cacheDir: join(dir, 'params') },
    configure: (c) => {
      testDaemonDirs(c, join(dir, 'params'));
      c.synthesis.threads = 1;
      c.kiln.job_retention_s = 5; // finished jobs are forgotten quickly: memory must come back
    },
  });
  const def = protoLoader.loadSync(join(repoRoot, 'proto', 'cuzk.proto'), { keepCase: true, longs: Number, enums: Number, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const client = new pkg.cuzk.v1.ProvingEngine(d.grpcAddress, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': 256 << 20,
    'grpc.max_receive_message_length': 256 << 20,
  });
  const call = (m: string, req: Msg, ms = 60_000): Promise<Msg> =>
    new Promise((resolve, reject) => client[m](req, { deadline: Date.now() + ms }, (e: Error | null, r: Msg) => (e ? reject(e) : resolve(r))));
  const inputs = { commit2in: await readFile(fixture('2KiB.commit2in.json')), c1: await readFile(fixture('2KiB.c1.json')) };
  const r = rng(SEED);
  const outcomes = new Map<string, Map<string, number>>();
  const count = (cls: string, what: string): void => {
    const m = outcomes.get(cls) ?? new Map<string, number>();
    m.set(what, (m.get(what) ?? 0) + 1);
    outcomes.set(cls, m);
  };
  const problems: string[] = [];
  const rss: number[] = [];
  const statusMs: number[] = [];
  const t0 = performance.now();
  global.gc?.();
  const rss0 = process.memoryUsage().rss;

  const runCase = async (i: number, c: ReturnType<typeof malformedCase>): Promise<void> => {
    const where = `case ${i} (${c.cls}, ${c.method})`;
    try {
      const res = await call(c.method, c.req);
      if (c.method === 'SubmitProof') {
        const a = await call('AwaitProof', { job_id: res.job_id, timeout_ms: 60_000 });
        if (a.status !== 2) problems.push(`${where}: job ended ${a.status} (${String(a.error_message).slice(0, 200)}), expected FAILED`);
        else if (a.error_message.length === 0 || a.error_message.length > MAX_DETAILS) problems.push(`${where}: error message of ${a.error_message.length} characters`);
        count(c.cls, 'job FAILED');
      } else count(c.cls, `${c.method} answered`);
    } catch (e: any) {
      const code = grpc.status[e.code as number] ?? String(e.code);
      if (e.code === grpc.status.INTERNAL || e.code === grpc.status.UNAVAILABLE || e.code === grpc.status.UNKNOWN || e.code === grpc.status.DEADLINE_EXCEEDED) {
        problems.push(`${where}: ${code} ${String(e.details).slice(0, 200)}`);
      } else if (!e.details || e.details.length > MAX_DETAILS) problems.push(`${where}: ${code} with details of ${String(e.details ?? '').length} characters`);
      count(c.cls, code);
    }
  };

  try {
    // two 100 MB inputs (random bytes, and a Commit2In padded with 100 MB of spaces), one at a time
    for (const big of [Buffer.alloc(100 << 20, 0xab), Buffer.concat([Buffer.alloc(100 << 20, 0x20), inputs.commit2in])]) {
      await runCase(-1, { cls: 'huge-input', method: 'SubmitProof', req: { proof_kind: 1, vanilla_proof: big } });
    }
    rss.push(process.memoryUsage().rss);
    for (let i = 0; i < CASES; i += CONCURRENCY) {
      const batch = Array.from({ length: Math.min(CONCURRENCY, CASES - i) }, (_, k) => [i + k, malformedCase(r, inputs)] as const);
      await Promise.all(batch.map(([k, c]) => runCase(k, c)));
      if ((i / CONCURRENCY) % 8 === 0) {
        const s0 = performance.now();
        await call('GetStatus', {});
        statusMs.push(performance.now() - s0);
        rss.push(process.memoryUsage().rss);
      }
    }
    // still serving: a valid proof
    const ok = (await call('Prove', { submit: { proof_kind: 1000, vanilla_proof: Buffer.from('{"seed":3}') } })).result;
    assert.equal(ok.status, 1, ok.error_message);
    await new Promise((res) => setTimeout(res, 5500)); // retention 5 s: finished jobs are dropped
    global.gc?.();
    rss.push(process.memoryUsage().rss);
  } finally {
    client.close();
    await d.close();
    await rm(dir, { recursive: true, force: true });
  }
  const seconds = (performance.now() - t0) / 1000;
  const mb = (x: number): string => (x / 2 ** 20).toFixed(0);
  const table = [...outcomes].map(([cls, m]) => `#   ${cls.padEnd(16)} ${[...m].map(([k, v]) => `${k} ${v}`).join(', ')}`).join('\n');
  const sorted = [...statusMs].sort((a, b) => a - b);
  console.log(
    `# fuzz: ${CASES + 2} cases in ${seconds.toFixed(1)} s; RSS ${mb(rss0)} MB at start, peak ${mb(Math.max(...rss))} MB, end ${mb(rss[rss.length - 1])} MB; ` +
      `GetStatus between batches p50 ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms\n${table}`,
  );
  assert.deepEqual(problems, []);
  for (const [cls] of MALFORMED_CLASSES) assert.ok(outcomes.has(cls), `class ${cls} was drawn`);
  assert.ok(Math.max(...rss) - rss0 < 1.5 * 2 ** 30, `peak RSS grew by ${mb(Math.max(...rss) - rss0)} MB`);
  assert.ok(rss[rss.length - 1] - rss0 < 768 * 2 ** 20, `RSS grew by ${mb(rss[rss.length - 1] - rss0)} MB`);
});
