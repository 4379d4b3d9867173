/**
 * The PoRep C2 proof kind's core, for the CLI and the engine (planner.ts): the circuit id of a sector size, the compiled
 * partition shape (recorded once per size and cached on disk), where the parameters come from
 * (official files in the parameter cache, else insecure development parameters), a partition's
 * witness (native or TypeScript) and the verification of every partition of a C1. Proving goes
 * through the engine (planner.ts), for the daemon and the CLI alike.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readVerifyingKeyFile, type VerifyingKey } from '../../groth16/keys.js';
import { decodeProofs, PROOF_BYTES } from '../../groth16/proof.js';
import { domainSize } from '../../groth16/queries.js';
import { compiledOf, type CircuitLike } from '../../groth16/compiled.js';
import { devParamsPath } from '../../groth16/setup.js';
import { CountingSystem } from '../../r1cs/counter.js';
import { prepareVerifyingKey, verifyProof } from '../../groth16/verifier.js';
import type { CircuitShape } from '../../r1cs/cs.js';
import { checkProgramForShape, type WitnessProgram } from '../../r1cs/program.js';
import { WitnessGenerator } from '../../r1cs/witness.js';
import type { C1Output } from '../../filecoin/c1.js';
import { porepParamsFileName } from '../../filecoin/params-names.js';
import { stackedCircuitFor, stackedParamsFor, stackedShapeCircuit } from '../../filecoin/circuit/index.js';
import { stackedProgramFast, stackedShapeAndProgramFast, stackedWitnessNative } from '../../filecoin/circuit/stacked-program.js';
import type { WitnessProgramRunner } from '../../r1cs/circuit-program.js';
import { partitionPublicInputs } from '../../filecoin/public-inputs.js';
import { parseSectorSize, sealProofInfo, sectorSizeRefusal, sectorSizeByBytes, sectorSizeByCircuitLabel, type SealProofInfo } from '../../filecoin/registry.js';
import { kindShapes, type ShapeStepFn, type ShapeTaskResult } from '../shape-cache.js';
import { firstParamsFile, type ParamsSource, verifyingKeySource } from '../params.js';

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

const shapes = kindShapes<SealProofInfo>({
  name: 'PoRep',
  infoOf: porepInfoForCircuit,
  shapeFile: (info, cacheDir) => join(cacheDir, 'shapes', `${porepCircuitId(info.sectorSize)}-v${STACKED_CIRCUIT_VERSION}.shape`),
  // one challenge recorded (its witness program in the same synthesis), then replicated: challenges are identical
  // segments (tests compare with a whole-partition recording)
  record: (info, onStep) => stackedShapeAndProgramFast(stackedParamsFor(info), (step, k) => onStep(step, k)),
  recordSteps: 4,
  recordProgram: (info) => stackedProgramFast(stackedParamsFor(info)),
});

export type { ShapeStepFn };

/**
 * The compiled partition shape of a sector size: read from `<cacheDir>/shapes/` when a shape of the current
 * circuit version is there, else recorded (and written there, atomically), its steps told to `onStep`.
 */
export const porepShape = shapes.compile;

/** What porepShapeTask sends back. */
export type PorepShapeTaskResult = ShapeTaskResult;

/** Makes the INSECURE development parameter file of a circuit id when missing, in a worker thread (the CPU setup
 *  evaluates the circuit at tau for seconds to hours). The shape is read from the cache porepShapeTask filled. */
export const porepDevParamsTask = shapes.devParamsTask;

/**
 * porepShape and porepProgram of a circuit id in a worker thread (engine/task-worker.ts runOffThread): seconds
 * (2 KiB) to minutes (32 GiB) and gigabytes. The caller remembers the program, query indices and digest (kind.ts).
 */
export const porepShapeTask = shapes.shapeTask;

/** The digest of the shape porepShape cached for `info` in `cacheDir` (written beside it), read without loading or
 *  compiling the shape; undefined when no shape of this version is cached. */
export const cachedPorepShapeDigest = shapes.cachedDigest;

/** The partition circuit's sizes, counted (nothing stored: seconds at 32 GiB, no matrices). */
export function porepCircuitSizes(info: SealProofInfo): { numConstraints: number; numInputs: number; numAux: number } {
  const cs = new CountingSystem();
  stackedShapeCircuit(info).synthesize(cs);
  return { numConstraints: cs.numConstraints, numInputs: cs.numInputs, numAux: cs.numAux };
}

/**
 * The file names looked for, in order, for a sector size's official parameters (kinds/params.ts firstParamsFile):
 * the official name (`v28-stacked-proof-of-replication-…-<sha256 of the identifier>.params`,
 * src/filecoin/params-names.ts), then kiln's `<circuit id>.params`.
 */
export function porepParamsNames(info: SealProofInfo): string[] {
  return [porepParamsFileName(sectorSizeByBytes(info.sectorSize)!), `${porepCircuitId(info.sectorSize)}.params`];
}

/** porepParamsNames in `paramsDir`. */
export function officialParamsCandidates(info: SealProofInfo, paramsDir: string): string[] {
  return porepParamsNames(info).map((n) => join(paramsDir, n));
}

/** What PoRep looks for when no file is there by name (said in the refusal). */
export const POREP_PARAMS_OTHERWISE = 'any official v28 stacked-proof-of-replication .params file of this size there';

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
  return firstParamsFile(paramsDir, porepParamsNames(info)) ?? findRenamedParams(info, shape, paramsDir);
}

/** A renamed official file of the sector size's tree tag in `paramsDir` whose sizes are the circuit's (findOfficialParams). */
export async function findRenamedParams(
  info: SealProofInfo,
  shape: CircuitSizes | (() => CircuitSizes | Promise<CircuitSizes>),
  paramsDir: string,
): Promise<string | undefined> {
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
export async function porepParamsSource(info: SealProofInfo, circuit: CircuitLike, paramsDir: string, devCacheDir: string): Promise<ParamsSource> {
  const c = compiledOf(circuit);
  const official = await findOfficialParams(info, c.shape, paramsDir);
  if (official) return { kind: 'official', path: official };
  return { kind: 'dev', path: devParamsPath(c, devCacheDir) };
}

/**
 * Where the verifying key of `info` comes from, without compiling the circuit shape: the official
 * parameter file (by name, or among the v28 files by the sizes of the circuit, counted without
 * storing it), else the development parameters named by the digest cached beside the shape
 * (porepShape writes it). Only when neither is known is the shape compiled (and cached), as before.
 */
export async function porepVerifyingKeySource(info: SealProofInfo, paramsDir: string, cacheDir: string): Promise<ParamsSource> {
  return verifyingKeySource(
    await findOfficialParams(info, () => porepCircuitSizes(info), paramsDir),
    cacheDir,
    () => cachedPorepShapeDigest(info, cacheDir),
    () => porepShape(info, cacheDir).circuit,
  );
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
