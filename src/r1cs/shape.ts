/**
 * ShapeRecorder: compiles a circuit into CSR matrices A, B, C (backend.ts CsrMatrix) and the query
 * densities, without ever calling a value closure or evaluating a name.
 *
 * Per row, the terms of each linear combination are merged by variable (coefficients summed mod r),
 * zero coefficients dropped, and sorted by column (inputs first, then aux): rows are canonical.
 * Coefficients live once in a table shared by A, B and C (Montgomery Fr, deduplicated through a
 * Map keyed by the reduced value). Storage is typed arrays grown geometrically, so a circuit costs
 * about 8 bytes per non-zero plus 12 bytes per row and matrix.
 *
 * Also: shapeDigest (SHA-256 of a canonical form, for caching parameters) and
 * serializeShape / deserializeShape (a versioned binary form, for caching compiled shapes).
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { writeChunksAtomic } from '../util/files.js';
import type { CsrMatrix } from '../field/csr.js';
import { FR_BYTES, FR_MODULUS, readFr, writeFr } from '../field/layout.js';
import {
  type CircuitShape,
  type ConstraintSystem,
  type LinearCombination,
  type Name,
  type Variable,
  auxIndex,
  auxVariable,
} from './cs.js';

// Host byte order: the binary forms write typed arrays as they lie in memory.
if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) {
  throw new Error('kiln r1cs/shape: big-endian hosts are not supported');
}

/** Columns are recorded before the input count is final: aux j is stored as AUX_TAG + j and mapped
 *  to numInputs + j by finish(). */
const AUX_TAG = 0x8000_0000;

class GrowableU32 {
  data: Uint32Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Uint32Array(capacity);
  }
  push(x: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = x;
  }
  /** A right-sized copy. */
  trimmed(): Uint32Array {
    return this.data.slice(0, this.length);
  }
}

class MatrixBuilder {
  readonly rowPtr = new GrowableU32();
  readonly col = new GrowableU32(4096);
  readonly coeff = new GrowableU32(4096);
  constructor() {
    this.rowPtr.push(0);
  }
  endRow(): void {
    this.rowPtr.push(this.col.length);
  }
}

export class ShapeRecorder implements ConstraintSystem {
  readonly computesValues = false;
  private nInputs = 1; // ONE
  private nAux = 0;
  private nConstraints = 0;
  private readonly mats = [new MatrixBuilder(), new MatrixBuilder(), new MatrixBuilder()];
  private coeffTable = new Uint8Array(64 * FR_BYTES);
  private nCoeffs = 0;
  private readonly coeffIndex = new Map<bigint, number>();
  private finished: CircuitShape | undefined;
  // scratch for merging one linear combination
  private scratchCols: number[] = [];
  private scratchCoeffs: bigint[] = [];

  get numConstraints(): number {
    return this.nConstraints;
  }
  get numInputs(): number {
    return this.nInputs;
  }
  get numAux(): number {
    return this.nAux;
  }

  alloc(_name: Name, _value: () => bigint): Variable {
    this.assertOpen();
    if (this.nAux >= AUX_TAG) throw new RangeError('too many aux variables');
    return auxVariable(this.nAux++);
  }

  allocInput(_name: Name, _value: () => bigint): Variable {
    this.assertOpen();
    if (this.nInputs >= AUX_TAG) throw new RangeError('too many inputs');
    return this.nInputs++;
  }

  enforce(_name: Name, a: LinearCombination, b: LinearCombination, c: LinearCombination): void {
    this.assertOpen();
    this.addRow(this.mats[0], a);
    this.addRow(this.mats[1], b);
    this.addRow(this.mats[2], c);
    this.nConstraints++;
  }

  namespace<T>(_name: Name, fn: () => T): T {
    return fn();
  }

  value(_v: Variable): undefined {
    return undefined;
  }

  /** The compiled shape. Recording ends here; later calls return the same shape. */
  finish(): CircuitShape {
    if (this.finished) return this.finished;
    const numInputs = this.nInputs;
    const numAux = this.nAux;
    const cols = numInputs + numAux;
    const coeffs = this.coeffTable.slice(0, this.nCoeffs * FR_BYTES);
    const [a, b, c] = this.mats.map((m): CsrMatrix => {
      const colIdx = m.col.trimmed();
      for (let k = 0; k < colIdx.length; k++) {
        const x = colIdx[k];
        if (x >= AUX_TAG) colIdx[k] = numInputs + (x - AUX_TAG);
      }
      return { rows: this.nConstraints, cols, rowPtr: m.rowPtr.trimmed(), colIdx, coeffIdx: m.coeff.trimmed(), coeffs };
    });
    this.finished = { numInputs, numAux, numConstraints: this.nConstraints, a, b, c, ...densities(a, b, numInputs, numAux) };
    // release the builders' memory
    this.mats.length = 0;
    this.coeffIndex.clear();
    return this.finished;
  }

  private assertOpen(): void {
    if (this.finished) throw new Error('ShapeRecorder: the shape is already finished');
  }

  private encode(v: Variable): number {
    if (v >= 0) {
      if (v >= this.nInputs || !Number.isInteger(v)) throw new RangeError(`enforce: unknown input ${v}`);
      return v;
    }
    const j = auxIndex(v);
    if (j >= this.nAux || !Number.isInteger(j)) throw new RangeError(`enforce: unknown aux variable ${j}`);
    return AUX_TAG + j;
  }

  private coefficientIndex(c: bigint): number {
    let k = this.coeffIndex.get(c);
    if (k === undefined) {
      k = this.nCoeffs++;
      if (k * FR_BYTES >= this.coeffTable.length) {
        const next = new Uint8Array(this.coeffTable.length * 2);
        next.set(this.coeffTable);
        this.coeffTable = next;
      }
      writeFr(this.coeffTable, k, c);
      this.coeffIndex.set(c, k);
    }
    return k;
  }

  private addRow(m: MatrixBuilder, lc: LinearCombination): void {
    const n = lc.vars.length;
    if (n === 1) {
      const c = reduce(lc.coeffs[0]);
      const col = this.encode(lc.vars[0]);
      if (c !== 0n) {
        m.col.push(col);
        m.coeff.push(this.coefficientIndex(c));
      }
    } else if (n > 1) {
      // merge duplicates: sort term indices by column, then sum runs
      const cols = this.scratchCols;
      const cfs = this.scratchCoeffs;
      cols.length = 0;
      cfs.length = 0;
      const order: number[] = new Array(n);
      const enc: number[] = new Array(n);
      let sorted = true;
      for (let k = 0; k < n; k++) {
        enc[k] = this.encode(lc.vars[k]);
        order[k] = k;
        if (k > 0 && enc[k] <= enc[k - 1]) sorted = false;
      }
      if (!sorted) order.sort((x, y) => enc[x] - enc[y] || x - y);
      for (let t = 0; t < n; ) {
        const col = enc[order[t]];
        let sum = 0n;
        for (; t < n && enc[order[t]] === col; t++) sum += lc.coeffs[order[t]];
        sum = reduce(sum);
        if (sum !== 0n) {
          cols.push(col);
          cfs.push(sum);
        }
      }
      for (let k = 0; k < cols.length; k++) {
        m.col.push(cols[k]);
        m.coeff.push(this.coefficientIndex(cfs[k]));
      }
    }
    m.endRow();
  }
}

function reduce(c: bigint): bigint {
  if (c === 1n) return 1n;
  const r = c % FR_MODULUS;
  return r < 0n ? r + FR_MODULUS : r;
}

function densities(
  a: CsrMatrix,
  b: CsrMatrix,
  numInputs: number,
  numAux: number,
): Pick<CircuitShape, 'aAuxDensity' | 'bInputDensity' | 'bAuxDensity'> {
  // every stored term has a non-zero coefficient (zero terms are dropped when recording)
  const aAuxDensity = new Uint8Array(numAux);
  const bInputDensity = new Uint8Array(numInputs);
  const bAuxDensity = new Uint8Array(numAux);
  for (let k = 0; k < a.colIdx.length; k++) {
    const col = a.colIdx[k];
    if (col >= numInputs) aAuxDensity[col - numInputs] = 1;
  }
  for (let k = 0; k < b.colIdx.length; k++) {
    const col = b.colIdx[k];
    if (col >= numInputs) bAuxDensity[col - numInputs] = 1;
    else bInputDensity[col] = 1;
  }
  return { aAuxDensity, bInputDensity, bAuxDensity };
}

/** Runs `synthesize` on a fresh ShapeRecorder and returns the shape. */
export function recordShape(synthesize: (cs: ConstraintSystem) => void): CircuitShape {
  const rec = new ShapeRecorder();
  synthesize(rec);
  return rec.finish();
}

// ---------------------------------------------------------------- replication

/** Where the one segment of a recording starts: its first constraint, input and aux variable. */
export interface ShapeSegment {
  constraintBase: number;
  inputBase: number;
  auxBase: number;
}

/**
 * The shape of the same circuit with `n` copies of its last segment, from a recording with a
 * prologue and exactly one segment (`seg` says where it starts; the segment runs to the end of
 * every count). Copy k of the segment's constraints reads the prologue's variables unchanged and
 * its own inputs and aux shifted by k segment widths; the order of terms within a row is kept
 * (prologue < segment, inputs < aux), so the rows stay canonical. For circuits whose segments are
 * identical by construction (StackedDrg's challenges): a 32 GiB partition's 130 M constraints from
 * a one-challenge recording (7.2 M) in seconds. Exactness is the caller's claim; tests compare the
 * result with a full recording. `relocate(k)` (optional) maps prologue aux indices the segment reads to the
 * ones copy k reads instead (SnapDeals: each challenge reads its own challenge bits; relocate(0) gives the keys).
 */
export function replicateLastShapeSegment(
  shape: CircuitShape,
  seg: ShapeSegment,
  n: number,
  relocate?: (k: number) => ReadonlyMap<number, number>,
): CircuitShape {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`segment count ${n}`);
  const { numInputs: ni, numAux: na, numConstraints: nc } = shape;
  const { constraintBase: cb, inputBase: ib, auxBase: ab } = seg;
  if (!(cb >= 0 && cb <= nc && ib >= 1 && ib <= ni && ab >= 0 && ab <= na)) {
    throw new RangeError(`segment bases (constraint ${cb}, input ${ib}, aux ${ab}) outside the shape (${nc}, ${ni}, ${na})`);
  }
  const segC = nc - cb;
  const segI = ni - ib;
  const segA = na - ab;
  const NI = ib + n * segI;
  const NA = ab + n * segA;
  const NC = cb + n * segC;
  if (NI + NA >= 2 ** 32 || NC >= 2 ** 32) throw new RangeError(`replicated shape too large (${NC} constraints, ${NI + NA} variables)`);
  const mats = [shape.a, shape.b, shape.c].map((m, mi): CsrMatrix => {
    const name = 'ABC'[mi];
    const nnzP = m.rowPtr[cb];
    const nnz = m.rowPtr[nc];
    const nnzS = nnz - nnzP;
    const total = nnzP + n * nnzS;
    if (total >= 2 ** 32) throw new RangeError(`replicated matrix ${name} has ${total} terms (u32 offsets)`);
    const rowPtr = new Uint32Array(NC + 1);
    const colIdx = new Uint32Array(total);
    const coeffIdx = new Uint32Array(total);
    // the prologue: inputs unchanged, aux moved past the new inputs
    rowPtr.set(m.rowPtr.subarray(0, cb + 1));
    for (let t = 0; t < nnzP; t++) {
      const c = m.colIdx[t];
      if (c >= ni && c - ni >= ab) throw new RangeError(`${name}: a prologue row reads segment aux ${c - ni}`);
      if (c < ni && c >= ib) throw new RangeError(`${name}: a prologue row reads segment input ${c}`);
      colIdx[t] = c < ni ? c : NI + (c - ni);
    }
    coeffIdx.set(m.coeffIdx.subarray(0, nnzP));
    // the segment's columns, mapped for copy 0; copy k adds k·segI to inputs, k·segA to aux
    const segCols = new Uint32Array(nnzS);
    const kind = new Uint8Array(nnzS); // 0 prologue (fixed), 1 segment input, 2 segment aux
    for (let t = 0; t < nnzS; t++) {
      const c = m.colIdx[nnzP + t];
      if (c < ni) {
        segCols[t] = c;
        kind[t] = c >= ib ? 1 : 0;
      } else {
        const j = c - ni;
        segCols[t] = NI + j;
        kind[t] = j >= ab ? 2 : 0;
      }
    }
    const segCoeffs = m.coeffIdx.subarray(nnzP, nnz);
    // relocated prologue aux terms (copy k reads other prologue variables there) and the rows holding them
    const relocKeys = relocate ? relocate(0) : undefined;
    const relocRows: number[] = [];
    if (relocKeys) {
      for (let r = 0; r < segC; r++) {
        for (let t = m.rowPtr[cb + r] - nnzP; t < m.rowPtr[cb + r + 1] - nnzP; t++) {
          if (kind[t] === 0 && segCols[t] >= NI && relocKeys.has(segCols[t] - NI)) {
            relocRows.push(r);
            break;
          }
        }
      }
    }
    for (let k = 0; k < n; k++) {
      const o = nnzP + k * nnzS;
      const di = k * segI;
      const da = k * segA;
      const map = relocate && k > 0 ? relocate(k) : undefined;
      for (let t = 0; t < nnzS; t++) {
        const kd = kind[t];
        let col = segCols[t] + (kd === 1 ? di : kd === 2 ? da : 0);
        if (map && kd === 0 && col >= NI) {
          const to = map.get(col - NI);
          if (to !== undefined) {
            if (to >= ab) throw new RangeError(`${name}: relocation to aux ${to}, outside the prologue`);
            col = NI + to;
          }
        }
        colIdx[o + t] = col;
      }
      coeffIdx.set(segCoeffs, o);
      const r0 = cb + k * segC;
      for (let r = 1; r <= segC; r++) rowPtr[r0 + r] = o + (m.rowPtr[cb + r] - nnzP);
      if (map) {
        // keep the relocated rows canonical (terms sorted by column)
        for (const r of relocRows) {
          const from = rowPtr[r0 + r];
          const to = rowPtr[r0 + r + 1];
          const terms: [number, number][] = [];
          for (let t = from; t < to; t++) terms.push([colIdx[t], coeffIdx[t]]);
          terms.sort((x, y) => x[0] - y[0]);
          terms.forEach(([c, q], i) => {
            if (i > 0 && c === terms[i - 1]![0]) throw new RangeError(`${name}: relocation merges two terms of row ${r0 + r}`);
            colIdx[from + i] = c;
            coeffIdx[from + i] = q;
          });
        }
      }
    }
    return { rows: NC, cols: NI + NA, rowPtr, colIdx, coeffIdx, coeffs: m.coeffs };
  });
  const [a, b, c] = mats;
  return { numInputs: NI, numAux: NA, numConstraints: NC, a, b, c, ...densities(a, b, NI, NA) };
}

// ---------------------------------------------------------------- digest

const DIGEST_TAG = new TextEncoder().encode('kiln/r1cs-shape-digest/v1\0');
const CHUNK = 1 << 16;

const u32le = (...xs: number[]): Uint8Array => new Uint8Array(new Uint32Array(xs).buffer);
const bytesOf = (a: Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Hash.update in slices: OpenSSL's one call takes at most 2^31 − 1 bytes ("data is too long"), and a
 *  32 GiB WindowPoSt matrix's column indices are ~2.6 GB. */
function updateChunked(h: Hash, bytes: Uint8Array): void {
  const SLICE = 1 << 30;
  for (let off = 0; off < bytes.length; off += SLICE) h.update(bytes.subarray(off, Math.min(bytes.length, off + SLICE)));
}

/**
 * SHA-256 (hex) of a canonical form of the shape: counts, then per matrix A, B, C its dimensions,
 * rowPtr, colIdx, the distinct coefficient values (canonical, 32 bytes little-endian, in order of
 * first use) and the coefficient indices renumbered into that order. It therefore does not depend
 * on how the coefficient table happens to be ordered or deduplicated, nor on the Montgomery form;
 * it does depend on the order of terms within a row (ShapeRecorder sorts them by column).
 * Densities are derived from the matrices and not hashed. Computed on every call (a 2 KiB PoRep shape takes about
 * a second, a 32 GiB one seconds): groth16/compiled.ts CompiledCircuit keeps it.
 */
export function shapeDigest(shape: CircuitShape): string {
  // node:crypto (OpenSSL): a 32 GiB partition's shape is ~7 GB of arrays
  const h = createHash('sha256');
  h.update(DIGEST_TAG);
  h.update(u32le(shape.numInputs, shape.numAux, shape.numConstraints));
  for (const m of [shape.a, shape.b, shape.c]) {
    const nnz = m.colIdx.length;
    h.update(u32le(m.rows, m.cols, nnz));
    updateChunked(h, bytesOf(m.rowPtr));
    updateChunked(h, bytesOf(m.colIdx));
    // renumber coefficients by value, in order of first use
    const nTable = m.coeffs.length / FR_BYTES;
    const remap = new Int32Array(nTable).fill(-1);
    const byValue = new Map<bigint, number>();
    const values: bigint[] = [];
    for (let k = 0; k < nnz; k++) {
      const old = m.coeffIdx[k];
      if (old >= nTable) throw new RangeError(`shapeDigest: coefficient index ${old} out of range`);
      if (remap[old] !== -1) continue;
      const v = readFr(m.coeffs, old);
      let idx = byValue.get(v);
      if (idx === undefined) {
        idx = values.length;
        values.push(v);
        byValue.set(v, idx);
      }
      remap[old] = idx;
    }
    h.update(u32le(values.length));
    const vbuf = new Uint8Array(values.length * 32);
    values.forEach((v, i) => {
      for (let b = 0; b < 32; b++) vbuf[i * 32 + b] = Number((v >> BigInt(8 * b)) & 0xffn);
    });
    h.update(vbuf);
    const chunk = new Uint32Array(Math.min(CHUNK, nnz));
    for (let start = 0; start < nnz; start += CHUNK) {
      const end = Math.min(nnz, start + CHUNK);
      for (let k = start; k < end; k++) chunk[k - start] = remap[m.coeffIdx[k]];
      h.update(bytesOf(chunk.subarray(0, end - start)));
    }
  }
  return h.digest('hex');
}

// ---------------------------------------------------------------- binary form

/** "KILNSHP" + NUL. */
export const SHAPE_MAGIC = new Uint8Array([0x4b, 0x49, 0x4c, 0x4e, 0x53, 0x48, 0x50, 0x00]);
export const SHAPE_FORMAT_VERSION = 1;

/**
 * The binary form as a list of chunks (views of the shape's own arrays: nothing large is copied),
 * ready for a vectored write. Layout, all integers u32 little-endian:
 *   magic (8) ‖ version ‖ numInputs ‖ numAux ‖ numConstraints
 *   then for A, B, C: rows ‖ cols ‖ nnz ‖ nCoeffs ‖ rowPtr[rows+1] ‖ colIdx[nnz] ‖ coeffIdx[nnz]
 *                     ‖ coeffs[nCoeffs] (32 B Montgomery each)
 *   then aAuxDensity[numAux] ‖ bInputDensity[numInputs] ‖ bAuxDensity[numAux] (one byte each).
 * Every u32 array starts at a multiple of 4 bytes.
 */
export function shapeChunks(shape: CircuitShape): Uint8Array[] {
  const out: Uint8Array[] = [SHAPE_MAGIC, u32le(SHAPE_FORMAT_VERSION, shape.numInputs, shape.numAux, shape.numConstraints)];
  for (const m of [shape.a, shape.b, shape.c]) {
    out.push(u32le(m.rows, m.cols, m.colIdx.length, m.coeffs.length / FR_BYTES));
    out.push(bytesOf(m.rowPtr), bytesOf(m.colIdx), bytesOf(m.coeffIdx), m.coeffs);
  }
  out.push(shape.aAuxDensity, shape.bInputDensity, shape.bAuxDensity);
  return out;
}

export function serializeShape(shape: CircuitShape): Uint8Array {
  const chunks = shapeChunks(shape);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

/** Reads the binary form in order: from bytes in memory, or from a file descriptor. */
interface ShapeSource {
  /** `n` u32 words, into a new array (the source's own memory is never kept). */
  u32s(n: number, what: string): Uint32Array;
  /** `n` raw bytes, into a new array. */
  raw(n: number, what: string): Uint8Array;
  /** Bytes left after the shape. */
  rest(): number;
}

function bytesSource(bytes: Uint8Array): ShapeSource {
  let o = 0;
  const need = (n: number, what: string): void => {
    if (o + n > bytes.length) throw new Error(`shape file truncated: ${what} needs ${n} bytes at offset ${o}, ${bytes.length - o} left`);
  };
  return {
    u32s(n, what) {
      need(4 * n, what);
      const a = new Uint32Array(n);
      new Uint8Array(a.buffer).set(bytes.subarray(o, o + 4 * n));
      o += 4 * n;
      return a;
    },
    raw(n, what) {
      need(n, what);
      const a = bytes.slice(o, o + n);
      o += n;
      return a;
    },
    rest: () => bytes.length - o,
  };
}

/** Reads straight into each array (shapes of big circuits are several GB: more than one buffer
 *  holds, and no copy of the file is ever in memory). */
function fileSource(fd: number, size: number): ShapeSource {
  let o = 0;
  const fill = (dst: Uint8Array, what: string): void => {
    if (o + dst.length > size) throw new Error(`shape file truncated: ${what} needs ${dst.length} bytes at offset ${o}, ${size - o} left`);
    for (let done = 0; done < dst.length; ) {
      const n = readSync(fd, dst, done, Math.min(dst.length - done, 1 << 30), o + done);
      if (n <= 0) throw new Error(`shape file: read failed at offset ${o + done}`);
      done += n;
    }
    o += dst.length;
  };
  return {
    u32s(n, what) {
      const a = new Uint32Array(n);
      fill(new Uint8Array(a.buffer), what);
      return a;
    },
    raw(n, what) {
      const a = new Uint8Array(n);
      fill(a, what);
      return a;
    },
    rest: () => size - o,
  };
}

/** Parses serializeShape's output, checking magic, version, every length and every index. The
 *  result owns its memory (copied out of `bytes`). Throws an Error naming the first problem. */
export function deserializeShape(bytes: Uint8Array): CircuitShape {
  return readShape(bytesSource(bytes));
}

/** Reads a shape file written by writeShapeFile (or serializeShape), with deserializeShape's checks,
 *  of any size (each array is read into its own typed array, so only those must stay under 4 GiB). */
export function readShapeFile(path: string): CircuitShape {
  const fd = openSync(path, 'r');
  try {
    return readShape(fileSource(fd, fstatSync(fd).size));
  } finally {
    closeSync(fd);
  }
}

/** Writes the shape's binary form to `path` atomically (a temporary file beside it, then a rename),
 *  chunk by chunk: nothing is copied. */
export function writeShapeFile(path: string, shape: CircuitShape): void {
  writeChunksAtomic(path, shapeChunks(shape));
}

function readShape(src: ShapeSource): CircuitShape {
  const magic = src.raw(SHAPE_MAGIC.length, 'magic');
  for (let k = 0; k < SHAPE_MAGIC.length; k++) {
    if (magic[k] !== SHAPE_MAGIC[k]) throw new Error('not a kiln shape file (bad magic)');
  }
  const [version, numInputs, numAux, numConstraints] = src.u32s(4, 'header');
  if (version !== SHAPE_FORMAT_VERSION) {
    throw new Error(`unsupported shape format version ${version} (expected ${SHAPE_FORMAT_VERSION})`);
  }
  if (numInputs < 1) throw new Error('shape file: numInputs must be ≥ 1');
  const cols = numInputs + numAux;
  const mats: CsrMatrix[] = [];
  for (const name of ['A', 'B', 'C']) {
    const [rows, mcols, nnz, nCoeffs] = src.u32s(4, `${name} header`);
    if (rows !== numConstraints || mcols !== cols) {
      throw new Error(`shape file: ${name} is ${rows}×${mcols}, expected ${numConstraints}×${cols}`);
    }
    const rowPtr = src.u32s(rows + 1, `${name} rowPtr`);
    const colIdx = src.u32s(nnz, `${name} colIdx`);
    const coeffIdx = src.u32s(nnz, `${name} coeffIdx`);
    const coeffs = src.raw(nCoeffs * FR_BYTES, `${name} coeffs`);
    if (rowPtr[0] !== 0 || rowPtr[rows] !== nnz) throw new Error(`shape file: ${name} rowPtr does not span ${nnz} entries`);
    for (let i = 0; i < rows; i++) {
      if (rowPtr[i] > rowPtr[i + 1]) throw new Error(`shape file: ${name} rowPtr decreases at row ${i}`);
    }
    for (let k = 0; k < nnz; k++) {
      if (colIdx[k] >= cols) throw new Error(`shape file: ${name} column ${colIdx[k]} out of range`);
      if (coeffIdx[k] >= nCoeffs) throw new Error(`shape file: ${name} coefficient index ${coeffIdx[k]} out of range`);
    }
    mats.push({ rows, cols, rowPtr, colIdx, coeffIdx, coeffs });
  }
  const aAuxDensity = src.raw(numAux, 'aAuxDensity');
  const bInputDensity = src.raw(numInputs, 'bInputDensity');
  const bAuxDensity = src.raw(numAux, 'bAuxDensity');
  if (src.rest() !== 0) throw new Error(`shape file: ${src.rest()} trailing bytes`);
  for (const [d, what] of [[aAuxDensity, 'aAuxDensity'], [bInputDensity, 'bInputDensity'], [bAuxDensity, 'bAuxDensity']] as const) {
    if (d.some((x) => x > 1)) throw new Error(`shape file: ${what} is not 0/1`);
  }
  const [a, b, c] = mats;
  return { numInputs, numAux, numConstraints, a, b, c, aAuxDensity, bInputDensity, bAuxDensity };
}
