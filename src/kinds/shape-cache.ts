/**
 * The on-disk cache of a kind's compiled shape and witness program (`<cacheDir>/shapes/<id>-v<version>.shape`,
 * with `.sha256` (its digest) and `.wprog` (its witness program) beside it), shared by the PoSt and SnapDeals
 * kinds: read when present and readable, written through temporary names (a failed write leaves no part behind
 * and costs a notice, not the proof).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { QueryIndices } from '../groth16/queries.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { checkProgramForShape, deserializeProgram, programChunks, type WitnessProgram } from '../r1cs/program.js';
import { readShapeFile, rememberShapeDigest, shapeDigest, writeShapeFile } from '../r1cs/shape.js';
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

/** The cached shape in `file` (its digest remembered), or undefined when absent or unreadable. */
export function readCachedShape(file: string | undefined): CircuitShape | undefined {
  if (!file || !existsSync(file)) return undefined;
  try {
    const shape = readShapeFile(file);
    if (existsSync(`${file}.sha256`)) rememberShapeDigest(shape, readFileSync(`${file}.sha256`, 'utf8').trim());
    return shape;
  } catch {
    return undefined; // unreadable or stale: the caller records it again
  }
}

/** Writes a freshly recorded shape, its digest and its witness program to `file`; `cacheError` says why not. */
export function writeShapeCache(file: string, shape: CircuitShape, program: WitnessProgram): { cacheError?: string } {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(`${tmp}.sha256`, shapeDigest(shape) + '\n');
    renameSync(`${tmp}.sha256`, `${file}.sha256`);
    writeChunksAtomic(`${file}.wprog`, programChunks(program));
    writeShapeFile(file, shape);
    return {};
  } catch (e) {
    for (const f of [`${file}.sha256`, `${file}.wprog`, `${file}.${process.pid}.tmp`, `${file}.wprog.${process.pid}.tmp`]) rmSync(f, { force: true });
    return { cacheError: `shape not cached in ${dirname(dirname(file))}: ${(e as Error).message}` };
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
