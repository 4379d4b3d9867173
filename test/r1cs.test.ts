import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReferenceBackend } from '../src/backend/reference.js';
import type { CsrMatrix } from '../src/field/csr.js';
import { FR_MODULUS, frVectorToBigints, mod, readFr } from '../src/field/layout.js';
import { CountingSystem } from '../src/r1cs/counter.js';
import {
  type Circuit,
  type CircuitShape,
  type ConstraintSystem,
  LinearCombination,
  ONE,
  type Variable,
} from '../src/r1cs/cs.js';
import {
  ShapeRecorder,
  deserializeShape,
  recordShape,
  serializeShape,
  shapeChunks,
  shapeDigest,
} from '../src/r1cs/shape.js';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { rng } from './support.js';

const r = FR_MODULUS;
const be = new ReferenceBackend();

const throwing = (): never => {
  throw new Error('closure called');
};

/**
 * A random satisfied circuit: inputs and aux allocated in a random order, random nested namespaces,
 * linear combinations with repeated variables, zero / negative / ≥ r coefficients and the ONE
 * column. C is completed with a fresh variable so every constraint holds. Structure depends only
 * on the seed; values are drawn inside the value closures.
 */
class RandomCircuit implements Circuit {
  constructor(
    readonly seed: number,
    readonly n: number,
  ) {}

  synthesize(cs: ConstraintSystem): void {
    const st = rng(this.seed);
    const val = rng(this.seed * 7919 + 1);
    const vars: Variable[] = [ONE];
    const specialCoeff = [0n, 1n, -1n, r, r + 5n, -r - 2n, 2n, 1n << 200n];
    const randomLc = (): LinearCombination => {
      const lc = new LinearCombination();
      const len = st.int(5); // 0..4 terms, sometimes the same variable twice
      for (let t = 0; t < len; t++) {
        const v = vars[st.int(vars.length)];
        const c = st.int(3) === 0 ? specialCoeff[st.int(specialCoeff.length)] : BigInt(st.int(1000)) - 500n;
        lc.add(v, c);
        if (st.int(6) === 0) lc.add(v, -c); // cancels: a merged zero term
      }
      return lc;
    };
    const evalLc = (lc: LinearCombination): bigint => {
      let acc = 0n;
      for (let k = 0; k < lc.length; k++) acc += lc.coeffs[k] * (cs.value(lc.vars[k]) as bigint);
      return mod(acc, r);
    };
    let id = 0;
    const step = (depth: number): void => {
      const what = st.int(10);
      if (what === 0) {
        const name = `in${id++}`;
        vars.push(cs.allocInput(() => name, () => val()));
      } else if (what <= 2) {
        const name = `v${id++}`;
        vars.push(cs.alloc(name, () => (val.int(3) === 0 ? BigInt(val.int(2)) : val())));
      } else if (what === 3 && depth < 3) {
        const name = `ns${id++}`;
        cs.namespace(() => name, () => {
          for (let k = 0, m = 1 + st.int(4); k < m; k++) step(depth + 1);
        });
      } else {
        const a = randomLc();
        const b = randomLc();
        const c = randomLc();
        const name = `c${id++}`;
        const fresh = cs.alloc(`${name} out`, () => mod(evalLc(a) * evalLc(b) - evalLc(c), r));
        vars.push(fresh);
        c.add(fresh);
        cs.enforce(() => name, a, b, c);
      }
    };
    for (let i = 0; i < this.n; i++) step(0);
  }
}

/** M·w with the reference backend's csrMatVec. */
async function matVec(m: CsrMatrix, w: Uint8Array): Promise<bigint[]> {
  const out = new Uint8Array(m.rows * 32);
  await be.csrMatVec(m, w, out);
  return frVectorToBigints(out);
}

/** A·w ∘ B·w − C·w, row by row. */
async function rowResiduals(shape: CircuitShape, w: Uint8Array): Promise<bigint[]> {
  const [a, b, c] = [await matVec(shape.a, w), await matVec(shape.b, w), await matVec(shape.c, w)];
  return a.map((x, i) => mod(x * b[i] - c[i], r));
}

function countsOf(circuit: Circuit) {
  const cs = new CountingSystem();
  circuit.synthesize(cs);
  return cs.counts();
}

test('TestConstraintSystem: paths, ONE, values and the first unsatisfied constraint', () => {
  const cs = new TestConstraintSystem();
  assert.equal(cs.numInputs, 1);
  assert.equal(cs.get('ONE'), 1n);
  const x = cs.allocInput('x', () => 3n);
  cs.namespace('outer', () => {
    cs.namespace(() => 'inner', () => {
      const y = cs.alloc('y', () => 4n);
      const z = cs.alloc('z', () => -12n); // stored reduced
      cs.enforce('x*y=−z', LinearCombination.of(x), LinearCombination.of(y), LinearCombination.zero().sub(z));
    });
    const b = cs.alloc('b', () => 1n);
    cs.enforce('boolean', LinearCombination.of(b), LinearCombination.of(ONE).sub(b), LinearCombination.zero());
  });
  assert.deepEqual([cs.numConstraints, cs.numInputs, cs.numAux], [2, 2, 3]);
  assert.equal(cs.get('outer/inner/z'), r - 12n);
  assert.deepEqual(cs.constraintPaths(), ['outer/inner/x*y=−z', 'outer/boolean']);
  assert.ok(cs.isSatisfied());
  assert.equal(cs.whichIsUnsatisfied(), undefined);
  cs.set('outer/b', 2n);
  assert.equal(cs.whichIsUnsatisfied(), 'outer/boolean');
  cs.set('x', 5n);
  assert.equal(cs.whichIsUnsatisfied(), 'outer/inner/x*y=−z');
  assert.equal(cs.isSatisfied(), false);
  assert.deepEqual(cs.assignment(), [1n, 5n, 4n, r - 12n, 2n]);
});

test('TestConstraintSystem: duplicate paths and "/" in names throw, like bellperson', () => {
  const cs = new TestConstraintSystem();
  cs.alloc('a', () => 1n);
  assert.throws(() => cs.alloc('a', () => 1n), /existing path: a/);
  assert.throws(() => cs.allocInput('ONE', () => 1n), /existing path: ONE/);
  cs.namespace('n', () => {
    cs.alloc('a', () => 1n); // n/a is a different path
    assert.throws(() => cs.enforce('a', LinearCombination.zero(), LinearCombination.zero(), LinearCombination.zero()), /n\/a/);
  });
  assert.throws(() => cs.namespace('n', () => 0), /existing path: n/);
  assert.throws(() => cs.alloc('x/y', () => 1n), /not allowed/);
  assert.throws(() => cs.enforce('bad', LinearCombination.of(-99), LinearCombination.zero(), LinearCombination.zero()), /unknown variable/);
});

test('ShapeRecorder: merges duplicate terms, drops zeros, sorts columns, dedups coefficients; never calls closures', () => {
  const rec = new ShapeRecorder();
  const a0 = rec.alloc(throwing, throwing);
  const x = rec.allocInput(throwing, throwing);
  const a1 = rec.alloc(throwing, throwing);
  // A = 2·a1 + 3·a0 − 3·a0 + x + x + 0·ONE   →  2·x + 2·a1   (cols: x = 1, a1 = numInputs + 1)
  const A = new LinearCombination().add(a1, 2n).add(a0, 3n).sub(a0, 3n).add(x).add(x).add(ONE, 0n);
  // B = (r + 1)·ONE − a1 + a1 → ONE
  const B = new LinearCombination().add(ONE, r + 1n).sub(a1).add(a1);
  // C = −1·a0 (negative coefficient stored as r − 1), empty row otherwise
  const C = LinearCombination.of(a0, -1n);
  rec.enforce(throwing, A, B, C);
  rec.enforce(throwing, LinearCombination.zero(), LinearCombination.of(a0, r), LinearCombination.of(a1, 2n));
  const y = rec.allocInput(throwing, throwing); // an input after aux variables: columns shift
  rec.enforce(throwing, LinearCombination.of(y), LinearCombination.of(x), LinearCombination.zero());
  rec.namespace(throwing, () => undefined);
  assert.equal(rec.value(x), undefined);
  const s = rec.finish();
  assert.deepEqual([s.numInputs, s.numAux, s.numConstraints], [3, 2, 3]);
  const coeff = (m: CsrMatrix, k: number) => readFr(m.coeffs, m.coeffIdx[k]);
  const row = (m: CsrMatrix, i: number) => {
    const out: [number, bigint][] = [];
    for (let k = m.rowPtr[i]; k < m.rowPtr[i + 1]; k++) out.push([m.colIdx[k], coeff(m, k)]);
    return out;
  };
  assert.deepEqual(row(s.a, 0), [[1, 2n], [4, 2n]]);
  assert.deepEqual(row(s.b, 0), [[0, 1n]]);
  assert.deepEqual(row(s.c, 0), [[3, r - 1n]]);
  assert.deepEqual([row(s.a, 1), row(s.b, 1), row(s.c, 1)], [[], [], [[4, 2n]]]);
  assert.deepEqual([row(s.a, 2), row(s.b, 2)], [[[2, 1n]], [[1, 1n]]]);
  // one coefficient table, each value once
  assert.equal(s.a.coeffs, s.c.coeffs);
  assert.equal(s.a.coeffs.length / 32, 3); // 2, 1, r − 1
  assert.equal(s.a.cols, 5);
  assert.deepEqual([...s.aAuxDensity], [0, 1]);
  assert.deepEqual([...s.bInputDensity], [1, 1, 0]);
  assert.deepEqual([...s.bAuxDensity], [0, 0]);
  assert.equal(rec.finish(), s);
  assert.throws(() => rec.alloc('late', () => 0n), /finished/);
});

test('ShapeRecorder rejects variables that were never allocated', () => {
  const rec = new ShapeRecorder();
  assert.throws(() => rec.enforce('k', LinearCombination.of(1), LinearCombination.zero(), LinearCombination.zero()), RangeError);
  assert.throws(() => rec.enforce('k', LinearCombination.of(-1), LinearCombination.zero(), LinearCombination.zero()), RangeError);
});

test('all four systems agree on random circuits; A·w ∘ B·w = C·w row by row', async () => {
  let detected = 0;
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const circuit = new RandomCircuit(seed, 150);
    const tcs = new TestConstraintSystem();
    circuit.synthesize(tcs);
    assert.equal(tcs.whichIsUnsatisfied(), undefined, `seed ${seed}`);
    const counts = countsOf(circuit);
    const shape = recordShape((cs) => circuit.synthesize(cs));
    assert.deepEqual(counts, { constraints: tcs.numConstraints, inputs: tcs.numInputs, aux: tcs.numAux });
    assert.deepEqual(counts, { constraints: shape.numConstraints, inputs: shape.numInputs, aux: shape.numAux });
    assert.ok(counts.inputs > 1 && counts.constraints > 50, `seed ${seed} exercises inputs and constraints`);

    const wg = new WitnessGenerator(shape.numInputs);
    circuit.synthesize(wg);
    const w = wg.assignment();
    assert.equal(w.length, (shape.numInputs + shape.numAux) * 32);
    assert.deepEqual(frVectorToBigints(w), tcs.assignment());
    assert.deepEqual(wg.inputs(), tcs.inputs().slice(1));

    const res = await rowResiduals(shape, w);
    assert.ok(res.every((x) => x === 0n), `seed ${seed}: row ${res.findIndex((x) => x !== 0n)} unsatisfied`);

    // each recorded row evaluates exactly as the enforced (unmerged) linear combination
    const [aw, bw, cw] = [await matVec(shape.a, w), await matVec(shape.b, w), await matVec(shape.c, w)];
    for (let i = 0; i < shape.numConstraints; i++) {
      const k = tcs.constraint(i);
      assert.deepEqual([aw[i], bw[i], cw[i]], [tcs.eval(k.a), tcs.eval(k.b), tcs.eval(k.c)], `seed ${seed} row ${i}`);
    }

    // corrupt one aux value: the first failing row is the one TestConstraintSystem names
    const j = shape.numAux >> 1;
    const bad = w.slice();
    bad[(shape.numInputs + j) * 32] ^= 1;
    const badRes = await rowResiduals(shape, bad);
    tcs.set(tcs.auxPath(j), readFr(bad, shape.numInputs + j));
    const firstBad = badRes.findIndex((x) => x !== 0n);
    const tPaths = tcs.constraintPaths();
    assert.equal(firstBad === -1 ? undefined : tPaths[firstBad], tcs.whichIsUnsatisfied());
    if (firstBad !== -1) detected++;
  }
  assert.ok(detected >= 3, `corruption detected in ${detected} of 6 circuits`);
});

test('WitnessGenerator: caller buffer, check mode, input count', () => {
  const circuit = new RandomCircuit(9, 60);
  const shape = recordShape((cs) => circuit.synthesize(cs));
  const n = shape.numInputs + shape.numAux;
  const out = new Uint8Array(n * 32 + 64).fill(0xee); // dirty, larger than needed
  const wg = new WitnessGenerator(shape.numInputs, out, { check: true });
  circuit.synthesize(wg);
  assert.equal(wg.assignment().buffer, out.buffer);
  const free = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(free);
  assert.deepEqual(wg.assignment(), free.assignment());

  assert.throws(() => circuit.synthesize(new WitnessGenerator(shape.numInputs, new Uint8Array((n - 1) * 32))), RangeError);
  assert.throws(() => circuit.synthesize(new WitnessGenerator(1)), /more than the shape/);
  const tooMany = new WitnessGenerator(shape.numInputs + 1);
  circuit.synthesize(tooMany);
  assert.throws(() => tooMany.assignment(), /allocated/);

  // check mode names the unsatisfied constraint
  const dbg = new WitnessGenerator(1, undefined, { check: true });
  assert.throws(
    () =>
      dbg.namespace('gadget', () => {
        const b = dbg.alloc('b', () => 2n);
        dbg.enforce(() => 'boolean', LinearCombination.of(b), LinearCombination.of(ONE).sub(b), LinearCombination.zero());
      }),
    /unsatisfied constraint: gadget\/boolean/,
  );
  // without check, enforce is a no-op and names are never evaluated
  const fast = new WitnessGenerator(1);
  fast.namespace(throwing, () => fast.enforce(throwing, LinearCombination.of(ONE), LinearCombination.of(ONE), LinearCombination.zero()));
  assert.equal(fast.value(ONE), 1n);
  assert.deepEqual(fast.inputs(), []);
});

test('CountingSystem never calls closures', () => {
  const cs = new CountingSystem();
  const x = cs.allocInput(throwing, throwing);
  cs.namespace(throwing, () => cs.alloc(throwing, throwing));
  cs.enforce(throwing, LinearCombination.of(x), LinearCombination.of(x), LinearCombination.of(x));
  assert.deepEqual(cs.counts(), { constraints: 1, inputs: 2, aux: 1 });
  assert.equal(cs.value(x), undefined);
});

test('shapeDigest: deterministic, sensitive, independent of coefficient table order', () => {
  const s1 = recordShape((cs) => new RandomCircuit(11, 120).synthesize(cs));
  const s2 = recordShape((cs) => new RandomCircuit(11, 120).synthesize(cs));
  const s3 = recordShape((cs) => new RandomCircuit(12, 120).synthesize(cs));
  const d1 = shapeDigest(s1);
  assert.match(d1, /^[0-9a-f]{64}$/);
  assert.equal(shapeDigest(s2), d1);
  assert.notEqual(shapeDigest(s3), d1);

  // permute the coefficient table (and add an unused duplicate): same digest
  const m = s1.b;
  const nT = m.coeffs.length / 32;
  const perm = Array.from({ length: nT }, (_, i) => nT - 1 - i);
  const coeffs = new Uint8Array((nT + 1) * 32);
  perm.forEach((to, from) => coeffs.set(m.coeffs.subarray(from * 32, from * 32 + 32), to * 32));
  coeffs.set(m.coeffs.subarray(0, 32), nT * 32);
  const coeffIdx = m.coeffIdx.map((k) => perm[k]);
  assert.equal(shapeDigest({ ...s1, b: { ...m, coeffs, coeffIdx } }), d1);

  // change one coefficient value used by B: different digest
  const changed = m.coeffs.slice();
  changed[m.coeffIdx[0] * 32] ^= 1;
  assert.notEqual(shapeDigest({ ...s1, b: { ...m, coeffs: changed } }), d1);
  // change one column: different digest
  const cols = s1.c.colIdx.slice();
  cols[0] = cols[0] === 0 ? 1 : 0;
  assert.notEqual(shapeDigest({ ...s1, c: { ...s1.c, colIdx: cols } }), d1);
});

test('serializeShape / deserializeShape round trip and rejection of damaged files', () => {
  const shape = recordShape((cs) => new RandomCircuit(21, 100).synthesize(cs));
  const bytes = serializeShape(shape);
  assert.equal(bytes.length, shapeChunks(shape).reduce((n, c) => n + c.length, 0));
  const back = deserializeShape(bytes);
  assert.deepEqual(back, { ...shape, b: { ...shape.b, coeffs: back.b.coeffs }, c: { ...shape.c, coeffs: back.c.coeffs } });
  assert.equal(shapeDigest(back), shapeDigest(shape));
  // from an unaligned view
  const padded = new Uint8Array(bytes.length + 1);
  padded.set(bytes, 1);
  assert.equal(shapeDigest(deserializeShape(padded.subarray(1))), shapeDigest(shape));

  assert.throws(() => deserializeShape(bytes.subarray(0, bytes.length - 1)), /truncated/);
  assert.throws(() => deserializeShape(new Uint8Array([...bytes, 0])), /trailing/);
  assert.throws(() => deserializeShape(new Uint8Array(4)), /truncated/);
  const badMagic = bytes.slice();
  badMagic[0] ^= 1;
  assert.throws(() => deserializeShape(badMagic), /magic/);
  const badVersion = bytes.slice();
  badVersion[8] = 99;
  assert.throws(() => deserializeShape(badVersion), /version/);
  // a column index out of range (first colIdx entry of A: header 24 + matrix header 16 + rowPtr)
  const badCol = bytes.slice();
  const colOff = 24 + 16 + 4 * (shape.numConstraints + 1);
  new DataView(badCol.buffer).setUint32(colOff, 0xffffffff, true);
  assert.throws(() => deserializeShape(badCol), /out of range/);
  // empty circuit
  const empty = recordShape(() => undefined);
  assert.deepEqual(deserializeShape(serializeShape(empty)).numInputs, 1);
});

test('DensityCounter: counts and A/B densities equal the recorded shape (cancelling terms included)', async () => {
  const { DensityCounter } = await import('../src/r1cs/density.js');
  const { DemoCircuit } = await import('../src/r1cs/demo-circuit.js');
  const sum = (d: Uint8Array): number => d.reduce((t, x) => t + x, 0);
  const circuits: Circuit[] = [1, 2, 3, 4, 5, 6].map((s) => new RandomCircuit(s, 300));
  circuits.push(new DemoCircuit({ constraints: 1000, seed: 3 }));
  for (const circuit of circuits) {
    const dc = new DensityCounter();
    circuit.synthesize(dc);
    const shape = recordShape((cs) => circuit.synthesize(cs));
    assert.deepEqual(dc.densityCounts(), {
      constraints: shape.numConstraints,
      inputs: shape.numInputs,
      aux: shape.numAux,
      aAuxDense: sum(shape.aAuxDensity),
      bInputDense: sum(shape.bInputDensity),
      bAuxDense: sum(shape.bAuxDensity),
    });
  }
});
