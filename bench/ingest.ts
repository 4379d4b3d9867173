/**
 * Ingest bench: what large requests cost the daemon's event loop. The daemon
 * (runDaemon, job journal on) runs in one child process and a control server in another: a bare
 * grpc-js server of the same proto and message limits whose handlers answer at once without touching
 * the request, i.e. what grpc-js and this machine cost anyway. A 100 MiB garbage PoRep request and a
 * 32 GiB synthetic C1 (`kiln synth-c1 --sector-size 32GiB`, ~49 MiB of JSON) are sent to both at the
 * same time while a client thread per server calls GetStatus in a loop (5 ms apart); each server
 * measures its own event-loop delay (perf_hooks monitorEventLoopDelay) and the stalls of a 5 ms timer.
 *
 * Scenarios: `missing` — no parameters for porep-32g (the C1 should fail at once, naming them);
 * `dev` — INSECURE development parameters allowed, so the C1 is parsed and every partition checked
 * (tens of seconds) and queued; the run ends when SubmitProof answers, before any shape is compiled.
 *
 *   npm run bench:ingest -- [--scenarios missing,dev] [--c1 FILE | --no-c1] [--garbage-mib 100 (0: none)] [--no-results]
 *                           [--cpu-prof DIR] (CPU profiles of the daemon and the control; KILN_INGEST_NODE_ARGS: more node flags for both)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { connectEngine } from '../src/client/grpc-client.js';
import { sealProofInfo } from '../src/filecoin/registry.js';
import { MAX_MESSAGE_BYTES, SERVER_LOADER_OPTIONS, loadProvingEngine, protoPath } from '../src/server/proto.js';
import { runDaemon } from '../src/server/daemon.js';
import { appendResults, fmtMs, markdownTable, repoRoot } from './report.js';
import { pct, startStatusProbe } from './status-probe.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};

interface LoopReport {
  p50: number;
  p99: number;
  max: number;
  /** Stalls of a 5 ms timer of at least 50 ms: [ms since start, ms late, ms of them the thread ran]. */
  stalls: [number, number, number][];
}

/** CPU time of this thread so far, in ms (Linux schedstat; NaN elsewhere): a stall the thread spent
 *  off the CPU is the machine's (other processes, this box's other engineers), not work on the loop. */
function threadCpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** The event-loop delay of this process between start() and report(), in ms. */
function loopMonitor(): { start(): void; report(): LoopReport } {
  const h = monitorEventLoopDelay({ resolution: 5 });
  let stalls: [number, number, number][] = [];
  let t0 = performance.now();
  let last = t0;
  let lastCpu = threadCpuMs();
  const tick = setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    if (now - last - 5 >= 50) stalls.push([Math.round(now - t0), Math.round(now - last - 5), Math.round(cpu - lastCpu)]);
    last = now;
    lastCpu = cpu;
  }, 5);
  tick.unref();
  return {
    start() {
      h.reset();
      h.enable();
      stalls = [];
      t0 = last = performance.now();
    },
    report() {
      h.disable();
      return { p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6, stalls };
    },
  };
}

type ParentMsg = { cmd: 'start' | 'report' | 'stop' };

/** A child's side of the parent's commands; `stop` runs `close` and exits. */
function serveParent(address: string, close: () => Promise<unknown>): void {
  const mon = loopMonitor();
  process.on('message', (m: ParentMsg) => {
    if (m.cmd === 'start') {
      mon.start();
      process.send!({ started: true });
    } else if (m.cmd === 'report') process.send!({ report: mon.report() });
    else void close().finally(() => process.exit(0));
  });
  process.send!({ address });
}

async function daemonRole(): Promise<void> {
  const d = await runDaemon({ configPath: opt('--config', ''), handleSignals: false, logLevel: 'error' });
  serveParent(d.grpcAddress, () => d.close());
}

async function controlRole(): Promise<void> {
  const { service } = loadProvingEngine(protoPath(), SERVER_LOADER_OPTIONS);
  const server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES, 'grpc.max_send_message_length': MAX_MESSAGE_BYTES });
  const answer = (r: Record<string, unknown>) => (_call: unknown, cb: grpc.sendUnaryData<Record<string, unknown>>) => cb(null, r);
  server.addService(service, {
    SubmitProof: answer({ job_id: 'control' }),
    AwaitProof: answer({ job_id: 'control', status: 2, error_message: 'control server' }),
    GetStatus: answer({}),
  });
  const sock = `unix://${opt('--socket', '')}`;
  await new Promise<void>((resolve, reject) => server.bindAsync(sock, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
  serveParent(sock, () => new Promise<void>((r) => server.tryShutdown(() => r())));
}

/** A child process of this script in `role`; resolves with it once it listens. */
function startChild(role: string, args: string[], execArgv: string[] = []): Promise<{ child: ChildProcess; address: string }> {
  const child = fork(fileURLToPath(import.meta.url), ['--role', role, ...args], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { address: string }) => resolve({ child, address: m.address }));
    child.once('exit', (code) => reject(new Error(`${role} exited (${code}) before listening`)));
  });
}

function ask<T>(child: ChildProcess, cmd: ParentMsg['cmd']): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m: T) => resolve(m));
    child.send({ cmd });
  });
}

interface Submitted {
  what: string;
  answerMs: number;
  outcome: string;
}

/** SubmitProof of `req` (then AwaitProof with 1 ms for its state); the time to the answer and how it ended. */
async function submit(address: string, what: string, req: Record<string, unknown>): Promise<Submitted> {
  const c = connectEngine(address);
  const t = performance.now();
  try {
    const r = await c.call('SubmitProof', req, 600_000);
    const answerMs = performance.now() - t;
    const a = await c.call('AwaitProof', { job_id: r.job_id, timeout_ms: 1 }, 60_000);
    const status = ['UNKNOWN', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'][Number(a.status)] ?? String(a.status);
    return { what, answerMs, outcome: `${status}${a.error_message ? `: ${String(a.error_message).slice(0, 110)}` : ''}` };
  } catch (e) {
    const err = e as grpc.ServiceError;
    return { what, answerMs: performance.now() - t, outcome: `${grpc.status[err.code] ?? err.code}: ${String(err.details ?? err.message).slice(0, 110)}` };
  } finally {
    c.close();
  }
}

interface ServerResult {
  lat: number[];
  errors: string[];
  loop: LoopReport;
  submitted: Submitted[];
}

async function scenario(name: 'missing' | 'dev', c1: Buffer, garbage: Buffer, cpuProf: string): Promise<{ kiln: ServerResult; control: ServerResult; ms: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-ingest-'));
  const info = sealProofInfo('StackedDrg32GiBV1_1')!;
  try {
    writeFileSync(
      path.join(dir, 'kiln.toml'),
      `[daemon]\nlisten = "unix://${path.join(dir, 'kiln.sock')}"\nstatus_listen = ""\nstate_dir = "${path.join(dir, 'state')}"\n` +
        `[srs]\nparam_cache = "${path.join(dir, 'params')}"\ndev_params = ${name === 'dev'}\n`,
    );
    const prof = [...(cpuProf === '' ? [] : ['--cpu-prof', '--cpu-prof-dir', path.resolve(cpuProf)]), ...(process.env.KILN_INGEST_NODE_ARGS ?? '').split(' ').filter(Boolean)];
    const [kiln, control] = await Promise.all([
      startChild('daemon', ['--config', path.join(dir, 'kiln.toml')], prof),
      startChild('control', ['--socket', path.join(dir, 'control.sock')], prof),
    ]);
    try {
      const pollers = [startStatusProbe(kiln.address, 5), startStatusProbe(control.address, 5)];
      await Promise.all([ask(kiln.child, 'start'), ask(control.child, 'start')]);
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, 500));
      const requests: [string, Record<string, unknown>][] = [];
      if (garbage.length > 0) requests.push([`${(garbage.length / 2 ** 20).toFixed(0)} MiB garbage`, { request_id: `garbage-${name}`, proof_kind: 1, vanilla_proof: garbage }]);
      if (c1.length > 0) requests.push(['32 GiB C1', { request_id: `c1-${name}`, proof_kind: 1, sector_size: info.sectorSize, registered_proof: info.id, vanilla_proof: c1 }]);
      // 0.5 s apart
      const send = (address: string): Promise<Submitted[]> =>
        Promise.all(requests.map(([what, req], i) => new Promise((r) => setTimeout(r, 500 * i)).then(() => submit(address, what, req))));
      const [ks, cs] = await Promise.all([send(kiln.address), send(control.address)]);
      await new Promise((r) => setTimeout(r, 500));
      const [kp, cp] = await Promise.all(pollers.map((p) => p.stop()));
      const ms = performance.now() - t0;
      const [kl, cl] = await Promise.all([ask<{ report: LoopReport }>(kiln.child, 'report'), ask<{ report: LoopReport }>(control.child, 'report')]);
      return { kiln: { lat: kp.latMs, errors: kp.errors, loop: kl.report, submitted: ks }, control: { lat: cp.latMs, errors: cp.errors, loop: cl.report, submitted: cs }, ms };
    } finally {
      for (const c of [kiln.child, control.child]) {
        const gone = new Promise((r) => c.once('exit', r));
        c.send({ cmd: 'stop' });
        await Promise.race([gone, new Promise((r) => setTimeout(r, 20_000))]);
        c.kill('SIGKILL');
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const scenarios = opt('--scenarios', 'missing,dev').split(',') as ('missing' | 'dev')[];
  for (const s of scenarios) if (s !== 'missing' && s !== 'dev') throw new Error(`--scenarios: missing and/or dev, not ${s}`);
  let c1File = opt('--c1', '');
  if (c1File === '') {
    const work = path.join(os.homedir(), '.cache', 'kiln-bench');
    c1File = path.join(work, 'synth-c1-32g.json');
    if (!existsSync(c1File)) {
      mkdirSync(work, { recursive: true });
      console.error(`making ${c1File} (kiln synth-c1 --sector-size 32GiB, ~20 s)`);
      execFileSync(process.execPath, [path.join(repoRoot, 'dist/src/cli/main.js'), 'synth-c1', '--sector-size', '32GiB', '--out', c1File], { stdio: 'inherit' });
    }
  }
  const c1 = argv.includes('--no-c1') ? Buffer.alloc(0) : readFileSync(c1File);
  const garbage = randomFillSync(Buffer.alloc(Number(opt('--garbage-mib', '100')) * 2 ** 20));
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  for (const s of scenarios) {
    notes.push(`${s}: load average at the start ${os.loadavg().map((x) => x.toFixed(1)).join(' / ')} (1 / 5 / 15 min; ${os.cpus().length} cores)`);
    console.error(`scenario ${s}: a ${(garbage.length / 2 ** 20).toFixed(0)} MiB garbage request and a ${(c1.length / 2 ** 20).toFixed(1)} MiB 32 GiB C1 to kiln and the control…`);
    const r = await scenario(s, c1, garbage, opt('--cpu-prof', ''));
    for (const [who, x] of [['kiln', r.kiln], ['control', r.control]] as const) {
      // a stall the thread spent mostly off the CPU is the machine's, not the server's work
      const working = x.loop.stalls.filter(([, , cpu]) => cpu >= 50);
      const worst = Math.max(0, ...x.loop.stalls.map(([, , cpu]) => cpu));
      const row = [s, who, x.lat.length, fmtMs(pct(x.lat, 50)), fmtMs(pct(x.lat, 99)), fmtMs(Math.max(...x.lat)), fmtMs(x.loop.p50), fmtMs(x.loop.p99), fmtMs(x.loop.max), `${x.loop.stalls.length} (${working.length})`, worst];
      rows.push(row);
      console.log(
        `${s} ${who}: GetStatus ${x.lat.length} calls p50 ${row[3]} p99 ${row[4]} max ${row[5]} ms; event-loop delay p50 ${row[6]} p99 ${row[7]} max ${row[8]} ms; ` +
          `${x.loop.stalls.length} stalls ≥ 50 ms, ${working.length} of them ≥ 50 ms on the CPU (at most ${worst} ms)`,
      );
      if (x.loop.stalls.length > 0) console.log(`  stalls [ms since start, ms, ms on the CPU]: ${JSON.stringify(x.loop.stalls.slice(0, 20))}`);
      if (x.errors.length > 0) console.log(`  GetStatus errors: ${x.errors.slice(0, 3).join('; ')}`);
      if (who === 'kiln') {
        for (const sub of x.submitted) {
          console.log(`  ${sub.what}: answered in ${fmtMs(sub.answerMs)} ms, ${sub.outcome}`);
          notes.push(`${s}, ${sub.what}: SubmitProof answered in ${fmtMs(sub.answerMs)} ms, ${sub.outcome}`);
        }
      }
    }
    console.log(`${s}: ${(r.ms / 1000).toFixed(1)} s measured`);
  }
  if (!argv.includes('--no-results')) {
    appendResults(
      'Ingest: GetStatus and event-loop delay while large requests arrive (`bench:ingest`)',
      markdownTable(['scenario', 'server', 'GetStatus calls', 'p50 ms', 'p99 ms', 'max ms', 'loop delay p50', 'p99', 'max', 'stalls ≥ 50 ms (≥ 50 ms on the CPU)', 'most CPU in one stall, ms'], rows),
      [`a ${(garbage.length / 2 ** 20).toFixed(0)} MiB garbage PoRep request, then 0.5 s later a ${(c1.length / 2 ** 20).toFixed(1)} MiB synthetic 32 GiB C1 (sector_size, registered_proof set), to kiln and to a control grpc-js server (another process, answers without reading) at once`, ...notes],
    );
  }
}

const role = opt('--role', '');
if (role === 'daemon') await daemonRole();
else if (role === 'control') await controlRole();
else await main();
