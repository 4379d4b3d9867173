/**
 * What the CLI's prove, verify and circuit-info commands of the PoSt and SnapDeals kinds share (post-commands.ts,
 * snap-commands.ts): proving through an in-process engine with the kind's planners and circuit provider (the same
 * as the daemon's; development parameters allowed, INSECURE, and said so), printing the proof, the verifying key
 * of a verification, and a circuit's counted sizes.
 */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Backend } from '../backend/backend.js';
import type { CircuitProvider, Planner, ProofRequest } from '../engine/types.js';
import type { VerifyingKey } from '../groth16/keys.js';
import type { KindOptions } from '../kinds/kind.js';
import type { ParamsSource } from '../kinds/params.js';
import type { CircuitSizes } from '../kinds/shape-cache.js';
import type { ProgressFn } from '../util/progress.js';
import type { Span } from '../util/timing.js';
import type { Tuning } from '../util/tuning.js';
import { paramsWords } from './insecure.js';
import { cliTuning, spanTreeText } from './options.js';

/** A kind as the in-process engine takes it. */
export interface CliKind {
  planners: Planner[];
  circuits: CircuitProvider;
  paramsSource(circuitId: string): ParamsSource | undefined;
}

export interface KindLocalProof {
  bytes: Uint8Array;
  source: ParamsSource;
  span: Span;
  ms: number;
}

export interface KindProveOptions {
  paramsDir: string;
  cacheDir: string;
  backend: Backend;
  say: (m: string) => void;
  /** What the user gave for the vanilla proofs (named in errors instead of the request's field). */
  label?: string;
  progress?: ProgressFn;
  /** The tuning variables for the kind (the witness path, the PoSt shape cache); default the CLI's (cliTuning). */
  tuning?: Tuning;
}

/** The options every prove command of a kind takes after its own: --out, --backend, --device, --json. */
export function proveOptions(c: Command): Command {
  return c
    .option('--out <file>', 'where to write the proof (default: print it as hex)')
    .option('--backend <name>', 'compute backend: auto (the GPU when usable, else the CPU), cuda, native or reference', 'auto')
    .option('--device <n>', 'GPU ordinal for the cuda/auto backends', '0')
    .option('--json', 'print the result and span tree as JSON');
}

/** What proveOptions' options (and the kind's --params-dir and --cache-dir) give a prove command. */
export function proveArgs(
  opts: Record<string, unknown>,
  selectBackend: (name: string, opts: { device: number }) => Backend,
): { out: string | undefined; paramsDir: string; cacheDir: string; backend: Backend; json: boolean } {
  return {
    out: opts.out as string | undefined,
    paramsDir: opts.paramsDir as string,
    cacheDir: opts.cacheDir as string,
    backend: selectBackend(opts.backend as string, { device: Number(opts.device) }),
    json: Boolean(opts.json),
  };
}

/** A kind's own prove and verify commands under their old names (prove-post/verify-post, prove-snap/verify-snap). */
export interface ProveVerifyPair {
  names: { prove: string; verify: string };
  descriptions: { prove: string; verify: string };
  /** The kind's inputs, taken by both commands (before --params-dir and --cache-dir). */
  inputs(c: Command): Command;
  /** Inputs only the prove command takes. */
  proveInputs(c: Command): Command;
  proofHelp: string;
  prove(opts: Record<string, unknown>, common: ReturnType<typeof proveArgs>): Promise<void>;
  /** The verdict (the exit status is 1 when false). */
  verify(opts: Record<string, unknown>, common: { paramsDir: string; cacheDir: string; proof: string }): Promise<boolean>;
}

/** Registers a kind's prove and verify commands: its inputs, the parameter and cache directories, and for prove proveOptions'. */
export function registerProveVerifyPair(
  program: Command,
  d: { paramsDir(): string; cacheDir(): string; selectBackend(name: string, opts: { device: number }): Backend },
  pair: ProveVerifyPair,
): void {
  const common = (c: Command): Command =>
    pair
      .inputs(c)
      .option('--params-dir <dir>', 'Filecoin parameter cache (official files by their v28 names)', d.paramsDir())
      .option('--cache-dir <dir>', 'kiln cache (compiled shapes, development parameters)', d.cacheDir());
  const prove = pair.proveInputs(common(program.command(pair.names.prove).description(pair.descriptions.prove)));
  proveOptions(prove).action(async (opts: Record<string, unknown>) => pair.prove(opts, proveArgs(opts, d.selectBackend)));
  common(program.command(pair.names.verify).description(pair.descriptions.verify))
    .requiredOption('--proof <file>', pair.proofHelp)
    .action(async (opts: Record<string, unknown>) => {
      const ok = await pair.verify(opts, { paramsDir: opts.paramsDir as string, cacheDir: opts.cacheDir as string, proof: opts.proof as string });
      if (!ok) process.exitCode = 1;
    });
}

/** Proves `request` through an in-process engine with the kind `makeKind` makes (its notices indented under `say`). */
export async function proveKindLocally(
  makeKind: (opts: KindOptions) => Promise<CliKind>,
  request: Partial<ProofRequest> & { proofKind: number },
  o: KindProveOptions,
): Promise<KindLocalProof> {
  const { cliEngineLogger } = await import('../util/log.js');
  const { userInputError, watchJob } = await import('./local-engine.js');
  const { cliLanesPerDevice, defaultConfig } = await import('../engine/config.js');
  const { Engine } = await import('../engine/engine.js');
  const { AwaitStatus, proofRequest } = await import('../engine/types.js');
  const config = defaultConfig();
  config.srs.param_cache = o.paramsDir;
  config.srs.dev_params = true;
  config.gpus.gpu_workers_per_device = cliLanesPerDevice(o.backend);
  const kind = await makeKind({ config, backend: o.backend, cacheDir: o.cacheDir, notice: (m) => o.say(`  ${m}`), progress: o.progress, tuning: o.tuning ?? cliTuning() });
  const engine = new Engine({
    config,
    backend: o.backend,
    logger: cliEngineLogger(),
    planners: kind.planners,
    providers: [kind.circuits],
    defaultMetrics: false,
  });
  try {
    const t0 = performance.now();
    const { job } = await engine.submit(proofRequest(request));
    const unwatch = watchJob(job, o.progress, 'proving');
    const r = await engine.await(job.id).finally(unwatch);
    if (r === undefined || r.status !== AwaitStatus.COMPLETED) throw new Error(userInputError(r?.errorMessage || `job ${job.id} did not complete`, o.label));
    const source = job.work ? kind.paramsSource(job.work.circuitId) : undefined;
    if (source === undefined) throw new Error('internal: the job completed without parameters');
    return { bytes: r.proof, source, span: job.span, ms: performance.now() - t0 };
  } finally {
    await engine.close(0);
  }
}

/** Writes the proof to `--out` and prints it: as JSON with `--json`, else the span tree, a line (`what`: more
 *  about the proof, e.g. its partitions) and, without `--out`, the proof as hex. */
export function printProof(o: { json: boolean; out?: string }, r: KindLocalProof, registeredProof: string, what = ''): void {
  if (o.out) writeFileSync(o.out, r.bytes);
  const hex = Buffer.from(r.bytes).toString('hex');
  if (o.json) {
    console.log(JSON.stringify({ proof: hex, bytes: r.bytes.length, registeredProof, params: r.source, insecure: r.source.kind === 'dev', ms: Math.round(r.ms), spans: r.span.toJSON() }, null, 2));
    return;
  }
  console.log(spanTreeText(r.span));
  console.log(`proof: ${r.bytes.length} B${what}${o.out ? ` written to ${o.out}` : ''}, verified (${paramsWords(r.source)})`);
  if (!o.out) console.log(hex);
}

/** The verifying key of `source`; its error names the proof (`name`). */
export async function verifyingKeyOf(source: ParamsSource, name: string): Promise<VerifyingKey> {
  const { loadPorepVerifyingKey } = await import('../kinds/params.js');
  return loadPorepVerifyingKey(source).catch((e: unknown) => {
    throw new Error(`no verifying key for ${name}: ${(e as Error).message}`);
  });
}

/** circuit-info's figures of a circuit's counted sizes: constraints, inputs, the domain and the densities. */
export function sizesInfo(s: CircuitSizes): Record<string, unknown> {
  const withInputs = s.numConstraints + s.numInputs;
  let n = 1;
  while (n < withInputs) n *= 2;
  return {
    constraints: s.numConstraints,
    constraintsWithInputConstraints: withInputs,
    publicInputs: s.numInputs - 1,
    publicInputsWithOne: s.numInputs,
    auxVariables: s.numAux,
    domainSize: n,
    aDensity: { inputs: s.numInputs, aux: s.aAuxDense, total: s.numInputs + s.aAuxDense },
    bDensity: { inputs: s.bInputDense, aux: s.bAuxDense, total: s.bInputDense + s.bAuxDense },
  };
}
