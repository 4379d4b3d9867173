/**
 * Every GPU of the machine in one engine (selectDevices: one CudaBackend per GPU): each GPU's memory
 * from the driver (memInfo) and its health probe (probeBackend: a tiny NTT and MSM on the device);
 * demo proofs whose partitions spread over all GPUs, each proving with its own SRS copy, verified;
 * eviction from one GPU leaving the others' copies; a device fault injected at one GPU's
 * provePartition boundary, its partition retried on another GPU. On a machine with one GPU the
 * multi-GPU assertions are skipped with the reason (the CI twin, test/multi-device.test.ts, runs
 * them on stand-in GPUs). Runs with `npm run test:gpu`; skipped without a GPU (CI).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import type { Backend } from '../../src/backend/backend.js';
import { CudaBackend, cudaCapabilities } from '../../src/backend/cuda.js';
import { nativeAvailable } from '../../src/backend/native.js';
import { probeBackend } from '../../src/backend/probe.js';
import { selectDevices } from '../../src/backend/select.js';
import { defaultConfig } from '../../src/engine/config.js';
import { Engine } from '../../src/engine/engine.js';
import { AwaitStatus, ProofKind, proofRequest } from '../../src/engine/types.js';
import { decodeProofs, loadOrCreateDevParams, prepareVerifyingKey, verifyProof } from '../../src/groth16/index.js';
import { createDemoKind, demoCircuitId } from '../../src/kinds/demo-circuit.js';
import { DemoCircuit } from '../../src/r1cs/demo-circuit.js';
import { recordShape } from '../../src/r1cs/shape.js';
import { WitnessGenerator } from '../../src/r1cs/witness.js';

const probe = cudaCapabilities();
const skip = !probe.cuda ? `no GPU: ${probe.error ?? 'unknown'}` : !nativeAvailable() ? 'CPU addon not built' : false;
const multiSkip = skip || (probe.gpus.length < 2 ? `one GPU on this machine (${probe.gpus.map((g) => g.name).join(', ')})` : false);
const CONSTRAINTS = 1 << 14;
const log = (s: string): void => void process.stdout.write(`# ${s}\n`);

test('every GPU: memory from the driver, the health probe passes', { skip }, async () => {
  const devices = selectDevices('cuda');
  assert.equal(devices.length, probe.gpus.length);
  for (const d of devices) {
    assert.ok(d instanceof CudaBackend);
    const m = d.deviceMemory!();
    assert.ok(m !== undefined, `GPU ${d.device}: memInfo (rebuild the addon: npm run build:cuda)`);
    const gpu = probe.gpus.find((g) => g.ordinal === d.device)!;
    assert.equal(m.totalBytes, gpu.memoryBytes);
    assert.ok(m.freeBytes > 0 && m.freeBytes <= m.totalBytes);
    const t0 = performance.now();
    await probeBackend(d);
    log(`GPU ${d.device} (${gpu.name}): ${(m.freeBytes / 2 ** 30).toFixed(1)} of ${(m.totalBytes / 2 ** 30).toFixed(1)} GiB free; probe ${(performance.now() - t0).toFixed(1)} ms`);
  }
  // the engine's status (GetStatus' gpus): one entry per GPU, its memory from the driver
  const engine = new Engine({ config: defaultConfig(), backend: devices[0], devices, logger: pino({ level: 'silent' }), defaultMetrics: false });
  try {
    const st = engine.devicesStatus();
    assert.deepEqual(st.map((d) => d.ordinal), probe.gpus.map((g) => g.ordinal));
    for (const d of st) {
      assert.equal(d.name, probe.gpus.find((g) => g.ordinal === d.ordinal)!.name);
      assert.ok(d.gpu && d.healthy && d.vramFree > 0 && d.vramFree <= d.vramTotal, JSON.stringify(d));
    }
  } finally {
    await engine.close(0);
  }
});

test('one engine over every GPU: partitions spread, each GPU with its own SRS copy; a fault on one GPU is retried on another', { skip: multiSkip }, async () => {
  const dir = process.env.KILN_GPU_TEST_DIR ?? join(tmpdir(), 'kiln-gpu-test');
  mkdirSync(dir, { recursive: true });
  const devices: Backend[] = selectDevices('cuda');
  const n = devices.length;
  const config = defaultConfig();
  config.gpus.gpu_workers_per_device = 1;
  config.gpus.probe_interval_ms = 200;
  const demo = createDemoKind({ constraints: CONSTRAINTS, partitions: 2, cacheDir: dir, backend: devices[0] });
  const engine = new Engine({ config, backend: devices[0], devices, logger: pino({ level: 'silent' }), planners: [demo.planner], providers: [demo.circuits], defaultMetrics: false });
  const shape = recordShape((cs) => new DemoCircuit({ constraints: CONSTRAINTS, publicInputs: 2 }).synthesize(cs));
  const pvk = prepareVerifyingKey((await loadOrCreateDevParams(shape, devices[0], dir)).vk);
  const run = async (seed: number, partitions: number) => {
    const { job } = await engine.submit(proofRequest({ proofKind: ProofKind.KILN_DEMO, vanillaProof: Buffer.from(JSON.stringify({ seed, partitions })) }));
    const r = (await engine.await(job.id))!;
    assert.equal(r.status, AwaitStatus.COMPLETED, r.errorMessage);
    decodeProofs(r.proof).forEach((p, k) => {
      const wg = new WitnessGenerator(shape.numInputs);
      new DemoCircuit({ constraints: CONSTRAINTS, seed: seed + k, publicInputs: 2 }).synthesize(wg);
      assert.ok(verifyProof(pvk, p, wg.inputs()), `partition ${k} verifies`);
    });
    return job;
  };
  try {
    const id = demoCircuitId(CONSTRAINTS);
    const t0 = performance.now();
    await engine.preloadSrs(id);
    log(`SRS of ${id} on ${n} GPUs in ${(performance.now() - t0).toFixed(0)} ms`);
    assert.deepEqual(engine.srs.status()[0].devices, devices.map((d) => d.device));
    const job = await run(10, Math.min(16, 2 * n));
    assert.equal(new Set(job.gpus).size, n, `partitions on GPUs ${job.gpus.join(', ')}`);
    for (const d of engine.devicesStatus()) assert.ok(d.healthy && d.vramFree > 0 && d.vramFree < d.vramTotal, JSON.stringify(d));
    // one GPU's copy evicted: the others keep theirs; it loads it again when it proves next
    const last = devices[n - 1].device!;
    assert.equal(engine.evictSrs(id, last).wasLoaded, true);
    assert.ok(!engine.srs.status()[0].devices.includes(last));
    await run(40, Math.min(16, 2 * n));
    // a fault at GPU 0's boundary mid-job: its partition goes to another GPU, the job completes
    const gpu0 = devices[0] as CudaBackend;
    const real = gpu0.provePartition.bind(gpu0);
    let injected = 0;
    gpu0.provePartition = async (input) => {
      if (injected++ === 0) throw new Error('injected: CUDA error cudaErrorIllegalAddress (test)');
      return real(input);
    };
    await run(70, Math.min(16, 2 * n));
    const d0 = engine.devicesStatus()[0];
    assert.equal(d0.faults, 1);
    // the probe runs on the real device: GPU 0 is back within a few probe intervals
    const t1 = performance.now();
    while (!engine.devicesStatus()[0].healthy && performance.now() - t1 < 10_000) await new Promise((r) => setTimeout(r, 20));
    assert.ok(engine.devicesStatus()[0].healthy, 'GPU 0 back in service after its probe');
    gpu0.provePartition = real;
  } finally {
    await engine.close(0);
  }
});
