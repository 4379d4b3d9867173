/**
 * iden3 binary formats (`.r1cs` v1 and `.wtns` v2), so that snarkjs can set up and prove the very
 * same R1CS that kiln proves (for benchmarks). Wire order is identical to kiln's assignment order:
 * wire 0 = ONE, then the public inputs, then every private variable. Coefficients and witness
 * values are written in canonical (non-Montgomery) little-endian form, as iden3's readers expect.
 */
import type { CsrMatrix } from '../field/csr.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { FR_BYTES, FR_MODULUS, readFr } from '../field/layout.js';

class BinWriter {
  private chunks: Uint8Array[] = [];
  private cur = new Uint8Array(1 << 20);
  private pos = 0;
  private total = 0;

  private ensure(n: number): void {
    if (this.pos + n > this.cur.length) {
      this.chunks.push(this.cur.subarray(0, this.pos));
      this.cur = new Uint8Array(Math.max(1 << 20, n));
      this.pos = 0;
    }
  }
  u32(v: number): void {
    this.ensure(4);
    new DataView(this.cur.buffer, this.cur.byteOffset).setUint32(this.pos, v, true);
    this.pos += 4;
    this.total += 4;
  }
  u64(v: number | bigint): void {
    this.ensure(8);
    new DataView(this.cur.buffer, this.cur.byteOffset).setBigUint64(this.pos, BigInt(v), true);
    this.pos += 8;
    this.total += 8;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.cur.set(b, this.pos);
    this.pos += b.length;
    this.total += b.length;
  }
  get length(): number {
    return this.total;
  }
  finish(): Uint8Array {
    this.chunks.push(this.cur.subarray(0, this.pos));
    const out = new Uint8Array(this.total);
    let o = 0;
    for (const c of this.chunks) {
      out.set(c, o);
      o += c.length;
    }
    return out;
  }
}

function leBytes(x: bigint, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let v = x;
  for (let i = 0; i < n; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function fileOf(magic: string, version: number, sections: [number, Uint8Array][]): Uint8Array {
  const w = new BinWriter();
  w.bytes(new TextEncoder().encode(magic));
  w.u32(version);
  w.u32(sections.length);
  for (const [type, body] of sections) {
    w.u32(type);
    w.u64(body.length);
    w.bytes(body);
  }
  return w.finish();
}

/** The shape as an iden3 `.r1cs` file (header, constraints, wire→label map). */
export function writeIden3R1cs(shape: CircuitShape): Uint8Array {
  const nVars = shape.numInputs + shape.numAux;
  const header = new BinWriter();
  header.u32(FR_BYTES);
  header.bytes(leBytes(FR_MODULUS, FR_BYTES));
  header.u32(nVars);
  header.u32(0); // outputs
  header.u32(shape.numInputs - 1); // public inputs (ONE excluded)
  header.u32(0); // private inputs: every aux variable counts as internal
  header.u64(nVars); // labels
  header.u32(shape.numConstraints);

  const canonical = (m: CsrMatrix): Uint8Array[] => {
    const n = m.coeffs.length / FR_BYTES;
    return Array.from({ length: n }, (_, i) => leBytes(readFr(m.coeffs, i), FR_BYTES));
  };
  const tables = [canonical(shape.a), canonical(shape.b), canonical(shape.c)];
  const mats = [shape.a, shape.b, shape.c];
  const cons = new BinWriter();
  for (let row = 0; row < shape.numConstraints; row++) {
    for (let k = 0; k < 3; k++) {
      const m = mats[k];
      const from = m.rowPtr[row];
      const to = m.rowPtr[row + 1];
      cons.u32(to - from);
      for (let t = from; t < to; t++) {
        cons.u32(m.colIdx[t]);
        cons.bytes(tables[k][m.coeffIdx[t]]);
      }
    }
  }
  const map = new BinWriter();
  for (let i = 0; i < nVars; i++) map.u64(i);
  return fileOf('r1cs', 1, [
    [1, header.finish()],
    [2, cons.finish()],
    [3, map.finish()],
  ]);
}

/** A full assignment (Montgomery Fr buffer, layout.ts) as an iden3 `.wtns` file. */
export function writeIden3Wtns(assignment: Uint8Array): Uint8Array {
  const n = assignment.length / FR_BYTES;
  const header = new BinWriter();
  header.u32(FR_BYTES);
  header.bytes(leBytes(FR_MODULUS, FR_BYTES));
  header.u32(n);
  const values = new BinWriter();
  for (let i = 0; i < n; i++) values.bytes(leBytes(readFr(assignment, i), FR_BYTES));
  return fileOf('wtns', 2, [
    [1, header.finish()],
    [2, values.finish()],
  ]);
}
