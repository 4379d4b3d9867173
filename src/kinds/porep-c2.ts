/**
 * The PoRep C2 proof kind's core, for the CLI and the engine (porep-c2-planner.ts): the circuit id of a sector size, the compiled
 * partition shape (recorded once per size and cached on disk), where the parameters come from
 * (official files in the parameter cache, else insecure development parameters), a partition's
 * witness (native or TypeScript) and the verification of every partition of a C1. Proving goes
 * through the engine (porep-c2-planner.ts), for the daemon and the CLI alike.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import { NativeBackend } from '../backend/native.js';
import { type AnyParameters, readVerifyingKeyFile, type VerifyingKey } from '../groth16/keys.js';
import { loadParams } from '../groth16/params-native.js';
import { decodeProofs, PROOF_BYTES } from '../groth16/proof.js';
import { checkParamsForShape, domainSize, expectedParamsCounts, queryIndices, type QueryIndices } from '../groth16/queries.js';
import { devParamsPath, devParamsPathForDigest, ensureDevParamsFile, loadOrCreateDevParams, type EnsureDevParamsResult } from '../groth16/setup.js';
import { CountingSystem } from '../r1cs/counter.js';
import { prepareVerifyingKey, verifyProof } from '../groth16/verifier.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { checkProgramForShape, deserializeProgram, programChunks, type WitnessProgram } from '../r1cs/program.js';
import { readShapeFile, rememberShapeDigest, shapeDigest, writeShapeFile } from '../r1cs/shape.js';
import { writeChunksAtomic } from '../util/files.js';
import { WitnessGenerator } from '../r1cs/witness.js';
import type { C1Output } from '../filecoin/c1.js';
import { porepParamsFileName } from '../filecoin/params-names.js';
import { stackedCircuitFor, stackedParamsFor, stackedShapeCircuit } from '../filecoin/circuit/index.js';
import { type WitnessProgramRunner, stackedProgramFast, stackedShapeAndProgramFast, stackedWitnessNative } from '../filecoin/circuit/stacked-program.js';
import { partitionPublicInputs } from '../filecoin/public-inputs.js';
import { parseSectorSize, sealProofInfo, sectorSizeRefusal, sectorSizeByBytes, sectorSizeByCircuitLabel, type SealProofInfo } from '../filecoin/registry.js';
import type { ShapeTaskResult } from './shape-cache.js';

/** Bump when the circuit code changes the shape: cached shapes of another version are ignored. */
export const STACKED_CIRCUIT_VERSION = 1;

/** cuzk's circuit ids: porep-2k, porep-8m, porep-512m, porep-32g, porep-64g. */
export function porepCircuitId(sectorSize: number): string {
  const size = sectorSizeByBytes(sectorSize);
  if (size === undefined) throw new RangeError(`no PoRep circuit for sector size ${sectorSize}`);
  return `porep-${size.circuitLabel}`;
}

/** The V1_1 seal proof of a circuit id (the partition circuit depends on the size only). */
export function porepInfoForCircuit(circuitId: string): SealProofInfo | undefined {
  const m = /^porep-(\w+)$/.exec(circuitId);
  const size = m ? sectorSizeByCircuitLabel(m[1]) : undefined;
  if (size === undefined) return undefined;
  return sealProofInfo(`StackedDrg${size.label}V1_1`);
}

/** Parses `2KiB`, `2KB`, `32G`, `2048`, … into bytes (the registry's parser and its one refusal, naming `option`). */
export function parsePorepSectorSize(s: string, option = '--sector-size'): number {
  const size = parseSectorSize(s);
  if (size !== undefined) return size.sectorSize;
  throw new RangeError(sectorSizeRefusal(s, option));
}

/** The V1_1 seal proof info of a sector size in bytes. */
export function porepInfoForSize(sectorSize: number): SealProofInfo {
  const info = porepInfoForCircuit(porepCircuitId(sectorSize));
  if (!info) throw new RangeError(`no seal proof for sector size ${sectorSize}`);
  return info;
}

/**
 * The compiled partition shape of a sector size: read from `<cacheDir>/shapes/` when a shape of the
 * current circuit version is there, else recorded (and written there, atomically).
 */
/** A step of a shape compile: `index` of `steps` done so far (steps = index at the end). */
export type ShapeStepFn = (step: string, index: number, steps: number) => void;

export function porepShape(info: SealProofInfo, cacheDir?: string, onStep?: ShapeStepFn): { shape: CircuitShape; cached: boolean; cacheError?: string } {
  const file = cacheDir ? shapeFile(info, cacheDir) : undefined;
  if (file && existsSync(file)) {
    try {
      const shape = readShapeFile(file);
      // The digest written with the shape (hashing it again would cost seconds per load).
      if (existsSync(`${file}.sha256`)) rememberShapeDigest(shape, readFileSync(`${file}.sha256`, 'utf8').trim());
      return { shape, cached: true };
    } catch {
      /* unreadable or stale: record again below */
    }
  }
  // One challenge recorded (its witness program in the same synthesis), then replicated: challenges
  // are identical segments (tests compare with a whole-partition recording).
  const STEPS = file ? 6 : 4;
  const { shape, program } = stackedShapeAndProgramFast(stackedParamsFor(info), (step, k) => onStep?.(step, k, STEPS));
  rememberProgram(shape, program);
  if (!file) {
    onStep?.('done', STEPS, STEPS);
    return { shape, cached: false };
  }
  // The cache only saves time: a full disk (a 32 GiB shape is ~7 GB) costs a warning, not the proof.
  try {
    mkdirSync(join(cacheDir!, 'shapes'), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    onStep?.('digest the shape', 4, STEPS);
    writeFileSync(`${tmp}.sha256`, shapeDigest(shape) + '\n');
    renameSync(`${tmp}.sha256`, `${file}.sha256`);
    onStep?.(`write the shape cache (${file})`, 5, STEPS);
    writeChunksAtomic(`${file}.wprog`, programChunks(program));
    writeShapeFile(file, shape);
    onStep?.('done', STEPS, STEPS);
    return { shape, cached: false };
  } catch (e) {
    for (const f of [`${file}.sha256`, `${file}.wprog`, `${file}.${process.pid}.tmp`, `${file}.wprog.${process.pid}.tmp`]) rmSync(f, { force: true });
    return { shape, cached: false, cacheError: `shape not cached in ${cacheDir}: ${(e as Error).message}` };
  }
}

const programs = new WeakMap<CircuitShape, WitnessProgram>();
/** Records the witness program of a shape (e.g. one a worker thread compiled with it). */
export const rememberProgram = (shape: CircuitShape, p: WitnessProgram): void => void programs.set(shape, p);

/** What porepShapeTask sends back. */
export type PorepShapeTaskResult = ShapeTaskResult;

/**
 * Makes the INSECURE development parameter file of a circuit id when missing, meant to run in a
 * worker thread (engine/task-worker.ts): the CPU setup evaluates the circuit at tau in this thread
 * for seconds to hours. The shape is read from the cache `porepShapeTask` filled (or compiled).
 */
export async function porepDevParamsTask(arg: { circuitId: string; cacheDir: string; devDir: string; backend: string }, progress?: (p: { step: string; done: number; total: number }) => void): Promise<EnsureDevParamsResult> {
  const info = porepInfoForCircuit(arg.circuitId);
  if (info === undefined) throw new Error(`unknown PoRep circuit ${arg.circuitId}`);
  const { shape } = porepShape(info, arg.cacheDir);
  const { selectBackend } = await import('../backend/select.js');
  const r = await ensureDevParamsFile(shape, selectBackend(arg.backend), arg.devDir, { onStep: (step, done, total) => progress?.({ step, done, total }) });
  return r;
}

/**
 * porepShape and porepProgram of a circuit id, meant to run in a worker thread
 * (engine/task-worker.ts runOffThread): compiling or reading a shape takes seconds (2 KiB) to
 * minutes (32 GiB) and gigabytes, which must not block the daemon's event loop. The caller calls
 * rememberProgram and rememberShapeDigest with the result.
 */
export function porepShapeTask(arg: { circuitId: string; cacheDir?: string }): PorepShapeTaskResult {
  const info = porepInfoForCircuit(arg.circuitId);
  if (info === undefined) throw new Error(`unknown PoRep circuit ${arg.circuitId}`);
  const { shape, cached, cacheError } = porepShape(info, arg.cacheDir);
  const program = porepProgram(info, shape, arg.cacheDir);
  const digest = arg.cacheDir !== undefined ? cachedPorepShapeDigest(info, arg.cacheDir) : undefined;
  return { shape, queries: queryIndices(shape), program, digest, cached, cacheError };
}

/**
 * The witness program of a sector size's partition circuit (native witness generation): kept
 * with the shape (`<id>-v<version>.shape.wprog` in the shape cache), recorded when missing.
 */
export function porepProgram(info: SealProofInfo, shape: CircuitShape, cacheDir?: string): WitnessProgram {
  const known = programs.get(shape);
  if (known) return known;
  const file = cacheDir ? join(cacheDir, 'shapes', `${porepCircuitId(info.sectorSize)}-v${STACKED_CIRCUIT_VERSION}.shape.wprog`) : undefined;
  let program: WitnessProgram | undefined;
  if (file && existsSync(file)) {
    try {
      program = deserializeProgram(readFileSync(file));
      checkProgramForShape(program, shape);
    } catch {
      program = undefined; // unreadable or stale: record again
    }
  }
  if (!program) {
    program = stackedProgramFast(stackedParamsFor(info));
    checkProgramForShape(program, shape);
    if (file) {
      mkdirSync(join(cacheDir!, 'shapes'), { recursive: true });
      writeChunksAtomic(file, programChunks(program));
    }
  }
  programs.set(shape, program);
  return program;
}

function shapeFile(info: SealProofInfo, cacheDir: string): string {
  return join(cacheDir, 'shapes', `${porepCircuitId(info.sectorSize)}-v${STACKED_CIRCUIT_VERSION}.shape`);
}

/** The digest of the shape porepShape cached for `info` in `cacheDir` (written beside it), read
 *  without loading or compiling the shape; undefined when no shape of this version is cached. */
export function cachedPorepShapeDigest(info: SealProofInfo, cacheDir: string): string | undefined {
  const file = shapeFile(info, cacheDir);
  if (!existsSync(file) || !existsSync(`${file}.sha256`)) return undefined;
  const d = readFileSync(`${file}.sha256`, 'utf8').trim();
  return /^[0-9a-f]{64}$/.test(d) ? d : undefined;
}

/** The partition circuit's sizes, counted (nothing stored: seconds at 32 GiB, no matrices). */
export function porepCircuitSizes(info: SealProofInfo): { numConstraints: number; numInputs: number; numAux: number } {
  const cs = new CountingSystem();
  stackedShapeCircuit(info).synthesize(cs);
  return { numConstraints: cs.numConstraints, numInputs: cs.numInputs, numAux: cs.numAux };
}

export interface ParamsSource {
  kind: 'official' | 'dev';
  path: string;
}

/**
 * The files looked for, in order, for a sector size's official parameters in `paramsDir`: the
 * official name (`v28-stacked-proof-of-replication-…-<sha256 of the identifier>.params`,
 * src/filecoin/params-names.ts), then kiln's `<circuit id>.params`.
 */
export function officialParamsCandidates(info: SealProofInfo, paramsDir: string): string[] {
  return [join(paramsDir, porepParamsFileName(sectorSizeByBytes(info.sectorSize)!)), join(paramsDir, `${porepCircuitId(info.sectorSize)}.params`)];
}

/**
 * The official parameter file for a sector size in `paramsDir`, if any: by its official name, else
 * `<circuit id>.params`, else (a renamed file) a
 * `v28-stacked-proof-of-replication-merkletree-poseidon_hasher-<tree>-sha256_hasher-*.params` whose
 * sizes match the shape (three sizes share the 8-0-0 tag; the h count tells them apart). `shape`
 * may be a function: it is then called only when such a file is there to be told apart.
 */
type CircuitSizes = Pick<CircuitShape, 'numConstraints' | 'numInputs'>;

export async function findOfficialParams(
  info: SealProofInfo,
  shape: CircuitSizes | (() => CircuitSizes | Promise<CircuitSizes>),
  paramsDir: string,
): Promise<string | undefined> {
  for (const f of officialParamsCandidates(info, paramsDir)) if (existsSync(f)) return f;
  if (!existsSync(paramsDir)) return undefined;
  const prefix = `v28-stacked-proof-of-replication-merkletree-poseidon_hasher-${sectorSizeByBytes(info.sectorSize)!.paramsTreeTag}-sha256_hasher-`;
  const candidates = readdirSync(paramsDir).filter((f) => f.startsWith(prefix) && f.endsWith('.params'));
  if (candidates.length === 0) return undefined;
  const s = typeof shape === 'function' ? await shape() : shape;
  const hLen = domainSize(s) - 1;
  for (const f of candidates) {
    const path = join(paramsDir, f);
    try {
      const vk = await readVerifyingKeyFile(path, { prefix: true, checkPoints: false });
      if (vk.ic.length !== s.numInputs) continue;
      const { open } = await import('node:fs/promises');
      const fh = await open(path, 'r');
      try {
        const b = Buffer.alloc(4);
        const vkBytes = 864 + 4 + 96 * vk.ic.length;
        await fh.read(b, 0, 4, vkBytes);
        if (b.readUInt32BE(0) === hLen) return path;
      } finally {
        await fh.close();
      }
    } catch {
      /* not a readable parameter file: skip */
    }
  }
  return undefined;
}

/** Where the parameters of `shape` come from (without loading them). */
export async function porepParamsSource(info: SealProofInfo, shape: CircuitShape, paramsDir: string, devCacheDir: string): Promise<ParamsSource> {
  const official = await findOfficialParams(info, shape, paramsDir);
  if (official) return { kind: 'official', path: official };
  return { kind: 'dev', path: devParamsPath(shape, devCacheDir) };
}

/**
 * Where the verifying key of `info` comes from, without compiling the circuit shape: the official
 * parameter file (by name, or among the v28 files by the sizes of the circuit, counted without
 * storing it), else the development parameters named by the digest cached beside the shape
 * (porepShape writes it). Only when neither is known is the shape compiled (and cached), as before.
 */
export async function porepVerifyingKeySource(info: SealProofInfo, paramsDir: string, cacheDir: string): Promise<ParamsSource> {
  const official = await findOfficialParams(info, () => porepCircuitSizes(info), paramsDir);
  if (official) return { kind: 'official', path: official };
  const devDir = join(cacheDir, 'dev-params');
  const digest = cachedPorepShapeDigest(info, cacheDir);
  if (digest !== undefined) return { kind: 'dev', path: devParamsPathForDigest(digest, devDir) };
  return { kind: 'dev', path: devParamsPath(porepShape(info, cacheDir).shape, devDir) };
}

/**
 * Loads the parameters of `source` (generating development parameters when needed) through the one
 * loader of parameter files (groth16/params-native.ts loadParams): the file's counts are checked
 * against its size and against the circuit before any point is read; the CPU backend gets the
 * sections in native memory, the GPU backend on its device (the host keeps no copy).
 */
export async function loadPorepParams(source: ParamsSource, shape: CircuitShape, backend: Backend, devCacheDir: string, label?: string): Promise<AnyParameters> {
  if (source.kind === 'official') {
    const p = await loadParams(source.path, backend, { expected: expectedParamsCounts(shape), shape, label });
    checkParamsForShape(p, shape);
    return p;
  }
  return loadOrCreateDevParams(shape, backend, devCacheDir, { label });
}

/** The verifying key of `source` (read from the start of the parameter file). */
export function loadPorepVerifyingKey(source: ParamsSource): Promise<VerifyingKey> {
  const vkFile = source.path.replace(/\.params$/, '.vk');
  if (source.kind === 'official' && existsSync(vkFile)) return readVerifyingKeyFile(vkFile);
  return readVerifyingKeyFile(source.path, { prefix: true });
}

/** The witness (assignment) and public inputs of one partition; checks the circuit's inputs against
 *  the public inputs a chain verifier derives from the C1. With `out` (e.g. a backend buffer of
 *  (inputs + aux) × 32 bytes) the witness is written straight into it, no copy. */
export function porepWitness(
  c1: C1Output,
  partition: number,
  shape: CircuitShape,
  out?: Uint8Array,
): { assignment: Uint8Array; inputs: bigint[] } {
  const wg = new WitnessGenerator(shape.numInputs, out);
  stackedCircuitFor(c1, partition).synthesize(wg);
  const inputs = wg.inputs();
  checkPublicInputs(c1, partition, inputs);
  if (wg.numAux !== shape.numAux) throw new Error(`partition ${partition}: ${wg.numAux} aux variables, the shape has ${shape.numAux}`);
  return { assignment: wg.assignment(), inputs };
}

/** Which witness path: native (witness programs, the default when the CPU addon loads) or ts. */
export type WitnessPath = 'native' | 'ts';

/** The witness path chosen by `KILN_WITNESS` (native | ts; default native when the CPU addon loads). */
export function witnessRunner(): WitnessProgramRunner | undefined {
  const want = process.env.KILN_WITNESS ?? 'native';
  if (want !== 'native' && want !== 'ts') throw new RangeError(`KILN_WITNESS must be native or ts, got ${want}`);
  if (want === 'ts') return undefined;
  try {
    return new NativeBackend();
  } catch {
    return undefined; // no CPU addon: the TypeScript generator
  }
}

/** porepWitness, computed natively by the partition's witness program (same bytes, same checks). */
export async function porepWitnessNative(
  runner: WitnessProgramRunner,
  program: WitnessProgram,
  c1: C1Output,
  partition: number,
  shape: CircuitShape,
  out?: Uint8Array,
): Promise<{ assignment: Uint8Array; inputs: bigint[]; tapeMs: number; runMs: number }> {
  checkProgramForShape(program, shape);
  const w = await stackedWitnessNative(runner, program, c1, partition, out);
  checkPublicInputs(c1, partition, w.inputs);
  return w;
}

function checkPublicInputs(c1: C1Output, partition: number, inputs: bigint[]): void {
  const want = partitionPublicInputs(c1, partition);
  const bad = want.findIndex((x, i) => inputs[i] !== x);
  if (inputs.length !== want.length || bad >= 0) {
    throw new Error(`partition ${partition}: the circuit's public inputs differ from the C1's (index ${bad < 0 ? inputs.length : bad})`);
  }
}

/** Verifies the concatenated partition proofs of a C1 against a verifying key; returns per-partition
 *  results (throws on a proof length that is not 192 × partitions). */
export function verifyPorep(c1: C1Output, proofBytes: Uint8Array, vk: VerifyingKey): boolean[] {
  const n = c1.partitions.length;
  if (proofBytes.length !== n * PROOF_BYTES) {
    throw new RangeError(`proof is ${proofBytes.length} bytes; ${c1.registeredProof.name} has ${n} partition(s): expected ${n * PROOF_BYTES}`);
  }
  const pvk = prepareVerifyingKey(vk);
  const proofs = decodeProofs(proofBytes);
  return proofs.map((p, k) => verifyProof(pvk, p, partitionPublicInputs(c1, k)));
}
