/**
 * One engine over several GPUs, on CI (no GPU). FakeGpu stands in for a GPU: the CPU backend under a
 * GPU ordinal, with memory of its own (an MSM over bases another device allocated is recorded: a
 * lane proving with another device's SRS copy would be a bug a real GPU shows as a crash), the
 * driver's memory figures, optional slowness (so that partitions queue for the lanes, as on a
 * prover box), and an injected device fault: from a chosen call on, every call throws until
 * `repair()`. The engine, the SRS cache, the lanes and the gRPC daemon are the real ones; proofs are
 * of the demo circuit (1,000 constraints, INSECURE development parameters) and are checked here
 * against the verifying key independently of the engine's own verification.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { pino } from 'pino';
import type { Backend, Capabilities, CsrMatrix, DeviceMemoryPlanStatus, MsmOptions, MsmResult, PointGroup } from '../src/backend/backend.js';
import { CudaBackend, type CudaAddon } from '../src/backend/cuda.js';
import { nativeAvailable } from '../src/backend/native.js';
import { probeBackend } from '../src/backend/probe.js';
import { selectBackend, selectDevices } from '../src/backend/select.js';
import { defaultConfig, type EngineConfig } from '../src/engine/config.js';
import { Engine, type Job } from '../src/engine/engine.js';
import { AwaitStatus, ProofKind, proofRequest, type CircuitProvider } from '../src/engine/types.js';
import { decodeProofs, loadOrCreateDevParams, prepareVerifyingKey, verifyProof } from '../src/groth16/index.js';
import { createDemoKind, demoCircuitId } from '../src/kinds/demo-circuit.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { recordShape } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { runDaemon, type Daemon } from '../src/server/daemon.js';
import type { Span } from '../src/util/timing.js';
import { repoRoot, testDaemonDirs } from './support.js';

const GIB = 1024 ** 3;
const CONSTRAINTS = 1000;
const FAKE_VRAM = 16 * GIB;
const cpu = (): Backend => selectBackend(nativeAvailable() ? 'native' : 'reference');

type Op = 'csrMatVec' | 'quotient' | 'ntt' | 'msmG1' | 'msmG2' | 'batchAddG1';

/** A stand-in GPU (see the file comment). */
class FakeGpu implements Backend {
  readonly name = 'fake-gpu';
  /** Partition proofs whose last MSM (b_g2) completed here. */
  proved = 0;
  /** Calls that used bases this device did not allocate (must stay empty). */
  readonly foreign: string[] = [];
  broken = false;
  /** What memoryPlan() reports (a GPU backend's device-memory plan); undefined: no plan. */
  plan: DeviceMemoryPlanStatus | undefined;
  private breakAt: { op: Op; kind: 'device' | 'range' } | undefined;
  private readonly sizes = new WeakMap<object, number>();
  private liveBytes = 0;
  private readonly inner: Backend;

  constructor(
    readonly device: number,
    private readonly delayMs = 0,
  ) {
    this.inner = cpu();
  }

  /** The next `op` call fails: a device fault (this and every later call throw until repair()), or
   *  a RangeError once (an error of the request, by the Backend contract). */
  breakOn(op: Op, kind: 'device' | 'range' = 'device'): void {
    this.breakAt = { op, kind };
  }

  repair(): void {
    this.broken = false;
    this.breakAt = undefined;
  }

  get residentBytes(): number {
    return this.liveBytes;
  }

  private async step(op: Op): Promise<void> {
    if (this.delayMs > 0) await sleep(this.delayMs);
    if (this.breakAt?.op === op) {
      const { kind } = this.breakAt;
      this.breakAt = undefined;
      if (kind === 'range') throw new RangeError(`fake GPU ${this.device}: injected RangeError in ${op}`);
      this.broken = true;
    }
    if (this.broken) throw new Error(`fake GPU ${this.device}: injected device fault in ${op} (cudaErrorIllegalAddress)`);
  }

  private own(op: string, bases: Uint8Array): void {
    if (this.sizes.get(bases.buffer) === undefined) this.foreign.push(op);
  }

  capabilities(): Capabilities {
    return { ...this.inner.capabilities(), backend: 'fake-gpu', cuda: false, gpus: [{ ordinal: this.device, name: 'fake GPU', memoryBytes: FAKE_VRAM }] };
  }

  deviceMemory(): { totalBytes: number; freeBytes: number } {
    return { totalBytes: FAKE_VRAM, freeBytes: FAKE_VRAM - this.liveBytes };
  }

  memoryPlan(): DeviceMemoryPlanStatus | undefined {
    return this.plan;
  }

  alloc(bytes: number): Uint8Array {
    const b = this.inner.alloc(bytes);
    this.sizes.set(b.buffer, bytes);
    this.liveBytes += bytes;
    return b;
  }

  release(buf: Uint8Array): void {
    const n = this.sizes.get(buf.buffer);
    if (n !== undefined) {
      this.sizes.delete(buf.buffer);
      this.liveBytes -= n;
    }
    this.inner.release(buf);
  }

  async msmG1(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult> {
    this.own('msmG1', bases);
    await this.step('msmG1');
    return this.inner.msmG1(bases, scalars, opts);
  }

  async msmG2(bases: Uint8Array, scalars: Uint8Array, opts?: MsmOptions): Promise<MsmResult> {
    this.own('msmG2', bases);
    await this.step('msmG2');
    const r = await this.inner.msmG2(bases, scalars, opts);
    this.proved++;
    return r;
  }

  async batchAddG1(bases: Uint8Array, indices: Uint32Array): Promise<Uint8Array> {
    this.own('batchAddG1', bases);
    await this.step('batchAddG1');
    return this.inner.batchAddG1(bases, indices);
  }

  async ntt(values: Uint8Array, opts: { inverse: boolean; coset: boolean }): Promise<void> {
    await this.step('ntt');
    return this.inner.ntt(values, opts);
  }

  async quotient(a: Uint8Array, b: Uint8Array, c: Uint8Array): Promise<void> {
    await this.step('quotient');
    return this.inner.quotient(a, b, c);
  }

  async csrMatVec(m: CsrMatrix, w: Uint8Array, out: Uint8Array): Promise<void> {
    await this.step('csrMatVec');
    return this.inner.csrMatVec(m, w, out);
  }

  // the proof's assembly runs on the CPU (as with the CUDA backend), so do the setup and the codec
  lincombG1(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.inner.lincombG1!(bases, scalars);
  }

  lincombG2(bases: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.inner.lincombG2!(bases, scalars);
  }

  fixedBaseMulG1(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.inner.fixedBaseMulG1(base, scalars);
  }

  fixedBaseMulG2(base: Uint8Array, scalars: Uint8Array): Promise<Uint8Array> {
    return this.inner.fixedBaseMulG2(base, scalars);
  }

  partitionWorkingSetBytes(domainSize: number): number {
    return this.inner.partitionWorkingSetBytes(domainSize);
  }

  decodePoints(group: PointGroup, src: Uint8Array, dst: Uint8Array, checkOnCurve: boolean, checkSubgroup?: boolean): Promise<void> {
    return this.inner.decodePoints(group, src, dst, checkOnCurve, checkSubgroup);
  }

  encodePoints(group: PointGroup, src: Uint8Array, dst: Uint8Array): Promise<void> {
    return this.inner.encodePoints(group, src, dst);
  }
}

let dir: string;
let pvk: ReturnType<typeof prepareVerifyingKey>;
const shape = recordShape((cs) => new DemoCircuit({ constraints: CONSTRAINTS, publicInputs: 2 }).synthesize(cs));

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-multi-device-'));
  // the verifying key, independently of the engine (the same development parameters: same seed)
  pvk = prepareVerifyingKey((await loadOrCreateDevParams(shape, cpu(), dir)).vk);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every partition of a demo proof (seed s: partition k uses s + k) against the verifying key. */
function assertVerifies(proof: Uint8Array, seed: number, partitions: number): void {
  const proofs = decodeProofs(proof);
  assert.equal(proofs.length, partitions);
  proofs.forEach((p, k) => {
    const wg = new WitnessGenerator(shape.numInputs);
    new DemoCircuit({ constraints: CONSTRAINTS, seed: seed + k, publicInputs: 2 }).synthesize(wg);
    assert.ok(verifyProof(pvk, p, wg.inputs()), `partition ${k} verifies`);
  });
}

const demoRequest = (seed: number, partitions: number, requestId = '') =>
  proofRequest({ proofKind: ProofKind.KILN_DEMO, requestId, vanillaProof: Buffer.from(JSON.stringify({ seed, partitions, constraints: CONSTRAINTS })) });

interface Rig {
  engine: Engine;
  gpus: FakeGpu[];
  /** The device ordinal of each parameter load (the provider's calls). */
  loads: number[];
}

async function withEngine(gpus: FakeGpu[], configure: (c: EngineConfig) => void, fn: (rig: Rig) => Promise<void>): Promise<void> {
  const config = defaultConfig(64 * GIB);
  config.gpus.gpu_workers_per_device = 1;
  config.synthesis.threads = 1;
  config.gpus.probe_interval_ms = 50;
  configure(config);
  const demo = createDemoKind({ constraints: CONSTRAINTS, partitions: 4, cacheDir: dir, backend: gpus[0] });
  const loads: number[] = [];
  const counted: CircuitProvider = {
    ...demo.circuits,
    params: (id: string, span: Span, b?: Backend) => {
      loads.push((b ?? gpus[0]).device!);
      return demo.circuits.params(id, span, b);
    },
  };
  const engine = new Engine({ config, backend: gpus[0], devices: gpus, logger: pino({ level: 'silent' }), planners: [demo.planner], providers: [counted], defaultMetrics: false });
  try {
    await fn({ engine, gpus, loads });
    for (const g of gpus) assert.deepEqual(g.foreign, [], `GPU ${g.device} proved only with its own SRS copy`);
  } finally {
    await engine.close(0);
  }
}

async function prove(engine: Engine, seed: number, partitions: number): Promise<{ job: Job; status: number; proof: Uint8Array; error: string }> {
  const { job } = await engine.submit(demoRequest(seed, partitions));
  const r = (await engine.await(job.id))!;
  return { job, status: r.status, proof: r.proof, error: r.errorMessage };
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) assert.fail(`timed out waiting for: ${what}`);
    await sleep(10);
  }
}

/** Partition spans of a job, by name of their children. */
function partitionSpans(job: Job): { name: string; children: string[] }[] {
  return job.span.children.filter((c) => c.name.startsWith('partition[')).map((p) => ({ name: p.name, children: p.children.map((c) => c.name) }));
}

describe('several devices: one backend, one SRS copy and prover lanes per GPU', () => {
  test('the partitions of one proof spread over two GPUs, each proving with its own SRS copy; the proof verifies', async () => {
    // ordinals 2 and 5: the engine's device positions are not the GPUs' ordinals
    await withEngine([new FakeGpu(2, 30), new FakeGpu(5, 30)], () => {}, async ({ engine, gpus, loads }) => {
      assert.equal(engine.laneCount, 2);
      const r = await prove(engine, 100, 4);
      assert.equal(r.status, AwaitStatus.COMPLETED, r.error);
      assertVerifies(r.proof, 100, 4);
      assert.ok(gpus[0].proved >= 1 && gpus[1].proved >= 1, `partitions per GPU: ${gpus.map((g) => g.proved)}`);
      assert.equal(gpus[0].proved + gpus[1].proved, 4);
      assert.deepEqual([...r.job.gpus].sort(), [2, 5]);
      // one load per device: the first at the job's start, the second when GPU 5's lane first needed it
      assert.deepEqual([...loads].sort(), [2, 5]);
      const srs = engine.srs.status().find((s) => s.circuitId === demoCircuitId(CONSTRAINTS))!;
      assert.deepEqual(srs.devices, [2, 5]);
      assert.ok(gpus.every((g) => g.residentBytes >= srs.sizeBytes / 2), 'each GPU holds a copy in its own memory');
      // the lane that loaded a copy shows it in the partition's spans
      assert.equal(partitionSpans(r.job).filter((p) => p.children.includes('srs_device')).length, 1);
      // status: one entry per GPU, memory from the "driver", lanes bound in order
      const devs = engine.devicesStatus();
      assert.deepEqual(devs.map((d) => [d.ordinal, d.lanes, d.healthy]), [[2, [0], true], [5, [1], true]]);
      assert.ok(devs.every((d) => d.vramTotal === FAKE_VRAM && d.vramFree < FAKE_VRAM && d.vramFree > 0));
      assert.deepEqual(engine.lanesStatus().map((l) => [l.ordinal, l.device]), [[0, 2], [1, 5]]);
      // a second proof loads nothing more and uses both GPUs again
      const before = gpus.map((g) => g.proved);
      const r2 = await prove(engine, 200, 4);
      assert.equal(r2.status, AwaitStatus.COMPLETED, r2.error);
      assertVerifies(r2.proof, 200, 4);
      assert.equal(loads.length, 2);
      assert.ok(gpus.every((g, i) => g.proved > before[i]), 'both GPUs proved partitions of the second proof');
    });
  });

  test('a GPU that fails mid-proof: its partition is retried on the other GPU, the job completes and verifies; the GPU is out of service until a probe passes', async () => {
    await withEngine([new FakeGpu(0, 30), new FakeGpu(1, 30)], () => {}, async ({ engine, gpus }) => {
      gpus[1].breakOn('msmG1'); // inside its first partition proof, after the mat-vec and the quotient
      const r = await prove(engine, 300, 4);
      assert.equal(r.status, AwaitStatus.COMPLETED, r.error);
      assertVerifies(r.proof, 300, 4);
      assert.equal(gpus[1].proved, 0);
      assert.equal(gpus[0].proved, 4, 'GPU 0 proved every partition, the failed one too');
      // the failed attempt is in the partition's spans (not counted as proving time), then its retry
      const retried = partitionSpans(r.job).filter((p) => p.children.includes('prove_failed'));
      assert.equal(retried.length, 1);
      assert.deepEqual(retried[0].children.filter((c) => c.startsWith('prove')), ['prove_failed', 'prove']);
      assert.ok(retried[0].children.filter((c) => c === 'lane_wait').length === 2, 'it waited for a lane twice');
      // GPU 1 out of service, and stays out while its probes fail
      let d1 = engine.devicesStatus()[1];
      assert.equal(d1.healthy, false);
      assert.equal(d1.faults, 1);
      assert.match(d1.lastFault!.message, /fake GPU 1: injected device fault in msmG1/);
      assert.equal(d1.lastFault!.jobId, r.job.id);
      await until('a failed probe', () => engine.devicesStatus()[1].probes.failed >= 2);
      assert.equal(engine.devicesStatus()[1].healthy, false);
      // a job submitted meanwhile runs on GPU 0 alone
      const meanwhile = await prove(engine, 350, 2);
      assert.equal(meanwhile.status, AwaitStatus.COMPLETED, meanwhile.error);
      assert.deepEqual(meanwhile.job.gpus, [0]);
      // repaired: the next probe passes, GPU 1 is back and proves again
      gpus[1].repair();
      await until('GPU 1 back in service', () => engine.devicesStatus()[1].healthy);
      d1 = engine.devicesStatus()[1];
      assert.ok(d1.probes.passed >= 1 && d1.probes.lastError === undefined);
      const again = await prove(engine, 400, 4);
      assert.equal(again.status, AwaitStatus.COMPLETED, again.error);
      assertVerifies(again.proof, 400, 4);
      assert.ok(gpus[1].proved >= 1, 'GPU 1 proves again');
    });
  });

  test('a partition that fails on every GPU fails its job, naming each GPU and its error', async () => {
    await withEngine([new FakeGpu(0, 10), new FakeGpu(1, 10)], (c) => (c.gpus.device_wait_ms = 60_000), async ({ engine, gpus }) => {
      gpus[0].breakOn('quotient');
      gpus[1].breakOn('quotient');
      const r = await prove(engine, 500, 1);
      assert.equal(r.status, AwaitStatus.FAILED);
      assert.match(r.error, /partition 0 failed on every GPU \(GPU \d: fake GPU \d: injected device fault in quotient.*; GPU \d: fake GPU \d: injected/);
      assert.ok(engine.devicesStatus().every((d) => !d.healthy));
      for (const g of gpus) g.repair();
      await until('both GPUs back', () => engine.devicesStatus().every((d) => d.healthy));
      const ok = await prove(engine, 510, 2);
      assert.equal(ok.status, AwaitStatus.COMPLETED, ok.error);
    });
  });

  test('with no healthy GPU a partition waits [gpus] device_wait, then its job fails with a clear error', async () => {
    await withEngine([new FakeGpu(0), new FakeGpu(1)], (c) => (c.gpus.device_wait_ms = 400), async ({ engine, gpus }) => {
      // both out of service (a probe keeps failing while they are broken)
      for (const g of gpus) {
        g.broken = true;
        engine.devices.markUnhealthy(g.device, new Error(`fake GPU ${g.device}: fell off the bus`), { jobId: 'earlier', partition: 0 });
      }
      const t0 = performance.now();
      const r = await prove(engine, 600, 1);
      const waited = performance.now() - t0;
      assert.equal(r.status, AwaitStatus.FAILED);
      assert.match(r.error, /no healthy GPU to prove it on for 0\.4 s \(\[gpus\] device_wait\); GPU 0 out of service since .*fell off the bus.*; GPU 1 out of service/);
      assert.ok(waited >= 400, `failed after ${waited.toFixed(0)} ms`);
      assert.equal(gpus[0].proved + gpus[1].proved, 0);
      // while waiting, a GPU coming back takes the partition
      const pending = engine.submit(demoRequest(610, 1));
      await sleep(100);
      gpus[1].repair();
      const { job } = await pending;
      const r2 = (await engine.await(job.id))!;
      assert.equal(r2.status, AwaitStatus.COMPLETED, r2.errorMessage);
      assert.deepEqual(job.gpus, [1]);
    });
  });

  test("a RangeError from the backend is the request's: no retry, the GPU stays in service", async () => {
    await withEngine([new FakeGpu(0, 30), new FakeGpu(1, 30)], () => {}, async ({ engine, gpus }) => {
      gpus[1].breakOn('msmG1', 'range');
      const r = await prove(engine, 700, 4);
      assert.equal(r.status, AwaitStatus.FAILED);
      assert.match(r.error, /prover: fake GPU 1: injected RangeError in msmG1/);
      assert.ok(engine.devicesStatus().every((d) => d.healthy && d.faults === 0));
    });
  });

  test('evicting the SRS from one GPU leaves the other copy: proofs there load nothing, the evicted GPU loads its copy again', async () => {
    await withEngine([new FakeGpu(0, 30), new FakeGpu(1, 30)], () => {}, async ({ engine, gpus, loads }) => {
      const id = demoCircuitId(CONSTRAINTS);
      const pre = await engine.preloadSrs(id);
      assert.equal(pre.alreadyLoaded, false);
      assert.deepEqual([...loads].sort(), [0, 1], 'PreloadSRS loads a copy on every GPU');
      assert.equal((await engine.preloadSrs(id)).alreadyLoaded, true);
      const size = engine.srs.status()[0].sizeBytes / 2;
      const held = gpus[1].residentBytes;
      assert.deepEqual(engine.evictSrs(id, 1), { wasLoaded: true, freedBytes: size });
      assert.ok(gpus[1].residentBytes <= held - size, 'GPU 1 freed its copy');
      assert.deepEqual(engine.srs.status().map((s) => [s.circuitId, s.devices, s.sizeBytes]), [[id, [0], size]]);
      assert.ok(engine.srs.residentOn(id, 0) && !engine.srs.residentOn(id, 1));
      assert.deepEqual(engine.evictSrs(id, 1), { wasLoaded: false, freedBytes: 0 });
      assert.throws(() => engine.evictSrs(id, 7), /no GPU 7 in this daemon \(its GPUs: 0, 1\)/);
      // GPU 0 proves with the copy it kept; GPU 1 loads its copy again when its lane first needs it
      const r = await prove(engine, 800, 4);
      assert.equal(r.status, AwaitStatus.COMPLETED, r.error);
      assertVerifies(r.proof, 800, 4);
      assert.deepEqual([...loads].sort(), [0, 1, 1]);
      assert.deepEqual(engine.srs.status()[0].devices, [0, 1]);
      // EvictSRS without a GPU frees every copy
      assert.deepEqual(engine.evictSrs(id), { wasLoaded: true, freedBytes: 2 * size });
      assert.deepEqual(engine.srs.status(), []);
    });
  });

  test('under memory pressure the least recently used copy goes first, one GPU at a time', async () => {
    await withEngine([new FakeGpu(0), new FakeGpu(1)], (c) => (c.memory.eviction_min_idle_ms = 0), async ({ engine, loads }) => {
      const id = demoCircuitId(CONSTRAINTS);
      await engine.srs.preload(id, [1]);
      await sleep(5);
      await engine.srs.preload(id, [0]);
      assert.deepEqual(loads, [1, 0]);
      // ask the pressure handler for one byte: only GPU 1's copy (used longest ago) goes
      assert.ok(engine.srs.evictIdle(1) > 0);
      assert.deepEqual(engine.srs.status()[0].devices, [0]);
    });
  });

  test('GetStatus over gRPC: every GPU with its memory, job and health; SubmitProof of a known request id says which GPUs it ran on', async () => {
    const gpus = [new FakeGpu(3, 30), new FakeGpu(4, 30)];
    await withDaemon(gpus, async (daemon, call) => {
      const submit = { proof_kind: 1000, request_id: 'multi-gpu-1', vanilla_proof: Buffer.from(JSON.stringify({ seed: 900, partitions: 4 })) };
      const first = await call('SubmitProof', submit);
      assert.equal(first.assigned_gpu, '', 'not assigned while queued');
      // while it runs: each GPU reports the job it proves
      let seen: any;
      for (let i = 0; i < 500 && seen === undefined; i++) {
        const st = await call('GetStatus', {});
        if (st.gpus.some((g: any) => g.current_job_id === first.job_id)) seen = st;
        else await sleep(10);
      }
      assert.ok(seen, 'GetStatus showed the job on a GPU while it ran');
      assert.ok(seen.gpus.every((g: any) => g.current_job_id === '' || g.current_job_id === first.job_id));
      assert.ok(seen.gpus.some((g: any) => g.current_proof_kind === 'demo'));
      const res = await call('AwaitProof', { job_id: first.job_id });
      assert.equal(res.status, AwaitStatus.COMPLETED, res.error_message);
      assertVerifies(new Uint8Array(res.proof), 900, 4);
      const again = await call('SubmitProof', submit);
      assert.equal(again.job_id, first.job_id);
      assert.deepEqual(again.assigned_gpu.split(',').map(Number).sort(), [3, 4]);
      const st = await call('GetStatus', {});
      assert.deepEqual(st.gpus.map((g: any) => g.ordinal), [3, 4]);
      for (const g of st.gpus) {
        assert.equal(g.name, 'fake GPU');
        assert.equal(g.vram_total_bytes, FAKE_VRAM);
        assert.ok(g.vram_free_bytes > 0 && g.vram_free_bytes < FAKE_VRAM, `GPU ${g.ordinal} free ${g.vram_free_bytes}`);
        assert.equal(g.current_job_id, '');
      }
      assert.ok(st.loaded_srs.some((s: any) => s.circuit_id === demoCircuitId(CONSTRAINTS) && s.size_bytes > 0));
      // a failing GPU says so in its name until a probe passes; /status has the details
      gpus[1].breakOn('msmG1');
      const second = await call('SubmitProof', { ...submit, request_id: 'multi-gpu-2', vanilla_proof: Buffer.from(JSON.stringify({ seed: 950, partitions: 4 })) });
      assert.equal((await call('AwaitProof', { job_id: second.job_id })).status, AwaitStatus.COMPLETED);
      const bad = (await call('GetStatus', {})).gpus.find((g: any) => g.ordinal === 4);
      assert.match(bad.name, /^fake GPU \[unhealthy: fake GPU 4: injected device fault in msmG1/);
      const http = await (await fetch(`http://${daemon.httpAddress}/status`)).json();
      assert.deepEqual(http.devices.map((d: any) => [d.ordinal, d.healthy]), [[3, true], [4, false]]);
      assert.equal(http.backend.gpus.length, 2);
      gpus[1].repair();
      await until('GPU 4 back in service', () => daemon.engine.devicesStatus()[1].healthy);
      assert.equal((await call('GetStatus', {})).gpus.find((g: any) => g.ordinal === 4).name, 'fake GPU');
    });
  });

  test('with a token, /status without it shows no job id (lanes, devices, the last fault, memory reservations); with it, all of them', async () => {
    const gpus = [new FakeGpu(3, 30), new FakeGpu(4, 30)];
    await withDaemon(
      gpus,
      async (daemon) => {
        gpus[1].breakOn('msmG1'); // GPU 4 fails a partition of the job: its lastFault names the job
        const { job } = await daemon.engine.submit(demoRequest(990, 4, 'status-token-1'));
        const get = async (token: boolean) => {
          const res = await fetch(`http://${daemon.httpAddress}/status`, { headers: token ? { authorization: 'Bearer tok-1' } : {} });
          assert.equal(res.status, 200);
          const text = await res.text();
          return { text, st: JSON.parse(text) };
        };
        // while it runs on GPU 3 after GPU 4's fault: the authorized view names it everywhere
        const shown = (st: any) =>
          st.lanes.some((l: any) => l.currentJobId === job.id) &&
          st.devices.some((d: any) => d.currentJobId === job.id) &&
          st.devices[1].lastFault?.jobId === job.id &&
          st.memory.reservations.some((r: any) => r.label.startsWith(`job ${job.id} partition `));
        let hidden: { text: string; st: any } | undefined;
        for (let i = 0; i < 1000 && hidden === undefined; i++) {
          if (!shown((await get(true)).st)) {
            await sleep(5);
            continue;
          }
          const without = await get(false);
          if (shown((await get(true)).st)) hidden = without; // taken while the job was running
        }
        assert.ok(hidden, 'the authorized /status showed the running job in lanes, devices, lastFault and reservations');
        assert.ok(!hidden.text.includes(job.id), `no job id without the token: ${hidden.text}`);
        assert.ok(!('jobs' in hidden.st) && /Bearer/.test(hidden.st.jobsHidden));
        assert.ok(hidden.st.lanes.every((l: any) => l.currentJobId === '') && hidden.st.lanes.some((l: any) => l.currentProofKind === 'demo'));
        assert.ok(hidden.st.devices.every((d: any) => d.currentJobId === ''));
        assert.equal(hidden.st.devices[1].healthy, false);
        assert.match(hidden.st.devices[1].lastFault.message, /fake GPU 4: injected device fault in msmG1/);
        assert.ok(hidden.st.memory.reservations.some((r: any) => /^job partition \d+$/.test(r.label)), JSON.stringify(hidden.st.memory.reservations));
        // finished: still none without the token (the fault stays recorded), the job and its fault with it
        assert.equal((await daemon.engine.await(job.id))?.status, AwaitStatus.COMPLETED);
        assert.ok(!(await get(false)).text.includes(job.id));
        const after = (await get(true)).st;
        assert.equal(after.devices[1].lastFault.jobId, job.id);
        assert.ok(after.jobs.some((j: any) => j.id === job.id));
      },
      (c) => (c.daemon.auth_token = 'tok-1'),
    );
  });

  test("GetStatus and /status: each GPU's device-memory plan (kiln's GPUStatus fields 100-104; zeros and null without a plan)", async () => {
    const gpus = [new FakeGpu(3), new FakeGpu(4), new FakeGpu(5)];
    const circuit = (id: string, streamed: number) => ({
      circuit: id,
      summary: `matrices resident; SRS h, l streamed in 768 MiB chunks (${id})`,
      residentBytes: 2 * GIB,
      streamedBytesPerPartition: streamed,
      hostBytes: streamed + GIB,
      workingBytes: 3 * GIB,
    });
    gpus[0].plan = {
      budgetBytes: 14 * GIB,
      limitBytes: 15 * GIB,
      residentBytes: 9 * GIB,
      circuits: [circuit('wpost-32g', 2 * GIB), circuit('porep-32g', 11 * GIB), circuit('snap-32g', 5 * GIB)],
      lastPartition: { streamedBytes: 5 * GIB, copyMs: 812.5, gpuMs: 1530 },
      replans: 1,
    };
    // no [gpus] memory_limit, nothing loaded yet
    gpus[1].plan = { budgetBytes: 15 * GIB, residentBytes: GIB / 2, circuits: [], replans: 0 };
    await withDaemon(gpus, async (daemon, call) => {
      const st = await call('GetStatus', {});
      const fields = (g: any) => [g.memory_budget_bytes, g.memory_limit_bytes, g.resident_bytes, g.streamed_bytes_per_partition, g.memory_plan];
      assert.deepEqual(st.gpus.map((g: any) => g.ordinal), [3, 4, 5]);
      assert.deepEqual(fields(st.gpus[0]), [
        14 * GIB,
        15 * GIB,
        9 * GIB,
        11 * GIB, // the circuit that streams the most: neither the sum nor the last partition's bytes
        'wpost-32g: matrices resident; SRS h, l streamed in 768 MiB chunks (wpost-32g); ' +
          'porep-32g: matrices resident; SRS h, l streamed in 768 MiB chunks (porep-32g); ' +
          'snap-32g: matrices resident; SRS h, l streamed in 768 MiB chunks (snap-32g)',
      ]);
      assert.deepEqual(fields(st.gpus[1]), [15 * GIB, 0, GIB / 2, 0, '']);
      assert.deepEqual(fields(st.gpus[2]), [0, 0, 0, 0, ''], 'a backend without a plan: zeros');
      const http = await (await fetch(`http://${daemon.httpAddress}/status`)).json();
      assert.deepEqual(http.devices.map((d: any) => d.memoryPlan), [gpus[0].plan, gpus[1].plan, null]);
    });
  });
});

/** A daemon (demo kind, one lane per GPU) over stand-in GPUs, and a gRPC call to it; closed after `fn`. */
async function withDaemon(
  gpus: FakeGpu[],
  fn: (daemon: Daemon, call: (method: string, req: object) => Promise<any>) => Promise<void>,
  configure?: (c: EngineConfig) => void,
): Promise<void> {
  const daemon = await runDaemon({
    listen: `unix://${join(dir, 'kiln.sock')}`,
    httpListen: '127.0.0.1:0',
    logLevel: 'silent',
    handleSignals: false,
    shutdownGraceSeconds: 5,
    devices: gpus,
    demo: { constraints: CONSTRAINTS, partitions: 4, cacheDir: dir },
    configure: (c) => {
      c.gpus.gpu_workers_per_device = 1;
      c.gpus.probe_interval_ms = 50;
      c.synthesis.threads = 1;
      testDaemonDirs(c, join(dir, 'params'));
      configure?.(c);
    },
  });
  const def = protoLoader.loadSync(join(repoRoot, 'proto', 'cuzk.proto'), { keepCase: true, longs: Number, enums: Number, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const client = new pkg.cuzk.v1.ProvingEngine(daemon.grpcAddress, grpc.credentials.createInsecure());
  const call = (m: string, req: object): Promise<any> =>
    new Promise((resolve, reject) => client[m](req, { deadline: Date.now() + 60_000 }, (err: Error | null, res: any) => (err ? reject(err) : resolve(res))));
  try {
    await fn(daemon, call);
  } finally {
    client.close();
    await daemon.close();
  }
}

describe('the device probe and the choice of devices', () => {
  test('probeBackend passes on a working backend and fails on a faulty or wrong one', async () => {
    const g = new FakeGpu(0);
    await probeBackend(g);
    assert.equal(g.residentBytes, 0, 'the probe leaves nothing allocated');
    g.broken = true;
    await assert.rejects(probeBackend(g), /injected device fault in ntt/);
    // a device that computes a wrong MSM fails the probe
    const wrong = new FakeGpu(1);
    const inner = cpu();
    wrong.msmG1 = async (bases, scalars, opts) => inner.msmG1(bases, scalars.map((x, i) => (i === 0 ? x ^ 1 : x)), opts);
    await assert.rejects(probeBackend(wrong), /probe: a 4-point G1 MSM gave the wrong point/);
  });

  test('selectDevices: one CUDA backend per GPU ([] = all), memory from the driver, bad lists refused by name', () => {
    const memCalls: number[] = [];
    const addon = {
      probe: () => ({
        cuda: true,
        runtime: 'stub',
        gpus: [0, 1, 2].map((ordinal) => ({ ordinal, name: `stub ${ordinal}`, memoryBytes: 80 * GIB, computeCapability: '9.0', multiprocessors: 1 })),
      }),
      memInfo: (device: number) => {
        memCalls.push(device);
        if (device === 2) throw new Error('CUDA error cudaErrorIllegalAddress in cudaMemGetInfo (device 2)');
        return { freeBytes: (10 + device) * GIB, totalBytes: 80 * GIB };
      },
    } as unknown as CudaAddon;
    const all = selectDevices('cuda', { addon });
    assert.deepEqual(all.map((b) => [b.name, b.device]), [['cuda', 0], ['cuda', 1], ['cuda', 2]]);
    assert.ok(all.every((b) => b instanceof CudaBackend));
    assert.deepEqual(all.map((b) => b.capabilities().gpus.map((g) => g.name)), [['stub 0'], ['stub 1'], ['stub 2']]);
    assert.deepEqual(all[1].deviceMemory!(), { totalBytes: 80 * GIB, freeBytes: 11 * GIB });
    assert.equal(all[2].deviceMemory!(), undefined, 'a device that cannot answer reports nothing');
    // each backend asks once when it starts (its memory plans' budget), then on each deviceMemory()
    assert.deepEqual(memCalls, [0, 1, 2, 1, 2]);
    assert.deepEqual(selectDevices('auto', { addon, devices: [2, 0] }).map((b) => b.device), [2, 0]);
    assert.deepEqual(selectDevices('cuda', { addon, devices: [1] }).map((b) => b.device), [1]);
    assert.throws(() => selectDevices('cuda', { addon, devices: [0, 3, 7] }), /\[gpus\] devices lists GPU 3, 7, which this machine does not have \(its GPUs: 0, 1, 2\)/);
    assert.throws(() => selectDevices('cuda', { addon, devices: [1, 1] }), /lists GPU 1 twice/);
    // the CPU backends ignore the list; no GPU at all falls back to the CPU as before
    assert.deepEqual(selectDevices('reference', { devices: [0, 1] }).map((b) => b.name), ['reference']);
    const none = { probe: () => ({ cuda: false, gpus: [], runtime: '', error: 'no GPU: stub' }) } as unknown as CudaAddon;
    const warned: string[] = [];
    const fallback = selectDevices('cuda', { addon: none, devices: [0, 1], warn: (m) => warned.push(m) });
    assert.deepEqual(fallback.map((b) => b.name), ['native']);
    assert.match(warned.join('\n'), /no usable GPU \(no GPU: stub\): using the native CPU backend/);
  });

  test('selectDevices hands [gpus] memory_limit to every CUDA backend, with one GPU or several', () => {
    const addon = {
      probe: () => ({
        cuda: true,
        runtime: 'stub',
        gpus: [0, 1, 2].map((ordinal) => ({ ordinal, name: `stub ${ordinal}`, memoryBytes: 80 * GIB, computeCapability: '9.0', multiprocessors: 1 })),
      }),
      memInfo: () => ({ freeBytes: 70 * GIB, totalBytes: 80 * GIB }),
    } as unknown as CudaAddon;
    const limits = (backends: Backend[]) => backends.map((b) => [b instanceof CudaBackend, b.device, b.memoryPlan!()!.limitBytes]);
    assert.deepEqual(limits(selectDevices('cuda', { addon, memoryLimit: { bytes: 20 * GIB } })), [
      [true, 0, 20 * GIB],
      [true, 1, 20 * GIB],
      [true, 2, 20 * GIB],
    ]);
    assert.deepEqual(limits(selectDevices('auto', { addon, devices: [2, 0], memoryLimit: { fraction: 0.5 } })), [
      [true, 2, 40 * GIB],
      [true, 0, 40 * GIB],
    ]);
    // one GPU: through selectBackend
    assert.deepEqual(limits(selectDevices('cuda', { addon, devices: [1], memoryLimit: { bytes: 24 * GIB } })), [[true, 1, 24 * GIB]]);
    assert.deepEqual(limits(selectDevices('cuda', { addon })), [
      [true, 0, undefined],
      [true, 1, undefined],
      [true, 2, undefined],
    ]);
    // the tuning's cap (KILN_GPU_MEMORY_LIMIT at the edges) when the config sets none; the config's wins
    assert.deepEqual(limits(selectDevices('cuda', { addon, devices: [2, 1], tuning: { gpuMemoryLimit: { bytes: 30 * GIB } } })), [
      [true, 2, 30 * GIB],
      [true, 1, 30 * GIB],
    ]);
    assert.deepEqual(limits(selectDevices('cuda', { addon, devices: [1], memoryLimit: { bytes: 24 * GIB }, tuning: { gpuMemoryLimit: { fraction: 0.5 } } })), [[true, 1, 24 * GIB]]);
    const capped = selectDevices('cuda', { addon, devices: [1], memoryLimit: { bytes: 20 * GIB } })[0].memoryPlan!()!;
    const free = selectDevices('cuda', { addon, devices: [1] })[0].memoryPlan!()!;
    assert.ok(capped.budgetBytes <= 20 * GIB && capped.budgetBytes < free.budgetBytes, `budget ${capped.budgetBytes} under the limit, ${free.budgetBytes} without`);
  });
});

test('gpu_workers_per_device unset: one lane per GPU on stand-in 16 GiB GPUs, the configured count when set', async () => {
  for (const [set, perGpu] of [[0, 1], [2, 2], [3, 3]] as const) {
    const config = defaultConfig(64 * GIB, {});
    config.gpus.gpu_workers_per_device = set;
    const gpus = [new FakeGpu(0), new FakeGpu(1)];
    const engine = new Engine({ config, backend: gpus[0], devices: gpus, logger: pino({ level: 'silent' }), defaultMetrics: false });
    try {
      assert.equal(engine.laneCount, 2 * perGpu, `gpu_workers_per_device = ${set}`);
      assert.deepEqual(engine.lanesStatus().map((l) => l.device), [0, 1].flatMap((d) => Array(perGpu).fill(d)));
    } finally {
      await engine.close(0);
    }
  }
});
