/**
 * The WinningPoSt / WindowPoSt proof kinds' core (FallbackPoSt circuit, FACTS §6), for the CLI and the engine
 * (post-planner.ts): the compiled shape and witness program of a circuit id (`winning-2k` … `wpost-64g`, recorded
 * from one sector and replicated, cached on disk like PoRep's), the circuit's sizes counted without storing, where
 * the parameters come from (the official file by its name, `postParamsFileName`, or `<circuit id>.params` in the
 * parameter cache; else INSECURE development parameters, exactly as PoRep: porep-c2.ts / params.ts), the witness
 * of a partition (native witness program or TypeScript) and the verification of a proof.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VerifyingKey } from '../groth16/keys.js';
import { decodeProofs, PROOF_BYTES } from '../groth16/proof.js';
import { queryIndices, type QueryIndices } from '../groth16/queries.js';
import { devParamsPath, devParamsPathForDigest, ensureDevParamsFile, type EnsureDevParamsResult } from '../groth16/setup.js';
import { prepareVerifyingKey } from '../groth16/verifier.js';
import { verifyPartitionProof } from '../engine/verify-proof.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { type WitnessProgram } from '../r1cs/program.js';
import { rememberShapeDigest, shapeDigest } from '../r1cs/shape.js';
import { DensityCounter } from '../r1cs/density.js';
import { WitnessGenerator } from '../r1cs/witness.js';
import type { WitnessProgramRunner } from '../filecoin/circuit/stacked-program.js';
import { type PoStChallengeContext, postBlankCircuit, postCircuitFor, postCircuitParams, postPublicInputs } from '../filecoin/post/circuit.js';
import { postProgramFast, postShapeAndProgramFast, postWitnessFromTape, postWitnessNative } from '../filecoin/post/program.js';
import { postCircuitId, postParamsFileName, postProofByCircuitId, postProofById, postProofName } from '../filecoin/post/registry.js';
import type { PoStProofInfo, PoStSectorProof } from '../filecoin/post/types.js';
import type { ParamsSource } from './porep-c2.js';
import { cachedProgram, readCachedShape, type ShapeTaskResult, writeShapeCache } from './shape-cache.js';

/** Bump when the circuit code changes the shape: cached shapes of another version are ignored. */
export const POST_CIRCUIT_VERSION = 1;

export { postCircuitId, postProofByCircuitId };

/** A registered PoSt proof by id (0–14) or filecoin-ffi name ("StackedDrgWindow2KiBV1_1"); undefined when none. */
export function parsePoStProof(s: string | number): PoStProofInfo | undefined {
  const t = String(s).trim();
  if (/^\d+$/.test(t)) return postProofById(Number(t));
  for (let id = 0; id < 15; id++) {
    const p = postProofById(id)!;
    if (postProofName(p).toLowerCase() === t.toLowerCase()) return p;
  }
  return undefined;
}

/**
 * Where PoSt shapes are cached: `cacheDir`, unless `KILN_POST_SHAPE_CACHE=0` (or off): then they are recorded in
 * memory each time the process needs them (~1 min at 32 GiB on the H200 host). For disks too small for both the
 * wpost-32g development parameters (~61 GB) and its shape (~7 GB), e.g. the 64 GiB of the lent H200.
 */
export function postShapeCacheDir(cacheDir: string | undefined): string | undefined {
  const v = process.env.KILN_POST_SHAPE_CACHE;
  return v === '0' || v === 'off' || v === 'false' ? undefined : cacheDir;
}

function shapeFile(info: PoStProofInfo, cacheDir: string): string {
  return join(cacheDir, 'shapes', `${postCircuitId(info)}-v${POST_CIRCUIT_VERSION}.shape`);
}

const programs = new WeakMap<CircuitShape, WitnessProgram>();
/** Records the witness program of a shape (one a worker thread compiled with it: postShapeTask). */
export const rememberPostProgram = (shape: CircuitShape, p: WitnessProgram): void => void programs.set(shape, p);

/** What postShapeTask sends back (the digest computed when `digest` was asked for). */
export type PostShapeTaskResult = ShapeTaskResult;

/**
 * postShape and postProgramFor of a circuit id, meant to run in a worker thread (engine/task-worker.ts
 * runOffThread): recording a PoSt shape takes seconds (wpost-512m) to half a minute (wpost-32g on the H200)
 * and gigabytes, which must not block the daemon's event loop. Every typed array of the result is transferred
 * back, not copied. `digest`: compute the shape's digest when none is cached (development parameters are
 * named by it; hashing a 32 GiB shape takes seconds). The caller calls rememberPostProgram,
 * rememberQueryIndices and rememberShapeDigest with the result.
 */
export function postShapeTask(arg: { circuitId: string; cacheDir?: string; digest?: boolean }): PostShapeTaskResult {
  const info = postProofByCircuitId(arg.circuitId);
  if (info === undefined) throw new Error(`unknown PoSt circuit ${arg.circuitId}`);
  const { shape, cached, cacheError } = postShape(info, arg.cacheDir);
  const program = postProgramFor(info, shape, arg.cacheDir);
  let digest = arg.cacheDir !== undefined ? cachedPostShapeDigest(info, arg.cacheDir) : undefined;
  if (digest === undefined && arg.digest === true) digest = shapeDigest(shape);
  return { shape, queries: queryIndices(shape), program, digest, cached, cacheError };
}

/**
 * Makes the INSECURE development parameter file of a PoSt circuit when missing, in a worker thread (the CPU
 * setup evaluates the circuit at tau for seconds to hours). The shape is read from the cache postShapeTask
 * filled (recorded again when the cache is off: KILN_POST_SHAPE_CACHE=0).
 */
export async function postDevParamsTask(arg: { circuitId: string; cacheDir?: string; devDir: string; backend: string }, progress?: (p: { step: string; done: number; total: number }) => void): Promise<EnsureDevParamsResult> {
  const info = postProofByCircuitId(arg.circuitId);
  if (info === undefined) throw new Error(`unknown PoSt circuit ${arg.circuitId}`);
  const { shape } = postShape(info, arg.cacheDir);
  const { selectBackend } = await import('../backend/select.js');
  return ensureDevParamsFile(shape, selectBackend(arg.backend), arg.devDir, { onStep: (step, done, total) => progress?.({ step, done, total }) });
}

/**
 * The compiled shape of a PoSt circuit: read from `<cacheDir>/shapes/` when a shape of the current circuit
 * version is there, else recorded from one sector and replicated (with its witness program) and written there.
 */
export function postShape(info: PoStProofInfo, cacheDir?: string): { shape: CircuitShape; cached: boolean; cacheError?: string } {
  const file = cacheDir ? shapeFile(info, cacheDir) : undefined;
  const cached = readCachedShape(file);
  if (cached) return { shape: cached, cached: true };
  const { shape, program } = postShapeAndProgramFast(postCircuitParams(info));
  programs.set(shape, program);
  if (!file) return { shape, cached: false };
  return { shape, cached: false, ...writeShapeCache(file, shape, program) };
}

/** The witness program of a PoSt circuit (kept with the shape; `<id>-v<version>.shape.wprog`), recorded when missing. */
export function postProgramFor(info: PoStProofInfo, shape: CircuitShape, cacheDir?: string): WitnessProgram {
  const known = programs.get(shape);
  if (known) return known;
  const program = cachedProgram(cacheDir ? shapeFile(info, cacheDir) : undefined, shape, () => postProgramFast(postCircuitParams(info)));
  programs.set(shape, program);
  return program;
}

/** The digest of the cached shape (written beside it), without loading it; undefined when none is cached. */
export function cachedPostShapeDigest(info: PoStProofInfo, cacheDir: string): string | undefined {
  const file = shapeFile(info, cacheDir);
  if (!existsSync(file) || !existsSync(`${file}.sha256`)) return undefined;
  const d = readFileSync(`${file}.sha256`, 'utf8').trim();
  return /^[0-9a-f]{64}$/.test(d) ? d : undefined;
}

export interface PoStCircuitSizes {
  numConstraints: number;
  /** Inputs with ONE. */
  numInputs: number;
  numAux: number;
  aAuxDense: number;
  bInputDense: number;
  bAuxDense: number;
}

/**
 * The circuit's sizes and densities, counted without storing anything: one sector and two sectors are counted
 * and the whole circuit extrapolated (sectors are identical segments: every figure is affine in the sector
 * count; tests compare with a whole count).
 */
export function postCircuitSizes(info: PoStProofInfo): PoStCircuitSizes {
  const count = (sectorCount: number): PoStCircuitSizes => {
    const dc = new DensityCounter();
    postBlankCircuit({ ...postCircuitParams(info), sectorCount }).synthesize(dc);
    const d = dc.densityCounts();
    return { numConstraints: d.constraints, numInputs: d.inputs, numAux: d.aux, aAuxDense: d.aAuxDense, bInputDense: d.bInputDense, bAuxDense: d.bAuxDense };
  };
  const one = count(1);
  const two = count(2);
  const n = info.sectorCount;
  const at = (k: keyof PoStCircuitSizes): number => one[k] + (n - 1) * (two[k] - one[k]);
  return {
    numConstraints: at('numConstraints'),
    numInputs: at('numInputs'),
    numAux: at('numAux'),
    aAuxDense: at('aAuxDense'),
    bInputDense: at('bInputDense'),
    bAuxDense: at('bAuxDense'),
  };
}

/** The official parameter file of a PoSt circuit in `paramsDir`: its official name, else `<circuit id>.params`. */
export function findOfficialPoStParams(info: PoStProofInfo, paramsDir: string): string | undefined {
  for (const name of [postParamsFileName(info), `${postCircuitId(info)}.params`]) {
    const p = join(paramsDir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** Where the verifying key comes from without compiling the shape when it can be avoided (as PoRep's; `shape`: the
 *  circuit's shape when the caller has it). */
export function postVerifyingKeySource(info: PoStProofInfo, paramsDir: string, cacheDir: string, shape?: CircuitShape): ParamsSource {
  const official = findOfficialPoStParams(info, paramsDir);
  if (official) return { kind: 'official', path: official };
  const devDir = join(cacheDir, 'dev-params');
  if (shape) return { kind: 'dev', path: devParamsPath(shape, devDir) };
  const digest = cachedPostShapeDigest(info, cacheDir);
  if (digest !== undefined) return { kind: 'dev', path: devParamsPathForDigest(digest, devDir) };
  return { kind: 'dev', path: devParamsPath(postShape(info, postShapeCacheDir(cacheDir)).shape, devDir) };
}

/** The partition's witness computed by the TypeScript WitnessGenerator (the reference path). */
export function postWitnessTs(info: PoStProofInfo, sectors: readonly PoStSectorProof[], numInputs: number, out?: Uint8Array): { assignment: Uint8Array; inputs: bigint[]; numAux: number } {
  const wg = new WitnessGenerator(numInputs, out);
  postCircuitFor(info, sectors).synthesize(wg);
  return { assignment: wg.assignment(), inputs: wg.inputs(), numAux: wg.numAux };
}

/** The partition's witness computed natively by the circuit's witness program (the same bytes). */
export async function postWitnessNativeFor(
  runner: WitnessProgramRunner,
  program: WitnessProgram,
  info: PoStProofInfo,
  sectors: readonly PoStSectorProof[],
  out?: Uint8Array,
): Promise<{ assignment: Uint8Array; inputs: bigint[]; tapeMs: number; runMs: number }> {
  return postWitnessNative(runner, program, postCircuitFor(info, sectors), out);
}

/** The partition's witness computed natively from its tape (postTapeOf, e.g. made in a synthesis worker). */
export async function postWitnessNativeFromTape(
  runner: WitnessProgramRunner,
  program: WitnessProgram,
  tape: Uint8Array,
  out?: Uint8Array,
): Promise<{ assignment: Uint8Array; inputs: bigint[]; runMs: number }> {
  return postWitnessFromTape(runner, program, tape, out);
}

/** Checks a 192-byte PoSt proof against the public inputs a verifier derives (sector ids, comm_r's, randomness).
 *  The input sum goes through the native CPU addon when it is built (a 32 GiB WindowPoSt has 25,840 inputs:
 *  ~1 s instead of ~75 s with noble's one multiplication per input), noble otherwise. */
export async function verifyPoSt(
  info: PoStProofInfo,
  sectors: readonly { sectorId: bigint; commR: bigint }[],
  ctx: PoStChallengeContext,
  proofBytes: Uint8Array,
  vk: VerifyingKey,
): Promise<boolean> {
  if (proofBytes.length !== PROOF_BYTES) throw new RangeError(`proof is ${proofBytes.length} bytes; a PoSt proof is ${PROOF_BYTES}`);
  const [proof] = decodeProofs(proofBytes);
  return verifyPartitionProof(prepareVerifyingKey(vk), proof!, postPublicInputs(info, sectors, ctx));
}
