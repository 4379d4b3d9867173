/**
 * Groth16 end to end on small random circuits: INSECURE dev setup → prove → verify, with every
 * available backend (the reference backend always; the native one when its addon is built).
 * Circuits are written against the ConstraintSystem API and compiled by ShapeRecorder; witnesses
 * come from WitnessGenerator.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, PartitionInput } from '../src/backend/backend.js';
import { ReferenceBackend } from '../src/backend/reference.js';
import { FR_MODULUS, writeFr } from '../src/field/layout.js';
import { LinearCombination, ONE, type Circuit, type CircuitShape, type ConstraintSystem, type Variable } from '../src/r1cs/cs.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { ShapeRecorder } from '../src/r1cs/shape.js';
import { TestConstraintSystem } from '../src/r1cs/test.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { decodeParams, encodeParams, encodeVerifyingKey, type Parameters } from '../src/groth16/keys.js';
import { PROOF_BYTES, decodeProof, encodeProof } from '../src/groth16/proof.js';
import { PROVER_PHASES, partitionSumsStepwise, prove, proveWithRandomness } from '../src/groth16/prover.js';
import { domainSize, queryIndices } from '../src/groth16/queries.js';
import { devParamsPath, insecureDevSetup, loadOrCreateDevParams, vkPathOf } from '../src/groth16/setup.js';
import { prepareVerifyingKey, verifyProof } from '../src/groth16/verifier.js';
import { Span } from '../src/util/timing.js';
import { rng } from './support.js';

const R = FR_MODULUS;


/**
 * A random circuit: `inputs` public inputs, then `muls` multiplications of random linear
 * combinations of earlier variables, the last product exposed as one more public input. The
 * structure depends only on `seed`; the values on `witnessSeed`.
 */
class RandomCircuit implements Circuit {
  constructor(
    readonly seed: number,
    readonly inputs: number,
    readonly muls: number,
    readonly witnessSeed = 1,
  ) {}

  synthesize(cs: ConstraintSystem): void {
    const shape = rng(this.seed);
    const val = rng(this.witnessSeed);
    const vars: Variable[] = [ONE];
    for (let i = 0; i < this.inputs; i++) vars.push(cs.allocInput(`x${i}`, () => val()));
    const randomLc = (terms: number): LinearCombination => {
      const lc = LinearCombination.zero();
      for (let k = 0; k < terms; k++) {
        const coeff = shape.int(3) === 0 ? 1n : shape();
        lc.add(vars[shape.int(vars.length)], coeff);
      }
      return lc;
    };
    const evalLc = (lc: LinearCombination): bigint => {
      let acc = 0n;
      for (let k = 0; k < lc.length; k++) acc += lc.coeffs[k] * (cs.value(lc.vars[k]) as bigint);
      return ((acc % R) + R) % R;
    };
    let last: Variable = ONE;
    for (let t = 0; t < this.muls; t++) {
      cs.namespace(`mul${t}`, () => {
        const a = randomLc(1 + shape.int(3));
        // Some rows have B = ONE only (so not every variable is B-dense).
        const b = shape.int(3) === 0 ? LinearCombination.of(ONE) : randomLc(1 + shape.int(2));
        const p = cs.alloc('p', () => (evalLc(a) * evalLc(b)) % R);
        cs.enforce('a*b=p', a, b, LinearCombination.of(p));
        vars.push(p);
        last = p;
      });
    }
    const out = cs.allocInput('out', () => cs.value(last) as bigint);
    cs.enforce('out = last', LinearCombination.of(last), LinearCombination.of(ONE), LinearCombination.of(out));
  }
}

interface Compiled {
  shape: CircuitShape;
  assignment: Uint8Array;
  inputs: bigint[];
}

function compile(circuit: Circuit): Compiled {
  const rec = new ShapeRecorder();
  circuit.synthesize(rec);
  const shape = rec.finish();
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  const tcs = new TestConstraintSystem();
  circuit.synthesize(tcs);
  assert.equal(tcs.whichIsUnsatisfied(), undefined);
  return { shape, assignment: wg.assignment(), inputs: wg.inputs() };
}

async function availableBackends(): Promise<Backend[]> {
  const out: Backend[] = [new ReferenceBackend()];
  try {
    const spec = '../src/backend/native.js'; // not a static import: the addon may not be built
    const mod = (await import(spec)) as { NativeBackend: new () => Backend };
    out.push(new mod.NativeBackend());
  } catch {
    // native backend unavailable here: reference only
  }
  return out;
}

const backends = await availableBackends();

const CIRCUITS = [
  { seed: 11, inputs: 1, muls: 3 },
  { seed: 12, inputs: 3, muls: 9 },
  { seed: 13, inputs: 5, muls: 17 }, // 18 constraints + 7 inputs = 25 rows → domain 32
];

for (const backend of backends) {
  test(`[${backend.name}] random circuits prove and verify; a changed input or byte fails`, async () => {
    for (const c of CIRCUITS) {
      const { shape, assignment, inputs } = compile(new RandomCircuit(c.seed, c.inputs, c.muls));
      assert.equal(inputs.length, c.inputs + 1);
      const params = await insecureDevSetup(shape, backend);
      const pvk = prepareVerifyingKey(params.vk);
      const span = new Span('prove');
      const { proof, timings } = await prove(params, shape, assignment, backend, span);
      span.end();
      assert.deepEqual(span.children.map((s) => s.name), [...PROVER_PHASES]);
      for (const p of PROVER_PHASES) assert.ok(timings[p] >= 0, p);

      const bytes = encodeProof(proof);
      assert.equal(bytes.length, PROOF_BYTES);
      assert.equal(bytes.length, 192);
      assert.ok(verifyProof(pvk, decodeProof(bytes), inputs), `circuit seed ${c.seed}`);

      for (let i = 0; i < inputs.length; i++) {
        const changed = inputs.slice();
        changed[i] = (changed[i] + 1n) % R;
        assert.equal(verifyProof(pvk, proof, changed), false, `input ${i} changed`);
      }
      for (const at of [0, 20, 47, 48, 100, 143, 144, 191]) {
        const bad = bytes.slice();
        bad[at] ^= 0x04;
        let ok: boolean;
        try {
          ok = verifyProof(pvk, decodeProof(bad), inputs);
        } catch {
          ok = false; // refused by the decoder
        }
        assert.equal(ok, false, `byte ${at} changed`);
      }
      assert.throws(() => verifyProof(pvk, proof, inputs.slice(1)), /public inputs given/);
      assert.throws(() => verifyProof(pvk, proof, [...inputs, 0n]), /public inputs given/);
    }
  });

  test(`[${backend.name}] the deterministic prover gives the same bytes for the same r, s`, async () => {
    const { shape, assignment, inputs } = compile(new RandomCircuit(21, 2, 6));
    const params = await insecureDevSetup(shape, backend);
    const pvk = prepareVerifyingKey(params.vk);
    const r = 0x1234_5678_9abc_def0n;
    const s = R - 5n;
    const p1 = encodeProof((await proveWithRandomness(params, shape, assignment, r, s, backend)).proof);
    const p2 = encodeProof((await proveWithRandomness(params, shape, assignment, r, s, backend)).proof);
    assert.deepEqual(p1, p2);
    const p3 = (await proveWithRandomness(params, shape, assignment, r + 1n, s, backend)).proof;
    assert.notDeepEqual(encodeProof(p3), p1);
    assert.ok(verifyProof(pvk, p3, inputs));
    // r = s = 0 (no blinding) is still a valid proof
    assert.ok(verifyProof(pvk, (await proveWithRandomness(params, shape, assignment, 0n, 0n, backend)).proof, inputs));
    await assert.rejects(proveWithRandomness(params, shape, assignment, R, s, backend), /r must be a field element/);
  });

  test(`[${backend.name}] a witness that does not satisfy the circuit gives a proof that fails`, async () => {
    const circuit = new RandomCircuit(31, 2, 5);
    const { shape, assignment, inputs } = compile(circuit);
    const params = await insecureDevSetup(shape, backend);
    const pvk = prepareVerifyingKey(params.vk);
    const bad = assignment.slice();
    writeFr(bad, shape.numInputs + 1, 42n); // an aux value changed
    const { proof } = await prove(params, shape, bad, backend);
    assert.equal(verifyProof(pvk, proof, inputs), false);
  });

  test(`[${backend.name}] DemoCircuit (bits, packing, 0/1 scalars) proves and verifies`, async () => {
    const { shape, assignment, inputs } = compile(new DemoCircuit({ constraints: 40, bitsPerWord: 4, publicInputs: 3 }));
    const params = await insecureDevSetup(shape, backend);
    const { proof, timings } = await prove(params, shape, assignment, backend);
    assert.ok(timings.batch_add >= 0);
    const pvk = prepareVerifyingKey(params.vk);
    assert.ok(verifyProof(pvk, proof, inputs));
    assert.equal(verifyProof(pvk, proof, [inputs[0], inputs[1], (inputs[2] + 1n) % R]), false);
  });

  test(`[${backend.name}] parameters survive encode → decode and still prove`, async () => {
    const { shape, assignment, inputs } = compile(new RandomCircuit(41, 2, 7));
    const params = await insecureDevSetup(shape, backend);
    const back: Parameters = await decodeParams(encodeParams(params), { checkPoints: true, memory: backend });
    assert.equal(back.h.length / 96, domainSize(shape) - 1);
    assert.equal(back.a.length / 96, queryIndices(shape).a.length);
    const { proof } = await prove(back, shape, assignment, backend);
    assert.ok(verifyProof(prepareVerifyingKey(back.vk), proof, inputs));
  });
}

/** The backend with lincombG1/G2 hidden: the prover then assembles with @noble/curves. */
function withoutLincomb(b: Backend): Backend {
  const plain = Object.create(b) as Backend;
  Object.defineProperty(plain, 'lincombG1', { value: undefined });
  Object.defineProperty(plain, 'lincombG2', { value: undefined });
  return plain;
}

for (const backend of backends) {
  test(`[${backend.name}] backend assembly (lincomb) and noble assembly give the same proof bytes`, async () => {
    assert.equal(typeof backend.lincombG1, 'function');
    assert.equal(withoutLincomb(backend).lincombG1, undefined);
    const { shape, assignment, inputs } = compile(new RandomCircuit(61, 2, 8));
    const params = await insecureDevSetup(shape, backend);
    const pvk = prepareVerifyingKey(params.vk);
    const g = rng(62);
    const pairs: [bigint, bigint][] = [[0n, 0n], [1n, 1n], [R - 1n, R - 1n], [0n, g()], [g(), 0n], [1n, R - 1n], [g(), g()]];
    for (const [r, s] of pairs) {
      const fast = (await proveWithRandomness(params, shape, assignment, r, s, backend)).proof;
      const slow = (await proveWithRandomness(params, shape, assignment, r, s, withoutLincomb(backend))).proof;
      assert.deepEqual(encodeProof(fast), encodeProof(slow), `r = ${r}, s = ${s}`);
      assert.ok(verifyProof(pvk, fast, inputs), `r = ${r}, s = ${s}`);
    }
  });
}

if (backends.length > 1) {
  test('every backend gives the same proof bytes for the same parameters and r, s', async () => {
    const { shape, assignment } = compile(new RandomCircuit(51, 3, 12));
    const params = await insecureDevSetup(shape, backends[0]);
    const proofs = await Promise.all(
      backends.map(async (b) => encodeProof((await proveWithRandomness(params, shape, assignment, 77n, 99n, b)).proof)),
    );
    for (let k = 1; k < proofs.length; k++) assert.deepEqual(proofs[k], proofs[0], backends[k].name);
    // and the same setup
    const other = await insecureDevSetup(shape, backends[1]);
    assert.deepEqual(encodeParams(other), encodeParams(params));
  });
}

test("a backend's notes on its MSM phases reach the phases' spans; the proof is unchanged", async () => {
  const ref = new ReferenceBackend();
  const { shape, assignment, inputs } = compile(new RandomCircuit(41, 2, 6));
  const params = await insecureDevSetup(shape, ref);
  // the reference backend's own sums through the whole-partition call, with notes as the CUDA backend gives them
  const noted = Object.assign(Object.create(ref) as Backend, {
    provePartition: async (input: PartitionInput) => ({ ...(await partitionSumsStepwise(ref, input)), notes: { msm_b2: 'c = 5, 9 others, 1 pass, XYZZ buckets', msm_h: '' } }),
  });
  const span = new Span('prove');
  const { proof } = await proveWithRandomness(params, shape, assignment, 7n, 9n, noted, span);
  span.end();
  const byName = new Map(span.children.map((c) => [c.name, c]));
  assert.equal(byName.get('msm_b2')?.note, 'c = 5, 9 others, 1 pass, XYZZ buckets');
  assert.equal(byName.get('msm_h')?.note, undefined);
  assert.equal(byName.get('msm_l')?.note, undefined);
  assert.deepEqual(encodeProof(proof), encodeProof((await proveWithRandomness(params, shape, assignment, 7n, 9n, ref)).proof));
  assert.ok(verifyProof(prepareVerifyingKey(params.vk), proof, inputs));
});

test('loadOrCreateDevParams caches by shape digest, atomically, and rebuilds a bad file', async () => {
  const backend = backends[0];
  const dir = await mkdtemp(join(tmpdir(), 'kiln-devparams-'));
  try {
    const { shape, assignment, inputs } = compile(new RandomCircuit(61, 2, 5));
    const cacheDir = join(dir, 'cache');
    const p1 = await loadOrCreateDevParams(shape, backend, cacheDir);
    const path = devParamsPath(shape, cacheDir);
    assert.match(path, /dev-[^/]+\.params$/);
    const size = (await stat(path)).size;
    const name = path.slice(cacheDir.length + 1);
    // the .params and its .vk (the head of the .params), no temp files left
    assert.deepEqual((await readdir(cacheDir)).sort(), [name, name.replace(/\.params$/, '.vk')].sort());
    assert.ok((await readFile(path)).subarray(0, (await stat(vkPathOf(path))).size).equals(await readFile(vkPathOf(path))));
    const p2 = await loadOrCreateDevParams(shape, backend, cacheDir);
    assert.deepEqual(encodeVerifyingKey(p2.vk), encodeVerifyingKey(p1.vk));
    assert.deepEqual(encodeParams(p2), encodeParams(p1));
    const { proof } = await prove(p2, shape, assignment, backend);
    assert.ok(verifyProof(prepareVerifyingKey(p2.vk), proof, inputs));

    await writeFile(path, new Uint8Array(100)); // corrupted cache
    const p3 = await loadOrCreateDevParams(shape, backend, cacheDir);
    assert.deepEqual(encodeParams(p3), encodeParams(p1));
    assert.equal((await stat(path)).size, size);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('verifyProofNative (input sum by the native MSM) answers as verifyProof (noble) on valid and changed inputs', async (t) => {
  let native: import('../src/groth16/verifier.js').NativeG1Msm;
  try {
    const spec = '../src/backend/native.js';
    native = ((await import(spec)) as { loadNative: () => import('../src/groth16/verifier.js').NativeG1Msm }).loadNative();
  } catch {
    t.skip('native addon not built');
    return;
  }
  const { verifyProofNative, inputSum } = await import('../src/groth16/verifier.js');
  const { readG1, g1Vector, frVector } = await import('../src/field/layout.js');
  const backend = backends[backends.length - 1];
  // 40 public inputs; values include 0, 1, r − 1 and full-width ones
  const { shape, assignment, inputs } = compile(new RandomCircuit(71, 39, 60));
  const params = await insecureDevSetup(shape, backend);
  const pvk = prepareVerifyingKey(params.vk);
  const { proof } = await prove(params, shape, assignment, backend);
  assert.ok(verifyProof(pvk, proof, inputs));
  assert.ok(await verifyProofNative(pvk, proof, inputs, native));
  const g = rng(5);
  const special = [0n, 1n, R - 1n, 2n];
  for (let trial = 0; trial < 12; trial++) {
    const changed = inputs.slice();
    const i = trial % inputs.length;
    changed[i] = trial < 4 ? special[trial]! : g(R);
    if (changed[i] === inputs[i]) changed[i] = (changed[i] + 1n) % R;
    const slow = verifyProof(pvk, proof, changed);
    assert.equal(slow, false);
    assert.equal(await verifyProofNative(pvk, proof, changed, native), slow, `trial ${trial}`);
    // the sums themselves agree
    const { point } = await native.msmG1(g1Vector(pvk.ic), frVector([1n, ...changed]));
    assert.ok(readG1(point, 0).equals(inputSum(pvk, changed)), `input sum, trial ${trial}`);
  }
  await assert.rejects(verifyProofNative(pvk, proof, inputs.slice(1), native), /public inputs given/);
  await assert.rejects(verifyProofNative(pvk, proof, [...inputs.slice(1), R], native), /not a field element/);
});

test("the verification workers' prepareKey warms with a stand-in proof that fails; a real proof then verifies, a changed input does not", async () => {
  const { prepareKey, verifyEncoded, encodedVerifyingKey, affineProof } = await import('../src/engine/verify-task.js');
  const backend = backends[0];
  const { shape, assignment, inputs } = compile(new RandomCircuit(21, 3, 9));
  const params = await insecureDevSetup(shape, backend);
  const { vk, vkId } = encodedVerifyingKey(params.vk);
  const warm = await prepareKey({ vk, vkId });
  assert.equal(warm.warmed, true, 'the stand-in (the generators) must not verify');
  const { proof } = await prove(params, shape, assignment, backend);
  const pub = inputs;
  const ok = await verifyEncoded({ vk, vkId, proof: affineProof(proof), inputs: pub });
  assert.equal(ok.ok, true);
  assert.deepEqual(ok.encoded, encodeProof(proof));
  const bad = await verifyEncoded({ vk, vkId, proof: affineProof(proof), inputs: [pub[0] + 1n, ...pub.slice(1)] });
  assert.equal(bad.ok, false);
});
