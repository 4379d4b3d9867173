/** Random constraint-system shapes for the setup tests (the GPU setup against the CPU one, the native setup scalars
 *  against the TypeScript ones). No tests here. */
import type { CsrMatrix } from '../src/field/csr.js';
import { FR_MODULUS, frVector } from '../src/field/layout.js';
import type { CircuitShape } from '../src/r1cs/cs.js';
import { rng } from './support.js';

const R = FR_MODULUS;

/**
 * A random R1CS shape with the edges a setup must get right (gpu/setup.test.ts, groth16-setup-scalars.test.ts): a
 * column of many terms, ONE in every A row, an unconstrained aux variable, an A-dense variable whose terms cancel,
 * B-sparse inputs, repeated terms in a row, empty rows. Column 0 is ONE (in every A row);
 * aux `free` = ni + naux − 1 appears nowhere; aux `cancel` = ni appears in A twice in row 0 with
 * opposite coefficients (A-dense, A(τ) = 0); input 1 (when there is one) never appears in B; aux
 * `heavy` = ni + 1 is in C in `heavyRows` rows.
 */
export function randomShape(seed: number, m: number, ni: number, naux: number, heavyRows: number): CircuitShape {
  const r = rng(seed);
  const cols = ni + naux;
  const cancel = ni;
  const heavy = ni + 1;
  const vals = [1n, R - 1n, 2n, r(), r(), r(), r()];
  const neg = vals.length; // −vals[3]: cancels vals[3] exactly
  const coeffs = frVector([...vals, R - vals[3]]);
  const pickCol = (...not: number[]): number => {
    for (;;) {
      const c = r.int(cols - 1); // never `free`
      if (!not.includes(c)) return c;
    }
  };
  const build = (row: (i: number) => [number, number][]): CsrMatrix => {
    const rowPtr = new Uint32Array(m + 1);
    const ci: number[] = [];
    const ki: number[] = [];
    for (let i = 0; i < m; i++) {
      for (const [c, k] of row(i)) {
        ci.push(c);
        ki.push(k);
      }
      rowPtr[i + 1] = ci.length;
    }
    return { rows: m, cols, rowPtr, colIdx: Uint32Array.from(ci), coeffIdx: Uint32Array.from(ki), coeffs };
  };
  const a = build((i) => {
    const t: [number, number][] = [[0, r.int(vals.length)]];
    if (i === 0) t.push([cancel, 3], [cancel, neg]);
    const k = r.int(3);
    for (let j = 0; j < k; j++) t.push([pickCol(cancel), r.int(vals.length)]);
    return t;
  });
  const b = build((i) => {
    if (i % 7 === 3) return []; // empty rows
    const t: [number, number][] = [[pickCol(ni > 1 ? 1 : -1), r.int(vals.length)]];
    if (i % 5 === 0) t.push([t[0][0], r.int(vals.length)]); // a repeated column in one row
    return t;
  });
  const c = build((i) => {
    const t: [number, number][] = [];
    if (i < heavyRows) t.push([heavy, r.int(vals.length)]);
    const k = 1 + r.int(2);
    for (let j = 0; j < k; j++) t.push([pickCol(), r.int(vals.length)]);
    return t;
  });
  const density = (mtx: CsrMatrix, from: number, len: number): Uint8Array => {
    const d = new Uint8Array(len);
    for (let k = 0; k < mtx.colIdx.length; k++) {
      const v = mtx.colIdx[k] - from;
      if (v >= 0 && v < len) d[v] = 1;
    }
    return d;
  };
  return {
    numInputs: ni,
    numAux: naux,
    numConstraints: m,
    a,
    b,
    c,
    aAuxDensity: density(a, ni, naux),
    bInputDensity: density(b, 0, ni),
    bAuxDensity: density(b, ni, naux),
  } as CircuitShape;
}

