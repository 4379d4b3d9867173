/** Shared by the bench scripts: machine/commit facts and appending a result section to RESULTS.md. */
import { execSync } from 'node:child_process';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BackendName } from '../src/backend/select.js';
import type { EngineConfig } from '../src/engine/config.js';
import { runDaemon, type Daemon } from '../src/server/daemon.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const RESULTS = path.join(repoRoot, 'bench', 'RESULTS.md');

export function machineLine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  const mem = (os.totalmem() / 2 ** 30).toFixed(0);
  return `${cpu}, ${os.cpus().length} cores, ${mem} GiB, Node ${process.version}, ${os.platform()}-${os.arch()}`;
}

export function commitLine(): string {
  try {
    const sha = execSync('git rev-parse --short HEAD', { cwd: repoRoot, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    const dirty = execSync('git status --porcelain --untracked-files=no', { cwd: repoRoot, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    return dirty ? `${sha} (with uncommitted changes)` : sha;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** Appends `## title` with date, machine, commit, the markdown table and notes to bench/RESULTS.md. */
export function appendResults(title: string, table: string, notes: string[] = []): void {
  if (!existsSync(RESULTS)) writeFileSync(RESULTS, '# Benchmark results\n\nEach section is appended by the bench script named in it.\n');
  const lines = [
    '',
    `## ${title}`,
    '',
    `- date: ${new Date().toISOString()}`,
    `- machine: ${machineLine()}`,
    `- commit: ${commitLine()}`,
    ...notes.map((n) => `- ${n}`),
    '',
    table,
    '',
  ];
  appendFileSync(RESULTS, lines.join('\n'));
}

export function markdownTable(header: string[], rows: (string | number)[][]): string {
  const out = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const r of rows) out.push(`| ${r.join(' | ')} |`);
  return out.join('\n');
}

/** Median wall time of `runs` calls after one warm-up call. */
export async function medianMs(runs: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

export const fmtMs = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

/** The 32 GiB benches' daemon settings from the environment (scripts/device/run-bench32.sh passes them
 *  through): KILN_BENCH_LANES sets `[gpus] gpu_workers_per_device` (unset: 2, 1 on a GPU under 40 GiB). On a small card the plan
 *  prefetches no witness, so a second lane only holds one more witness buffer in host memory while it waits
 *  for the device (measured: host RSS at 16 GiB free). Returns a line for the log and results, or ''. */
export function benchDaemonEnv(c: EngineConfig): string {
  const lanes = process.env.KILN_BENCH_LANES;
  if (lanes === undefined || lanes === '') return '';
  const n = Number(lanes);
  if (!Number.isInteger(n) || n < 1 || n > 16) throw new Error(`KILN_BENCH_LANES=${lanes}: an integer from 1 to 16`);
  c.gpus.gpu_workers_per_device = n;
  return `gpu_workers_per_device = ${n} (KILN_BENCH_LANES)`;
}

/** The 32 GiB benches' daemon, in this process: gRPC over a unix socket in `dir`, no HTTP, parameters from `dir`
 *  (INSECURE development parameters and shapes made in `dir`/kiln-cache when missing), jobs in memory only,
 *  KILN_BENCH_LANES (benchDaemonEnv); `configure` may change more. Returns it with the line of the settings taken from the environment ('' when none). */
export async function benchDaemon(
  dir: string,
  backend: BackendName,
  opts: { logLevel?: string; configure?: (c: EngineConfig) => void } = {},
): Promise<{ daemon: Daemon; envLine: string }> {
  let envLine = '';
  const daemon = await runDaemon({
    listen: `unix://${path.join(dir, 'kiln.sock')}`,
    httpListen: '',
    logLevel: process.env.KILN_LOG_LEVEL ?? opts.logLevel ?? 'info',
    backend,
    handleSignals: false,
    configure: (c) => {
      c.srs.param_cache = dir;
      c.kiln.cache_dir = path.join(dir, 'kiln-cache'); // shapes and development parameters kept beside the run's files
      c.daemon.state_dir = ''; // a bench's jobs: in memory (a journal would bring an interrupted run's jobs back)
      c.srs.dev_params = true;
      opts.configure?.(c);
      envLine = benchDaemonEnv(c);
    },
  });
  return { daemon, envLine };
}

/** Prints a bench's table and writes its section (the table, then `lines` as a code block) with date, machine,
 *  commit and notes: to `mdFile` when given (the GPU machine's copy of the repository does not come back), else to
 *  bench/RESULTS.md unless `write` is false. */
export function writeSection(title: string, header: string[], rows: (string | number)[][], lines: readonly string[], notes: readonly string[], opts: { mdFile?: string; write: boolean }): void {
  const table = markdownTable(header, rows);
  console.log(table);
  const section = `${table}\n\n\`\`\`\n${lines.join('\n')}\n\`\`\``;
  if (opts.mdFile) {
    const head = [`\n## ${title}\n`, `- date: ${new Date().toISOString()}`, `- machine: ${machineLine()}`, `- commit: ${process.env.KILN_COMMIT ?? commitLine()}`];
    appendFileSync(opts.mdFile, [...head, ...notes.map((n) => `- ${n}`), '', section, ''].join('\n'));
  } else if (opts.write) appendResults(title, section, [...notes]);
}
