/**
 * `kiln prove`, `kiln verify`, `kiln circuit-info`, `kiln setup`: PoRep C2 from a C1 file on this machine.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import { describeBackend } from '../backend/select.js';
import { type C1Output, parseC1, parseCommit2In } from '../filecoin/c1.js';
import { stackedShapeCircuit } from '../filecoin/circuit/index.js';
import {
  loadPorepParams,
  type ParamsSource,
  loadPorepVerifyingKey,
  parsePorepSectorSize,
  porepCircuitId,
  porepInfoForSize,
  porepParamsSource,
  porepShape,
  porepVerifyingKeySource,
  provePorep,
  verifyPorep,
} from '../kinds/porep-c2.js';
import { devSetupOnDevice, ensureDevParamsFile } from '../groth16/setup.js';
import { DensityCounter } from '../r1cs/density.js';
import { Span, formatSpanTree } from '../util/timing.js';

/** Reads a C1 file: the lotus-bench / Curio Commit2In wrapper or the raw C1 JSON. */
export function readC1File(path: string): C1Output {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${path}: ${(e as Error).message}`);
  }
  const wrapped = /"Phase1Out"\s*:/.test(text.slice(0, 4096)) || /"Phase1Out"\s*:/.test(text);
  return wrapped ? parseCommit2In(text).phase1Out : parseC1(text);
}

export interface ProveOptions {
  c1: string;
  out?: string;
  paramsDir: string;
  cacheDir: string;
  backend: Backend;
  json: boolean;
}

export interface ProveC1Options {
  paramsDir: string;
  cacheDir: string;
  backend: Backend;
  /** Progress lines (to stderr). */
  say: (msg: string) => void;
}

/** Shape, parameters, then every partition proved and verified, as children of `root`. */
export async function proveC1(c1: C1Output, o: ProveC1Options, root: Span): Promise<{ bytes: Uint8Array; source: ParamsSource }> {
  const info = c1.registeredProof;
  o.say(`${info.name}: ${c1.partitions.length} partition(s), backend ${describeBackend(o.backend)}`);
  const { shape, cached } = await root.time('shape', () => porepShape(info, o.cacheDir));
  o.say(`  circuit ${porepCircuitId(info.sectorSize)}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux (shape ${cached ? 'cached' : 'recorded and cached'})`);
  const devDir = join(o.cacheDir, 'dev-params');
  const source = await root.time('params lookup', () => porepParamsSource(info, shape, o.paramsDir, devDir));
  o.say(
    source.kind === 'official'
      ? `  parameters: ${source.path}`
      : existsSync(source.path)
        ? `  parameters: INSECURE development parameters (no official ones in ${o.paramsDir}), cached: ${source.path}`
        : `  parameters: no official parameters in ${o.paramsDir}: generating INSECURE development parameters once ` +
          `${devSetupOnDevice(o.backend) ? 'on the GPU' : '(minutes)'}; cached in ${devDir}`,
  );
  const params = await root.time('srs', () => loadPorepParams(source, shape, o.backend, devDir));
  const { bytes } = await provePorep(c1, shape, params, o.backend, root, { cacheDir: o.cacheDir });
  return { bytes, source };
}

export async function runProve(o: ProveOptions): Promise<void> {
  const root = new Span('prove');
  const c1 = await root.time('parse', () => readC1File(o.c1));
  const say = (m: string): void => {
    if (!o.json) console.error(m);
  };
  const { bytes, source } = await proveC1(c1, { ...o, say }, root);
  root.end();
  if (o.out) writeFileSync(o.out, bytes);
  const hex = Buffer.from(bytes).toString('hex');
  if (o.json) {
    console.log(JSON.stringify({ proof: hex, bytes: bytes.length, params: source, spans: root.toJSON() }, null, 2));
    return;
  }
  console.log(formatSpanTree(root));
  console.log(`proof: ${bytes.length} B${o.out ? ` written to ${o.out}` : ''}, every partition verified`);
  if (!o.out) console.log(hex);
}

export interface VerifyOptions {
  c1: string;
  proof: string;
  paramsDir: string;
  cacheDir: string;
}

/** Returns true when every partition verifies. */
export async function runVerify(o: VerifyOptions): Promise<boolean> {
  const c1 = readC1File(o.c1);
  const info = c1.registeredProof;
  const source = await porepVerifyingKeySource(info, o.paramsDir, o.cacheDir); // no shape compiled
  const vk = await loadPorepVerifyingKey(source).catch((e: unknown) => {
    throw new Error(`no verifying key for ${info.name}: ${(e as Error).message}`);
  });
  const proofBytes = new Uint8Array(readFileSync(o.proof));
  const results = verifyPorep(c1, proofBytes, vk);
  results.forEach((ok, k) => console.log(`partition ${k}: ${ok ? 'valid' : 'INVALID'}`));
  const all = results.every(Boolean);
  console.log(all ? `valid (${source.kind} verifying key ${source.path})` : 'INVALID');
  return all;
}

export interface CircuitInfoOptions {
  sectorSize?: string;
  c1?: string;
}

/** Counts (never stores) the partition circuit: constraints with and without the prover's input
 *  constraints, public inputs, aux variables, A/B densities. */
export function runCircuitInfo(o: CircuitInfoOptions): Record<string, unknown> {
  const info = o.c1 ? readC1File(o.c1).registeredProof : porepInfoForSize(parsePorepSectorSize(o.sectorSize ?? ''));
  const t0 = performance.now();
  const dc = new DensityCounter();
  stackedShapeCircuit(info).synthesize(dc);
  const d = dc.densityCounts();
  const withInputs = d.constraints + d.inputs;
  let n = 1;
  while (n < withInputs) n *= 2;
  return {
    registeredProof: info.name,
    circuitId: porepCircuitId(info.sectorSize),
    sectorSize: info.sectorSize,
    partitions: info.partitions,
    challengesPerPartition: info.challengesPerPartition,
    constraints: d.constraints,
    constraintsWithInputConstraints: withInputs,
    publicInputs: d.inputs - 1,
    publicInputsWithOne: d.inputs,
    auxVariables: d.aux,
    domainSize: n,
    aDensity: { inputs: d.inputs, aux: d.aAuxDense, total: d.inputs + d.aAuxDense },
    bDensity: { inputs: d.bInputDense, aux: d.bAuxDense, total: d.bInputDense + d.bAuxDense },
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
  const { shape, cached } = porepShape(info, o.cacheDir);
  const shapeMs = performance.now() - t0;
  say(`  circuit ${porepCircuitId(info.sectorSize)}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux (shape ${cached ? 'cached' : 'recorded and cached'}, ${(shapeMs / 1000).toFixed(1)} s)`);
  let last = -Infinity;
  const made = await ensureDevParamsFile(shape, o.backend, join(o.cacheDir, 'dev-params'), {
    onProgress: (p) => {
      if (p.elapsedMs - last < 10_000 && p.phase !== 'done') return;
      last = p.elapsedMs;
      say(`  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.phase}${p.total ? ` ${p.done}/${p.total} points` : ''}, ${(p.bytesWritten / 1e9).toFixed(1)} of ${(p.bytesTotal / 1e9).toFixed(1)} GB written`);
    },
  });
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
