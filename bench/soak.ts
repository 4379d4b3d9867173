/**
 * Soak bench of the daemon: the real `kiln daemon` CLI in a child process (demo kind,
 * job journal in a temp state_dir) under a bounded mix of valid and invalid requests:
 *   - `--provers` clients submitting demo proofs and awaiting them (one in ten cancelled mid-way),
 *   - `--fuzzers` clients sending malformed requests of every class (src/client/malformed.ts),
 *   - one client calling GetStatus every 100 ms (its latency is the figure that matters),
 *   - the daemon's RSS read from /proc every 5 s.
 * Prints proofs completed / cancelled / failed, errors by class and gRPC status, anything unclean
 * (INTERNAL, UNAVAILABLE, a valid proof that failed), GetStatus p50/p99/max and RSS over time.
 *
 *   npm run bench:soak -- [--minutes 1] [--constraints 4096] [--provers 2] [--fuzzers 2] [--json FILE]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { connectEngine } from '../src/client/grpc-client.js';
import { malformedCase } from '../src/client/malformed.js';
import { repoRoot } from './report.js';
import { pct, startStatusProbe } from './status-probe.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};
if (argv.includes('--help')) {
  console.log('npm run bench:soak -- [--minutes 1] [--constraints 4096] [--provers 2] [--fuzzers 2] [--json FILE]');
  process.exit(0);
}
const minutes = Number(opt('--minutes', '1'));
const constraints = Number(opt('--constraints', '4096'));
const provers = Number(opt('--provers', '2'));
const fuzzers = Number(opt('--fuzzers', '2'));
const jsonOut = opt('--json', '');
if (!(minutes > 0 && minutes <= 24 * 60)) throw new Error('--minutes: expected 0 < minutes ≤ 1440');

const fixtures = path.resolve(repoRoot, '..', 'shared', 'fixtures');

/** xorshift32: the fuzzers' cases are reproducible per client. */
function rng(seed: number): { u32(): number } {
  let x = seed >>> 0 || 1;
  return {
    u32: () => {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>>= 0);
    },
  };
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}


async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-soak-'));
  writeFileSync(
    path.join(dir, 'kiln.toml'),
    `[daemon]\nstate_dir = "${path.join(dir, 'state')}"\n[srs]\nparam_cache = "${path.join(dir, 'params')}"\n[kiln]\njob_retention_s = 60\n[logging]\nlevel = "warn"\n`,
  );
  const sock = `unix://${path.join(dir, 'k.sock')}`;
  const child = spawn(
    process.execPath,
    [...(process.env.KILN_SOAK_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(repoRoot, 'dist/src/cli/main.js'), 'daemon', '--config', path.join(dir, 'kiln.toml'), '--listen', sock, '--demo-kind', String(constraints), '--demo-cache', path.join(dir, 'demo')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (b) => (stderr = (stderr + b).slice(-20_000)));
  const conn = connectEngine(sock);
  const t0 = Date.now();
  for (;;) {
    try {
      await conn.call('GetStatus', {}, 1000);
      break;
    } catch {
      if (Date.now() - t0 > 60_000) throw new Error(`daemon did not start:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const inputs = { commit2in: readFileSync(path.join(fixtures, '2KiB.commit2in.json')), c1: readFileSync(path.join(fixtures, '2KiB.c1.json')) };
  // warm up: the demo circuit's development parameters
  const warm = (await conn.call('Prove', { submit: { proof_kind: 1000, vanilla_proof: Buffer.from('{"seed":1,"partitions":1}') } }, 600_000)).result as Record<string, unknown>;
  if (warm.status !== 1) throw new Error(`warm-up proof failed: ${String(warm.error_message)}`);

  const start = Date.now();
  const end = start + minutes * 60_000;
  const proofs = { completed: 0, cancelled: 0, failed: 0 };
  const errors = new Map<string, Map<string, number>>();
  const unclean: string[] = [];
  const statusMs: number[] = [];
  const rss: { s: number; mb: number }[] = [];
  const bump = (cls: string, what: string): void => {
    const m = errors.get(cls) ?? new Map<string, number>();
    m.set(what, (m.get(what) ?? 0) + 1);
    errors.set(cls, m);
  };
  const rssTimer = setInterval(() => {
    try {
      rss.push({ s: Math.round((Date.now() - start) / 1000), mb: Math.round(rssOf(child.pid!) / 2 ** 20) });
    } catch {
      /* the daemon is gone: reported below */
    }
  }, 5000);
  rss.push({ s: 0, mb: Math.round(rssOf(child.pid!) / 2 ** 20) });

  const prover = async (id: number): Promise<void> => {
    let seed = 1000 * id;
    while (Date.now() < end) {
      seed++;
      const partitions = 1 + (seed % 3);
      try {
        const { job_id } = await conn.call('SubmitProof', { proof_kind: 1000, vanilla_proof: Buffer.from(JSON.stringify({ seed, partitions })) }, 60_000);
        if (seed % 10 === 0) {
          await new Promise((r) => setTimeout(r, 50));
          await conn.call('CancelProof', { job_id }, 10_000);
        }
        const r = await conn.call('AwaitProof', { job_id, timeout_ms: 0 }, 600_000);
        if (r.status === 1) proofs.completed++;
        else if (r.status === 3) proofs.cancelled++;
        else {
          proofs.failed++;
          unclean.push(`valid proof ${job_id} ended ${r.status}: ${String(r.error_message).slice(0, 200)}`);
        }
      } catch (e) {
        const err = e as grpc.ServiceError;
        if (err.code === grpc.status.RESOURCE_EXHAUSTED) bump('valid-proof', 'RESOURCE_EXHAUSTED');
        else unclean.push(`valid proof: ${grpc.status[err.code] ?? err.code} ${String(err.details ?? err.message).slice(0, 200)}`);
      }
    }
  };
  const fuzzer = async (id: number): Promise<void> => {
    const r = rng(0x5eed + id);
    while (Date.now() < end) {
      const c = malformedCase(r, inputs);
      try {
        const res = await conn.call(c.method, c.req, 60_000);
        if (c.method === 'SubmitProof') {
          const a = await conn.call('AwaitProof', { job_id: res.job_id, timeout_ms: 60_000 }, 70_000);
          if (a.status === 2) bump(c.cls, 'job FAILED');
          else unclean.push(`${c.cls}: job ended ${a.status}`);
        } else bump(c.cls, `${c.method} answered`);
      } catch (e) {
        const err = e as grpc.ServiceError;
        const code = grpc.status[err.code] ?? String(err.code);
        bump(c.cls, code);
        if ([grpc.status.INTERNAL, grpc.status.UNAVAILABLE, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED].includes(err.code)) {
          unclean.push(`${c.cls}: ${code} ${String(err.details).slice(0, 200)}`);
        }
      }
    }
  };
  // the probe has an event loop of its own (a worker thread): the fuzzers' work in this process
  // must not count as the daemon's latency
  const probe = startStatusProbe(sock, 100);
  const progress = setInterval(() => {
    const last = rss[rss.length - 1];
    console.error(
      `  ${Math.round((Date.now() - start) / 1000)} s: ${proofs.completed} proofs, ${[...errors.values()].reduce((n, m) => n + [...m.values()].reduce((a, b) => a + b, 0), 0)} malformed answered, ` +
        `daemon RSS ${last?.mb} MB (GetStatus latencies come at the end, from the probe thread)`,
    );
  }, 30_000);
  await Promise.all([...Array.from({ length: provers }, (_, i) => prover(i + 1)), ...Array.from({ length: fuzzers }, (_, i) => fuzzer(i + 1))]);
  const probed = await probe.stop();
  statusMs.push(...probed.latMs);
  for (const e of probed.errors) unclean.push(`GetStatus: ${e}`);
  clearInterval(progress);
  clearInterval(rssTimer);
  rss.push({ s: Math.round((Date.now() - start) / 1000), mb: Math.round(rssOf(child.pid!) / 2 ** 20) });
  const st = await conn.call('GetStatus', {});
  // the daemon's own event-loop delay (prom-client's default metrics): what GetStatus waits for
  // inside the daemon, as opposed to the machine's scheduling of its threads
  const metrics = String((await conn.call('GetMetrics', {})).prometheus_text ?? '');
  const lag = (name: string): number => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(metrics)?.[1] ?? NaN) * 1000;
  const eventLoopLagMs = { p50: +lag('kiln_nodejs_eventloop_lag_p50_seconds').toFixed(2), p99: +lag('kiln_nodejs_eventloop_lag_p99_seconds').toFixed(2), max: +lag('kiln_nodejs_eventloop_lag_max_seconds').toFixed(2) };
  conn.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });

  const malformed = [...errors].reduce((n, [, m]) => n + [...m.values()].reduce((a, b) => a + b, 0), 0);
  const report = {
    minutes,
    host: `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`,
    demoConstraints: constraints,
    clients: { provers, fuzzers },
    proofs,
    daemonTotals: { completed: st.total_proofs_completed, failed: st.total_proofs_failed },
    malformedAnswered: malformed,
    errorsByClass: Object.fromEntries([...errors].map(([cls, m]) => [cls, Object.fromEntries(m)])),
    unclean,
    getStatusMs: { calls: statusMs.length, p50: +pct(statusMs, 50).toFixed(2), p99: +pct(statusMs, 99).toFixed(2), max: +Math.max(...statusMs).toFixed(2) },
    eventLoopLagMs,
    rssMb: rss,
  };
  console.log(`soak: ${minutes} min, ${report.host}`);
  console.log(`  proofs: ${proofs.completed} completed, ${proofs.cancelled} cancelled, ${proofs.failed} failed (daemon totals: ${st.total_proofs_completed} completed, ${st.total_proofs_failed} failed)`);
  console.log(`  malformed requests answered: ${malformed}`);
  for (const [cls, m] of errors) console.log(`    ${cls.padEnd(16)} ${[...m].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(`  unclean answers: ${unclean.length}${unclean.length ? `\n    ${unclean.slice(0, 20).join('\n    ')}` : ''}`);
  console.log(`  GetStatus: ${statusMs.length} calls, p50 ${report.getStatusMs.p50} ms, p99 ${report.getStatusMs.p99} ms, max ${report.getStatusMs.max} ms`);
  console.log(`  the daemon's event-loop delay: p50 ${eventLoopLagMs.p50} ms, p99 ${eventLoopLagMs.p99} ms, max ${eventLoopLagMs.max} ms`);
  const step = Math.max(1, Math.floor(rss.length / 12));
  console.log(`  daemon RSS (s: MB): ${rss.filter((_, i) => i % step === 0 || i === rss.length - 1).map((x) => `${x.s}: ${x.mb}`).join(', ')}`);
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 2));
  if (unclean.length > 0) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
