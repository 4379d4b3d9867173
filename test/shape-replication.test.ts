/**
 * Shapes from a one-segment recording, replicated (r1cs/shape.ts replicateLastShapeSegment,
 * filecoin/circuit/stacked-program.ts stackedShapeAndProgramFast): equal to a full recording of the
 * same circuit for a small segmented circuit, the 2 KiB and 8 MiB partitions, and a two-challenge
 * 32 GiB partition; and shape files of any size read and written by file descriptor.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stackedParamsFor } from '../src/filecoin/circuit/stacked.js';
import { stackedShapeAndProgram, stackedShapeAndProgramFast } from '../src/filecoin/circuit/stacked-program.js';
import { sealProofInfo } from '../src/filecoin/registry.js';
import { type CircuitShape, type ConstraintSystem, LinearCombination, type Variable } from '../src/r1cs/cs.js';
import { ShapeRecorder, readShapeFile, recordShape, replicateLastShapeSegment, shapeDigest, writeShapeFile } from '../src/r1cs/shape.js';
import { rng } from './support.js';

/** Asserts two shapes are the same circuit, array by array (coefficient tables compared by bytes). */
function assertSameShape(got: CircuitShape, want: CircuitShape, what: string): void {
  assert.deepEqual([got.numConstraints, got.numInputs, got.numAux], [want.numConstraints, want.numInputs, want.numAux], `${what}: counts`);
  for (const k of ['a', 'b', 'c'] as const) {
    const g = got[k];
    const w = want[k];
    assert.deepEqual([g.rows, g.cols], [w.rows, w.cols], `${what}: ${k} dimensions`);
    assert.ok(Buffer.from(g.rowPtr.buffer, g.rowPtr.byteOffset, g.rowPtr.byteLength).equals(Buffer.from(w.rowPtr.buffer, w.rowPtr.byteOffset, w.rowPtr.byteLength)), `${what}: ${k}.rowPtr`);
    assert.ok(Buffer.from(g.colIdx.buffer, g.colIdx.byteOffset, g.colIdx.byteLength).equals(Buffer.from(w.colIdx.buffer, w.colIdx.byteOffset, w.colIdx.byteLength)), `${what}: ${k}.colIdx`);
    // coefficient indices may differ only by the table's order: compare values
    assert.equal(g.coeffIdx.length, w.coeffIdx.length);
    const gv = (i: number) => Buffer.from(g.coeffs.subarray(g.coeffIdx[i] * 32, g.coeffIdx[i] * 32 + 32)).toString('hex');
    const wv = (i: number) => Buffer.from(w.coeffs.subarray(w.coeffIdx[i] * 32, w.coeffIdx[i] * 32 + 32)).toString('hex');
    const step = Math.max(1, Math.floor(g.coeffIdx.length / 50_000));
    for (let i = 0; i < g.coeffIdx.length; i += step) if (gv(i) !== wv(i)) assert.fail(`${what}: ${k} coefficient of term ${i}`);
  }
  for (const d of ['aAuxDensity', 'bInputDensity', 'bAuxDensity'] as const) assert.ok(Buffer.from(got[d]).equals(Buffer.from(want[d])), `${what}: ${d}`);
  assert.equal(shapeDigest(got), shapeDigest(want), `${what}: digest`);
}

/** A prologue (inputs, aux, constraints) then `n` identical segments, each with its own inputs and
 *  aux and rows reading the prologue, ONE and itself in an unsorted order with duplicate terms. */
function segmented(n: number, onSegment?: () => void): (cs: ConstraintSystem) => void {
  return (cs) => {
    const r = rng(7);
    const v = (): bigint => 0n;
    const pi = [cs.allocInput('p_in0', v), cs.allocInput('p_in1', v)];
    const pa = Array.from({ length: 5 }, (_, i) => cs.alloc(`p${i}`, v));
    const lc = (vars: Variable[], coeffs: bigint[]): LinearCombination => {
      const l = new LinearCombination();
      vars.forEach((x, i) => l.add(x, coeffs[i]));
      return l;
    };
    cs.enforce('p0', lc([pa[0], pi[1]], [3n, 1n]), lc([pa[1]], [1n]), lc([pa[2], pa[2]], [2n, 5n]));
    cs.enforce('p1', lc([0], [7n]), lc([pa[3], pi[0]], [1n, 1n]), lc([], []));
    const coeffs = Array.from({ length: 40 }, () => r());
    for (let s = 0; s < n; s++) {
      onSegment?.();
      const si = cs.allocInput(`s${s}_in`, v);
      const sa = Array.from({ length: 7 }, (_, i) => cs.alloc(`s${s}_${i}`, v));
      let q = 0;
      for (let row = 0; row < 6; row++) {
        const pool = [0, pi[row % 2], pa[row % 5], si, sa[row], sa[(row * 3) % 7], sa[6]];
        const pickLc = (len: number): LinearCombination => {
          const vars: Variable[] = [];
          const cf: bigint[] = [];
          for (let t = 0; t < len; t++) {
            vars.push(pool[(row * 5 + t * 3 + len) % pool.length]);
            cf.push(coeffs[q++ % coeffs.length]);
          }
          return lc(vars.reverse(), cf);
        };
        cs.enforce(`s${s}_r${row}`, pickLc(1 + (row % 4)), pickLc(row % 3), pickLc(2 + (row % 2)));
      }
    }
  };
}

test('replicateLastShapeSegment: a segmented circuit of 1 to 5 segments equals its full recording', () => {
  const rec = new ShapeRecorder();
  let constraintBase = -1;
  segmented(1, () => (constraintBase = rec.numConstraints))(rec);
  const one = rec.finish();
  const seg = { constraintBase, inputBase: 3, auxBase: 5 };
  for (const n of [1, 2, 3, 5]) {
    const full = recordShape(segmented(n));
    assertSameShape(replicateLastShapeSegment(one, seg, n), full, `${n} segments`);
  }
  assert.throws(() => replicateLastShapeSegment(one, seg, 0), /segment count/);
  assert.throws(() => replicateLastShapeSegment(one, { ...seg, auxBase: one.numAux + 1 }, 2), /outside the shape/);
  // a segment that starts before variables the prologue rows read is refused
  assert.throws(() => replicateLastShapeSegment(one, { ...seg, auxBase: 0 }, 2), /prologue row reads segment aux/);
});

// The 64 GiB tree (8-8-2: base, sub and top levels, so the 32 GiB tree's paths too) with 2 layers
// instead of 11: the same structure (prologue, identical challenges reading it) at a fraction of
// the recording time.
test('stackedShapeAndProgramFast == a full recording: 2 KiB; the 64 GiB tree (2 layers, 2 challenges)', () => {
  for (const [name, layers, challenges] of [
    ['StackedDrg2KiBV1_1', undefined, undefined],
    ['StackedDrg64GiBV1_1', 2, 2],
  ] as const) {
    const info = sealProofInfo(name);
    assert.ok(info);
    const params = { ...stackedParamsFor(info, challenges), ...(layers ? { layers } : {}) };
    const full = stackedShapeAndProgram(params);
    const fast = stackedShapeAndProgramFast(params);
    assertSameShape(fast.shape, full.shape, name);
    assert.deepEqual(fast.program, full.program, `${name}: program`);
  }
});

test('shape files by file descriptor: round trip, truncation and trailing bytes named', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-shape-'));
  try {
    const shape = recordShape(segmented(3));
    const file = join(dir, 's.shape');
    writeShapeFile(file, shape);
    assertSameShape(readShapeFile(file), shape, 'round trip');
    const size = statSync(file).size;
    truncateSync(file, size - 3);
    assert.throws(() => readShapeFile(file), /shape file truncated: bAuxDensity/);
    writeShapeFile(file, shape);
    appendFileSync(file, new Uint8Array(2));
    assert.throws(() => readShapeFile(file), /2 trailing bytes/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
