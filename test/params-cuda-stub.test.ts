/**
 * The CUDA backend's side of the native parameter loader, on the CPU: CudaBackend driven by a
 * stand-in addon whose "device memory" is plain memory, whose copies finish on a later tick and
 * whose MSM is the CPU addon's. It checks what the GPU run (test/gpu/params-upload.test.ts) cannot
 * show in CI: loadParams streams every section into createBases / writeBases at the right offsets
 * through two pinned-like staging buffers (released afterwards, never rewritten while a copy of
 * them runs), device sections carry no host chunks, msmResident, preloadSection (host chunks
 * uploaded chunk by chunk, once) and provePartition's SRS handles are right, release frees each
 * device vector once, a bad point mid-stream frees everything, and the SRS cache reserves only the
 * staging buffers of host memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../src/backend/backend.js';
import { CudaBackend, type CudaAddon, type DeviceBases } from '../src/backend/cuda.js';
import { NativeBackend } from '../src/backend/native.js';
import { STAGING_BYTES, msmSection, releaseSection, type PointSection } from '../src/backend/section.js';
import { G1, G2, frVector, g1Vector, g2Vector } from '../src/field/layout.js';
import { MemoryBudget } from '../src/engine/memory.js';
import { SrsCache, estimateSrsBytes } from '../src/engine/srs-cache.js';
import { encodeParams, type AnyParameters, type Parameters } from '../src/groth16/keys.js';
import { CompiledCircuit } from '../src/groth16/compiled.js';
import { loadOrCreateDevParams } from '../src/groth16/setup.js';
import { Span } from '../src/util/timing.js';
import { loadParams, loadParamsFile } from '../src/groth16/params-native.js';
import { partitionInput } from '../src/groth16/prover.js';
import { recordShape } from '../src/r1cs/shape.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { rng, sampleVerifyingKey } from './support.js';

const cpu = new NativeBackend();

interface StubBases {
  device: number;
  curve: 1 | 2;
  mem: Uint8Array;
  freed: boolean;
  writes: number;
}

function stubAddon(gpus = 1): { addon: CudaAddon; live: Set<StubBases>; pinned: Set<Uint8Array>; proved: StubBases[][] } {
  const live = new Set<StubBases>();
  const pinned = new Set<Uint8Array>();
  const proved: StubBases[][] = [];
  const of = (h: DeviceBases): StubBases => {
    const b = h as unknown as StubBases;
    if (b.freed) throw new Error('bases handle was freed');
    return b;
  };
  const addon = {
    probe: () => ({
      cuda: true,
      gpus: Array.from({ length: gpus }, (_, ordinal) => ({ ordinal, name: 'stub', memoryBytes: 2 ** 34, computeCapability: '9.0', multiprocessors: 1 })),
      runtime: 'stub',
    }),
    createBases(device: number, curve: 1 | 2, count: number): DeviceBases {
      const b: StubBases = { device, curve, mem: new Uint8Array(count * (curve === 1 ? 96 : 192)), freed: false, writes: 0 };
      live.add(b);
      return b as unknown as DeviceBases;
    },
    async writeBases(h: DeviceBases, first: number, bytes: Uint8Array): Promise<void> {
      const b = of(h);
      const size = b.curve === 1 ? 96 : 192;
      if (bytes.length % size !== 0 || first * size + bytes.length > b.mem.length) throw new RangeError('writeBases: out of range');
      const before = bytes.slice();
      b.writes++;
      await new Promise((r) => setImmediate(r)); // the copy runs while the loader decodes the next chunk
      assert.deepEqual(bytes, before, 'a staging buffer was rewritten while its copy ran');
      b.mem.set(bytes, first * size);
    },
    uploadBases(device: number, curve: 1 | 2, bases: Uint8Array): DeviceBases {
      const h = addon.createBases(device, curve, bases.length / (curve === 1 ? 96 : 192));
      (h as unknown as StubBases).mem.set(bases);
      return h;
    },
    freeBases(h: DeviceBases): void {
      const b = of(h);
      b.freed = true;
      live.delete(b);
    },
    async msm(h: DeviceBases, scalars: Uint8Array, idx?: Uint32Array) {
      const b = of(h);
      const r = b.curve === 1 ? await cpu.msmG1(b.mem, scalars, { scalarIndex: idx }) : await cpu.msmG2(b.mem, scalars, { scalarIndex: idx });
      return { ...r, window: 0, ones: 0, others: 0, timings: { ...r.timings, pippenger: { sort: 0, accumulate: 0, buckets: 0, windows: 0 } } };
    },
    async uploadCircuit() {
      return {};
    },
    freeCircuit(): void {},
    async provePartition(_c: unknown, srs: DeviceBases[]) {
      proved.push(srs.map(of));
      throw new Error('stub: no partition prover');
    },
    alloc(bytes: number): ArrayBuffer {
      const b = cpu.alloc(bytes);
      pinned.add(b);
      return b.buffer as ArrayBuffer;
    },
    release(buf: ArrayBuffer | ArrayBufferView): boolean {
      for (const b of pinned) {
        if (b.buffer === (ArrayBuffer.isView(buf) ? buf.buffer : buf)) {
          pinned.delete(b);
          cpu.release(b);
          return true;
        }
      }
      return false;
    },
  };
  return { addon: addon as unknown as CudaAddon, live, pinned, proved };
}

async function randomParams(seed: number): Promise<Parameters> {
  const next = rng(seed);
  const g1 = (n: number) => cpu.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(Array.from({ length: n }, () => next())));
  const g2 = (n: number) => cpu.fixedBaseMulG2(g2Vector([G2.BASE]), frVector(Array.from({ length: n }, () => next())));
  const p: Parameters = {
    vk: sampleVerifyingKey(1),
    h: await g1(700),
    l: await g1(123),
    a: await g1(50),
    bG1: await g1(41),
    bG2: await g2(41),
  };
  p.h.fill(0, 96 * 5, 96 * 6); // an identity
  return p;
}

/** Random parameters (randomParams) written to `<dir>/p.params`. */
async function paramsFile(dir: string, seed: number): Promise<{ params: Parameters; path: string }> {
  const params = await randomParams(seed);
  const path = join(dir, 'p.params');
  await writeFile(path, encodeParams(params));
  return { params, path };
}

const KEYS = ['h', 'l', 'a', 'bG1', 'bG2'] as const;
const stub = (s: PointSection): StubBases => s.device!.handle as unknown as StubBases;

test('CudaBackend as the loader target: sections streamed to (stub) device memory, MSMs equal the CPU', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-params-cuda-stub-'));
  try {
    const { params, path } = await paramsFile(dir, 31);
    const { addon, live, pinned } = stubAddon();
    const gpu = new CudaBackend({ addon, cpu });
    // through loadParams (the engine's and the CLI's path): every section on the device
    const dev = (await loadParams(path, gpu, { expected: { h: 700, b_g2: 41 } })) as Parameters<PointSection>;
    assert.equal(live.size, 5);
    assert.equal(pinned.size, 0, 'staging released');
    for (const k of KEYS) {
      assert.equal(dev[k].chunks.length, 0, k);
      assert.equal(dev[k].device?.owner, gpu);
      assert.deepEqual(stub(dev[k]).mem, params[k], k);
    }
    // small staging: many writes, the same bytes
    const small = await loadParamsFile(path, { backend: cpu, device: gpu, stagingBytes: 192 * 7 });
    assert.equal(stub(small.h).writes, Math.ceil(700 / 14));
    assert.equal(stub(small.bG2).writes, Math.ceil(41 / 7));
    assert.deepEqual(stub(small.bG2).mem, params.bG2);
    const next = rng(32);
    const sc = frVector(Array.from({ length: 700 }, () => next()));
    assert.deepEqual((await msmSection(gpu, 'G1', small.h, sc)).point, (await cpu.msmG1(params.h, sc)).point);
    const idx = Uint32Array.from({ length: 41 }, (_, i) => (i * 13) % 700);
    assert.deepEqual((await msmSection(gpu, 'G2', small.bG2, sc, { scalarIndex: idx })).point, (await cpu.msmG2(params.bG2, sc, { scalarIndex: idx })).point);
    await assert.rejects(gpu.msmResident(small.h, sc.subarray(32)), /700 bases but 699 scalars/);
    // host chunks (native memory) uploaded chunk by chunk, once per section object
    const host = await loadParamsFile(path, { backend: cpu, chunkBytes: 96 * 64 });
    const h = await gpu.preloadSection(host.h, 1);
    assert.equal(await gpu.preloadSection(host.h, 1), h);
    assert.equal((h as unknown as StubBases).writes, Math.ceil(700 / 64));
    assert.deepEqual((h as unknown as StubBases).mem, params.h);
    await assert.rejects(gpu.preloadSection(host.h, 2), /holds G1 points, not G2/);
    releaseSection(host.h, gpu); // the SRS cache's way: the host chunks and their device copy
    assert.equal((h as unknown as StubBases).freed, true);
    assert.equal(host.h.chunks.length, 0);
    assert.equal(gpu.evict(host.h), false);
    // release frees each device vector once; a released section can be neither written nor used
    const before = live.size;
    small.h.release();
    small.h.release();
    assert.equal(live.size, before - 1);
    await assert.rejects(gpu.writeResident(small.h, 0, new Uint8Array(96)), /released/);
    await assert.rejects(gpu.preloadSection(small.h, 1), /released/);
    for (const k of KEYS) {
      dev[k].release();
      small[k].release();
      host[k].release();
    }
    assert.equal(live.size, 0);
    gpu.evictAll();
    // a bad point mid-stream: refused; the partial device vector, the sections before it and the
    // staging freed
    const bad = encodeParams(params);
    bad[864 + 4 + 96 + 4 + 300 * 96] |= 0x20;
    await writeFile(path, bad);
    await assert.rejects(loadParams(path, gpu), /section h: point 300: sort flag/);
    const bad2 = encodeParams(params);
    bad2[bad2.length - 192 * 3] |= 0x80;
    await writeFile(path, bad2);
    await assert.rejects(loadParamsFile(path, { backend: cpu, device: gpu, stagingBytes: 192 * 4 }), /section b_g2: point 38: compression flag/);
    assert.equal(live.size, 0);
    assert.equal(pinned.size, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('CudaBackend.provePartition hands the resident sections to the device prover; srsHostBytes is the staging only', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-params-cuda-stub-'));
  try {
    const { params, path } = await paramsFile(dir, 33);
    const { addon, live, proved } = stubAddon();
    const gpu = new CudaBackend({ addon, cpu });
    const dev = await loadParams(path, gpu);
    const shape = recordShape((cs) => new DemoCircuit({ constraints: 8, bitsPerWord: 2, publicInputs: 1 }).synthesize(cs));
    const input = { ...partitionInput(dev as AnyParameters, shape, new Uint8Array((shape.numInputs + shape.numAux) * 32)), srs: dev };
    await assert.rejects(gpu.provePartition(input), /stub: no partition prover/);
    assert.equal(proved.length, 1);
    KEYS.forEach((k, i) => assert.equal(proved[0][i], stub((dev as Parameters<PointSection>)[k]), k));
    assert.equal(live.size, 5, 'nothing uploaded again');
    // host sections go up once, through createBases/writeBases, and stay keyed by the section
    const host = await loadParamsFile(path, { backend: cpu });
    await assert.rejects(gpu.provePartition({ ...input, srs: host }), /stub: no partition prover/);
    await assert.rejects(gpu.provePartition({ ...input, srs: host }), /stub: no partition prover/);
    assert.equal(live.size, 10);
    assert.deepEqual(proved[1], proved[2]);
    assert.deepEqual(proved[1][0].mem, params.h);
    gpu.evictAll();
    assert.equal(live.size, 0);
    for (const k of KEYS) (dev as Parameters<PointSection>)[k].release(); // after evictAll: nothing left to free
    for (const k of KEYS) host[k].release();
    // the memory budget: the two staging buffers, not the SRS
    assert.equal(gpu.srsHostBytes(44 * 2 ** 30), 2 * STAGING_BYTES);
    assert.equal(gpu.srsHostBytes(1000), 1000);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('CudaBackend: a proof says what the device did not time (the circuit\'s upload, the wait for a thread), so its span adds up; prepareCircuit uploads the circuit ahead', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-params-cuda-stub-'));
  try {
    const { path } = await paramsFile(dir, 34);
    const { addon } = stubAddon();
    // the circuit's upload takes 300 ms; a proof's call 200 ms, of which the device timed 20 ms of waiting and 60 ms of work
    let uploads = 0;
    addon.uploadCircuit = (async () => {
      uploads++;
      await new Promise((r) => setTimeout(r, 300));
      return {};
    }) as unknown as CudaAddon['uploadCircuit'];
    const msm = { classify: 0, batchAdd: 0, msm: 0, window: 0, ones: 0, others: 0, pippenger: { sort: 0, accumulate: 0, buckets: 0, windows: 0 } };
    const point = new Uint8Array(96);
    addon.provePartition = (async () => {
      await new Promise((r) => setTimeout(r, 200));
      return {
        h: point, l: point, a: point, b1: point, b2: new Uint8Array(192),
        timings: { wait: 20, copy: 0, upload: 5, matvec: 5, ntt: 10, msmH: 10, msmL: 10, msmA: 5, msmB1: 5, msmB2: 10, total: 60, msm: { h: msm, l: msm, a: msm, b1: msm, b2: msm } },
      };
    }) as unknown as CudaAddon['provePartition'];
    const gpu = new CudaBackend({ addon, cpu });
    const dev = await loadParams(path, gpu);
    const shape = recordShape((cs) => new DemoCircuit({ constraints: 8, bitsPerWord: 2, publicInputs: 1 }).synthesize(cs));
    const input = { ...partitionInput(dev as AnyParameters, shape, new Uint8Array((shape.numInputs + shape.numAux) * 32)), srs: dev };
    const first = (await gpu.provePartition(input)).timings;
    assert.equal(uploads, 1);
    assert.ok(first.circuit_upload! >= 290, `first proof: circuit_upload ${first.circuit_upload} ms`);
    assert.ok(first.host_wait! >= 100 && first.host_wait! < 200, `host_wait ${first.host_wait} ms: the call's 200 ms less the 80 the device timed`);
    const again = (await gpu.provePartition(input)).timings;
    assert.equal(uploads, 1, 'uploaded once');
    assert.ok(again.circuit_upload! < 50, `later proof: circuit_upload ${again.circuit_upload} ms`);
    // ahead of the first proof (the SRS cache does it when it loads the parameters)
    const shape2 = recordShape((cs) => new DemoCircuit({ constraints: 8, bitsPerWord: 2, publicInputs: 1 }).synthesize(cs));
    await gpu.prepareCircuit({ ...input, shape: shape2 });
    assert.equal(uploads, 2);
    const third = (await gpu.provePartition({ ...input, shape: shape2 })).timings;
    assert.equal(uploads, 2);
    assert.ok(third.circuit_upload! < 50, `prepared: circuit_upload ${third.circuit_upload} ms`);
    gpu.evictAll();
    for (const k of KEYS) (dev as Parameters<PointSection>)[k].release();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the engine\'s SRS cache over the CUDA backend: development parameters streamed to the device, the staging reserved, the device vectors freed on eviction', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-params-cuda-stub-'));
  try {
    const { addon, live, pinned } = stubAddon();
    const gpu = new CudaBackend({ addon, cpu });
    const shape = recordShape((cs) => new DemoCircuit({ constraints: 40, bitsPerWord: 4, publicInputs: 2 }).synthesize(cs));
    // the staging as the reservation: an SRS "larger" than the budget still loads
    const srsBytes = estimateSrsBytes(shape);
    const budget = new MemoryBudget(srsBytes - 1);
    const cache = new SrsCache(
      () => [{ knows: (id: string) => id === 'demo', compiled: async () => new CompiledCircuit(shape), params: async () => loadOrCreateDevParams(shape, gpu, dir) }],
      budget,
      gpu,
      0,
    );
    (gpu as unknown as { srsHostBytes: (n: number) => number }).srsHostBytes = (n: number) => Math.min(n, 1000); // as for a 44 GiB SRS: the staging only
    const loadSpan = new Span('t');
    const e = await cache.acquire('demo', loadSpan);
    assert.ok(loadSpan.children.some((c) => c.name === 'circuit_upload'), 'the circuit goes to the device with its parameters, not in its first proof');
    assert.equal(budget.reserved, 1000);
    assert.equal(e.sizeBytes, srsBytes);
    assert.equal(live.size, 5);
    assert.equal(pinned.size, 0);
    for (const k of KEYS) assert.equal((e.params[k] as PointSection).chunks.length, 0, k);
    cache.release('demo');
    assert.deepEqual(cache.evict('demo'), { wasLoaded: true, freedBytes: srsBytes });
    assert.equal(live.size, 0, 'device vectors freed');
    assert.equal(budget.reserved, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('two GPUs (two CudaBackends over one addon): the SRS cache streams a copy to each device, a device proves with its own copy only, and evicting one copy leaves the other', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-params-cuda-stub-'));
  try {
    const { addon, live, proved } = stubAddon(2);
    const gpus = [new CudaBackend({ addon, cpu, device: 0 }), new CudaBackend({ addon, cpu, device: 1 })];
    const shape = recordShape((cs) => new DemoCircuit({ constraints: 40, bitsPerWord: 4, publicInputs: 2 }).synthesize(cs));
    const circuit = new CompiledCircuit(shape);
    const loads: number[] = [];
    const cache = new SrsCache(
      () => [
        {
          knows: (id: string) => id === 'demo',
          compiled: async () => circuit,
          params: async (_id: string, _span: Span, b?: Backend) => {
            loads.push((b as CudaBackend).device);
            return loadOrCreateDevParams(shape, b ?? gpus[0], dir);
          },
        },
      ],
      new MemoryBudget(2 ** 40),
      gpus,
      0,
    );
    const e = await cache.acquire('demo', new Span('t'), 1);
    assert.deepEqual(loads, [1], 'the first copy on the device asked for');
    const p1 = (await cache.paramsOn(e, 1)) as Parameters<PointSection>;
    const p0 = (await cache.paramsOn(e, 0)) as Parameters<PointSection>;
    assert.deepEqual(loads, [1, 0]);
    assert.equal(live.size, 10);
    for (const k of KEYS) {
      assert.equal(p0[k].device?.owner, gpus[0], k);
      assert.equal(p1[k].device?.owner, gpus[1], k);
      assert.equal(stub(p0[k]).device, 0, k);
      assert.equal(stub(p1[k]).device, 1, k);
      assert.deepEqual(stub(p0[k]).mem, stub(p1[k]).mem, `${k}: the same points on both devices`);
    }
    const witness = new Uint8Array((shape.numInputs + shape.numAux) * 32);
    await assert.rejects(gpus[1].provePartition(partitionInput(p1, shape, witness)), /stub: no partition prover/);
    assert.ok(proved[0].every((b) => b.device === 1), "GPU 1's proof got GPU 1's vectors");
    await assert.rejects(gpus[1].provePartition(partitionInput(p0, shape, witness)), /resident on another backend \(device 0\)/);
    // EvictSRS for GPU 1 while a job holds the circuit: when it releases; GPU 0's copy stays
    assert.deepEqual(cache.evict('demo', 1), { wasLoaded: true, freedBytes: 0 });
    cache.release('demo');
    assert.equal(live.size, 5);
    assert.ok([...live].every((b) => b.device === 0));
    assert.deepEqual(cache.status().map((s) => s.devices), [[0]]);
    assert.deepEqual(cache.evict('demo', 0), { wasLoaded: true, freedBytes: estimateSrsBytes(shape) });
    assert.equal(live.size, 0);
    assert.deepEqual(cache.status(), []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
