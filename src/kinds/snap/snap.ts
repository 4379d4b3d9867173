/**
 * The SnapDeals proof kind's core (EmptySectorUpdate circuit, docs/filecoin.md §7), for the CLI and the engine
 * (planner.ts): the compiled shape and witness program of a circuit id (`snap-2k` … `snap-64g`, cached on disk
 * like PoRep's and PoSt's), the circuit's sizes counted without storing, where the parameters come from (the
 * official file by its v28 name from [srs] param_cache — the name is given by the caller,
 * params-names.ts `snapParamsFileName` — or `<circuit id>.params`; else INSECURE development parameters, as for PoRep:
 * params.ts), a partition's witness (native witness program or TypeScript) and the verification of the proofs.
 */
import { snapParamsFileName } from '../../filecoin/params-names.js';
import { join } from 'node:path';
import type { VerifyingKey } from '../../groth16/keys.js';
import { decodeProofs, PROOF_BYTES } from '../../groth16/proof.js';
import { prepareVerifyingKey, verifyProof } from '../../groth16/verifier.js';
import { type WitnessProgram } from '../../r1cs/program.js';
import { DensityCounter } from '../../r1cs/density.js';
import { WitnessGenerator } from '../../r1cs/witness.js';
import type { WitnessProgramRunner } from '../../r1cs/circuit-program.js';
import { snapBlankCircuit, snapPublicInputs } from '../../filecoin/snap/circuit.js';
import { snapShapeAndProgramFast, snapWitnessNative } from '../../filecoin/snap/program.js';
import { registeredByIdOrName } from '../../filecoin/registry.js';
import { snapHDefault, snapProofByCircuitId, snapProofById, type SnapProofInfo } from '../../filecoin/snap/registry.js';
import { snapCircuitFor, type SnapPartitionProof, type SnapPublic } from '../../filecoin/snap/vanilla.js';
import { firstParamsFile, type ParamsSource, verifyingKeySource } from '../params.js';
import { countedSizes, type CircuitSizes, kindShapes, type ShapeTaskResult } from '../shape-cache.js';

/** Bump when the circuit code changes the shape: cached shapes of another version are ignored. */
export const SNAP_CIRCUIT_VERSION = 1;

/** A RegisteredUpdateProof by id (0–4) or name ("StackedDrg32GiBV1"); undefined when none. */
export function parseSnapProof(s: string | number): SnapProofInfo | undefined {
  return registeredByIdOrName(s, 5, snapProofById, (p) => p.name);
}

const shapes = kindShapes<SnapProofInfo>({
  name: 'SnapDeals',
  infoOf: snapProofByCircuitId,
  shapeFile: (info, cacheDir) => join(cacheDir, 'shapes', `${info.circuitId}-v${SNAP_CIRCUIT_VERSION}.shape`),
  // recorded from the prologue and one challenge, replicated with relocation (snap/program.ts)
  record: (info) => snapShapeAndProgramFast(info.params),
  recordProgram: (info) => snapShapeAndProgramFast(info.params).program,
});

/** What snapShapeTask sends back (the digest always: development parameters are named by it). */
export type SnapShapeTaskResult = ShapeTaskResult<string>;

/**
 * snapShape and snapProgramFor of a circuit id in a worker thread (engine/task-worker.ts runOffThread): seconds
 * (snap-512m) to 40 s and 6 GiB (snap-32g on the H200). The caller remembers the program, query indices and digest
 * (kind.ts).
 */
export function snapShapeTask(arg: { circuitId: string; cacheDir?: string }): SnapShapeTaskResult {
  return shapes.shapeTask({ ...arg, digest: true }) as SnapShapeTaskResult;
}

/** Makes the INSECURE development parameter file of a SnapDeals circuit when missing, in a worker thread. The
 *  shape is read from the cache snapShapeTask filled. */
export const snapDevParamsTask = shapes.devParamsTask;

/** The compiled shape (and its witness program): cached in `<cacheDir>/shapes/`, else recorded. */
export const snapShape = shapes.compile;

/** The digest of the cached shape, without loading it; undefined when none is cached. */
export const cachedSnapShapeDigest = shapes.cachedDigest;

export type SnapCircuitSizes = CircuitSizes;

/** The circuit's sizes and densities, counted without storing anything (32 GiB: about a minute). */
export function snapCircuitSizes(info: SnapProofInfo): SnapCircuitSizes {
  const dc = new DensityCounter();
  snapBlankCircuit(info.params).synthesize(dc);
  return countedSizes(dc);
}

/** The file names looked for, in order, for a SnapDeals circuit's parameters: `officialName` (default: the v28 name,
 *  params-names.ts `snapParamsFileName`), then `<circuit id>.params`. */
export function snapParamsNames(info: SnapProofInfo, officialName: string = snapParamsFileName(info.size)): string[] {
  return [officialName, `${info.circuitId}.params`];
}

/** The official parameter file in `paramsDir` (kinds/params.ts firstParamsFile of snapParamsNames). */
export function findOfficialSnapParams(info: SnapProofInfo, paramsDir: string, officialName?: string): string | undefined {
  return firstParamsFile(paramsDir, snapParamsNames(info, officialName));
}

/** Where the verifying key comes from, without compiling the shape when it can be avoided. */
export function snapVerifyingKeySource(info: SnapProofInfo, paramsDir: string, cacheDir: string, officialName?: string): ParamsSource {
  return verifyingKeySource(
    findOfficialSnapParams(info, paramsDir, officialName),
    cacheDir,
    () => cachedSnapShapeDigest(info, cacheDir),
    () => snapShape(info, cacheDir).circuit,
  );
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
