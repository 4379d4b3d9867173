/**
 * Parameters (SRS) of a circuit, the one way every proof kind loads them: the official file when the kind found
 * one, otherwise, only with `[srs] dev_params = true`, INSECURE development parameters generated once (on the GPU
 * with the CUDA backend) and cached in `devDir`, then read like any parameter file (loadPorepParams, below).
 * Each step is its own span (dev_setup, read), with progress notices every 10 s.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import type { EngineConfig } from '../engine/config.js';
import { type AnyParameters, readVerifyingKeyFile, type VerifyingKey } from '../groth16/keys.js';
import { loadParams } from '../groth16/params-native.js';
import { compiledOf, type CircuitLike, type CompiledCircuit } from '../groth16/compiled.js';
import { devParamsPath, devParamsPathForDigest, devSetupOnDevice, ensureDevParamsFile, loadOrCreateDevParams, type SetupStepProgress } from '../groth16/setup.js';
import type { ProgressFn } from '../util/progress.js';
import type { Span } from '../util/timing.js';

export interface CircuitParamsRequest {
  id: string;
  circuit: CompiledCircuit;
  /** The official parameter file the kind found, if any. */
  officialFile: string | undefined;
  config: EngineConfig;
  backend: Backend;
  /** Where development parameters are cached. */
  devDir: string;
  notice: (msg: string) => void;
  span: Span;
  /** Throws (with the kind's message) when neither official nor development parameters may be used. */
  checkAvailable: () => Promise<void>;
  /** Told where the parameters come from before they are read. */
  onSource: (s: ParamsSource) => void;
  /** The official file name looked for (said in the notice when development parameters are used). */
  officialName?: string;
  /** Makes the development parameter file another way than ensureDevParamsFile on this thread (e.g. a
   *  worker thread for the CPU setup), telling its steps to `onStep`. */
  makeDevParams?: (onStep: SetupStepProgress) => Promise<Awaited<ReturnType<typeof ensureDevParamsFile>>>;
  /** The development setup's progress in percent (stage DEV_SETUP_STAGE), for a progress bar (the CLI). */
  progress?: ProgressFn;
}

/** The progress messages of a development setup task in a worker thread (its `progress({step, done, total})`,
 *  engine/task-worker.ts) as SetupStepProgress calls. */
export function stepsOf(onStep: SetupStepProgress): (p: unknown) => void {
  return (p) => {
    const q = p as { step: string; done: number; total: number };
    onStep(q.step, q.done, q.total);
  };
}

/** The progress stage of a development setup (in percent). */
export const DEV_SETUP_STAGE = 'INSECURE dev setup (%)';

/** Runs `f`, logging `what` every 10 s while it runs, and its time at the end when that was over 10 s. */
async function whileLogging<T>(notice: (msg: string) => void, what: string, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const secs = (): string => ((performance.now() - t0) / 1000).toFixed(0);
  const tick = setInterval(() => notice(`${what}: ${secs()} s so far`), 10_000);
  tick.unref();
  try {
    const r = await f();
    if (performance.now() - t0 > 10_000) notice(`${what}: done in ${secs()} s`);
    return r;
  } finally {
    clearInterval(tick);
  }
}

export async function loadCircuitParams(r: CircuitParamsRequest): Promise<AnyParameters> {
  const { id, circuit, span, notice } = r;
  if (r.officialFile !== undefined) {
    const file = r.officialFile;
    notice(`parameters of ${id}: ${file}`);
    r.onSource({ kind: 'official', path: file });
    return span.time('read', () =>
      whileLogging(notice, `reading the parameters of ${id}`, () => loadPorepParams({ kind: 'official', path: file }, circuit, r.backend, r.devDir, id)),
    );
  }
  await r.checkAvailable();
  const devFile = devParamsPath(circuit, r.devDir);
  r.onSource({ kind: 'dev', path: devFile });
  if (r.officialName !== undefined) notice(`parameters of ${id}: no official file ${r.officialName}`);
  const where = devSetupOnDevice(r.backend) ? ' on the GPU' : '';
  notice(
    existsSync(devFile)
      ? `parameters of ${id}: INSECURE development parameters (no official ones in ${r.config.srs.param_cache}), cached: ${devFile}`
      : `parameters of ${id}: no official parameters in ${r.config.srs.param_cache}: generating INSECURE development parameters once${where} (cached in ${r.devDir})`,
  );
  // made (when missing) and then read like any parameter file, each step its own span; its progress a notice every
  // 10 s (the daemon's log) and, in percent, r.progress (the CLI's bar or lines)
  let last = 0;
  const t0 = performance.now();
  const onStep: SetupStepProgress = (step, done, total) => {
    const pct = total > 0 ? Math.floor((100 * done) / total) : 0;
    r.progress?.(DEV_SETUP_STAGE, pct, 100);
    const elapsed = performance.now() - t0;
    if (step === 'done' || elapsed - last < 10_000) return; // 'done': the line below says it
    last = elapsed;
    notice(`development setup of ${id}: ${step}, ${pct} % of the work after ${(elapsed / 1000).toFixed(0)} s`);
  };
  const made = await span.time('dev_setup', () =>
    r.makeDevParams ? r.makeDevParams(onStep) : ensureDevParamsFile(circuit, r.backend, r.devDir, {
      progressIntervalMs: 1000,
      onStep,
      onProgress: (p) => {
        if (p.bytesTotal > 0) r.progress?.(DEV_SETUP_STAGE, Math.floor((100 * p.bytesWritten) / p.bytesTotal), 100);
        if (p.phase === 'done' || p.elapsedMs - last < 10_000) return; // 'done': the line below says it
        last = p.elapsedMs;
        const pct = p.bytesTotal ? ` ${((100 * p.bytesWritten) / p.bytesTotal).toFixed(0)}% written` : '';
        notice(`development setup of ${id}${where}: ${p.phase} ${p.done}/${p.total}${pct} after ${(p.elapsedMs / 1000).toFixed(0)} s`);
      },
    }),
  );
  if (made.created) notice(`development parameters of ${id} made${made.on === 'gpu' ? ' on the GPU' : ''} in ${(made.ms / 1000).toFixed(1)} s: ${made.path}`);
  return span.time('read', () =>
    whileLogging(notice, `reading the parameters of ${id}`, () => loadPorepParams({ kind: 'dev', path: devFile }, circuit, r.backend, r.devDir, id)),
  );
}

/**
 * The one policy for a circuit's official parameters in the parameter cache (`[srs] param_cache`,
 * $FIL_PROOFS_PARAMETER_CACHE): a kind names the files it looks for, in order — the official v28 name first (its
 * hash is of the circuit's identifier: filecoin/params-names.ts), then kiln's `<circuit id>.params` — and the first
 * one there is used. PoRep also looks, last, for a renamed v28 file told apart by its sizes (porep-c2.ts).
 */
export function firstParamsFile(paramsDir: string, names: readonly string[]): string | undefined {
  for (const name of names) {
    const p = join(paramsDir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** The refusal when a circuit has no official parameters (`names` as for firstParamsFile; `otherwise`: what else
 *  was looked for) and `[srs] dev_params` is off. */
export function missingParamsMessage(id: string, paramsDir: string, names: readonly string[], otherwise?: string): string {
  const [official, ...rest] = names.map((n) => join(paramsDir, n));
  const then = [...rest, ...(otherwise !== undefined ? [otherwise] : [])].map((x) => `, then ${x}`).join('');
  return `no parameters for ${id}: looked for ${official} (the official name)${then} (or set [srs] dev_params = true for INSECURE development parameters)`;
}

/** Where a circuit's parameters come from: the official file, or INSECURE development parameters. */
export interface ParamsSource {
  kind: 'official' | 'dev';
  path: string;
}

/**
 * Loads the parameters of `source` (generating development parameters when needed) through the one
 * loader of parameter files (groth16/params-native.ts loadParams): the file's counts are checked
 * against its size and against the circuit before any point is read; the CPU backend gets the
 * sections in native memory, the GPU backend on its device (the host keeps no copy).
 */
export async function loadPorepParams(source: ParamsSource, circuitLike: CircuitLike, backend: Backend, devCacheDir: string, label?: string): Promise<AnyParameters> {
  const circuit = compiledOf(circuitLike);
  if (source.kind === 'official') {
    const p = await loadParams(source.path, backend, { expected: circuit.expectedParamsCounts(), circuit, label });
    circuit.checkParams(p);
    return p;
  }
  return loadOrCreateDevParams(circuit, backend, devCacheDir, { label });
}

/** The verifying key of `source` (read from the start of the parameter file). */
export function loadPorepVerifyingKey(source: ParamsSource): Promise<VerifyingKey> {
  const vkFile = source.path.replace(/\.params$/, '.vk');
  if (source.kind === 'official' && existsSync(vkFile)) return readVerifyingKeyFile(vkFile);
  return readVerifyingKeyFile(source.path, { prefix: true });
}

/** Where a circuit's verifying key comes from, without compiling its shape when it can be avoided: the official
 *  file, else the development parameters named by the digest cached beside the shape (`digest`), else by the
 *  shape's own (`shape`, compiled, and cached, only then). */
export function verifyingKeySource(official: string | undefined, cacheDir: string, digest: () => string | undefined, shape: () => CircuitLike): ParamsSource {
  if (official) return { kind: 'official', path: official };
  const devDir = join(cacheDir, 'dev-params');
  const d = digest();
  if (d !== undefined) return { kind: 'dev', path: devParamsPathForDigest(d, devDir) };
  return { kind: 'dev', path: devParamsPath(shape(), devDir) };
}
