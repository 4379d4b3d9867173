/**
 * The CPU development setup's scalars computed natively (Backend.devSetupScalars, native/src/setup/scalars.hpp)
 * against the TypeScript twin (groth16/setup.ts setupScalarsTs), byte for byte: h, l, ic, a and b of random shapes
 * with the edges (test/shape-support.ts), of shapes whose rows fill the domain exactly, of a DemoCircuit, for several
 * toxic wastes; and the whole development .params file of a DemoCircuit equal with and without the native scalars.
 * Bad calls are refused naming what is wrong.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { NativeBackend, nativeAvailable } from '../src/backend/native.js';
import type { Backend } from '../src/backend/backend.js';
import { domainSize, queryIndices } from '../src/groth16/queries.js';
import { insecureToxicWaste, setupConstants, setupConstantsBytes, setupScalarsTs, writeInsecureDevParamsCpu } from '../src/groth16/setup.js';
import type { CircuitShape } from '../src/r1cs/cs.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { recordShape } from '../src/r1cs/shape.js';
import { randomShape } from './shape-support.js';

const backend = nativeAvailable() ? new NativeBackend() : undefined;
const skip = backend === undefined ? 'the native addon is not built' : backend.devSetupScalars === undefined ? 'the addon has no devSetupScalars (rebuild it)' : false;

async function compare(what: string, shape: CircuitShape, seed: string): Promise<void> {
  const n = domainSize(shape);
  const q = queryIndices(shape);
  const k = setupConstants(insecureToxicWaste(seed), n);
  const ts = setupScalarsTs(shape, q, k, n);
  const nat = await backend!.devSetupScalars!({ shape, n, qa: q.a, qb: q.b, consts: setupConstantsBytes(k) });
  for (const part of ['h', 'l', 'ic', 'a', 'b'] as const) {
    assert.equal(nat[part].length, ts[part].length, `${what}: ${part} length`);
    assert.ok(Buffer.from(nat[part]).equals(Buffer.from(ts[part])), `${what} (${seed}): ${part} differs`);
  }
}

test('native setup scalars = TypeScript: random shapes with the edges, several toxic wastes', { skip }, async () => {
  await compare('random 3000×(5+2500)', randomShape(1, 3000, 5, 2500, 400), 'a');
  await compare('random 3000×(5+2500)', randomShape(1, 3000, 5, 2500, 400), 'b');
  await compare('random 5×(1+12)', randomShape(2, 5, 1, 12, 0), 'a');
  await compare('random 20000×(3+1000), ONE in 20,000 A rows (chunks of the Lagrange basis)', randomShape(3, 20000, 3, 1000, 0), 'c');
  // constraints + inputs = the domain exactly (the Lagrange basis to its last element)
  await compare('random 1020×(4+700): rows fill 1024', randomShape(4, 1020, 4, 700, 10), 'd');
});

test('native setup scalars = TypeScript: a DemoCircuit; the .params file the same with and without them', { skip }, async () => {
  const shape = recordShape((cs) => new DemoCircuit({ constraints: 5000, publicInputs: 3 }).synthesize(cs));
  await compare('DemoCircuit 5000', shape, 'demo');
  const dir = await mkdtemp(join(tmpdir(), 'kiln-setup-scalars-'));
  try {
    const tsOnly = new Proxy(backend!, { get: (t, p) => (p === 'devSetupScalars' ? undefined : Reflect.get(t, p, t)) }) as Backend;
    assert.equal(tsOnly.devSetupScalars, undefined);
    await writeInsecureDevParamsCpu(shape, backend!, join(dir, 'native.params'));
    await writeInsecureDevParamsCpu(shape, tsOnly, join(dir, 'ts.params'));
    assert.ok((await readFile(join(dir, 'native.params'))).equals(await readFile(join(dir, 'ts.params'))), 'the .params files differ');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('devSetupScalars refuses bad calls, naming what is wrong', { skip }, async () => {
  const shape = randomShape(5, 10, 2, 20, 0);
  const n = domainSize(shape);
  const q = queryIndices(shape);
  const consts = setupConstantsBytes(setupConstants(insecureToxicWaste('x'), n));
  const run = (o: Partial<{ n: number; qa: Uint32Array; consts: Uint8Array; shape: CircuitShape }>): Promise<unknown> =>
    backend!.devSetupScalars!({ shape: o.shape ?? shape, n: o.n ?? n, qa: o.qa ?? q.a, qb: q.b, consts: o.consts ?? consts });
  await assert.rejects(run({ n: 8 }), /devSetupScalars: the domain is smaller than constraints \+ inputs/);
  await assert.rejects(run({ n: 24 }), /n must be a power of two/);
  await assert.rejects(run({ qa: Uint32Array.of(0, 22) }), /qa\[1\] out of range/);
  await assert.rejects(run({ consts: consts.subarray(0, 160) }), /consts must be 6 Fr elements/);
  const bad = { ...shape, c: { ...shape.c, colIdx: shape.c.colIdx.map((x, i) => (i === 3 ? 99 : x)) } };
  await assert.rejects(run({ shape: bad }), /matrix C: colIdx\[3\] = 99 out of range/);
});
