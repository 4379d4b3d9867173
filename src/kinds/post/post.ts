/**
 * The WinningPoSt / WindowPoSt proof kinds' core (FallbackPoSt circuit, docs/filecoin.md §6), for the CLI and the engine
 * (planner.ts): the compiled shape and witness program of a circuit id (`winning-2k` … `wpost-64g`, recorded
 * from one sector and replicated, cached on disk like PoRep's), the circuit's sizes counted without storing, where
 * the parameters come from (the official file by its name, `postParamsFileName`, or `<circuit id>.params` in the
 * parameter cache; else INSECURE development parameters, exactly as PoRep: porep/porep-c2.ts, ../params.ts), the witness
 * of a partition (native witness program or TypeScript) and the verification of a proof.
 */
import { join } from 'node:path';
import type { VerifyingKey } from '../../groth16/keys.js';
import { decodeProofs, PROOF_BYTES } from '../../groth16/proof.js';
import { prepareVerifyingKey } from '../../groth16/verifier.js';
import { verifyPartitionProof } from '../../engine/verify-proof.js';
import { type WitnessProgram } from '../../r1cs/program.js';
import { DensityCounter } from '../../r1cs/density.js';
import { WitnessGenerator } from '../../r1cs/witness.js';
import type { WitnessProgramRunner } from '../../r1cs/circuit-program.js';
import { type PoStChallengeContext, postBlankCircuit, postCircuitFor, postCircuitParams, postPublicInputs } from '../../filecoin/post/circuit.js';
import { postProgramFast, postShapeAndProgramFast, postWitnessNative } from '../../filecoin/post/program.js';
import { registeredByIdOrName } from '../../filecoin/registry.js';
import { postCircuitId, postParamsFileName, postProofByCircuitId, postProofById, postProofName } from '../../filecoin/post/registry.js';
import type { PoStProofInfo, PoStSectorProof } from '../../filecoin/post/types.js';
import { firstParamsFile, type ParamsSource, verifyingKeySource } from '../params.js';
import type { CircuitLike } from '../../groth16/compiled.js';
import { countedSizes, type CircuitSizes, kindShapes, type ShapeTaskResult } from '../shape-cache.js';

/** Bump when the circuit code changes the shape: cached shapes of another version are ignored. */
export const POST_CIRCUIT_VERSION = 1;

/** A registered PoSt proof by id (0–14) or filecoin-ffi name ("StackedDrgWindow2KiBV1_1"); undefined when none. */
export function parsePoStProof(s: string | number): PoStProofInfo | undefined {
  return registeredByIdOrName(s, 15, postProofById, postProofName);
}

/**
 * Where PoSt shapes are cached: `cacheDir`, unless `cache` is false (the kind's tuning.postShapeCache:
 * `KILN_POST_SHAPE_CACHE=0` (or off) read at the edges): then they are recorded in memory each time the process
 * needs them (~1 min at 32 GiB on the H200 host). For disks too small for both the wpost-32g development
 * parameters (~61 GB) and its shape (~7 GB), e.g. the 64 GiB of the lent H200.
 */
export function postShapeCacheDir(cacheDir: string | undefined, cache = true): string | undefined {
  return cache ? cacheDir : undefined;
}

const shapes = kindShapes<PoStProofInfo>({
  name: 'PoSt',
  infoOf: postProofByCircuitId,
  shapeFile: (info, cacheDir) => join(cacheDir, 'shapes', `${postCircuitId(info)}-v${POST_CIRCUIT_VERSION}.shape`),
  // recorded from one sector and replicated
  record: (info) => postShapeAndProgramFast(postCircuitParams(info)),
  recordProgram: (info) => postProgramFast(postCircuitParams(info)),
});

/** What postShapeTask sends back (the digest computed when `digest` was asked for). */
export type PostShapeTaskResult = ShapeTaskResult;

/**
 * postShape and postProgramFor of a circuit id in a worker thread (engine/task-worker.ts runOffThread): seconds
 * (wpost-512m) to half a minute (wpost-32g on the H200) and gigabytes. `digest`: compute the shape's digest when
 * none is cached (without a shape cache, development parameters are named by it). The caller remembers the
 * program, query indices and digest (kind.ts).
 */
export const postShapeTask = shapes.shapeTask;

/** Makes the INSECURE development parameter file of a PoSt circuit when missing, in a worker thread. The shape is
 *  read from the cache postShapeTask filled (recorded again when the cache is off: KILN_POST_SHAPE_CACHE=0, its
 *  `cacheDir` then undefined). */
export const postDevParamsTask = shapes.devParamsTask;

/** The compiled shape of a PoSt circuit: cached in `<cacheDir>/shapes/`, else recorded from one sector and replicated. */
export const postShape = shapes.compile;

/** The digest of the cached shape (written beside it), without loading it; undefined when none is cached. */
export const cachedPostShapeDigest = shapes.cachedDigest;

export type PoStCircuitSizes = CircuitSizes;

/**
 * The circuit's sizes and densities, counted without storing anything: one sector and two sectors are counted
 * and the whole circuit extrapolated (sectors are identical segments: every figure is affine in the sector
 * count; tests compare with a whole count).
 */
export function postCircuitSizes(info: PoStProofInfo): PoStCircuitSizes {
  const count = (sectorCount: number): PoStCircuitSizes => {
    const dc = new DensityCounter();
    postBlankCircuit({ ...postCircuitParams(info), sectorCount }).synthesize(dc);
    return countedSizes(dc);
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

/** The file names looked for, in order, for a PoSt circuit's parameters: its official name, then `<circuit id>.params`. */
export function postParamsNames(info: PoStProofInfo): string[] {
  return [postParamsFileName(info), `${postCircuitId(info)}.params`];
}

/** The official parameter file of a PoSt circuit in `paramsDir` (kinds/params.ts firstParamsFile of postParamsNames). */
export function findOfficialPoStParams(info: PoStProofInfo, paramsDir: string): string | undefined {
  return firstParamsFile(paramsDir, postParamsNames(info));
}

/** Where the verifying key comes from without compiling the shape when it can be avoided (as PoRep's; `shape`: the
 *  circuit's shape when the caller has it; `shapeCache`: postShapeCacheDir's `cache`, the tuning's postShapeCache). */
export function postVerifyingKeySource(info: PoStProofInfo, paramsDir: string, cacheDir: string, shape?: CircuitLike, shapeCache = true): ParamsSource {
  return verifyingKeySource(
    findOfficialPoStParams(info, paramsDir),
    cacheDir,
    () => (shape ? undefined : cachedPostShapeDigest(info, cacheDir)),
    () => shape ?? postShape(info, postShapeCacheDir(cacheDir, shapeCache)).circuit,
  );
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
