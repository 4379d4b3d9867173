/**
 * The native .params loader streaming sections onto the GPU (src/groth16/params-native.ts with the
 * CudaBackend as its device target: createBases / writeBases through two pinned staging buffers),
 * against the CPU backend:
 *  - proofs from device-resident parameters equal the CPU backend's for the same r, s: through
 *    loadParams (the engine's and the CLI's path), with many small staging chunks, and from host
 *    sections uploaded chunk by chunk; MSMs over a device section equal the CPU's;
 *  - the 2 KiB PoRep fixture proved from development parameters streamed to the device (the cache
 *    test/gpu/cuda.test.ts fills) and verified;
 *  - a .params file over 4 GiB (h: 44.74 M real G1 points cycling through 1,021 distinct ones)
 *    streamed to the device, the host's peak RSS growing by a few staging buffers only, the load
 *    rate reported (points/s: the official 32 GiB file has ~430 M points), and MSMs over it (all ones,
 *    and sparse scalars at the staging-chunk boundaries) equal to the CPU's.
 *
 * Without a GPU (CI) every test is skipped with the reason; the loader's staging logic is tested on
 * the CPU (test/params-native.test.ts, test/params-cuda-stub.test.ts). Runs with `npm run test:gpu`.
 * KILN_GPU_SKIP_LARGE=1 skips the 4 GiB file (it writes 4.3 GB to $TMPDIR).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CudaBackend, cudaCapabilities } from '../../src/backend/cuda.js';
import { NativeBackend, nativeAvailable } from '../../src/backend/native.js';
import { isPointSection, msmSection, type PointSection } from '../../src/backend/section.js';
import { FR_BYTES, G1, frVector, g1Vector, writeFr } from '../../src/field/layout.js';
import { parseCommit2In } from '../../src/filecoin/c1.js';
import { encodeParams, readParamsFile, verifyingKeyByteLength, type AnyParameters } from '../../src/groth16/keys.js';
import { inspectParamsFile, loadParams, loadParamsFile } from '../../src/groth16/params-native.js';
import { encodeProof } from '../../src/groth16/proof.js';
import { proveWithRandomness } from '../../src/groth16/prover.js';
import { compiledOf } from '../../src/groth16/compiled.js';
import { insecureDevSetup, loadOrCreateDevParams } from '../../src/groth16/setup.js';
import { prepareVerifyingKey, verifyProof } from '../../src/groth16/verifier.js';
import { porepInfoForSize, porepShape, porepWitness, verifyPorep } from '../../src/kinds/porep/porep-c2.js';
import { prove } from '../../src/groth16/prover.js';
import { DemoCircuit } from '../../src/r1cs/demo-circuit.js';
import { recordShape } from '../../src/r1cs/shape.js';
import { WitnessGenerator } from '../../src/r1cs/witness.js';
import { Span } from '../../src/util/timing.js';
import { fixture, hasFixture } from '../support.js';

const probe = cudaCapabilities();
const skip = !probe.cuda ? `no GPU: ${probe.error ?? 'unknown'}` : !nativeAvailable() ? 'CPU addon not built' : false;
const log = (s: string): void => void process.stdout.write(`# ${s}\n`);

/** VmHWM (bytes) since the last reset (`/proc/self/clear_refs` 5). */
function peakRss(reset = false): number {
  if (reset) writeFileSync('/proc/self/clear_refs', '5');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) * 1024;
}

const sections = (p: AnyParameters) => [p.h, p.l, p.a, p.bG1, p.bG2];
function release(p: AnyParameters): void {
  for (const s of sections(p)) if (isPointSection(s)) s.release();
}

test('GPU: device-resident parameters (streamed from the file, or host chunks uploaded) prove as the CPU does', { skip }, async () => {
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu });
  const circuit = new DemoCircuit({ constraints: 3000, bitsPerWord: 8, publicInputs: 3 });
  const shape = recordShape((cs) => circuit.synthesize(cs));
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  const assignment = wg.assignment();
  const dir = await mkdtemp(join(tmpdir(), 'kiln-gpu-params-'));
  try {
    const path = join(dir, 'demo.params');
    await writeFile(path, encodeParams(await insecureDevSetup(shape, cpu)));
    const ref = await readParamsFile(path);
    const r = 1234567n;
    const s = 7654321n;
    const want = encodeProof((await proveWithRandomness(ref, shape, assignment, r, s, cpu)).proof);
    // through loadParams: every section on the device, no host chunks
    const dev = await loadParams(path, gpu, { expected: compiledOf(shape).expectedParamsCounts(), checkPoints: true });
    for (const sec of sections(dev)) {
      assert.ok(isPointSection(sec));
      assert.equal(sec.chunks.length, 0);
      assert.equal(sec.device?.owner, gpu);
    }
    const a = await proveWithRandomness(dev, shape, assignment, r, s, gpu);
    assert.deepEqual(encodeProof(a.proof), want);
    assert.ok(verifyProof(prepareVerifyingKey(dev.vk), a.proof, wg.inputs()));
    // many small staging chunks (41 G2 = 82 G1 points each: uneven tails everywhere)
    const small = await loadParamsFile(path, { backend: cpu, device: gpu, stagingBytes: 192 * 41 });
    assert.deepEqual(encodeProof((await proveWithRandomness(small, shape, assignment, r, s, gpu)).proof), want);
    // host chunks in native memory, uploaded chunk by chunk by preloadSection
    const host = await loadParamsFile(path, { backend: cpu, chunkBytes: 96 * 1000 });
    assert.ok(host.h.chunks.length > 1);
    assert.deepEqual(encodeProof((await proveWithRandomness(host, shape, assignment, r, s, gpu)).proof), want);
    // msmResident over a device section = the CPU MSM
    const sc = frVector(Array.from({ length: small.h.count }, (_, i) => BigInt(i * i + 3)));
    assert.deepEqual((await msmSection(gpu, 'G1', small.h, sc)).point, (await cpu.msmG1(ref.h, sc)).point);
    const idx = Uint32Array.from({ length: small.bG2.count }, (_, i) => (i * 7) % small.h.count);
    assert.deepEqual((await msmSection(gpu, 'G2', small.bG2, sc, { scalarIndex: idx })).point, (await cpu.msmG2(ref.bG2, sc, { scalarIndex: idx })).point);
    for (const p of [dev, small, host]) release(p);
    release(small); // idempotent
  } finally {
    gpu.evictAll();
    await rm(dir, { recursive: true, force: true });
  }
});

test('GPU: the 2 KiB PoRep fixture from development parameters streamed to the device', { skip }, async (t) => {
  if (!hasFixture('2KiB.commit2in.json')) {
    t.skip('fixture 2KiB.commit2in.json not found');
    return;
  }
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu });
  try {
    const c2 = parseCommit2In(readFileSync(fixture('2KiB.commit2in.json')));
    const cache = join(process.env.KILN_GPU_TEST_DIR ?? join(tmpdir(), 'kiln-gpu-test'), 'kiln-cache');
    mkdirSync(cache, { recursive: true });
    const { shape } = porepShape(porepInfoForSize(2048), cache);
    const rss0 = peakRss(true);
    const t0 = performance.now();
    const params = await loadOrCreateDevParams(shape, gpu, join(cache, 'dev-params'));
    const ms = performance.now() - t0;
    log(`2 KiB dev params onto the device in ${ms.toFixed(0)} ms (generated first if the cache was empty); peak RSS +${((peakRss() - rss0) / 2 ** 20).toFixed(0)} MiB`);
    for (const sec of sections(params)) assert.ok(isPointSection(sec) && sec.chunks.length === 0 && sec.device?.owner === gpu);
    const w = porepWitness(c2.phase1Out, 0, shape);
    const { proof } = await prove(params, shape, w.assignment, gpu, new Span('porep'));
    assert.deepEqual(verifyPorep(c2.phase1Out, encodeProof(proof), params.vk), [true]);
    release(params);
  } finally {
    gpu.evictAll();
  }
});

test('GPU: a .params file over 4 GiB streams to the device; the host keeps no copy; MSMs over it equal the CPU', { skip }, async (t) => {
  if (process.env.KILN_GPU_SKIP_LARGE === '1') {
    t.skip('KILN_GPU_SKIP_LARGE=1');
    return;
  }
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu });
  const dir = await mkdtemp(join(tmpdir(), 'kiln-gpu-params-large-'));
  try {
    const fsInfo = await statfs(dir);
    if (fsInfo.bavail * fsInfo.bsize < 6 * 2 ** 30) {
      t.skip(`less than 6 GiB free in ${dir}`);
      return;
    }
    const H = 44_740_000;
    const M = 1021;
    const pattern = await cpu.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(Array.from({ length: M }, (_, i) => BigInt(i * 7919 + 11))));
    const patternWire = new Uint8Array(M * 96);
    await cpu.encodePoints('G1', pattern, patternWire);
    // a valid small file for the vk and the four small sections, then h stretched
    const shape = recordShape((cs) => new DemoCircuit({ constraints: 40, bitsPerWord: 4, publicInputs: 2 }).synthesize(cs));
    const base = encodeParams(await insecureDevSetup(shape, cpu));
    const vkLen = verifyingKeyByteLength(shape.numInputs);
    const hCount = new DataView(base.buffer, base.byteOffset + vkLen, 4).getUint32(0);
    const tail = base.subarray(vkLen + 4 + hCount * 96);
    const path = join(dir, 'big.params');
    const t0 = performance.now();
    const fh = await open(path, 'w');
    const per = M * 640; // points per write (~60 MiB), whole cycles of the pattern
    const block = new Uint8Array(per * 96);
    for (let o = 0; o < block.length; o += patternWire.length) block.set(patternWire, o);
    await fh.write(base.subarray(0, vkLen));
    const cnt = new Uint8Array(4);
    new DataView(cnt.buffer).setUint32(0, H);
    await fh.write(cnt);
    for (let i = 0; i < H; i += per) {
      const k = Math.min(per, H - i);
      let off = 0;
      while (off < k * 96) off += (await fh.write(block, off, k * 96 - off)).bytesWritten;
    }
    await fh.write(tail);
    await fh.close();
    const size = vkLen + 4 + H * 96 + tail.length;
    log(`wrote ${(size / 1e9).toFixed(2)} GB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const rss0 = peakRss(true);
    const t1 = performance.now();
    const dev = await loadParamsFile(path, { backend: cpu, device: gpu });
    const ms = performance.now() - t1;
    const grew = peakRss() - rss0;
    const points = Object.values((await inspectParamsFile(path, { backend: cpu })).sections).reduce((n, sec) => n + sec.count, 0);
    log(
      `streamed to the device in ${(ms / 1000).toFixed(2)} s: ${(size / 1e9 / (ms / 1000)).toFixed(2)} GB/s, ` +
        `${(points / (ms / 1000) / 1e6).toFixed(1)} M points/s on ${cpu.capabilities().threads} threads ` +
        `(430 M points: ~${(430e6 / (points / (ms / 1000))).toFixed(0)} s at this rate); peak RSS +${(grew / 2 ** 20).toFixed(0)} MiB`,
    );
    assert.equal(dev.h.count, H);
    assert.equal(dev.h.chunks.length, 0);
    assert.ok(grew < 1024 * 2 ** 20, `the host's peak RSS grew by ${(grew / 2 ** 20).toFixed(0)} MiB while 4.3 GB streamed`);

    // all ones: Σ_i P_(i mod M) = Σ_k c_k P_k with c_k = ⌊H/M⌋ + (k < H mod M)
    const ones = new Uint8Array(H * FR_BYTES);
    writeFr(ones, 0, 1n);
    for (let n = 1; n < H; n *= 2) ones.copyWithin(n * FR_BYTES, 0, Math.min(n, H - n) * FR_BYTES);
    const counts = frVector(Array.from({ length: M }, (_, k) => BigInt(Math.floor(H / M) + (k < H % M ? 1 : 0))));
    const t2 = performance.now();
    const got = await msmSection(gpu, 'G1', dev.h, ones);
    log(`all-ones MSM over ${H} device points: ${(performance.now() - t2).toFixed(0)} ms`);
    assert.deepEqual(got.point, (await cpu.msmG1(pattern, counts)).point);
    // sparse scalars around every staging-chunk boundary (349,525 G2 = 699,050 G1 points per 64 MiB buffer)
    const sparse = new Uint8Array(H * FR_BYTES);
    const picks: number[] = [];
    for (let b = 0; b <= H; b += 699_050) for (const d of [-1, 0, 1]) if (b + d >= 0 && b + d < H) picks.push(b + d);
    picks.push(2 ** 25 - 1, 2 ** 25, H - 1);
    const uniq = [...new Set(picks)];
    const bases = new Uint8Array(uniq.length * 96);
    const scal = new Uint8Array(uniq.length * FR_BYTES);
    uniq.forEach((i, j) => {
      const x = BigInt(i) * 1_000_003n + 17n;
      writeFr(sparse, i, x);
      writeFr(scal, j, x);
      bases.set(pattern.subarray((i % M) * 96, (i % M + 1) * 96), j * 96);
    });
    assert.deepEqual((await msmSection(gpu, 'G1', dev.h, sparse)).point, (await cpu.msmG1(bases, scal)).point);
    release(dev);
  } finally {
    gpu.evictAll();
    await rm(dir, { recursive: true, force: true });
  }
});

test('GPU: loader sections released or evicted leave no device memory held', { skip }, async () => {
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu });
  const dir = await mkdtemp(join(tmpdir(), 'kiln-gpu-params-'));
  try {
    const shape = recordShape((cs) => new DemoCircuit({ constraints: 100, bitsPerWord: 4, publicInputs: 1 }).synthesize(cs));
    const path = join(dir, 'p.params');
    await writeFile(path, encodeParams(await insecureDevSetup(shape, cpu)));
    for (let k = 0; k < 20; k++) release(await loadParams(path, gpu)); // no growth, no double free
    const dev = (await loadParams(path, gpu)) as AnyParameters;
    gpu.evictAll();
    release(dev); // after evictAll: a no-op
    await assert.rejects(gpu.writeResident(dev.h as PointSection, 0, new Uint8Array(96)), /released/);
  } finally {
    gpu.evictAll();
    await rm(dir, { recursive: true, force: true });
  }
});
