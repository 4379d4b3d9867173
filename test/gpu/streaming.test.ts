/**
 * Issue 24 on the GPU: the device-memory plan's streamed paths against the resident ones and the CPU.
 *  - MSMs over bases kept in pinned host memory (hostBases) streamed through small staging slots whose
 *    chunks cross the host pieces, and over resident bases chunked by a small scratch budget: G1 and
 *    G2, random scalars, zeros, ones, identity bases, equal scalars, scalarIndex; equal to the CPU.
 *  - Whole partitions under forced plans (matrices streamed, every section streamed; the quotient in
 *    place, with 3 and with 4 buffers; small MSM scratch): the five sums equal the CPU's step by step.
 *  - Parameters loaded through the plan (streamed sections in pinned host memory), the development
 *    setup on the GPU with a plan that streams the matrices.
 *  - The 2 KiB fixture and a synthetic 8 MiB PoRep proved through the engine (the CLI's path) under a
 *    [gpus] memory_limit small enough that every section streams; the proofs verify.
 *  - A circuit too large for its budget is refused when loaded, naming the memory needed and free.
 * Without a GPU every test is skipped with the reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CudaBackend } from '../../src/backend/cuda.js';
import { NativeBackend } from '../../src/backend/native.js';
import { deviceBudget, planDeviceMemory, SECTION_NAMES, type CircuitFootprint, type DevicePlan } from '../../src/backend/device-plan.js';
import { G1, G2, writeG1, writeG2 } from '../../src/field/layout.js';
import { DemoCircuit } from '../../src/r1cs/demo-circuit.js';
import { recordShape } from '../../src/r1cs/shape.js';
import { WitnessGenerator } from '../../src/r1cs/witness.js';
import { loadOrCreateDevParams } from '../../src/groth16/setup.js';
import { partitionInput, partitionSumsStepwise, prove } from '../../src/groth16/prover.js';
import { prepareVerifyingKey, verifyProof } from '../../src/groth16/verifier.js';
import { compiledOf } from '../../src/groth16/compiled.js';
import { isPointSection } from '../../src/backend/section.js';
import { parseCommit2In } from '../../src/filecoin/c1.js';
import { synthC1 } from '../../src/filecoin/seal/index.js';
import { porepShape, verifyPorep } from '../../src/kinds/porep/porep-c2.js';
import { loadPorepVerifyingKey } from '../../src/kinds/params.js';
import { LocalProver } from '../../src/cli/local-engine.js';
import { FR_ONE_MONT, fixture, fixtureDirs, hasFixture, randomFrBytes, rng } from '../support.js';
import { hex, log, skip } from './gpu-support.js';

const MiB = 2 ** 20;

const randomFr = randomFrBytes;
const FR_ONE = FR_ONE_MONT;

/** A plan that streams everything it can, whatever the budget (tests on a big GPU). */
function streamAll(over: Partial<DevicePlan> = {}): (fp: CircuitFootprint, budget: number) => DevicePlan {
  return (fp, budget) => {
    const p = planDeviceMemory(fp, Math.max(budget, 2 ** 40));
    return {
      ...p,
      matrices: 'streamed',
      sections: { h: 'streamed', l: 'streamed', a: 'streamed', b_g1: 'streamed', b_g2: 'streamed' },
      quotientBuffers: 2,
      prefetchWitness: false,
      msmScratchBytes: 160 * MiB,
      slots: 2,
      slotBytes: 256 * 1024,
      summary: 'test: everything streamed',
      ...over,
    };
  };
}

test('streamed and chunked MSMs equal the CPU', { skip }, async (t) => {
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu });
  const addon = gpu.addon;
  assert.equal(typeof addon.hostBases, 'function', 'the addon has hostBases');
  const g1gen = new Uint8Array(96);
  writeG1(g1gen, 0, G1.BASE);
  const g2gen = new Uint8Array(192);
  writeG2(g2gen, 0, G2.BASE);
  const n1 = 70001;
  const bases1 = await cpu.fixedBaseMulG1(g1gen, randomFr(n1, 1));
  const n2 = 9001;
  const bases2 = await cpu.fixedBaseMulG2(g2gen, randomFr(n2, 2));
  /** The bases in pinned host pieces of uneven sizes (a streamed chunk crosses them). */
  const pieces = (b: Uint8Array, size: number, cuts: number[]): Uint8Array[] => {
    const out: Uint8Array[] = [];
    let at = 0;
    for (const c of [...cuts, b.length / size]) {
      const piece = gpu.alloc((c - at) * size);
      piece.set(b.subarray(at * size, c * size));
      out.push(piece);
      at = c;
    }
    return out;
  };
  const host1 = pieces(bases1, 96, [1, 12345, 40000]);
  const host2 = pieces(bases2, 192, [3000, 3001]);
  const h1 = addon.hostBases!(gpu.device, 1, host1);
  const h2 = addon.hostBases!(gpu.device, 2, host2);
  const r1 = addon.uploadBases(gpu.device, 1, bases1);
  const r2 = addon.uploadBases(gpu.device, 2, bases2);
  const scalarCases = (n: number): [string, Uint8Array][] => {
    const mix = randomFr(n, 9);
    const r = rng(3).u32;
    for (let i = 0; i < n; i++) {
      const k = r() % 50; // mostly 0 and 1, as a witness
      if (k < 24) mix.fill(0, i * 32, i * 32 + 32);
      else if (k < 48) mix.set(FR_ONE, i * 32);
    }
    const same = new Uint8Array(n * 32);
    const s0 = randomFr(1, 77);
    for (let i = 0; i < n; i++) same.set(s0, i * 32);
    return [
      ['random', randomFr(n, n)],
      ['zero/one/other, mostly 0 and 1', mix],
      ['all zero', new Uint8Array(n * 32)],
      ['one scalar repeated', same],
    ];
  };
  try {
    for (const [budget, slot] of [
      [160 * MiB, 96 * 3000],
      [256 * MiB, 1 * MiB],
      [100 * MiB, 96 * 70001], // whole-section chunks: the sort then runs a few windows per pass
      [0, 96 * 65536],
    ] as const) {
      addon.setMemoryPlan!(gpu.device, budget, slot, 2);
      for (const [name, sc] of scalarCases(n1)) {
        const want = hex((await cpu.msmG1(bases1, sc)).point);
        assert.equal(hex((await addon.msm(h1, sc)).point), want, `G1 host bases, ${name}, budget ${budget}, slot ${slot}`);
        assert.equal(hex((await addon.msm(r1, sc)).point), want, `G1 resident chunked, ${name}, budget ${budget}`);
      }
      for (const [name, sc] of scalarCases(n2)) {
        const want = hex((await cpu.msmG2(bases2, sc)).point);
        assert.equal(hex((await addon.msm(h2, sc)).point), want, `G2 host bases, ${name}, budget ${budget}, slot ${slot}`);
        assert.equal(hex((await addon.msm(r2, sc)).point), want, `G2 resident chunked, ${name}, budget ${budget}`);
      }
      // scalarIndex (the A/B queries) and identity bases
      const ns = 5000;
      const sc = randomFr(ns, 21);
      for (let i = 0; i < ns; i += 3) sc.set(FR_ONE, i * 32);
      const r = rng(4).u32;
      const idx = new Uint32Array(n1);
      for (let i = 0; i < n1; i++) idx[i] = r() % ns;
      const want = hex((await cpu.msmG1(bases1, sc, { scalarIndex: idx })).point);
      assert.equal(hex((await addon.msm(h1, sc, idx)).point), want, `G1 host bases, scalarIndex, budget ${budget}`);
      const withId = bases1.slice();
      for (let i = 0; i < n1; i += 7) withId.fill(0, i * 96, i * 96 + 96);
      const hid = addon.hostBases!(gpu.device, 1, pieces(withId, 96, [5, 33333]));
      const s2 = randomFr(n1, 10);
      assert.equal(hex((await addon.msm(hid, s2)).point), hex((await cpu.msmG1(withId, s2)).point), `identity bases, budget ${budget}`);
      addon.freeBases(hid);
      // a chunk's full-width scalars in several Pippenger batches (setMsmBatch caps the batch: KILN_MSM_BATCH at the edges)
      addon.setMsmBatch!(777);
      try {
        const sc3 = scalarCases(n1)[0][1];
        assert.equal(hex((await addon.msm(h1, sc3)).point), hex((await cpu.msmG1(bases1, sc3)).point), `batches of 777, budget ${budget}`);
      } finally {
        addon.setMsmBatch!(0);
      }
    }
    log(`msm: host-streamed and chunked-resident MSMs equal the CPU (G1 ${n1}, G2 ${n2} bases; slots of 3000 points to 64 Ki points)`);
    // a writeBases into host bases is refused
    await assert.rejects(addon.writeBases(h1, 0, bases1.subarray(0, 96)), /host memory/);
  } finally {
    addon.setMemoryPlan!(gpu.device, 0, 256 * MiB, 2);
    for (const h of [h1, h2, r1, r2]) addon.freeBases(h);
    for (const p of [...host1, ...host2]) gpu.release(p);
  }
});

/** A DemoCircuit's shape, witness and public inputs. */
function demo(constraints: number, dense: boolean): { shape: ReturnType<typeof recordShape>; w: Uint8Array; inputs: bigint[] } {
  const circuit = new DemoCircuit({ constraints, dense });
  const shape = recordShape((cs) => circuit.synthesize(cs));
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  return { shape, w: wg.assignment(), inputs: wg.inputs() };
}

test('whole partitions under streamed plans equal the CPU step by step', { skip }, async (t) => {
  const cpu = new NativeBackend();
  const dir = join(process.env.KILN_GPU_TEST_DIR ?? join(tmpdir(), 'kiln-gpu-test'), 'streaming');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const plans: [string, Partial<DevicePlan>][] = [
    ['all streamed, quotient in place', {}],
    ['all streamed, 3 quotient buffers, prefetch', { quotientBuffers: 3, prefetchWitness: true }],
    ['all streamed, 4 quotient buffers, tiny slots', { quotientBuffers: 4, slotBytes: 4096 * 96 }],
    ['matrices resident, sections streamed', { matrices: 'resident' }],
    ['sections resident, matrices streamed, small MSM scratch', { sections: { h: 'resident', l: 'resident', a: 'resident', b_g1: 'resident', b_g2: 'resident' } }],
  ];
  for (const dense of [false, true]) {
    for (const constraints of [1000, 20000]) {
      const { shape, w, inputs } = demo(constraints, dense);
      const cpuParams = await loadOrCreateDevParams(shape, cpu, dir); // the CPU twin's copy (host memory)
      for (const [name, over] of plans) {
        // a backend per plan (plans are made once per circuit); parameters loaded through the plan,
        // made on the GPU the first time (the setup gets a resident copy of a streamed circuit)
        const gpu = new CudaBackend({ cpu, planner: streamAll(over) });
        const params = await loadOrCreateDevParams(shape, gpu, dir);
        const plan = gpu.memoryPlan();
        assert.equal(plan.circuits.length, 1);
        const wantHost = SECTION_NAMES.filter((s) => (over.sections ?? {})[s] !== 'resident');
        for (const s of SECTION_NAMES) {
          const sec = { h: params.h, l: params.l, a: params.a, b_g1: params.bG1, b_g2: params.bG2 }[s];
          assert.ok(isPointSection(sec), `${s} is a PointSection`);
          const inHost = sec.chunks.length > 0 && sec.device === undefined;
          assert.equal(inHost, wantHost.includes(s), `${name}: section ${s} ${inHost ? 'in host memory' : 'on the device'}`);
        }
        const input = partitionInput(params, shape, w);
        const want = await partitionSumsStepwise(cpu, partitionInput(cpuParams, shape, w));
        const got = await gpu.provePartition(input);
        for (const k of ['h', 'l', 'a', 'b1', 'b2'] as const) assert.equal(hex(got[k]), hex(want[k]), `${constraints}, dense=${dense}, ${name}: ${k} differs`);
        // the quotient's inverse transforms with their scalings the other way too (setNttFused, process-wide)
        const fusedNow = gpu.addon.setNttFused!(1) as 0 | 1;
        try {
          gpu.addon.setNttFused!(fusedNow ? 0 : 1);
          const other = await gpu.provePartition(input);
          for (const k of ['h', 'l', 'a', 'b1', 'b2'] as const) assert.equal(hex(other[k]), hex(want[k]), `${constraints}, dense=${dense}, ${name}, NTT scalings ${fusedNow ? 'as a pass' : 'fused'}: ${k} differs`);
        } finally {
          gpu.addon.setNttFused!(fusedNow);
        }
        const streamed = got.gpu.streamedBytes ?? 0;
        if (wantHost.length) assert.ok(streamed > 0, `${name}: bytes streamed`);
        const res = await prove(params, shape, w, gpu);
        assert.ok(verifyProof(prepareVerifyingKey(params.vk), res.proof, inputs), `${name}: proof verifies`);
        log(`partition ${constraints} (dense=${dense}) [${name}]: sums equal; streamed ${(streamed / MiB).toFixed(1)} MiB, copy ${(got.gpu.streamCopy ?? 0).toFixed(1)} ms, wait ${(got.gpu.streamWait ?? 0).toFixed(1)} ms, quotient buffers ${got.gpu.quotientBuffers}`);
        gpu.evictAll();
        for (const s of [params.h, params.l, params.a, params.bG1, params.bG2]) if (isPointSection(s)) s.release();
      }
    }
  }
});

test('a circuit too large for the budget is refused when its parameters load', { skip }, async () => {
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu, memoryLimit: { bytes: 2 ** 30 } });
  const { shape } = demo(1000, true);
  const fp = compiledOf(shape).footprint();
  // a footprint of a 2^27 circuit with this shape's tables: far over 1 GiB
  const big: CircuitFootprint = { ...fp, logN: 27, numVars: 130_000_000 };
  assert.throws(() => gpu.planCircuit({}, big, 'porep-32g'), /too small for circuit porep-32g: it needs at least [\d.]+ GiB of device memory .* available under \[gpus\] memory_limit 1\.0 GiB/);
  const ok = gpu.planCircuit(shape, fp, 'demo');
  assert.ok(ok.feasible);
  log(`1 GiB limit: ${ok.summary}`);
});

/** A [gpus] memory_limit just above what the smallest plan of this circuit needs (deviceBudget's
 *  reserve added back): every SRS section streams under it. */
function limitStreamingAll(fp: CircuitFootprint): number {
  const needed = planDeviceMemory(fp, 0).neededBytes;
  const limit = Math.ceil((needed + 512 * MiB + 4 * MiB) / 0.985);
  const p = planDeviceMemory(fp, deviceBudget(Infinity, Infinity, { bytes: limit }).budgetBytes);
  assert.ok(p.feasible && SECTION_NAMES.every((s) => p.sections[s] === 'streamed'), `every section streams under ${limit} B: ${p.summary}`);
  return limit;
}

test('2 KiB fixture and a synthetic 8 MiB PoRep through the engine under a memory_limit that streams every section', { skip }, async (t) => {
  const cpu = new NativeBackend();
  const cache = join(process.env.KILN_GPU_TEST_DIR ?? join(tmpdir(), 'kiln-gpu-test'), 'kiln-cache');
  mkdirSync(cache, { recursive: true });
  const cases: [string, () => Uint8Array][] = [];
  if (hasFixture('2KiB.commit2in.json')) cases.push(['2KiB fixture', () => readFileSync(fixture('2KiB.commit2in.json'))]);
  else log(`2 KiB fixture not found in ${fixtureDirs.join(', ')}`);
  cases.push(['8MiB synthetic', () => new Uint8Array(Buffer.from(synthC1({ sectorSize: '8MiB', rngSeed: 'streaming-test' }).commit2In))]);
  for (const [name, make] of cases) {
    const input = make();
    const c2 = parseCommit2In(input);
    const info = c2.phase1Out.registeredProof;
    const { shape } = porepShape(info, cache); // the provider reads this cached shape again
    const fp = compiledOf(shape).footprint();
    const limit = limitStreamingAll(fp);
    const gpu = new CudaBackend({ cpu, memoryLimit: { bytes: limit } });
    const prover = new LocalProver({ paramsDir: join(cache, 'no-official-params'), cacheDir: cache, backend: gpu, say: log });
    try {
      for (const round of ['first', 'again']) {
        const t0 = performance.now();
        const { bytes, source, span } = await prover.prove(input);
        const ms = performance.now() - t0;
        const vk = await loadPorepVerifyingKey(source);
        assert.ok(verifyPorep(c2.phase1Out, bytes, vk).every(Boolean), `${name} ${round}: the proof verifies`);
        const plan = gpu.memoryPlan();
        const circ = plan.circuits[0];
        assert.ok(circ && circ.streamedBytesPerPartition > 0 && plan.lastPartition && plan.lastPartition.streamedBytes > 0, `${name}: sections streamed`);
        assert.ok(plan.budgetBytes <= limit, 'the budget is within the limit');
        const prove = span.children.find((c) => c.name === 'partition[0]')?.children.find((c) => c.name === 'prove');
        const ph = (prove?.children ?? []).map((c) => `${c.name} ${c.durationMs.toFixed(1)}`).join(', ');
        log(`${name} [${round}] under memory_limit ${(limit / 2 ** 30).toFixed(3)} GiB: ${ms.toFixed(0)} ms, verified; plan: ${circ.summary}; streamed ${(plan.lastPartition!.streamedBytes / MiB).toFixed(0)} MiB per partition, copy ${plan.lastPartition!.copyMs.toFixed(1)} ms; prove phases: ${ph}`);
      }
    } finally {
      await prover.close();
    }
  }
});
