/**
 * The INSECURE GPU development setup (native/cuda/setup.cu via src/groth16/setup-gpu.ts) against
 * its CPU twin (writeInsecureDevParamsCpu): the .params and .vk files must be equal byte for byte —
 * on random CSR shapes with the edges (a column of more than 256 terms summed piecewise, ONE in
 * every A row, an unconstrained aux variable: an identity l point, an A-dense variable whose terms
 * cancel: an identity a point, B-sparse inputs, repeated terms in a row, empty rows), with small
 * pipeline chunks (several chunks per section, a short last one, one writer or several) and the
 * defaults; on DemoCircuits (one whose QAP rows fill the domain exactly); on a StackedDrg test
 * circuit (8 nodes, 2 layers: 1.2 M constraints) and on the 2 KiB PoRep partition shape (2.7 M
 * constraints, 2^22; its CPU file made once into $KILN_GPU_TEST_DIR/cpu-dev-params).
 * Parameters made on the GPU prove on the GPU and verify; loadOrCreateDevParams and
 * ensureDevParamsFile with a CUDA backend write the same files; progress is reported; bad
 * arguments and an unwritable path are refused with clear errors and leave no file.
 *
 * Skipped without a GPU, without the CPU addon, with an addon built before devSetupInsecure, or with
 * KILN_DEV_SETUP=cpu.
 * Runs on the device with `npm run test:gpu`. KILN_GPU_SETUP_LARGE=0 skips the StackedDrg and
 * 2 KiB comparisons.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CudaBackend, cudaCapabilities } from '../../src/backend/cuda.js';
import { NativeBackend, nativeAvailable } from '../../src/backend/native.js';
import type { CircuitShape } from '../../src/r1cs/cs.js';
import { DemoCircuit, type DemoOptions } from '../../src/r1cs/demo-circuit.js';
import { recordShape } from '../../src/r1cs/shape.js';
import { WitnessGenerator } from '../../src/r1cs/witness.js';
import { PARAMS_SECTIONS, readParamsFile, verifyingKeyByteLength } from '../../src/groth16/keys.js';
import { prove } from '../../src/groth16/prover.js';
import { domainSize, queryIndices } from '../../src/groth16/queries.js';
import { devParamsPath, ensureDevParamsFile, loadOrCreateDevParams, vkPathOf, writeInsecureDevParamsCpu } from '../../src/groth16/setup.js';
import { hasDevSetup, writeInsecureDevParamsGpu, type DevSetupProgress, type GpuDevParamsOptions } from '../../src/groth16/setup-gpu.js';
import { prepareVerifyingKey, verifyProof } from '../../src/groth16/verifier.js';
import { stackedBlankCircuit, stackedTestParams } from '../../src/filecoin/circuit/index.js';
import { porepInfoForSize, porepShape } from '../../src/kinds/porep/porep-c2.js';
import { randomShape } from '../shape-support.js';
import { tuningFromEnv } from '../../src/util/tuning.js';

const probe = cudaCapabilities();
const cpu = nativeAvailable() ? new NativeBackend() : undefined;
// KILN_DEV_SETUP=cpu in the environment (read here, as the edges read it): a backend without devSetupInsecure
const devSetup = tuningFromEnv(process.env).devSetup;
const gpu = probe.cuda && cpu ? new CudaBackend({ cpu, devSetup }) : undefined;
const skip = !probe.cuda
  ? `no GPU: ${probe.error ?? 'unknown'}`
  : !cpu
    ? 'CPU addon not built'
    : !hasDevSetup(gpu!)
      ? devSetup === false
        ? 'KILN_DEV_SETUP=cpu'
        : 'the CUDA addon has no devSetupInsecure (rebuild it: npm run build:cuda)'
      : false;
const skipLarge = skip || (process.env.KILN_GPU_SETUP_LARGE === '0' ? 'KILN_GPU_SETUP_LARGE=0' : false);
const log = (s: string): void => {
  process.stdout.write(`# ${s}\n`);
};

function demo(opts: DemoOptions): { shape: CircuitShape; w: Uint8Array; inputs: bigint[] } {
  const circuit = new DemoCircuit(opts);
  const shape = recordShape((cs) => circuit.synthesize(cs));
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  return { shape, w: wg.assignment(), inputs: wg.inputs() };
}

/** Where byte `off` of a .params file of `shape` lies, for messages. */
function locate(shape: CircuitShape, off: number): string {
  const n = domainSize(shape);
  const q = queryIndices(shape);
  const counts = [n - 1, shape.numAux, q.a.length, q.b.length, q.b.length];
  let o = verifyingKeyByteLength(shape.numInputs);
  if (off < o) return `verifying key byte ${off}`;
  for (let s = 0; s < 5; s++) {
    const pb = PARAMS_SECTIONS[s].group === 'G1' ? 96 : 192;
    const end = o + 4 + counts[s] * pb;
    if (off < end) return off < o + 4 ? `${PARAMS_SECTIONS[s].section} count` : `${PARAMS_SECTIONS[s].section} point ${Math.floor((off - o - 4) / pb)}`;
    o = end;
  }
  return `past the end (byte ${off})`;
}

/** The first byte where two files differ (-1 when equal), read in chunks (files of GBs). */
async function firstDiff(pa: string, pb: string): Promise<number> {
  const [fa, fb] = await Promise.all([open(pa, 'r'), open(pb, 'r')]);
  try {
    const [sa, sb] = [(await fa.stat()).size, (await fb.stat()).size];
    const size = Math.min(sa, sb);
    const chunk = 64 << 20;
    const ba = Buffer.alloc(chunk);
    const bb = Buffer.alloc(chunk);
    for (let o = 0; o < size; o += chunk) {
      const k = Math.min(chunk, size - o);
      await Promise.all([fa.read(ba, 0, k, o), fb.read(bb, 0, k, o)]);
      if (ba.subarray(0, k).equals(bb.subarray(0, k))) continue;
      for (let i = 0; i < k; i++) if (ba[i] !== bb[i]) return o + i;
    }
    return sa === sb ? -1 : size;
  } finally {
    await Promise.all([fa.close(), fb.close()]);
  }
}

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-gpu-setup-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const ms = (x: number): string => x.toFixed(1);

/** The GPU file of `shape` (once per option set) against the CPU file at `cpuParams` / `cpuVk`. */
async function compareWith(name: string, shape: CircuitShape, cpuParams: string, cpuVk: string, variants: GpuDevParamsOptions[], dir: string): Promise<void> {
  for (const v of variants) {
    const label = `${name} (chunk ${v.chunkPoints ?? 'default'}, writers ${v.writers ?? 'default'}${v.seed ? `, seed ${String(v.seed)}` : ''})`;
    const gp = join(dir, 'gpu.params');
    const gv = join(dir, 'gpu.vk');
    const r = await writeInsecureDevParamsGpu(shape, gpu!, gp, { ...v, vkPath: gv });
    const d = await firstDiff(cpuParams, gp);
    const sizes = `${(await stat(cpuParams)).size} / ${(await stat(gp)).size}`;
    assert.equal(d, -1, `${label}: .params differ first at ${d < 0 ? '' : locate(shape, d)} (sizes ${sizes})`);
    assert.ok((await readFile(cpuVk)).equals(await readFile(gv)), `${label}: .vk differs`);
    assert.equal(r.bytes, (await stat(gp)).size);
    const t = r.timings;
    log(
      `${label}: ${shape.numConstraints} constraints, 2^${Math.log2(domainSize(shape))}: ${r.bytes} bytes equal; GPU ${ms(t.wall)} ms wall ` +
        `(upload ${ms(t.upload)}, lagrange ${ms(t.lagrange)}, evals ${ms(t.evals)}, tables ${ms(t.tables)}, ` +
        `h ${ms(t.h.wall)}/${ms(t.h.gpu)}, l ${ms(t.l.wall)}/${ms(t.l.gpu)}, a ${ms(t.a.wall)}/${ms(t.a.gpu)}, ` +
        `b1 ${ms(t.b1.wall)}/${ms(t.b1.gpu)}, b2 ${ms(t.b2.wall)}/${ms(t.b2.gpu)} wall/gpu, write wait ${ms(t.writeWait)}, ` +
        `drain ${ms(t.drain)}, fsync ${ms(t.fsync)}; long columns ${r.longColumns}; staging ${(r.stagingBytes / 2 ** 20).toFixed(0)} MiB, ` +
        `device pool peak ${(r.devicePeakBytes / 2 ** 20).toFixed(0)} MiB)`,
    );
  }
}

/** CPU file of `shape`, then compareWith. */
async function compareFiles(name: string, shape: CircuitShape, variants: GpuDevParamsOptions[], seed?: string): Promise<void> {
  await withDir(async (dir) => {
    const t0 = performance.now();
    const cp = join(dir, 'cpu.params');
    const cv = join(dir, 'cpu.vk');
    await writeInsecureDevParamsCpu(shape, cpu!, cp, { vkPath: cv, seed });
    log(`${name}: CPU setup ${ms(performance.now() - t0)} ms`);
    await compareWith(name, shape, cp, cv, variants.map((v) => ({ ...v, seed })), dir);
  });
  await gpu!.evictCircuit(shape);
}

test('GPU dev setup = CPU dev setup, byte for byte: random shapes with the edges', { skip }, async () => {
  // 3,000 rows + 5 inputs → 2^12; column ONE in every A row and `heavy` in 400 C rows: long columns
  const s1 = randomShape(1, 3000, 5, 2500, 400);
  await compareFiles('random 3000×2505', s1, [{ chunkPoints: 700, writers: 1 }, { chunkPoints: 4096, writers: 3 }, {}]);
  // one input (ONE only), a tiny domain; chunks of 1 and 3 points (G2 chunks of 1)
  await compareFiles('random 5×13', randomShape(2, 5, 1, 12, 0), [{ chunkPoints: 1 }, { chunkPoints: 3, writers: 2 }, {}]);
  // another seed of the toxic waste
  await compareFiles('random 3000×2505, other seed', s1, [{}], 'kiln gpu setup test seed');
  // a column of 20,000 terms (ONE in A): two pieces of 8,192 and a short one
  await compareFiles('random 20000×1000, ONE in 20,000 A rows', randomShape(3, 20000, 3, 1000, 0), [{ chunkPoints: 5000 }]);
});

test('GPU dev setup = CPU dev setup, byte for byte: DemoCircuits', { skip }, async () => {
  // 4,093 constraints + 3 inputs = 4,096 rows: the QAP fills the domain
  await compareFiles('demo 4093', demo({ constraints: 4093 }).shape, [{ chunkPoints: 1000 }, {}]);
  await compareFiles('demo dense 20000', demo({ constraints: 20000, dense: true, publicInputs: 4 }).shape, [{}]);
});

test('GPU dev setup = CPU dev setup, byte for byte: StackedDrg test circuit (8 nodes, 2 layers)', { skip: skipLarge }, async () => {
  const t0 = performance.now();
  const shape = recordShape((cs) => stackedBlankCircuit(stackedTestParams(8, 0, 0)).synthesize(cs));
  log(`stacked shape recorded in ${ms(performance.now() - t0)} ms`);
  await compareFiles('stacked 8-0-0', shape, [{}]);
});

test('GPU dev setup = CPU dev setup, byte for byte: the 2 KiB PoRep partition shape (2^22)', { skip: skipLarge }, async () => {
  // The shape from the cache test/gpu/cuda.test.ts and daemon.test.ts share; the CPU file in a
  // folder of its own, made by the CPU only (the shared dev-params folder may hold a file the GPU
  // made: cuda.test.ts proves with the CUDA backend, which makes missing parameters on the GPU).
  const root = process.env.KILN_GPU_TEST_DIR ?? join(tmpdir(), 'kiln-gpu-test');
  const cache = join(root, 'kiln-cache');
  mkdirSync(cache, { recursive: true });
  const t0 = performance.now();
  const { shape } = porepShape(porepInfoForSize(2048), cache);
  const t1 = performance.now();
  const made = await ensureDevParamsFile(shape, cpu!, join(root, 'cpu-dev-params'));
  log(`porep 2KiB: shape ${ms(t1 - t0)} ms; CPU dev params ${made.created ? `made in ${ms(made.ms)} ms` : 'cached'} (${made.path})`);
  await withDir((dir) => compareWith('porep 2KiB', shape, made.path, made.vkPath, [{}], dir));
  await gpu!.evictCircuit(shape);
});

test('GPU dev parameters prove on the GPU and verify; loadOrCreateDevParams / ensureDevParamsFile on a CUDA backend: the same files, progress', { skip }, async () => {
  const { shape, w, inputs } = demo({ constraints: 1000, publicInputs: 3 });
  await withDir(async (dir) => {
    const path = join(dir, 'gpu.params');
    const seen: DevSetupProgress[] = [];
    await writeInsecureDevParamsGpu(shape, gpu!, path, { onProgress: (p) => seen.push(p), progressIntervalMs: 1 });
    assert.equal(seen.at(-1)?.phase, 'done');
    assert.equal(seen.at(-1)?.bytesWritten, seen.at(-1)?.bytesTotal);
    const params = await readParamsFile(path, { memory: gpu!, checkPoints: true });
    const { proof } = await prove(params, shape, w, gpu!);
    const pvk = prepareVerifyingKey(params.vk);
    assert.ok(verifyProof(pvk, proof, inputs));
    assert.ok(!verifyProof(pvk, proof, [...inputs.slice(0, -1), inputs[inputs.length - 1] + 1n]));

    const cacheDir = join(dir, 'cache');
    const cached = await loadOrCreateDevParams(shape, gpu!, cacheDir);
    assert.ok((await readFile(devParamsPath(shape, cacheDir))).equals(await readFile(path)));
    assert.ok((await readFile(vkPathOf(devParamsPath(shape, cacheDir)))).equals((await readFile(path)).subarray(0, verifyingKeyByteLength(shape.numInputs))));
    const p2 = await prove(cached, shape, w, gpu!);
    assert.ok(verifyProof(prepareVerifyingKey(cached.vk), p2.proof, inputs));
    const again = await ensureDevParamsFile(shape, gpu!, cacheDir);
    assert.equal(again.created, false);
    const other = await ensureDevParamsFile(shape, gpu!, join(dir, 'cache2'));
    assert.equal(other.on, 'gpu');
    assert.ok((await readFile(other.path)).equals(await readFile(path)));
  });
  await gpu!.evictCircuit(shape);
});

test('GPU dev setup: bad arguments and an unwritable path are refused clearly, leaving no file', { skip }, async () => {
  const { shape } = demo({ constraints: 100 });
  await withDir(async (dir) => {
    await assert.rejects(writeInsecureDevParamsGpu(shape, gpu!, join(dir, 'no', 'such', 'dir', 'x.params')), /ENOENT|cannot open/);
    await assert.rejects(writeInsecureDevParamsGpu(shape, gpu!, join(dir, 'x.params'), { chunkPoints: 0 }), /chunkPoints/);
    await assert.rejects(writeInsecureDevParamsGpu(shape, gpu!, join(dir, 'x.params'), { writers: 0 }), /writers/);
    const bad = { ...shape, a: { ...shape.a, cols: shape.a.cols + 1 } };
    await assert.rejects(writeInsecureDevParamsGpu(bad, gpu!, join(dir, 'y.params')), /matrix A is/);
    // the failed calls leave no file behind
    await assert.rejects(readFile(join(dir, 'x.params')), { code: 'ENOENT' });
    await assert.rejects(readFile(join(dir, 'y.params')), { code: 'ENOENT' });
  });
  gpu!.evictAll();
});
