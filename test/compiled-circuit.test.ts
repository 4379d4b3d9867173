import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledCircuit, compiledOf } from '../src/groth16/compiled.js';
import { domainSize, queryIndices } from '../src/groth16/queries.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { deserializeShape, recordShape, serializeShape, shapeDigest } from '../src/r1cs/shape.js';
import type { WitnessProgram } from '../src/r1cs/program.js';

const shapeOf = (constraints: number) => recordShape((cs) => new DemoCircuit({ constraints, bitsPerWord: 4, publicInputs: 2 }).synthesize(cs));

test('a CompiledCircuit derives its query indices and digest once, from its shape, and keeps them', () => {
  const shape = shapeOf(60);
  const c = new CompiledCircuit(shape);
  assert.equal(c.knownDigest, undefined, 'not hashed before it is asked for');
  const d = c.digest;
  assert.equal(d, shapeDigest(shape));
  assert.equal(c.knownDigest, d);
  assert.equal(c.digest, d);
  const q = c.queries;
  assert.equal(c.queries, q, 'the same object on the second call: computed once');
  assert.deepEqual(q, queryIndices(shape));
  assert.equal(c.logN, Math.log2(domainSize(shape)));
  // the same circuit through serialization: the same digest, recomputed from the bytes
  assert.equal(new CompiledCircuit(deserializeShape(serializeShape(shape))).digest, d);
  // a different circuit: a different digest
  assert.notEqual(new CompiledCircuit(shapeOf(61)).digest, d);
});

test('parts known already (a worker thread that compiled the shape, a digest cached beside it) are taken as given', () => {
  const shape = shapeOf(40);
  const queries = { a: new Uint32Array([0, 1]), b: new Uint32Array([2]) };
  const c = new CompiledCircuit(shape, { digest: 'ab'.repeat(32), queries });
  assert.equal(c.digest, 'ab'.repeat(32));
  assert.equal(c.queries, queries);
  assert.throws(() => new CompiledCircuit(shape, { digest: 'not hex' }), RangeError);
});

test('the witness program: given, or loaded once when first asked for; a circuit without one says so', () => {
  const shape = shapeOf(40);
  assert.throws(() => new CompiledCircuit(shape).program, /no witness program/);
  const program = { marker: 1 } as unknown as WitnessProgram;
  let loads = 0;
  const lazy = new CompiledCircuit(shape, {
    program: () => {
      loads++;
      return program;
    },
  });
  assert.equal(loads, 0, 'not loaded before it is asked for');
  assert.equal(lazy.program, program);
  assert.equal(lazy.program, program);
  assert.equal(loads, 1);
  assert.equal(new CompiledCircuit(shape, { program }).program, program);
});

test('expected parameter counts, the parameter check and the device footprint follow from the shape', () => {
  const shape = shapeOf(50);
  const c = compiledOf(shape);
  assert.equal(compiledOf(c), c, 'a compiled circuit is passed through');
  const q = queryIndices(shape);
  const want = c.expectedParamsCounts();
  assert.deepEqual(want, { ic: shape.numInputs, h: domainSize(shape) - 1, l: shape.numAux, a: q.a.length, b_g1: q.b.length, b_g2: q.b.length });
  const fp = c.footprint();
  assert.equal(fp.logN, c.logN);
  assert.equal(fp.numVars, shape.numInputs + shape.numAux);
  assert.deepEqual(fp.sections, { h: want.h, l: want.l, a: want.a, b_g1: want.b_g1, b_g2: want.b_g2 });
  assert.equal(fp.fixedBytes, shape.a.coeffs.byteLength + shape.b.coeffs.byteLength + shape.c.coeffs.byteLength + (q.a.length + q.b.length) * 4);
  // parameters with one point too few in l: refused, naming the section
  const g1 = (n: number): Uint8Array => new Uint8Array(n * 96);
  const params = {
    vk: { ic: new Array(want.ic).fill(null) },
    h: g1(want.h),
    l: g1(want.l - 1),
    a: g1(want.a),
    bG1: g1(want.b_g1),
    bG2: new Uint8Array(want.b_g2 * 192),
  };
  assert.throws(() => c.checkParams(params as never), /l has \d+ points, the circuit needs \d+/);
  params.l = g1(want.l);
  c.checkParams(params as never);
});
