/**
 * The SnapDeals proof kind's core (EmptySectorUpdate circuit, FACTS §7), for the CLI and the engine
 * (snap-planner.ts): the compiled shape and witness program of a circuit id (`snap-2k` … `snap-64g`, cached on disk
 * like PoRep's and PoSt's), the circuit's sizes counted without storing, where the parameters come from (the
 * official file by its v28 name from [srs] param_cache — the name is given by the caller, see
 * params-names.ts on branch ops — or `<circuit id>.params`; else INSECURE development parameters, as for PoRep:
 * params.ts), a partition's witness (native witness program or TypeScript) and the verification of the proofs.
 */
import { snapParamsFileName } from '../filecoin/params-names.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VerifyingKey } from '../groth16/keys.js';
import { decodeProofs, PROOF_BYTES } from '../groth16/proof.js';
import { queryIndices, type QueryIndices } from '../groth16/queries.js';
import { devParamsPath, devParamsPathForDigest, ensureDevParamsFile, type EnsureDevParamsResult } from '../groth16/setup.js';
import { prepareVerifyingKey, verifyProof } from '../groth16/verifier.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { type WitnessProgram } from '../r1cs/program.js';
import { rememberShapeDigest, shapeDigest } from '../r1cs/shape.js';
import { DensityCounter } from '../r1cs/density.js';
import { WitnessGenerator } from '../r1cs/witness.js';
import type { WitnessProgramRunner } from '../filecoin/circuit/stacked-program.js';
import { snapBlankCircuit, snapPublicInputs } from '../filecoin/snap/circuit.js';
import { snapShapeAndProgramFast, snapWitnessFromTape, snapWitnessNative } from '../filecoin/snap/program.js';
import { snapHDefault, snapProofByCircuitId, snapProofById, type SnapProofInfo } from '../filecoin/snap/registry.js';
import { snapCircuitFor, type SnapPartitionProof, type SnapPublic } from '../filecoin/snap/vanilla.js';
import type { ParamsSource } from './porep-c2.js';
import { cachedProgram, readCachedShape, type ShapeTaskResult, writeShapeCache } from './shape-cache.js';

/** Bump when the circuit code changes the shape: cached shapes of another version are ignored. */
export const SNAP_CIRCUIT_VERSION = 1;

/** A RegisteredUpdateProof by id (0–4) or name ("StackedDrg32GiBV1"); undefined when none. */
export function parseSnapProof(s: string | number): SnapProofInfo | undefined {
  const t = String(s).trim();
  if (/^\d+$/.test(t)) return snapProofById(Number(t));
  for (let id = 0; id < 5; id++) {
    const p = snapProofById(id)!;
    if (p.name.toLowerCase() === t.toLowerCase()) return p;
  }
  return undefined;
}

function shapeFile(info: SnapProofInfo, cacheDir: string): string {
  return join(cacheDir, 'shapes', `${info.circuitId}-v${SNAP_CIRCUIT_VERSION}.shape`);
}

const programs = new WeakMap<CircuitShape, WitnessProgram>();
/** Records the witness program of a shape (one a worker thread compiled with it: snapShapeTask). */
export const rememberSnapProgram = (shape: CircuitShape, p: WitnessProgram): void => void programs.set(shape, p);

/** What snapShapeTask sends back (the digest always: development parameters are named by it). */
export type SnapShapeTaskResult = ShapeTaskResult<string>;

/**
 * snapShape and snapProgramFor of a circuit id, meant to run in a worker thread (engine/task-worker.ts
 * runOffThread): recording a SnapDeals shape takes seconds (snap-512m) to 40 s and 6 GiB (snap-32g on the H200),
 * which must not block the daemon's event loop. Every typed array of the result is transferred back, not copied.
 * The caller calls rememberSnapProgram, rememberQueryIndices and rememberShapeDigest with the result.
 */
export function snapShapeTask(arg: { circuitId: string; cacheDir?: string }): SnapShapeTaskResult {
  const info = snapProofByCircuitId(arg.circuitId);
  if (info === undefined) throw new Error(`unknown SnapDeals circuit ${arg.circuitId}`);
  const { shape, cached, cacheError } = snapShape(info, arg.cacheDir);
  const program = snapProgramFor(info, shape, arg.cacheDir);
  const digest = (arg.cacheDir !== undefined && cacheError === undefined ? cachedSnapShapeDigest(info, arg.cacheDir) : undefined) ?? shapeDigest(shape);
  return { shape, queries: queryIndices(shape), program, digest, cached, cacheError };
}

/**
 * Makes the INSECURE development parameter file of a SnapDeals circuit when missing, in a worker thread (the CPU
 * setup evaluates the circuit at tau for seconds to hours). The shape is read from the cache snapShapeTask filled.
 */
export async function snapDevParamsTask(arg: { circuitId: string; cacheDir?: string; devDir: string; backend: string }, progress?: (p: { step: string; done: number; total: number }) => void): Promise<EnsureDevParamsResult> {
  const info = snapProofByCircuitId(arg.circuitId);
  if (info === undefined) throw new Error(`unknown SnapDeals circuit ${arg.circuitId}`);
  const { shape } = snapShape(info, arg.cacheDir);
  const { selectBackend } = await import('../backend/select.js');
  return ensureDevParamsFile(shape, selectBackend(arg.backend), arg.devDir, { onStep: (step, done, total) => progress?.({ step, done, total }) });
}

/**
 * The compiled shape (and its witness program): from `<cacheDir>/shapes/` when cached, else recorded from the prologue
 * and one challenge, replicated with relocation (snap/program.ts), and cached.
 */
export function snapShape(info: SnapProofInfo, cacheDir?: string): { shape: CircuitShape; cached: boolean; cacheError?: string } {
  const file = cacheDir ? shapeFile(info, cacheDir) : undefined;
  const cached = readCachedShape(file);
  if (cached) return { shape: cached, cached: true };
  const { shape, program } = snapShapeAndProgramFast(info.params);
  programs.set(shape, program);
  if (!file) return { shape, cached: false };
  return { shape, cached: false, ...writeShapeCache(file, shape, program) };
}

/** The witness program kept with the shape (`<id>-v<version>.shape.wprog`), recorded when missing. */
export function snapProgramFor(info: SnapProofInfo, shape: CircuitShape, cacheDir?: string): WitnessProgram {
  const known = programs.get(shape);
  if (known) return known;
  const program = cachedProgram(cacheDir ? shapeFile(info, cacheDir) : undefined, shape, () => snapShapeAndProgramFast(info.params).program);
  programs.set(shape, program);
  return program;
}

/** The digest of the cached shape, without loading it; undefined when none is cached. */
export function cachedSnapShapeDigest(info: SnapProofInfo, cacheDir: string): string | undefined {
  const file = shapeFile(info, cacheDir);
  if (!existsSync(file) || !existsSync(`${file}.sha256`)) return undefined;
  const d = readFileSync(`${file}.sha256`, 'utf8').trim();
  return /^[0-9a-f]{64}$/.test(d) ? d : undefined;
}

export interface SnapCircuitSizes {
  numConstraints: number;
  /** Inputs with ONE. */
  numInputs: number;
  numAux: number;
  aAuxDense: number;
  bInputDense: number;
  bAuxDense: number;
}

/** The circuit's sizes and densities, counted without storing anything (32 GiB: about a minute). */
export function snapCircuitSizes(info: SnapProofInfo): SnapCircuitSizes {
  const dc = new DensityCounter();
  snapBlankCircuit(info.params).synthesize(dc);
  const d = dc.densityCounts();
  return { numConstraints: d.constraints, numInputs: d.inputs, numAux: d.aux, aAuxDense: d.aAuxDense, bInputDense: d.bInputDense, bAuxDense: d.bAuxDense };
}

/**
 * The official parameter file in `paramsDir`: `officialName` (default: the v28 name, params-names.ts
 * `snapParamsFileName`) when present, else `<circuit id>.params`.
 */
export function findOfficialSnapParams(info: SnapProofInfo, paramsDir: string, officialName: string = snapParamsFileName(info.size)): string | undefined {
  for (const name of [officialName, `${info.circuitId}.params`]) {
    if (name === undefined) continue;
    const p = join(paramsDir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** Where the verifying key comes from, without compiling the shape when it can be avoided. */
export function snapVerifyingKeySource(info: SnapProofInfo, paramsDir: string, cacheDir: string, officialName?: string): ParamsSource {
  const official = findOfficialSnapParams(info, paramsDir, officialName);
  if (official) return { kind: 'official', path: official };
  const devDir = join(cacheDir, 'dev-params');
  const digest = cachedSnapShapeDigest(info, cacheDir);
  if (digest !== undefined) return { kind: 'dev', path: devParamsPathForDigest(digest, devDir) };
  return { kind: 'dev', path: devParamsPath(snapShape(info, cacheDir).shape, devDir) };
}

/** One partition to prove: its index, h and the update's public values. */
export interface SnapPartitionJob {
  readonly k: number;
  readonly h: number;
  readonly pub: SnapPublic;
  readonly proof: SnapPartitionProof;
}

/** The partition's witness by the TypeScript WitnessGenerator (the reference path). */
export function snapWitnessTs(info: SnapProofInfo, job: SnapPartitionJob, numInputs: number, out?: Uint8Array): { assignment: Uint8Array; inputs: bigint[]; numAux: number } {
  const wg = new WitnessGenerator(numInputs, out);
  snapCircuitFor(info.params, job.k, job.h, job.pub, job.proof).synthesize(wg);
  return { assignment: wg.assignment(), inputs: wg.inputs(), numAux: wg.numAux };
}

/** The partition's witness computed natively by the circuit's witness program (the same bytes). */
export async function snapWitnessNativeFor(
  runner: WitnessProgramRunner,
  program: WitnessProgram,
  info: SnapProofInfo,
  job: SnapPartitionJob,
  out?: Uint8Array,
): Promise<{ assignment: Uint8Array; inputs: bigint[]; tapeMs: number; runMs: number }> {
  return snapWitnessNative(runner, program, snapCircuitFor(info.params, job.k, job.h, job.pub, job.proof), out);
}

/** The partition's witness computed natively from its encoded tape (snap-worker.ts snapTapeTask, in a synthesis worker). */
export async function snapWitnessNativeFromTape(
  runner: WitnessProgramRunner,
  program: WitnessProgram,
  tape: Uint8Array,
  out?: Uint8Array,
): Promise<{ assignment: Uint8Array; inputs: bigint[]; runMs: number }> {
  return snapWitnessFromTape(runner, program, tape, out);
}

/**
 * Checks the partition proofs of an update (partitions × 192 B, in order) against the public inputs a chain verifier
 * derives: per partition k, [k | h_select(h_default) << partition_bit_len, comm_r_old, comm_d_new, comm_r_new].
 */
export function verifySnap(info: SnapProofInfo, pub: SnapPublic, proofBytes: Uint8Array, vk: VerifyingKey, h = snapHDefault(info.params.sectorNodes)): boolean {
  const n = info.params.partitionCount;
  if (proofBytes.length !== n * PROOF_BYTES) throw new RangeError(`proof is ${proofBytes.length} bytes; a ${info.size.label} SnapDeals proof is ${n} × ${PROOF_BYTES} = ${n * PROOF_BYTES}`);
  const pvk = prepareVerifyingKey(vk);
  return decodeProofs(proofBytes).every((proof, k) => verifyProof(pvk, proof, snapPublicInputs(info.params, k, h, pub.commROld, pub.commDNew, pub.commRNew)));
}
