/**
 * The one runner of the 32 GiB end-to-end benches: `npm run bench:32 -- --kind porep|post|snap [ARGS…]`
 * runs bench/porep32.ts, post32.ts or snap32.ts (the npm scripts bench:porep32/post32/snap32 and
 * scripts/device/*.sh run them by name too), and this module holds what the three share: the common arguments,
 * the timestamped log, each circuit's shape + PreloadSRS with its load span and the device-memory plan, N proofs
 * back to back (or one at a time) with their answers, and the figures of a kind's proofs. A kind's file keeps
 * only its inputs, its request, its verification and its own rows.
 *
 *   node dist/bench/run32.js --kind porep|post|snap [--sector-size 32GiB] [--dir DIR] [--backend cuda] [--md FILE] [--no-write] [--keep] …
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BackendName } from '../src/backend/select.js';
import type { connectEngine } from '../src/client/grpc-client.js';
import type { Engine } from '../src/engine/engine.js';
import type { CircuitShape } from '../src/r1cs/cs.js';
import { formatSpanTree } from '../src/util/timing.js';
import { median, partitionFigures, partitionRows, planLine, planRows, type PartitionFigures } from './plan-report.js';

export type Connection = ReturnType<typeof connectEngine>;
/** A Prove answer as the wire carries it (timings as numbers). */
export type Answer = { job_id: string; status: number; error_message: string; proof: Uint8Array } & Record<string, number>;

/** The arguments every 32 GiB bench takes. */
export interface BenchArgs {
  readonly argv: readonly string[];
  opt(name: string, dflt: string): string;
  has(flag: string): boolean;
  readonly sectorLabel: string;
  readonly dir: string;
  readonly backendName: BackendName;
  readonly mdFile: string | undefined;
  /** Keep --dir (inputs, shapes, parameters) at the end. */
  readonly keep: boolean;
  /** Append the section to bench/RESULTS.md (or --md); false with --no-write. */
  readonly write: boolean;
}

export function benchArgs(dirPrefix: string, argv: readonly string[] = process.argv): BenchArgs {
  const opt = (name: string, dflt: string): string => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
  };
  const has = (flag: string): boolean => argv.includes(flag);
  const sectorLabel = opt('--sector-size', '32GiB');
  return {
    argv,
    opt,
    has,
    sectorLabel,
    dir: path.resolve(opt('--dir', path.join(os.tmpdir(), `${dirPrefix}-${sectorLabel}`))),
    backendName: opt('--backend', 'cuda') as BackendName,
    mdFile: has('--md') ? opt('--md', '') : undefined,
    keep: has('--keep'),
    write: !has('--no-write'),
  };
}

/** The bench's log: lines timestamped from the start, those `say`s also kept for the results' code block. */
export interface BenchLog {
  log(s: string): void;
  say(s: string): void;
  readonly lines: string[];
}

export function benchLog(): BenchLog {
  const t00 = performance.now();
  const lines: string[] = [];
  const log = (s: string): void => console.log(`[${((performance.now() - t00) / 1000).toFixed(1).padStart(7)} s] ${s}`);
  return {
    log,
    lines,
    say(s) {
      log(s);
      lines.push(s);
    },
  };
}

export const sec = (ms: number): string => (ms / 1000).toFixed(2);
export const vmHwmGiB = (): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 2 ** 20;
export { median };

/** One circuit ready to prove: its shape (compiled or from the cache in --dir), its parameters (the development
 *  setup when missing) and its SRS on the device (PreloadSRS), each said with its time. */
export async function prepareCircuit(
  engine: Engine,
  c: Connection,
  id: string,
  log: BenchLog,
  timeoutMs = 3_600_000,
): Promise<{ shape: CircuitShape; shapeMs: number; preloadMs: number }> {
  const provider = engine.srs.provider(id);
  if (provider === undefined) throw new Error(`no provider for ${id}`);
  let t = performance.now();
  const { shape } = await provider.compiled(id);
  const shapeMs = performance.now() - t;
  log.say(`shape ${id}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux in ${sec(shapeMs)} s; RSS peak ${vmHwmGiB().toFixed(2)} GiB`);
  t = performance.now();
  const pre = (await c.call('PreloadSRS', { circuit_id: id }, timeoutMs)) as { already_loaded?: boolean; load_time_ms?: number };
  const preloadMs = performance.now() - t;
  const entry = engine.srs.status().find((s) => s.circuitId === id);
  log.say(`PreloadSRS ${id}: ${sec(preloadMs)} s (${JSON.stringify(pre)}); SRS ${((entry?.sizeBytes ?? 0) / 2 ** 30).toFixed(2)} GiB; RSS peak ${vmHwmGiB().toFixed(2)} GiB`);
  const loadSpan = engine.srs.loadSpan(id);
  if (loadSpan) for (const l of formatSpanTree(loadSpan).split('\n')) log.say(`  ${l}`);
  const pl = planLine(engine);
  if (pl) log.say(pl);
  return { shape, shapeMs, preloadMs };
}

/** One answered proof: when (from the first submission), its own latency, and the daemon's answer. */
export interface Done {
  i: number;
  ms: number;
  latency: number;
  jobId: string;
  status: number;
  error: string;
  proof: Uint8Array;
  r: Record<string, number>;
}

/**
 * `count` proofs: submitted together 20 ms apart (the order of arrival kept), or with `sequential` each after the
 * previous answer; each answer said as it comes. Returns them in the order answered; throws when any failed.
 */
export async function proveBackToBack(
  count: number,
  submit: (i: number) => Promise<Answer>,
  o: { label: string; log: BenchLog; sequential?: boolean },
): Promise<Done[]> {
  const t0 = performance.now();
  const done: Done[] = [];
  const one = async (i: number): Promise<void> => {
    const sent = performance.now();
    const res = await submit(i);
    const now = performance.now();
    done.push({ i, ms: now - t0, latency: now - sent, jobId: res.job_id, status: res.status, error: res.error_message, proof: new Uint8Array(res.proof ?? []), r: res });
    o.log.say(
      `${o.label} ${i + 1}/${count}: ${res.status === 1 ? 'COMPLETED' : `status ${res.status}: ${res.error_message}`}, request in → verified proof out ${sec(now - sent)} s; ` +
        `timings: total=${res.total_ms} ms (queue=${res.queue_wait_ms}, srs=${res.srs_load_ms}, synth=${res.synthesis_ms}, gpu=${res.gpu_compute_ms}); RSS peak ${vmHwmGiB().toFixed(2)} GiB`,
    );
  };
  if (o.sequential) for (let i = 0; i < count; i++) await one(i);
  else await Promise.all(Array.from({ length: count }, async (_, i) => { await new Promise((r) => setTimeout(r, i * 20)); await one(i); }));
  done.sort((a, b) => a.ms - b.ms);
  const failed = done.filter((d) => d.status !== 1);
  if (failed.length) throw new Error(`${failed.length} ${o.label}(s) failed: ${failed[0]!.error}`);
  return done;
}

/** The partitions' figures of answered proofs, and the last job's span tree into the log's lines. */
export function proofParts(engine: Engine, done: readonly Done[], log: BenchLog): PartitionFigures[] {
  const lastJob = engine.getJob(done[done.length - 1]!.jobId);
  if (lastJob) for (const l of formatSpanTree(lastJob.span).split('\n')) log.lines.push(`  ${l}`);
  return done.flatMap((d) => {
    const job = engine.getJob(d.jobId);
    return job ? partitionFigures(job) : [];
  });
}

/** The rows every kind reports of its proofs: first latency, the median, the steady interval, the engine's
 *  timings, the partitions' figures and the device-memory plan. */
export function proofRows(engine: Engine, id: string, done: readonly Done[], parts: PartitionFigures[], what: string): string[][] {
  const steady = done.length > 1 ? (done[done.length - 1]!.ms - done[0]!.ms) / (done.length - 1) : NaN;
  const m = (f: string): string => `${median(done.map((d) => d.r[f] ?? NaN)).toFixed(0)} ms`;
  return [
    [`${id}: first ${what}, request in → verified proof out`, `${sec(done[0]!.latency)} s`],
    [`${id}: request in → verified proof out, median of ${done.length}`, `${sec(median(done.map((d) => d.latency)))} s`],
    [`${id}: steady interval between completions (s/proof)`, Number.isNaN(steady) ? '–' : `${sec(steady)} s`],
    [`${id}: engine timings (median): total / synth / gpu`, `${m('total_ms')} / ${m('synthesis_ms')} / ${m('gpu_compute_ms')}`],
    ...partitionRows(parts),
    ...planRows(engine, id, parts, parts.length / done.length),
  ];
}

/** Runs `main` and exits 1 on an error (the entry of each bench file). */
export function runBench(main: () => Promise<void>): void {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

/** Whether `moduleUrl` is the file node was started with. */
export function isEntry(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && pathToFileURL(path.resolve(process.argv[1])).href === moduleUrl;
}

const KINDS: Record<string, string> = { porep: './porep32.js', post: './post32.js', snap: './snap32.js' };

if (isEntry(import.meta.url)) {
  const kind = benchArgs('kiln-run32').opt('--kind', '');
  const file = KINDS[kind];
  if (file === undefined) {
    console.error(`bench:32: --kind ${kind || '(missing)'}: one of ${Object.keys(KINDS).join(', ')} (${fileURLToPath(import.meta.url)})`);
    process.exit(2);
  }
  // not awaited: the kind's module imports this one, which must finish evaluating first (a top-level await here
  // would wait on itself)
  runBench(async () => ((await import(file)) as { main(): Promise<void> }).main());
}
