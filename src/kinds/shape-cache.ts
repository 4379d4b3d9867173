/**
 * The on-disk cache of a kind's compiled shape and witness program (`<cacheDir>/shapes/<id>-v<version>.shape`,
 * with `.sha256` (its digest) and `.wprog` (its witness program) beside it), shared by the kinds: read when present
 * and readable, written through temporary names (a failed write leaves no part behind and costs a notice, not the
 * proof); and kindShapes, a kind's shapes and programs and the worker tasks that make them.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CompiledCircuit, type CircuitLike } from '../groth16/compiled.js';
import type { QueryIndices } from '../groth16/queries.js';
import { ensureDevParamsFile, type EnsureDevParamsResult } from '../groth16/setup.js';
import type { DensityCounter } from '../r1cs/density.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { checkProgramForShape, type WitnessProgram } from '../r1cs/program.js';
import { deserializeProgram, programChunks } from '../r1cs/program-file.js';
import { readShapeFile, shapeDigest, writeShapeFile } from '../r1cs/shape.js';
import { writeChunksAtomic } from '../util/files.js';

/** What a kind's shape task (run in a worker thread) sends back: the shape, its query indices and
 *  witness program, its digest (the one cached beside the shape file, or computed; D = string when
 *  the task always provides it), whether it came from the cache, and why writing the cache failed. */
export interface ShapeTaskResult<D extends string | undefined = string | undefined> {
  shape: CircuitShape;
  queries: QueryIndices;
  program: WitnessProgram;
  digest: D;
  cached: boolean;
  cacheError?: string;
}

/** The cached shape in `file` with the digest written beside it (when there), or undefined when absent or unreadable. */
export function readCachedShape(file: string | undefined): { shape: CircuitShape; digest?: string } | undefined {
  if (!file || !existsSync(file)) return undefined;
  try {
    const shape = readShapeFile(file);
    const digest = cachedShapeDigest(file);
    return digest !== undefined ? { shape, digest } : { shape };
  } catch {
    return undefined; // unreadable or stale: the caller records it again
  }
}

/** Writes a freshly recorded shape, its digest and its witness program to `file` (its two steps told to `onStep`);
 *  `cacheError` says why not: the cache only saves time, a full disk (a 32 GiB shape is ~7 GB) costs a warning,
 *  not the proof. */
export function writeShapeCache(file: string, shape: CircuitShape, program: WitnessProgram, onStep?: (step: string, index: number) => void): { digest?: string; cacheError?: string } {
  let digest: string | undefined;
  try {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    onStep?.('digest the shape', 0);
    digest = shapeDigest(shape);
    writeFileSync(`${tmp}.sha256`, digest + '\n');
    renameSync(`${tmp}.sha256`, `${file}.sha256`);
    onStep?.(`write the shape cache (${file})`, 1);
    writeChunksAtomic(`${file}.wprog`, programChunks(program));
    writeShapeFile(file, shape);
    return { digest };
  } catch (e) {
    for (const f of [`${file}.sha256`, `${file}.wprog`, `${file}.${process.pid}.tmp`, `${file}.wprog.${process.pid}.tmp`]) rmSync(f, { force: true });
    return { ...(digest !== undefined ? { digest } : {}), cacheError: `shape not cached in ${dirname(dirname(file))}: ${(e as Error).message}` };
  }
}

/** The witness program kept beside the shape file (`<shape file>.wprog`), recorded by `record` and written
 *  there when missing or not matching the shape. */
export function cachedProgram(shapeFile: string | undefined, shape: CircuitShape, record: () => WitnessProgram): WitnessProgram {
  const file = shapeFile ? `${shapeFile}.wprog` : undefined;
  if (file && existsSync(file)) {
    try {
      const program = deserializeProgram(readFileSync(file));
      checkProgramForShape(program, shape);
      return program;
    } catch {
      /* recorded again below */
    }
  }
  const program = record();
  checkProgramForShape(program, shape);
  if (file) {
    mkdirSync(dirname(file), { recursive: true });
    writeChunksAtomic(file, programChunks(program));
  }
  return program;
}

/** The digest written beside a cached shape file, read without loading the shape; undefined when none is cached. */
export function cachedShapeDigest(file: string): string | undefined {
  if (!existsSync(file) || !existsSync(`${file}.sha256`)) return undefined;
  const d = readFileSync(`${file}.sha256`, 'utf8').trim();
  return /^[0-9a-f]{64}$/.test(d) ? d : undefined;
}

/** A circuit's sizes and densities, counted without storing anything. */
export interface CircuitSizes {
  numConstraints: number;
  /** Inputs with ONE. */
  numInputs: number;
  numAux: number;
  aAuxDense: number;
  bInputDense: number;
  bAuxDense: number;
}

/** The sizes a DensityCounter counted. */
export function countedSizes(dc: DensityCounter): CircuitSizes {
  const d = dc.densityCounts();
  return { numConstraints: d.constraints, numInputs: d.inputs, numAux: d.aux, aAuxDense: d.aAuxDense, bInputDense: d.bInputDense, bAuxDense: d.bAuxDense };
}

/** A step of a shape compile: `index` of `steps` done so far (steps = index at the end). */
export type ShapeStepFn = (step: string, index: number, steps: number) => void;

/** What a kind tells kindShapes of its circuits. */
export interface KindShapesSpec<Info> {
  /** The kind's name in errors ("unknown PoSt circuit …"). */
  name: string;
  infoOf(circuitId: string): Info | undefined;
  /** `<cacheDir>/shapes/<circuit id>-v<circuit version>.shape`. */
  shapeFile(info: Info, cacheDir: string): string;
  /** Records the shape and its witness program, telling its steps (of `steps` in all) to `onStep`. */
  record(info: Info, onStep: (step: string, index: number) => void): { shape: CircuitShape; program: WitnessProgram };
  /** How many steps `record` tells (default 0). */
  recordSteps?: number;
  /** Records the witness program only. */
  recordProgram(info: Info): WitnessProgram;
}

/** A compiled circuit of a kind (shapes.compile): whether its shape came from the cache, why writing it failed. */
export interface KindCompiled {
  circuit: CompiledCircuit;
  /** circuit.shape */
  shape: CircuitShape;
  cached: boolean;
  cacheError?: string;
}

/**
 * A kind's compiled circuits (shape, witness program, digest), cached on disk (`<cacheDir>/shapes/`), and the
 * one-shot worker tasks that make them off the event loop (engine/task-worker.ts runOffThread).
 */
export function kindShapes<Info>(spec: KindShapesSpec<Info>) {
  const infoOf = (circuitId: string): Info => {
    const info = spec.infoOf(circuitId);
    if (info === undefined) throw new Error(`unknown ${spec.name} circuit ${circuitId}`);
    return info;
  };
  /** The witness program kept beside the shape (`<id>-v<version>.shape.wprog`), recorded when missing. */
  const programOf = (info: Info, shape: CircuitShape, cacheDir: string | undefined) => (): WitnessProgram =>
    cachedProgram(cacheDir ? spec.shapeFile(info, cacheDir) : undefined, shape, () => spec.recordProgram(info));
  const shapes = {
    /** The compiled circuit: its shape read from `<cacheDir>/shapes/` when one of the current circuit version is there
     *  (its digest from beside it, its witness program read when first asked for), else recorded with its witness
     *  program and written there; a recording's steps told to `onStep`. */
    compile(info: Info, cacheDir?: string, onStep?: ShapeStepFn): KindCompiled {
      const file = cacheDir ? spec.shapeFile(info, cacheDir) : undefined;
      const cached = readCachedShape(file);
      if (cached) {
        const circuit = new CompiledCircuit(cached.shape, { digest: cached.digest, program: programOf(info, cached.shape, cacheDir) });
        return { circuit, shape: circuit.shape, cached: true };
      }
      const recorded = spec.recordSteps ?? 0;
      const steps = file ? recorded + 2 : recorded;
      const { shape, program } = spec.record(info, (step, k) => onStep?.(step, k, steps));
      if (!file) {
        onStep?.('done', steps, steps);
        return { circuit: new CompiledCircuit(shape, { program }), shape, cached: false };
      }
      const written = writeShapeCache(file, shape, program, (step, k) => onStep?.(step, recorded + k, steps));
      if (written.cacheError === undefined) onStep?.('done', steps, steps);
      const circuit = new CompiledCircuit(shape, { program, digest: written.digest });
      return { circuit, shape, cached: false, ...(written.cacheError !== undefined ? { cacheError: written.cacheError } : {}) };
    },
    /** The digest of the cached shape, without loading it; undefined when none is cached. */
    cachedDigest: (info: Info, cacheDir: string): string | undefined => cachedShapeDigest(spec.shapeFile(info, cacheDir)),
    /**
     * compile of a circuit id in a worker thread: recording a shape takes seconds to a minute and gigabytes. The
     * result's parts (shape, query indices, witness program, digest) make the CompiledCircuit on the caller's side
     * (compiledFromTask); every typed array is transferred back, not copied. `digest`: compute the shape's digest
     * when none is cached (development parameters are named by it; hashing a 32 GiB shape takes seconds).
     */
    shapeTask(arg: { circuitId: string; cacheDir?: string; digest?: boolean }): ShapeTaskResult {
      const { circuit, cached, cacheError } = shapes.compile(infoOf(arg.circuitId), arg.cacheDir);
      const digest = arg.digest === true ? circuit.digest : circuit.knownDigest;
      return { shape: circuit.shape, queries: circuit.queries, program: circuit.program, digest, cached, ...(cacheError !== undefined ? { cacheError } : {}) };
    },
    /** Makes the INSECURE development parameter file of a circuit when missing, in a worker thread (the CPU setup
     *  evaluates the circuit at tau for seconds to hours); the shape is read from the cache the shape task filled. */
    async devParamsTask(arg: DevParamsTaskArg, progress?: (p: { step: string; done: number; total: number }) => void): Promise<EnsureDevParamsResult> {
      const { circuit } = shapes.compile(infoOf(arg.circuitId), arg.cacheDir);
      return devParamsFor(circuit, arg, progress);
    },
  };
  return shapes;
}

/** The CompiledCircuit of what a shape task sent back. */
export function compiledFromTask(r: ShapeTaskResult): CompiledCircuit {
  return new CompiledCircuit(r.shape, { queries: r.queries, program: r.program, ...(r.digest !== undefined ? { digest: r.digest } : {}) });
}

/** What a kind's development setup task takes (kind.ts createKindCircuits sends it). */
export interface DevParamsTaskArg {
  circuitId: string;
  cacheDir?: string;
  devDir: string;
  /** The backend's name (backend/select.ts). */
  backend: string;
}

/** The development parameter file of `shape`, made when missing by the named backend, its steps told to `progress`. */
export async function devParamsFor(shape: CircuitLike, arg: DevParamsTaskArg, progress?: (p: { step: string; done: number; total: number }) => void): Promise<EnsureDevParamsResult> {
  const { selectBackend } = await import('../backend/select.js');
  return ensureDevParamsFile(shape, selectBackend(arg.backend), arg.devDir, { onStep: (step, done, total) => progress?.({ step, done, total }) });
}
