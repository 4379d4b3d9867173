/**
 * `kiln prove`, `kiln verify`, `kiln circuit-info`, `kiln setup`: PoRep C2 from a C1 file on this machine.
 */
import { spanTreeText } from './options.js';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import { describeBackend } from '../backend/select.js';
import { type C1Output, parseC1Input, withStatedChallenges } from '../filecoin/c1.js';
import { stackedShapeCircuit } from '../filecoin/circuit/index.js';
import { parsePorepSectorSize, porepCircuitId, porepInfoForSize, porepShape, porepVerifyingKeySource, verifyPorep } from '../kinds/porep/porep-c2.js';
import { loadPorepVerifyingKey } from '../kinds/params.js';
import { ensureDevParamsFile } from '../groth16/setup.js';
import { paramsWords, verdictLine } from './insecure.js';
import { type LocalProof, type LocalProveOptions, proveC1Locally } from './local-engine.js';
import { sizesInfo } from './kind-commands.js';
import { countedSizes } from '../kinds/shape-cache.js';
import { DensityCounter } from '../r1cs/density.js';
import { CountingSystem } from '../r1cs/counter.js';
import type { SealProofInfo } from '../filecoin/registry.js';
import { cliProgressRenderer, commandProgress, type ProgressFn } from '../util/progress.js';
import { readOptionFile } from '../util/files.js';

/** Reads a `--c1` file in any of its forms (Commit2In wrapper, raw C1, gpuproxy's C2 input); errors name the option and the file. */
export function readC1File(path: string): C1Output {
  const bytes = readOptionFile('--c1', path);
  try {
    return parseC1Input(bytes).phase1Out;
  } catch (e) {
    throw new Error(`--c1 ${path}: ${(e as Error).message}`);
  }
}

export interface ProveOptions {
  c1: string;
  out?: string;
  paramsDir: string;
  cacheDir: string;
  backend: Backend;
  json: boolean;
  /** INSECURE, benchmarks only: NI-PoRep C1s proved with the challenges they state (`kiln synth-c1 --ni`). */
  statedNiChallenges?: boolean;
}

/** What proveC1 needs: the in-process engine's options (local-engine.ts). */
export type ProveC1Options = LocalProveOptions;

/** Proves a C1 (wrapper or raw JSON bytes) through the in-process engine (cli/local-engine.ts):
 *  shape, parameters, every partition synthesised, proved and verified. */
export async function proveC1(input: Uint8Array, o: ProveC1Options): Promise<LocalProof> {
  o.say(`proving on backend ${describeBackend(o.backend)}`);
  const r = await proveC1Locally(input, o);
  const partitions = r.span.children.filter((c) => c.name.startsWith('partition[')).length;
  o.say(`  ${partitions} partition(s) proved and verified`);
  return r;
}

export async function runProve(o: ProveOptions): Promise<void> {
  const ui = commandProgress(o.json);
  const { bytes, source, span } = await proveC1(readOptionFile('--c1', o.c1), { ...o, say: ui.say, progress: ui.progress, label: `--c1 ${o.c1}` }).finally(ui.stop);
  if (o.out) writeFileSync(o.out, bytes);
  const hex = Buffer.from(bytes).toString('hex');
  if (o.json) {
    console.log(JSON.stringify({ proof: hex, bytes: bytes.length, params: source, insecure: source.kind === 'dev', spans: span.toJSON() }, null, 2));
    return;
  }
  console.log(spanTreeText(span));
  console.log(`proof: ${bytes.length} B${o.out ? ` written to ${o.out}` : ''}, every partition verified (${paramsWords(source)})`);
  if (!o.out) console.log(hex);
}

export interface VerifyOptions {
  c1: string;
  proof: string;
  paramsDir: string;
  cacheDir: string;
  /** As ProveOptions.statedNiChallenges: the challenges the C1 states make the public inputs. */
  statedNiChallenges?: boolean;
}

/** Returns true when every partition verifies. */
export async function runVerify(o: VerifyOptions): Promise<boolean> {
  const read = readC1File(o.c1);
  const c1 = o.statedNiChallenges === true ? withStatedChallenges(read) : read;
  const info = c1.registeredProof;
  const source = await porepVerifyingKeySource(info, o.paramsDir, o.cacheDir); // no shape compiled
  const vk = await loadPorepVerifyingKey(source).catch((e: unknown) => {
    throw new Error(`no verifying key for ${info.name}: ${(e as Error).message}`);
  });
  const proofBytes = new Uint8Array(readOptionFile('--proof', o.proof));
  const results = verifyPorep(c1, proofBytes, vk);
  results.forEach((ok, k) => console.log(`partition ${k}: ${ok ? 'valid' : 'INVALID'}`));
  const all = results.every(Boolean);
  console.log(verdictLine(all, source));
  return all;
}

export interface CircuitInfoOptions {
  sectorSize?: string;
  c1?: string;
}

/** The progress stage of circuit-info's count. */
export const COUNT_STAGE = 'counting constraints';

/** The partition circuit's constraint count from one and two challenges (its challenges are identical segments:
 *  replicateLastShapeSegment relies on it too), when it has more than two: the total a progress bar counts to. */
function expectedConstraints(info: SealProofInfo): number | undefined {
  const c = info.challengesPerPartition;
  if (c === undefined || c <= 2) return undefined;
  const count = (k: number): number => {
    const cs = new CountingSystem();
    stackedShapeCircuit(info, k).synthesize(cs);
    return cs.numConstraints;
  };
  const one = count(1);
  return one + (c - 1) * (count(2) - one);
}

/** Counts (never stores) the partition circuit: constraints with and without the prover's input
 *  constraints, public inputs, aux variables, A/B densities. The count of a 32 GiB partition takes many
 *  minutes (17 on the 2-core dev machine): `progress` gets the constraints counted so far, against the total
 *  from one and two challenges. */
export function runCircuitInfo(o: CircuitInfoOptions, progress?: ProgressFn): Record<string, unknown> {
  const info = o.c1 ? readC1File(o.c1).registeredProof : porepInfoForSize(parsePorepSectorSize(o.sectorSize ?? ''));
  const t0 = performance.now();
  const total = progress !== undefined ? (expectedConstraints(info) ?? 0) : 0;
  const dc = new (class extends DensityCounter {
    override enforce(...args: Parameters<DensityCounter['enforce']>): void {
      super.enforce(...args);
      if ((this.numConstraints & 0x3fff) === 0) progress?.(COUNT_STAGE, this.numConstraints, total);
    }
  })();
  progress?.(COUNT_STAGE, 0, total);
  stackedShapeCircuit(info).synthesize(dc);
  return {
    registeredProof: info.name,
    circuitId: porepCircuitId(info.sectorSize),
    sectorSize: info.sectorSize,
    partitions: info.partitions,
    challengesPerPartition: info.challengesPerPartition,
    ...sizesInfo(countedSizes(dc)),
    countMs: Math.round(performance.now() - t0),
  };
}

export interface SetupOptions {
  sectorSize: string;
  cacheDir: string;
  backend: Backend;
  json: boolean;
}

/**
 * `kiln setup`: INSECURE development parameters for the PoRep partition circuit of a sector size,
 * made once into the cache (`<cache>/dev-params/dev-<digest>.params` and `.vk`, where `kiln prove`,
 * `kiln demo` and the daemon look for them) without loading them: on the GPU when the backend is the
 * CUDA one (streamed from the device to the file), else on the CPU (small sizes only).
 */
export async function runSetup(o: SetupOptions): Promise<Record<string, unknown>> {
  const info = porepInfoForSize(parsePorepSectorSize(o.sectorSize));
  const say = (m: string): void => {
    if (!o.json) console.error(m);
  };
  say(`${info.name}: INSECURE development parameters (toxic waste from a public seed: proofs made with them prove nothing), backend ${describeBackend(o.backend)}`);
  const t0 = performance.now();
  const bar = o.json ? undefined : cliProgressRenderer();
  const { circuit, shape, cached } = porepShape(info, o.cacheDir, (step, k, n) => bar?.progress('shape', k, n));
  bar?.stop();
  const shapeMs = performance.now() - t0;
  say(`  circuit ${porepCircuitId(info.sectorSize)}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux (shape ${cached ? 'cached' : 'recorded and cached'}, ${(shapeMs / 1000).toFixed(1)} s)`);
  let last = -Infinity;
  const MiB = 2 ** 20;
  const made = await ensureDevParamsFile(circuit, o.backend, join(o.cacheDir, 'dev-params'), {
    onProgress: (p) => {
      // a bar on a terminal (MiB written), else a line every 10 s
      if (bar?.enabled) return bar.progress('dev setup (MiB)', Math.floor(p.bytesWritten / MiB), Math.max(1, Math.ceil(p.bytesTotal / MiB)));
      if (p.elapsedMs - last < 10_000 && p.phase !== 'done') return;
      last = p.elapsedMs;
      say(`  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.phase}${p.total ? ` ${p.done}/${p.total} points` : ''}, ${(p.bytesWritten / 1e9).toFixed(1)} of ${(p.bytesTotal / 1e9).toFixed(1)} GB written`);
    },
  }).finally(() => bar?.stop());
  const result = {
    circuitId: porepCircuitId(info.sectorSize),
    params: made.path,
    vk: made.vkPath,
    created: made.created,
    on: made.on,
    bytes: existsSync(made.path) ? statSync(made.path).size : 0,
    ms: Math.round(made.ms),
    timings: made.gpu?.timings,
  };
  say(made.created ? `  made on the ${made.on?.toUpperCase()} in ${(made.ms / 1000).toFixed(1)} s: ${made.path} (${(result.bytes / 1e9).toFixed(2)} GB) and ${made.vkPath}` : `  already there: ${made.path}`);
  return result;
}
