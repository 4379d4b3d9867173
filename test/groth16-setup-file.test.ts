/**
 * The INSECURE development setup written as files (CI, no GPU): the CPU path — the slow twin of the
 * GPU setup (test/gpu/setup.test.ts compares the two byte for byte) — writes a bellperson .params
 * and .vk that the reader takes back, whose proofs verify; the .vk is the head of the .params; the
 * same seed gives the same bytes and another seed other bytes (whose proofs fail against the first
 * key); an unconstrained aux variable gives an identity l point the reader accepts; the constants
 * both twins share (setupConstants) are what the setup uses; the GPU setup's Lagrange basis (an
 * inverse NTT of the powers of τ) equals the CPU's closed form; ensureDevParamsFile makes the
 * files once, atomically, checks a cached file's layout and remakes one that does not fit; the GPU
 * driver (setup-gpu.ts) writes the verifying key at the head of what a device backend streamed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, DevSetupInput, DevSetupResult } from '../src/backend/backend.js';
import { NativeBackend, nativeAvailable } from '../src/backend/native.js';
import { ReferenceBackend } from '../src/backend/reference.js';
import { FR_MODULUS, G1_BYTES, frVector, frVectorToBigints, powMod, readFr, writeG1 } from '../src/field/layout.js';
import { LinearCombination, ONE, type Circuit, type CircuitShape, type ConstraintSystem } from '../src/r1cs/cs.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { recordShape } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { encodeParams, encodeVerifyingKey, paramsByteLength, readParamsFile, readVerifyingKeyFile, verifyingKeyByteLength } from '../src/groth16/keys.js';
import { prove } from '../src/groth16/prover.js';
import { compiledOf } from '../src/groth16/compiled.js';
import { domainSize, queryIndices } from '../src/groth16/queries.js';
import {
  devParamsFileFits,
  devParamsLayout,
  devParamsPath,
  ensureDevParamsFile,
  insecureToxicWaste,
  lagrangeAt,
  loadOrCreateDevParams,
  setupConstants,
  setupConstantsBytes,
  setupWithToxicWaste,
  vkPathOf,
  writeInsecureDevParamsCpu,
} from '../src/groth16/setup.js';
import { DEV_SETUP_PHASES, writeInsecureDevParamsGpu, type DevSetupProgress } from '../src/groth16/setup-gpu.js';
import { prepareVerifyingKey, verifyProof } from '../src/groth16/verifier.js';

const R = FR_MODULUS;
const backend: Backend = nativeAvailable() ? new NativeBackend() : new ReferenceBackend();

function compile(circuit: Circuit): { shape: CircuitShape; w: Uint8Array; inputs: bigint[] } {
  const shape = recordShape((cs) => circuit.synthesize(cs));
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  return { shape, w: wg.assignment(), inputs: wg.inputs() };
}

/** x·y = z with one aux variable `free` that no constraint mentions (its l point is the identity). */
class LooseCircuit implements Circuit {
  synthesize(cs: ConstraintSystem): void {
    const x = cs.allocInput('x', () => 3n);
    const y = cs.alloc('y', () => 5n);
    cs.alloc('free', () => 7n);
    const z = cs.alloc('z', () => 15n);
    cs.enforce('x*y=z', LinearCombination.of(x), LinearCombination.of(y), LinearCombination.of(z));
    cs.enforce('z*1=z', LinearCombination.of(z), LinearCombination.of(ONE), LinearCombination.of(z));
  }
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-setup-file-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test(`[${backend.name}] CPU dev setup files: the reader takes them back, .vk = head of .params, proofs verify`, async () => {
  await withDir(async (dir) => {
    const { shape, w, inputs } = compile(new DemoCircuit({ constraints: 200, publicInputs: 3 }));
    const paramsPath = join(dir, 'demo.params');
    const vkPath = join(dir, 'demo.vk');
    const { vk } = await writeInsecureDevParamsCpu(shape, backend, paramsPath, { vkPath });
    const params = await readParamsFile(paramsPath, { checkPoints: true });
    compiledOf(shape).checkParams(params);
    assert.equal((await stat(paramsPath)).size, paramsByteLength(params));
    assert.equal((await stat(paramsPath)).size, devParamsLayout(shape).bytes);
    assert.ok(await devParamsFileFits(paramsPath, shape));
    assert.deepEqual(encodeVerifyingKey(params.vk), encodeVerifyingKey(vk));
    const vkBytes = await readFile(vkPath);
    const paramsBytes = await readFile(paramsPath);
    assert.equal(vkBytes.length, verifyingKeyByteLength(shape.numInputs));
    assert.ok(vkBytes.equals(paramsBytes.subarray(0, vkBytes.length)), '.vk is the head of .params');
    assert.deepEqual(encodeVerifyingKey(await readVerifyingKeyFile(vkPath)), encodeVerifyingKey(vk));
    // the same bytes as the in-memory setup of the same seed
    assert.ok(Buffer.from(encodeParams(await setupWithToxicWaste(shape, backend, insecureToxicWaste()))).equals(paramsBytes));
    const { proof } = await prove(params, shape, w, backend);
    const pvk = prepareVerifyingKey(await readVerifyingKeyFile(vkPath));
    assert.ok(verifyProof(pvk, proof, inputs));
    assert.ok(!verifyProof(pvk, proof, [inputs[0] + 1n, ...inputs.slice(1)]));
  });
});

test(`[${backend.name}] CPU dev setup files: same seed → same bytes; another seed → other bytes, proofs fail across`, async () => {
  await withDir(async (dir) => {
    const { shape, w, inputs } = compile(new DemoCircuit({ constraints: 60 }));
    const [p1, p2, p3] = ['a', 'b', 'c'].map((x) => join(dir, `${x}.params`));
    await writeInsecureDevParamsCpu(shape, backend, p1, { seed: 'kiln seed one' });
    await writeInsecureDevParamsCpu(shape, backend, p2, { seed: 'kiln seed one' });
    await writeInsecureDevParamsCpu(shape, backend, p3, { seed: 'kiln seed two' });
    const [b1, b2, b3] = await Promise.all([p1, p2, p3].map((p) => readFile(p)));
    assert.ok(b1.equals(b2));
    assert.equal(b1.length, b3.length);
    assert.ok(!b1.equals(b3));
    const one = await readParamsFile(p1);
    const two = await readParamsFile(p3);
    const { proof } = await prove(two, shape, w, backend);
    assert.ok(verifyProof(prepareVerifyingKey(two.vk), proof, inputs));
    assert.ok(!verifyProof(prepareVerifyingKey(one.vk), proof, inputs));
  });
});

test(`[${backend.name}] an unconstrained aux variable: identity l point in the file, accepted, proofs verify`, async () => {
  await withDir(async (dir) => {
    const { shape, w, inputs } = compile(new LooseCircuit());
    const path = join(dir, 'loose.params');
    await writeInsecureDevParamsCpu(shape, backend, path);
    const params = await readParamsFile(path);
    const free = 1; // aux order: y, free, z
    assert.ok(params.l.subarray(free * G1_BYTES, (free + 1) * G1_BYTES).every((b) => b === 0));
    const bytes = await readFile(path);
    assert.ok(bytes.includes(Buffer.from([0x40, ...new Array<number>(95).fill(0)])), 'an infinity-flagged point is in the file');
    // `free` is in neither A nor B: no a/b point for it (the density selection drops it)
    const q = queryIndices(shape);
    assert.ok(!Array.from(q.a).includes(shape.numInputs + free) && !Array.from(q.b).includes(shape.numInputs + free));
    const { proof } = await prove(params, shape, w, backend);
    assert.ok(verifyProof(prepareVerifyingKey(params.vk), proof, inputs));
  });
});

test('setupConstants: the shared scalars (1/γ, 1/δ, Z(τ)/δ) and their native bytes', () => {
  const tw = insecureToxicWaste('constants');
  for (const n of [1, 2, 1024, 2 ** 27]) {
    const k = setupConstants(tw, n);
    assert.equal((k.gammaInv * tw.gamma) % R, 1n);
    assert.equal((k.deltaInv * tw.delta) % R, 1n);
    assert.equal((k.hScale * tw.delta) % R, (powMod(tw.tau, BigInt(n), R) - 1n + R) % R);
    const b = setupConstantsBytes(k);
    assert.equal(b.length, 6 * 32);
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => readFr(b, i)), [k.tau, k.alpha, k.beta, k.gammaInv, k.deltaInv, k.hScale]);
  }
  // τ in the domain is refused (an n-th root of unity: Z(τ) = 0)
  const n = 4;
  const omega = powMod(7n, (R - 1n) / BigInt(n), R);
  assert.throws(() => setupConstants({ ...tw, tau: omega }, n), /τ lies in the evaluation domain/);
  assert.equal(domainSize(compile(new DemoCircuit({ constraints: 60 })).shape), 64);
});

test(`[${backend.name}] the GPU setup's Lagrange basis (inverse NTT of the powers of τ) = the CPU's closed form`, async () => {
  // native/cuda/setup.cu computes L = iNTT([τ^0 … τ^(n−1)]) with the prover's NTT (same ω, same 1/n
  // as this backend's, which test/gpu/cuda.test.ts checks against the GPU's); setup.ts uses
  // L_j(τ) = Z(τ)/n · ω^j/(τ − ω^j). They must agree on every j.
  const { tau } = insecureToxicWaste('lagrange');
  for (const n of [1, 2, 8, 1024]) {
    const powers: bigint[] = [];
    for (let i = 0, t = 1n; i < n; i++, t = (t * tau) % R) powers.push(t);
    const buf = frVector(powers);
    await backend.ntt(buf, { inverse: true, coset: false });
    assert.deepEqual(frVectorToBigints(buf), lagrangeAt(tau, n, n), `n = ${n}`);
  }
});

test(`[${backend.name}] ensureDevParamsFile: made once (atomically, .params and .vk), a fitting file kept, an unfitting one remade`, async () => {
  await withDir(async (dir) => {
    const { shape, w, inputs } = compile(new DemoCircuit({ constraints: 100, publicInputs: 2 }));
    const cacheDir = join(dir, 'cache');
    const first = await ensureDevParamsFile(shape, backend, cacheDir);
    assert.equal(first.created, true);
    assert.equal(first.on, 'cpu');
    assert.equal(first.path, devParamsPath(shape, cacheDir));
    assert.equal(first.vkPath, vkPathOf(first.path));
    assert.deepEqual((await readdir(cacheDir)).sort(), [first.path, first.vkPath].map((p) => p.slice(cacheDir.length + 1)).sort());
    const bytes = await readFile(first.path);
    assert.ok(bytes.equals(Buffer.from(encodeParams(await setupWithToxicWaste(shape, backend, insecureToxicWaste())))));
    assert.ok((await readFile(first.vkPath)).equals(bytes.subarray(0, verifyingKeyByteLength(shape.numInputs))));
    const again = await ensureDevParamsFile(shape, backend, cacheDir);
    assert.equal(again.created, false);
    // a header that does not fit (a wrong section count) is remade; so is a truncated file
    const fh = await open(first.path, 'r+');
    await fh.write(new Uint8Array([0, 0, 0, 1]), 0, 4, verifyingKeyByteLength(shape.numInputs));
    await fh.close();
    assert.equal(await devParamsFileFits(first.path, shape), false);
    assert.equal((await ensureDevParamsFile(shape, backend, cacheDir)).created, true);
    assert.ok((await readFile(first.path)).equals(bytes));
    await writeFile(first.path, bytes.subarray(0, bytes.length - 1));
    assert.equal((await ensureDevParamsFile(shape, backend, cacheDir)).created, true);
    assert.ok((await readFile(first.path)).equals(bytes));
    // loadOrCreateDevParams reads what ensureDevParamsFile made; proofs verify
    const params = await loadOrCreateDevParams(shape, backend, cacheDir);
    const { proof } = await prove(params, shape, w, backend);
    assert.ok(verifyProof(prepareVerifyingKey(params.vk), proof, inputs));
  });
});

/**
 * A stand-in for a device backend: its devSetupInsecure writes the five sections of the CPU setup
 * (computed here from the same constants) at input.offset, reports progress, and returns the IC
 * points, as native/cuda/setup.cu does. Exercises setup-gpu.ts (constants, truncation, verifying
 * key at the head, .vk, counts check, progress, cleanup on failure) without a GPU.
 */
function fakeDevice(base: Backend, failAfterWrite = false): Backend {
  const fake = Object.create(base) as Backend;
  fake.devSetupInsecure = async (input: DevSetupInput): Promise<DevSetupResult> => {
    const shape = input.shape as CircuitShape;
    const k = frVectorToBigints(input.constants);
    const tw = insecureToxicWaste(); // the test passes the default seed: check the constants are its
    const want = setupConstants(tw, 2 ** input.logN);
    assert.deepEqual(k, [want.tau, want.alpha, want.beta, want.gammaInv, want.deltaInv, want.hScale]);
    const params = await setupWithToxicWaste(shape, base, tw);
    const all = encodeParams(params);
    const head = verifyingKeyByteLength(shape.numInputs);
    assert.equal(input.offset, head);
    const fh = await open(input.path, 'r+');
    try {
      await fh.write(all, head, all.length - head, head);
    } finally {
      await fh.close();
    }
    input.progress?.set([8, 0, 0, all.length - head, all.length - head]);
    if (failAfterWrite) throw new Error('device failed');
    const q = queryIndices(shape);
    const ic = new Uint8Array(shape.numInputs * G1_BYTES);
    // the native IC points: the verifying key's, re-encoded in the native layout
    params.vk.ic.forEach((p, i) => writeG1(ic, i, p));
    const zero = { wall: 0, gpu: 0 };
    return {
      ic,
      counts: [2 ** input.logN - 1, shape.numAux, q.a.length, q.b.length, q.b.length],
      endOffset: all.length,
      longColumns: 0,
      stagingBytes: 0,
      devicePeakBytes: 0,
      timings: { upload: 0, lagrange: 0, evals: 0, tables: 0, h: zero, l: zero, a: zero, b1: zero, b2: zero, ic: zero, writeWait: 0, drain: 0, fsync: 0, total: 0 },
    };
  };
  return fake;
}

test(`[${backend.name}] setup-gpu.ts over a device stand-in: the CPU twin's bytes, .vk, progress; ensureDevParamsFile takes the device path; a failure leaves no file`, async () => {
  await withDir(async (dir) => {
    const { shape, w, inputs } = compile(new DemoCircuit({ constraints: 150, publicInputs: 2 }));
    await writeInsecureDevParamsCpu(shape, backend, join(dir, 'cpu.params'), { vkPath: join(dir, 'cpu.vk') });
    // an older, longer file at the target: truncated first
    await writeFile(join(dir, 'gpu.params'), new Uint8Array(devParamsLayout(shape).bytes + 1000).fill(7));
    const seen: DevSetupProgress[] = [];
    const r = await writeInsecureDevParamsGpu(shape, fakeDevice(backend), join(dir, 'gpu.params'), {
      vkPath: join(dir, 'gpu.vk'),
      onProgress: (p) => seen.push(p),
    });
    assert.ok((await readFile(join(dir, 'gpu.params'))).equals(await readFile(join(dir, 'cpu.params'))));
    assert.ok((await readFile(join(dir, 'gpu.vk'))).equals(await readFile(join(dir, 'cpu.vk'))));
    assert.equal(r.bytes, devParamsLayout(shape).bytes);
    assert.deepEqual(r.counts, { h: domainSize(shape) - 1, l: shape.numAux, a: queryIndices(shape).a.length, bG1: queryIndices(shape).b.length, bG2: queryIndices(shape).b.length });
    assert.equal(seen.at(-1)?.phase, 'done');
    assert.equal(DEV_SETUP_PHASES.at(-1), 'done');
    const params = await readParamsFile(join(dir, 'gpu.params'), { checkPoints: true });
    const { proof } = await prove(params, shape, w, backend);
    assert.ok(verifyProof(prepareVerifyingKey(params.vk), proof, inputs));

    const made = await ensureDevParamsFile(shape, fakeDevice(backend), join(dir, 'cache'));
    assert.equal(made.on, 'gpu');
    assert.ok((await readFile(made.path)).equals(await readFile(join(dir, 'cpu.params'))));

    await assert.rejects(writeInsecureDevParamsGpu(shape, fakeDevice(backend, true), join(dir, 'bad.params')), /device failed/);
    await assert.rejects(stat(join(dir, 'bad.params')), { code: 'ENOENT' });
    await assert.rejects(ensureDevParamsFile(shape, fakeDevice(backend, true), join(dir, 'cache2')), /device failed/);
    assert.deepEqual(await readdir(join(dir, 'cache2')), []); // no temp files left
    await assert.rejects(writeInsecureDevParamsGpu(shape, backend, join(dir, 'x.params')), /cannot run the development setup on a device/);
  });
});
