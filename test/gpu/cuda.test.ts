/**
 * The CUDA backend against its CPU twin (the native addon), on random inputs and edges: NTT
 * (plain/inverse/coset) and the quotient at 2^1 … 2^22, CSR mat-vec with bad indices, MSM in G1 and
 * G2 (sizes 1 … 2^20, odd sizes, zero and one scalars, identity bases, equal scalars, repeated
 * bases, scalarIndex), batched addition; the whole-partition path (provePartition: a, b, c, h and
 * the five MSMs on the device) against the CPU step by step, and its errors; a DemoCircuit 2^16 and
 * the 2 KiB PoRep fixture (../shared/fixtures, or $KILN_FIXTURES, or .device/fixtures on the GPU
 * machine) proved on the GPU and verified.
 *
 * Without a GPU (CI) every GPU test is skipped with the reason, and the fallback to the CPU backend
 * is checked. Runs on the device with `npm run test:gpu` (scripts/device/test-gpu.sh).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CudaBackend, cudaCapabilities, createGpuBackend } from '../../src/backend/cuda.js';
import { NativeBackend, nativeAvailable } from '../../src/backend/native.js';
import type { CsrMatrix } from '../../src/field/csr.js';
import { G1, G2, writeG1, writeG2 } from '../../src/field/layout.js';
import { DemoCircuit, type DemoOptions } from '../../src/r1cs/demo-circuit.js';
import { recordShape } from '../../src/r1cs/shape.js';
import { WitnessGenerator } from '../../src/r1cs/witness.js';
import { insecureDevSetup } from '../../src/groth16/setup.js';
import { partitionInput, partitionSumsStepwise, prove } from '../../src/groth16/prover.js';
import { prepareVerifyingKey, verifyProof } from '../../src/groth16/verifier.js';
import type { CircuitShape } from '../../src/r1cs/cs.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { parseCommit2In } from '../../src/filecoin/c1.js';
import { verifyPorep } from '../../src/kinds/porep/porep-c2.js';
import { loadPorepVerifyingKey } from '../../src/kinds/params.js';
import { LocalProver } from '../../src/cli/local-engine.js';
import { FR_ONE_MONT, fixture, fixtureDirs, hasFixture, randomFrBytes, rng } from '../support.js';

const probe = cudaCapabilities();
const skip = !probe.cuda ? `no GPU: ${probe.error ?? 'unknown'}` : !nativeAvailable() ? 'CPU addon not built' : false;
const log = (s: string): void => {
  process.stdout.write(`# ${s}\n`);
};

test('capability query never throws; without a GPU the CPU backend is chosen', () => {
  const p = cudaCapabilities();
  assert.equal(typeof p.cuda, 'boolean');
  log(`probe: ${JSON.stringify(p)}`);
  if (!p.cuda && nativeAvailable()) {
    const { backend, gpu, reason } = createGpuBackend();
    assert.equal(gpu, false);
    assert.equal(backend.name, 'native');
    assert.ok(reason && reason.length > 0);
  }
});

const randomFr = randomFrBytes;
const FR_ONE = FR_ONE_MONT;

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** A DemoCircuit's shape, witness and public inputs. */
function demo(opts: DemoOptions): { shape: CircuitShape; w: Uint8Array; inputs: bigint[] } {
  const circuit = new DemoCircuit(opts);
  const shape = recordShape((cs) => circuit.synthesize(cs));
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  return { shape, w: wg.assignment(), inputs: wg.inputs() };
}

function firstDiff(a: Uint8Array, b: Uint8Array, size: number): number {
  for (let i = 0; i < a.length; i += size) {
    for (let k = 0; k < size; k++) if (a[i + k] !== b[i + k]) return i / size;
  }
  return -1;
}

test('CUDA backend matches the CPU backend', { skip }, async (t) => {
  const cpu = new NativeBackend();
  const gpu = new CudaBackend({ cpu });
  log(`GPU: ${JSON.stringify(gpu.capabilities().gpus)}, ${probe.runtime}`);

  const g1gen = new Uint8Array(96);
  writeG1(g1gen, 0, G1.BASE);
  const g2gen = new Uint8Array(192);
  writeG2(g2gen, 0, G2.BASE);
  const g1Bases = async (n: number, seed: number): Promise<Uint8Array> => cpu.fixedBaseMulG1(g1gen, randomFr(n, seed));
  const g2Bases = async (n: number, seed: number): Promise<Uint8Array> => cpu.fixedBaseMulG2(g2gen, randomFr(n, seed));

  await t.test('NTT 2^1 … 2^22, forward/inverse × plain/coset', async () => {
    let checked = 0;
    for (let log2 = 0; log2 <= 22; log2++) {
      const n = 1 << log2;
      const variants = log2 <= 16 || log2 === 22 ? [false, true].flatMap((inverse) => [false, true].map((coset) => ({ inverse, coset }))) : [{ inverse: false, coset: false }, { inverse: true, coset: true }];
      for (const v of variants) {
        const x = randomFr(n, 1000 + log2);
        const y = x.slice();
        await cpu.ntt(x, v);
        await gpu.ntt(y, v);
        const d = firstDiff(x, y, 32);
        assert.equal(d, -1, `ntt 2^${log2} ${JSON.stringify(v)}: first difference at element ${d}`);
        checked++;
      }
    }
    log(`ntt: ${checked} cases equal; GPU 2^22 last: ${gpu.lastTimings.ntt?.toFixed(2)} ms (events)`);
  });

  await t.test('NTT rejects non-power-of-two lengths', async () => {
    await assert.rejects(gpu.ntt(new Uint8Array(3 * 32), { inverse: false, coset: false }), RangeError);
    await assert.rejects(gpu.ntt(new Uint8Array(33), { inverse: false, coset: false }), RangeError);
  });

  await t.test('quotient 2^1 … 2^22', async () => {
    for (const log2 of [1, 2, 3, 5, 8, 10, 12, 14, 16, 18, 20, 22]) {
      const n = 1 << log2;
      const a = randomFr(n, 1), b = randomFr(n, 2), c = randomFr(n, 3);
      const [a2, b2, c2] = [a.slice(), b.slice(), c.slice()];
      await cpu.quotient(a, b, c);
      await gpu.quotient(a2, b2, c2);
      assert.equal(firstDiff(a, a2, 32), -1, `quotient 2^${log2}: h differs`);
      assert.equal(firstDiff(b, b2, 32), -1, `quotient 2^${log2}: b differs`);
      assert.equal(firstDiff(c, c2, 32), -1, `quotient 2^${log2}: c differs`);
    }
    log(`quotient: equal up to 2^22; GPU 2^22: ${gpu.lastTimings.quotient?.toFixed(2)} ms (events, incl. transfers)`);
  });

  await t.test('inverse NTTs and quotient with the scalings fused into the last stage group and as a pass of their own (setNttFused) equal the CPU', async () => {
    assert.equal(typeof gpu.addon.setNttFused, 'function', 'the addon has setNttFused');
    const prev = gpu.addon.setNttFused!(1) as 0 | 1;
    let checked = 0;
    try {
      for (const fused of [1, 0] as const) {
        gpu.addon.setNttFused!(fused);
        for (const log2 of [0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 16, 19, 20, 21, 22]) {
          const n = 1 << log2;
          for (const coset of [false, true]) {
            const x = randomFr(n, 3000 + log2);
            const y = x.slice();
            await cpu.ntt(x, { inverse: true, coset });
            await gpu.ntt(y, { inverse: true, coset });
            const d = firstDiff(x, y, 32);
            assert.equal(d, -1, `inverse ntt 2^${log2} coset=${coset} fused=${fused}: first difference at element ${d}`);
            checked++;
          }
        }
        for (const log2 of [1, 2, 5, 11, 16, 21, 22]) {
          const n = 1 << log2;
          const a = randomFr(n, 11), b = randomFr(n, 12), c = randomFr(n, 13);
          const [a2, b2, c2] = [a.slice(), b.slice(), c.slice()];
          await cpu.quotient(a, b, c);
          await gpu.quotient(a2, b2, c2);
          assert.equal(firstDiff(a, a2, 32), -1, `quotient 2^${log2} fused=${fused}: h differs`);
          checked++;
        }
      }
    } finally {
      gpu.addon.setNttFused!(prev);
    }
    log(`ntt/quotient with the scalings fused and as a pass: ${checked} cases equal (build default ${prev ? 'fused' : 'a pass'})`);
  });

  await t.test('CSR mat-vec (random, empty rows, bad indices rejected)', async () => {
    const r = rng(7).u32;
    for (const [rows, cols] of [[1, 1], [100, 37], [5000, 3001], [100000, 70000]] as const) {
      const rowPtr = new Uint32Array(rows + 1);
      const cIdx: number[] = [];
      const kIdx: number[] = [];
      for (let i = 0; i < rows; i++) {
        const len = r() % 5 === 0 ? 0 : 1 + (r() % 6);
        for (let k = 0; k < len; k++) {
          cIdx.push(r() % cols);
          kIdx.push(r() % 9);
        }
        rowPtr[i + 1] = cIdx.length;
      }
      const coeffs = randomFr(9, 11);
      coeffs.set(FR_ONE, 0);
      const m: CsrMatrix = { rows, cols, rowPtr, colIdx: Uint32Array.from(cIdx), coeffIdx: Uint32Array.from(kIdx), coeffs };
      const w = randomFr(cols, 12);
      const o1 = new Uint8Array(rows * 32).fill(0xaa);
      const o2 = new Uint8Array(rows * 32).fill(0x55);
      await cpu.csrMatVec(m, w, o1);
      await gpu.csrMatVec(m, w, o2);
      assert.equal(firstDiff(o1, o2, 32), -1, `csr ${rows}×${cols}`);
    }
    const bad: CsrMatrix = { rows: 1, cols: 2, rowPtr: Uint32Array.from([0, 1]), colIdx: Uint32Array.from([2]), coeffIdx: Uint32Array.from([0]), coeffs: FR_ONE.slice() };
    const out = new Uint8Array(32).fill(7);
    await assert.rejects(gpu.csrMatVec(bad, new Uint8Array(64), out), RangeError);
    assert.ok(out.every((x) => x === 7), 'nothing written on a bad index');
    const bad2 = { ...bad, colIdx: Uint32Array.from([1]), coeffIdx: Uint32Array.from([5]) };
    await assert.rejects(gpu.csrMatVec(bad2, new Uint8Array(64), out), RangeError);
  });

  const bases1 = await g1Bases(1 << 16, 5);
  const bases2 = await g2Bases(1 << 12, 6);

  const cmp = async (curve: 1 | 2, bases: Uint8Array, scalars: Uint8Array, what: string, scalarIndex?: Uint32Array): Promise<void> => {
    const opts = scalarIndex ? { scalarIndex } : undefined;
    const a = curve === 1 ? await cpu.msmG1(bases, scalars, opts) : await cpu.msmG2(bases, scalars, opts);
    const b = curve === 1 ? await gpu.msmG1(bases, scalars, opts) : await gpu.msmG2(bases, scalars, opts);
    assert.equal(hex(b.point), hex(a.point), `${what}: GPU ≠ CPU`);
  };

  await t.test('MSM G1: sizes 1 … 2^16 and odd sizes, random scalars', async () => {
    const sizes = [1, 2, 3, 5, 7, 31, 100, 255, 1000, 4097, 12345];
    for (let k = 1; k <= 16; k++) sizes.push(1 << k);
    for (const n of sizes) await cmp(1, bases1.subarray(0, n * 96), randomFr(n, n), `G1 n=${n}`);
    log(`msm G1: ${sizes.length} sizes equal`);
  });

  await t.test('MSM G1 edges: zeros, ones, identity bases, equal scalars, repeated bases, r−1', async () => {
    const n = 5000;
    const b = bases1.subarray(0, n * 96);
    await cmp(1, b, new Uint8Array(n * 32), 'all zero');
    const ones = new Uint8Array(n * 32);
    for (let i = 0; i < n; i++) ones.set(FR_ONE, i * 32);
    await cmp(1, b, ones, 'all one');
    const mix = randomFr(n, 9);
    const r = rng(3).u32;
    for (let i = 0; i < n; i++) {
      const k = r() % 3;
      if (k === 0) mix.fill(0, i * 32, i * 32 + 32);
      else if (k === 1) mix.set(FR_ONE, i * 32);
    }
    await cmp(1, b, mix, 'zero/one/other mix');
    const withId = b.slice();
    for (let i = 0; i < n; i += 7) withId.fill(0, i * 96, i * 96 + 96);
    await cmp(1, withId, randomFr(n, 10), 'identity bases');
    await cmp(1, withId, mix, 'identity bases with 0/1 mix');
    const same = new Uint8Array(40000 * 32);
    const s0 = randomFr(1, 77);
    for (let i = 0; i < 40000; i++) same.set(s0, i * 32);
    await cmp(1, bases1.subarray(0, 40000 * 96), same, 'one scalar repeated 40000 times (one huge bucket per window)');
    const rep = new Uint8Array(3000 * 96);
    for (let i = 0; i < 3000; i++) rep.set(bases1.subarray((i % 3) * 96, (i % 3) * 96 + 96), i * 96);
    await cmp(1, rep, randomFr(3000, 12), 'three bases repeated');
    await cmp(1, rep, same.subarray(0, 3000 * 32), 'repeated bases and equal scalars (P+P in buckets)');
    // −1 = r − 1 in Montgomery form is −R mod r; P and −P pairs cancel
    const pm = new Uint8Array(2 * 96);
    pm.set(bases1.subarray(0, 96), 0);
    const neg = cpu.g1Op('neg', bases1.subarray(0, 96));
    pm.set(neg, 96);
    const two = randomFr(1, 5);
    await cmp(1, pm, new Uint8Array([...two, ...two]), 'P and −P with equal scalars');
    // scalars ≥ r (any 256-bit pattern reads mod r)
    const big = new Uint8Array(64 * 32).fill(0xff);
    await cmp(1, bases1.subarray(0, 64 * 96), big, 'all-ones bit patterns (≥ r)');
  });

  await t.test('MSM G1 with scalarIndex, and batched addition', async () => {
    const nb = 20000, ns = 7000;
    const sc = randomFr(ns, 21);
    for (let i = 0; i < ns; i += 3) sc.set(FR_ONE, i * 32);
    for (let i = 1; i < ns; i += 5) sc.fill(0, i * 32, i * 32 + 32);
    const r = rng(4).u32;
    const idx = new Uint32Array(nb);
    for (let i = 0; i < nb; i++) idx[i] = r() % ns;
    await cmp(1, bases1.subarray(0, nb * 96), sc, 'scalarIndex', idx);
    for (const m of [0, 1, 2, 1000, 65536]) {
      const ind = new Uint32Array(m);
      for (let i = 0; i < m; i++) ind[i] = r() % (1 << 16);
      const a = await cpu.batchAddG1(bases1, ind);
      const b = await gpu.batchAddG1(bases1, ind);
      assert.equal(hex(b), hex(a), `batchAddG1 m=${m}`);
    }
    await assert.rejects(gpu.msmG1(bases1.subarray(0, 96 * 3), randomFr(2, 1)), RangeError);
    await assert.rejects(gpu.msmG1(bases1.subarray(0, 96 * 3), randomFr(2, 1), { scalarIndex: Uint32Array.from([0, 1, 2]) }), RangeError);
    await assert.rejects(gpu.batchAddG1(bases1.subarray(0, 96 * 3), Uint32Array.from([3])), RangeError);
  });

  await t.test('MSM G1 2^18 and 2^20 (random scalars)', async () => {
    const big = await g1Bases(1 << 20, 99);
    for (const k of [18, 20]) {
      const n = 1 << k;
      const s = randomFr(n, k);
      const t0 = performance.now();
      const a = await cpu.msmG1(big.subarray(0, n * 96), s);
      const t1 = performance.now();
      const b = await gpu.msmG1(big.subarray(0, n * 96), s);
      const t2 = performance.now();
      const b2 = await gpu.msmG1(big.subarray(0, n * 96), s);
      const t3 = performance.now();
      assert.equal(hex(b.point), hex(a.point), `G1 2^${k}`);
      assert.equal(hex(b2.point), hex(a.point), `G1 2^${k} (resident bases)`);
      log(`msm G1 2^${k}: CPU ${(t1 - t0).toFixed(0)} ms; GPU first call ${(t2 - t1).toFixed(1)} ms (with upload), resident ${(t3 - t2).toFixed(1)} ms, window ${b2.window}, events ${JSON.stringify(b2.timings)}`);
    }
    gpu.evict(big);
  });

  await t.test('MSM G2: sizes 1 … 2^12, edges, scalarIndex, 2^16', async () => {
    const sizes = [1, 2, 3, 5, 100, 1000, 4095];
    for (let k = 1; k <= 12; k++) sizes.push(1 << k);
    for (const n of sizes) await cmp(2, bases2.subarray(0, n * 192), randomFr(n, n + 1), `G2 n=${n}`);
    const n = 4096;
    const mix = randomFr(n, 31);
    for (let i = 0; i < n; i += 2) mix.set(FR_ONE, i * 32);
    for (let i = 1; i < n; i += 6) mix.fill(0, i * 32, i * 32 + 32);
    await cmp(2, bases2, mix, 'G2 zero/one mix');
    const withId = bases2.slice();
    for (let i = 0; i < n; i += 5) withId.fill(0, i * 192, i * 192 + 192);
    await cmp(2, withId, randomFr(n, 32), 'G2 identity bases');
    const same = new Uint8Array(n * 32);
    const s0 = randomFr(1, 8);
    for (let i = 0; i < n; i++) same.set(s0, i * 32);
    await cmp(2, bases2, same, 'G2 equal scalars');
    const idx = new Uint32Array(n);
    for (let i = 0; i < n; i++) idx[i] = (i * 7) % 1000;
    await cmp(2, bases2, randomFr(1000, 33), 'G2 scalarIndex', idx);
    const b16 = await g2Bases(1 << 16, 34);
    const s16 = randomFr(1 << 16, 35);
    await cmp(2, b16, s16, 'G2 2^16');
    gpu.evict(b16);
    log(`msm G2: ${sizes.length + 5} cases equal`);
  });

  await t.test('MSM with every window width class forced (4 … 24)', async () => {
    const sc1 = randomFr(3000, 41);
    const sc2 = randomFr(500, 42);
    try {
      for (const c of [4, 5, 7, 8, 11, 13, 15, 16, 17, 19, 20, 21, 22, 23, 24]) {
        gpu.addon.setMsmWindow(c);
        await cmp(1, bases1.subarray(0, 3000 * 96), sc1, `G1 c=${c}`);
        if (c % 4 === 0 || c === 23) await cmp(2, bases2.subarray(0, 500 * 192), sc2, `G2 c=${c}`);
      }
    } finally {
      gpu.addon.setMsmWindow(0);
    }
  });

  await t.test('MSM accumulation variants (setMsmAcc 0 … 5: KILN_MSM_ACC at the edges, read per call) equal the CPU', async () => {
    const sc = randomFr(5000, 51);
    const rep = new Uint8Array(3000 * 96);
    for (let i = 0; i < 3000; i++) rep.set(bases1.subarray((i % 3) * 96, (i % 3) * 96 + 96), i * 96);
    const same = new Uint8Array(3000 * 32);
    const s0 = randomFr(1, 52);
    for (let i = 0; i < 3000; i++) same.set(s0, i * 32);
    const pm = new Uint8Array(2 * 96);
    pm.set(bases1.subarray(0, 96), 0);
    pm.set(cpu.g1Op('neg', bases1.subarray(0, 96)), 96);
    try {
      for (const v of [0, 1, 2, 3, 4, 5]) {
        gpu.addon.setMsmAcc!(v);
        await cmp(1, bases1.subarray(0, 5000 * 96), sc, `acc ${v}: G1 random`);
        await cmp(1, rep, same, `acc ${v}: repeated bases and equal scalars (P+P in buckets)`);
        await cmp(1, pm, new Uint8Array([...s0, ...s0]), `acc ${v}: P and −P`);
        await cmp(2, bases2.subarray(0, 1000 * 192), sc.subarray(0, 1000 * 32), `acc ${v}: G2 random`);
      }
    } finally {
      gpu.addon.setMsmAcc!(5); // the default
    }
  });

  await t.test('pinned alloc/release', () => {
    const buf = gpu.alloc(1 << 20);
    assert.equal(buf.length, 1 << 20);
    assert.ok(buf.every((x) => x === 0));
    buf[5] = 1;
    gpu.release(buf);
    assert.equal(buf.length, 0);
    assert.throws(() => gpu.release(new Uint8Array(4)), TypeError);
  });

  await t.test('pinned allocAsync: the same buffer as alloc, made off the event loop; warmDevice resolves and refuses bad arguments', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const buf = await gpu.allocAsync(256 << 20);
    clearInterval(timer);
    log(`allocAsync 256 MiB: the event loop ran ${ticks} timer ticks meanwhile`);
    assert.equal(buf.length, 256 << 20);
    assert.ok(buf.subarray(0, 1 << 20).every((x) => x === 0) && buf.subarray(buf.length - (1 << 20)).every((x) => x === 0));
    buf[7] = 3;
    gpu.release(buf);
    assert.equal(buf.length, 0, 'released and detached: it was the addon\'s pinned memory');
    await assert.rejects(gpu.allocAsync(-1), RangeError);
    await gpu.addon.warmDevice!(0, 20, 3);
    await gpu.addon.warmDevice!(0, 20, 3); // again: the twiddles and the pool are there already
    assert.throws(() => gpu.addon.warmDevice!(0, 40, 3), RangeError);
    assert.throws(() => gpu.addon.warmDevice!(0, 20, 99), RangeError);
  });


  await t.test('whole partition on the device equals the CPU step by step (0/1 and dense witnesses)', async () => {
    const all: { input: ReturnType<typeof partitionInput>; want: Awaited<ReturnType<typeof partitionSumsStepwise>> }[] = [];
    for (const dense of [false, true]) {
      for (const constraints of [5, 1000, 4000]) {
        const { shape, w } = demo({ constraints, dense });
        const params = await insecureDevSetup(shape, cpu);
        const input = partitionInput(params, shape, w);
        const want = await partitionSumsStepwise(cpu, input);
        for (const round of ['cold', 'resident', 'resident, NTT scalings fused', 'resident, NTT scalings as a pass']) {
          const prev = round.endsWith('fused') ? gpu.addon.setNttFused!(1) : round.endsWith('pass') ? gpu.addon.setNttFused!(0) : undefined;
          let got: Awaited<ReturnType<typeof gpu.provePartition>>;
          try {
            got = await gpu.provePartition(input);
          } finally {
            if (prev !== undefined) gpu.addon.setNttFused!(prev as 0 | 1);
          }
          const names = ['h', 'l', 'a', 'b1', 'b2'] as const;
          for (const k of names) assert.equal(hex(got[k]), hex(want[k]), `${constraints} constraints, dense=${dense}, ${round}: ${k} differs`);
          assert.ok(got.gpu.total > 0 && got.timings.ntt_h >= 0);
        }
        await gpu.evictCircuit(shape);
        all.push({ input, want });
      }
    }
    // All six at once: the witness copies run outside the device lock, overlapping the others' compute.
    const got = await Promise.all(all.map((x) => gpu.provePartition(x.input)));
    got.forEach((g, i) => {
      for (const k of ['h', 'l', 'a', 'b1', 'b2'] as const) assert.equal(hex(g[k]), hex(all[i].want[k]), `concurrent proof ${i}: ${k} differs`);
    });
    log('partition: sums equal for 5, 1000, 4000 constraints × (0/1, dense) witnesses, cold, resident and six at once');
  });

  await t.test('whole partition: bad inputs are refused with a clear error', async () => {
    const { shape, w } = demo({ constraints: 100 });
    const params = await insecureDevSetup(shape, cpu);
    const input = partitionInput(params, shape, w);
    await assert.rejects(gpu.provePartition({ ...input, witness: w.subarray(32) }), /witness has/);
    await assert.rejects(gpu.provePartition({ ...input, srs: { ...input.srs, l: params.a.slice(0, 96 * 3) } }), /SRS vector l has 3 bases/);
    const badCols = { ...shape.a, colIdx: shape.a.colIdx.slice() };
    badCols.colIdx[0] = shape.numInputs + shape.numAux + 5;
    await assert.rejects(
      gpu.addon.uploadCircuit(gpu.device, { ...input, ...shape, a: badCols, logN: input.logN, aIdx: input.aIdx, bIdx: input.bIdx }),
      /A: column index out of range/,
    );
    const badIdx = input.bIdx.slice();
    badIdx[0] = 1 << 30;
    await assert.rejects(
      gpu.addon.uploadCircuit(gpu.device, { ...shape, logN: input.logN, aIdx: input.aIdx, bIdx: badIdx }),
      /B-query index out of range/,
    );
    await assert.rejects(gpu.addon.uploadCircuit(gpu.device, { ...shape, logN: 2, aIdx: input.aIdx, bIdx: input.bIdx }), /domain 2\^2 is smaller/);
    const ok = await gpu.provePartition(input);
    assert.equal(ok.b2.length, 192);
  });

  await t.test('DemoCircuit 2^16: prove on the GPU, verify', async () => {
    const t0 = performance.now();
    const { shape, w: assignment, inputs } = demo({ constraints: (1 << 16) - 8 });
    const t1 = performance.now();
    const params = await insecureDevSetup(shape, cpu);
    const t2 = performance.now();
    log(`demo: ${shape.numConstraints} constraints, ${shape.numInputs + shape.numAux} variables; synth ${(t1 - t0).toFixed(0)} ms, setup (CPU) ${(t2 - t1).toFixed(0)} ms`);
    const pvk = prepareVerifyingKey(params.vk);
    for (const [name, be] of [['cpu', cpu], ['gpu (cold: uploads the SRS)', gpu], ['gpu (SRS resident)', gpu], ['gpu (SRS resident, again)', gpu]] as const) {
      const res = await prove(params, shape, assignment, be);
      const ok = verifyProof(pvk, res.proof, inputs);
      assert.ok(ok, `${name}: proof does not verify`);
      const ph = Object.entries(res.timings)
        .filter(([, v]) => v >= 0.05)
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(', ');
      log(`demo prove [${name}]: ${res.totalMs.toFixed(0)} ms (${ph}) — verified`);
    }
  });

  await t.test('2 KiB PoRep fixture: prove on the GPU (whole partition on the device), verify', async (tt) => {
    if (!hasFixture('2KiB.commit2in.json')) {
      tt.skip(`fixture not found in ${fixtureDirs.join(', ')}`);
      return;
    }
    const input = readFileSync(fixture('2KiB.commit2in.json'));
    const c2 = parseCommit2In(input);
    // shared with test/gpu/daemon.test.ts (its [srs] param_cache is the parent)
    const cache = join(process.env.KILN_GPU_TEST_DIR ?? join(tmpdir(), 'kiln-gpu-test'), 'kiln-cache');
    mkdirSync(cache, { recursive: true });
    // the CLI's path: the in-process engine (planner, provider, pipeline) on the GPU backend
    const prover = new LocalProver({ paramsDir: join(cache, 'no-official-params'), cacheDir: cache, backend: gpu, say: log });
    try {
      for (const round of ['cold (shape, parameters, circuit and SRS upload)', 'resident']) {
        const t3 = performance.now();
        const { bytes, source, span } = await prover.prove(input);
        const t4 = performance.now();
        assert.equal(bytes.length, 192);
        const vk = await loadPorepVerifyingKey(source);
        assert.deepEqual(verifyPorep(c2.phase1Out, bytes, vk), [true]);
        const prove = span.children.find((c) => c.name === 'partition[0]')?.children.find((c) => c.name === 'prove');
        const ph = (prove?.children ?? []).map((c) => `${c.name} ${c.durationMs.toFixed(1)}`).join(', ');
        log(`porep 2KiB [${round}]: ${(t4 - t3).toFixed(0)} ms incl. synthesis and verification; prove phases: ${ph} — verified`);
      }
    } finally {
      await prover.close();
    }
    // precomputeH (KILN_PRECOMPUTE_H=1): the plan keeps copies of h in the spare memory, made before the first
    // proof; the partition's h MSM then runs over them
    const pre = new CudaBackend({ cpu, precomputeH: true });
    const p2 = new LocalProver({ paramsDir: join(cache, 'no-official-params'), cacheDir: cache, backend: pre, say: log });
    try {
      for (const round of ['h copies made', 'h copies resident']) {
        const { bytes, source } = await p2.prove(input);
        const vk = await loadPorepVerifyingKey(source);
        assert.deepEqual(verifyPorep(c2.phase1Out, bytes, vk), [true], `${round}: the proof verifies`);
      }
      const summaries = pre.memoryPlan().circuits.map((c) => c.summary).join(' | ');
      assert.match(summaries, /h × \d+ precomputed.*\(h × \d+ made in/, summaries);
      log(`porep 2KiB with precomputed h: verified twice; plan: ${summaries}`);
    } finally {
      await p2.close();
      pre.evictAll();
    }
  });
  gpu.evictAll();
});
