/**
 * The tuning variables (issue 28, src/util/tuning.ts): tuningFromEnv parses each one (empty = unset) and refuses a
 * value it does not understand, naming the variable; and the library takes what it is passed, not the
 * environment: the witness path, the PoSt shape cache (through a kind), the CUDA backend's options (through
 * selectBackend, on a stand-in addon) all follow the Tuning while the variables are set to something else.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import type { CircuitFootprint } from '../src/backend/device-plan.js';
import { CudaBackend, type CudaAddon } from '../src/backend/cuda.js';
import { nativeAvailable } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import { defaultConfig } from '../src/engine/config.js';
import { createPoStKind } from '../src/kinds/post/planner.js';
import { postShapeCacheDir } from '../src/kinds/post/post.js';
import { witnessRunner } from '../src/kinds/witness.js';
import { type Tuning, TUNING_VARIABLES, tuningFromEnv } from '../src/util/tuning.js';

const GIB = 2 ** 30;

test('tuningFromEnv: every variable, empty values as unset, nothing set = the defaults', () => {
  assert.deepEqual(tuningFromEnv({}), {});
  assert.deepEqual(tuningFromEnv(Object.fromEntries(Object.keys(TUNING_VARIABLES).filter((k) => k !== 'KILN_NO_IFMA').map((k) => [k, '']))), {});
  const all: Tuning = tuningFromEnv({
    KILN_CUDA_ADDON: 'variant/kiln_cuda.node',
    KILN_GPU_MEMORY_LIMIT: '24GiB',
    KILN_PLAN_MATRICES: 'streamed',
    KILN_DEV_SETUP: 'cpu',
    KILN_GPU_DETAIL: '1',
    KILN_WITNESS: 'ts',
    KILN_POST_SHAPE_CACHE: '0',
    KILN_NO_IFMA: '1',
    KILN_MSM_BATCH: '777',
    KILN_MSM_ACC: '2',
    KILN_NTT_FUSED: '1',
    KILN_PRECOMPUTE_H: '1',
    PATH: '/usr/bin', // not ours: ignored
  });
  assert.deepEqual(all, {
    addonPath: resolve('variant/kiln_cuda.node'),
    gpuMemoryLimit: { bytes: 24 * GIB },
    planMatrices: 'streamed',
    devSetup: false,
    gpuDetail: true,
    witness: 'ts',
    postShapeCache: false,
    noIfma: true,
    msmBatch: 777,
    msmAcc: 2,
    nttFused: 1,
    precomputeH: true,
  });
  // every field has its variable
  assert.deepEqual(Object.values(TUNING_VARIABLES).sort(), Object.keys(all).sort());
  assert.deepEqual(tuningFromEnv({ KILN_GPU_MEMORY_LIMIT: '75%' }).gpuMemoryLimit, { fraction: 0.75 });
  assert.deepEqual(tuningFromEnv({ KILN_GPU_MEMORY_LIMIT: '25769803776' }).gpuMemoryLimit, { bytes: 24 * GIB });
  assert.equal(tuningFromEnv({ KILN_DEV_SETUP: 'gpu' }).devSetup, true);
  assert.equal(tuningFromEnv({ KILN_GPU_DETAIL: '0' }).gpuDetail, false);
  assert.equal(tuningFromEnv({ KILN_WITNESS: 'native' }).witness, 'native');
  for (const off of ['0', 'off', 'false', 'OFF']) assert.equal(tuningFromEnv({ KILN_POST_SHAPE_CACHE: off }).postShapeCache, false, off);
  for (const on of ['1', 'on', 'true']) assert.equal(tuningFromEnv({ KILN_POST_SHAPE_CACHE: on }).postShapeCache, true, on);
  assert.equal(tuningFromEnv({ KILN_MSM_ACC: '0' }).msmAcc, 0);
  assert.equal(tuningFromEnv({ KILN_NTT_FUSED: '0' }).nttFused, 0);
  // KILN_NO_IFMA keeps the addon's old rule: set and neither '' nor '0' is on; '' and '0' say "IFMA allowed"
  for (const [v, want] of [['1', true], ['yes', true], ['0', false], ['', false]] as const) assert.equal(tuningFromEnv({ KILN_NO_IFMA: v }).noIfma, want, `KILN_NO_IFMA=${v}`);
});

test('tuningFromEnv refuses a value it does not understand, naming the variable and what it takes', () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ KILN_WITNESS: 'wasm' }, /^KILN_WITNESS must be native or ts, got wasm$/],
    [{ KILN_GPU_MEMORY_LIMIT: '5' }, /^KILN_GPU_MEMORY_LIMIT: memory limit 5: at least 1 GiB$/],
    [{ KILN_GPU_MEMORY_LIMIT: '120%' }, /^KILN_GPU_MEMORY_LIMIT: memory limit 120%: a percentage must be in \(0, 100\]$/],
    [{ KILN_GPU_MEMORY_LIMIT: 'lots' }, /^KILN_GPU_MEMORY_LIMIT: memory limit lots: bytes, a size such as 24GiB, or a percentage such as 75%$/],
    [{ KILN_PLAN_MATRICES: 'resident' }, /^KILN_PLAN_MATRICES=resident: only 'streamed' \(or unset\)$/],
    [{ KILN_DEV_SETUP: 'cup' }, /^KILN_DEV_SETUP=cup: expected cpu, gpu \(or unset\)$/],
    [{ KILN_GPU_DETAIL: 'yes' }, /^KILN_GPU_DETAIL=yes: expected 1, 0 \(or unset\)$/],
    [{ KILN_POST_SHAPE_CACHE: 'maybe' }, /^KILN_POST_SHAPE_CACHE=maybe: expected 0, off, false, 1, on, true \(or unset\)$/],
    [{ KILN_MSM_BATCH: '0' }, /^KILN_MSM_BATCH=0: expected the most scalars of a Pippenger batch, a positive integer$/],
    [{ KILN_MSM_BATCH: '1.5' }, /^KILN_MSM_BATCH=1\.5: expected/],
    [{ KILN_MSM_BATCH: '-3' }, /^KILN_MSM_BATCH=-3: expected/],
    [{ KILN_MSM_ACC: '6' }, /^KILN_MSM_ACC=6: expected the MSM accumulation kernel: 0, 1, 2, 3, 4 or 5 \(the default\)$/],
    [{ KILN_MSM_ACC: 'hot' }, /^KILN_MSM_ACC=hot: expected/],
    [{ KILN_NTT_FUSED: '2' }, /^KILN_NTT_FUSED=2: expected the inverse NTTs' scalings: 1 fused into the last stage group, 0 a pass of their own$/],
  ];
  for (const [env, message] of bad) assert.throws(() => tuningFromEnv(env), (e: Error) => e instanceof RangeError && message.test(e.message), JSON.stringify(env));
});

// The library paths below run with every variable set to the opposite of what they are passed: they must not look.
const OPPOSITE: Record<string, string> = { KILN_WITNESS: 'ts', KILN_POST_SHAPE_CACHE: '0', KILN_GPU_MEMORY_LIMIT: '2GiB', KILN_DEV_SETUP: 'cpu', KILN_MSM_ACC: '0', KILN_NTT_FUSED: '0', KILN_PRECOMPUTE_H: '1' };
const saved: Record<string, string | undefined> = {};
let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-tuning-'));
  for (const [k, v] of Object.entries(OPPOSITE)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
after(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await rm(dir, { recursive: true, force: true });
});

test('the witness path is what the caller passes (KILN_WITNESS=ts in the environment changes nothing)', () => {
  assert.equal(witnessRunner('ts'), undefined, 'ts: the TypeScript generator');
  const native = witnessRunner();
  if (nativeAvailable()) assert.ok(native !== undefined, 'the default: the native witness programs when the CPU addon loads');
  else assert.equal(native, undefined, 'no CPU addon: the TypeScript generator');
  assert.throws(() => witnessRunner('wasm' as never), /witness path must be native or ts, got wasm/);
});

test('a PoSt kind caches its shapes unless its tuning says postShapeCache: false (KILN_POST_SHAPE_CACHE=0 in the environment changes nothing)', async () => {
  assert.equal(postShapeCacheDir('/c'), '/c');
  assert.equal(postShapeCacheDir('/c', false), undefined);
  const shapeFiles = async (cacheDir: string): Promise<string[]> => (existsSync(join(cacheDir, 'shapes')) ? readdir(join(cacheDir, 'shapes')) : []);
  for (const [sub, tuning, cached] of [
    ['off', { postShapeCache: false }, false],
    ['default', undefined, true],
  ] as const) {
    const config = defaultConfig(64 * GIB, {});
    config.srs.param_cache = join(dir, sub);
    const cacheDir = join(dir, sub, 'kiln-cache');
    const notices: string[] = [];
    const kind = createPoStKind({ config, backend: selectBackend('reference'), cacheDir, notice: (m) => notices.push(m), tuning });
    try {
      const { shape } = await kind.circuits.compiled('winning-2k');
      assert.ok(shape.numConstraints > 0);
    } finally {
      await kind.circuits.close?.();
    }
    const files = await shapeFiles(cacheDir);
    if (cached) {
      assert.match(notices.join('\n'), /circuit winning-2k: .*\(shape recorded and cached\)/);
      assert.ok(files.some((f) => f.startsWith('winning-2k')), `a cached shape in ${cacheDir}/shapes: ${files.join(', ')}`);
    } else {
      assert.match(notices.join('\n'), /circuit winning-2k: .*\(shape recorded, not cached: KILN_POST_SHAPE_CACHE=0\)/);
      assert.deepEqual(files, [], 'nothing cached');
    }
  }
});

test('selectBackend hands the tuning to the CUDA backend (a stand-in addon): the memory cap, matrices, MSM settings, the setup on the CPU', () => {
  const set: [string, number][] = [];
  const addon = {
    probe: () => ({ cuda: true, runtime: 'stub', gpus: [{ ordinal: 0, name: 'stub 0', memoryBytes: 80 * GIB, computeCapability: '9.0', multiprocessors: 1 }] }),
    memInfo: () => ({ freeBytes: 70 * GIB, totalBytes: 80 * GIB }),
    setMsmBatch: (n: number) => void set.push(['batch', n]),
    setMsmAcc: (v: number) => void set.push(['acc', v]),
    setNttFused: (v: number) => void set.push(['fused', v]),
    devSetupInsecure: () => Promise.reject(new Error('not in this test')),
  } as unknown as CudaAddon;
  const fp: CircuitFootprint = { logN: 16, numVars: 40_000, matrixBytes: 2 ** 20, fixedBytes: 4096, sections: { h: 2 ** 16 - 1, l: 39_999, a: 30_000, b_g1: 20_000, b_g2: 20_000 } };

  // the defaults: no cap, matrices resident where they fit, the addon's MSM settings untouched, the setup on the GPU
  const plain = selectBackend('cuda', { addon });
  assert.ok(plain instanceof CudaBackend);
  assert.equal(plain.memoryPlan().limitBytes, undefined, 'KILN_GPU_MEMORY_LIMIT in the environment is not read');
  assert.equal(plain.planCircuit({}, fp).matrices, 'resident');
  assert.equal(typeof plain.devSetupInsecure, 'function', 'KILN_DEV_SETUP=cpu in the environment is not read');
  assert.deepEqual(set, [], 'KILN_MSM_ACC in the environment is not read');

  const tuned = selectBackend('cuda', { addon, tuning: { gpuMemoryLimit: { bytes: 20 * GIB }, planMatrices: 'streamed', msmBatch: 777, msmAcc: 2, nttFused: 1, devSetup: false, gpuDetail: true } });
  assert.ok(tuned instanceof CudaBackend);
  assert.equal(tuned.memoryPlan().limitBytes, 20 * GIB);
  assert.equal(tuned.planCircuit({}, fp).matrices, 'streamed');
  assert.deepEqual(set, [['batch', 777], ['acc', 2], ['fused', 1]]);
  assert.equal(tuned.devSetupInsecure, undefined, 'development parameters on the CPU');
  // [gpus] memory_limit wins over the tuning's cap
  const both = selectBackend('cuda', { addon, memoryLimit: { fraction: 0.5 }, tuning: { gpuMemoryLimit: { bytes: 20 * GIB } } });
  assert.equal((both as CudaBackend).memoryPlan().limitBytes, 40 * GIB);
  // an addon built before the settings: a clear error, not a silent default
  const old = { ...addon, setMsmBatch: undefined, setMsmAcc: undefined } as unknown as CudaAddon;
  assert.throws(() => new CudaBackend({ addon: old, msmAcc: 0 }), /this build of the CUDA addon has no setMsmAcc: rebuild it/);
});
