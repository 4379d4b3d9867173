/**
 * Quick numbers for the native CPU backend on this machine: field multiplication (ns), G1/G2 MSM at
 * 2^12/2^14/2^16 (ms, full random scalars), NTT and quotient at 2^16, fixed-base mul at 2^16.
 *   node dist/bench/native-quick.js [--runs 3] [--max-log 16] [--threads N]
 */
import { randomBytes } from 'node:crypto';
import { NativeBackend } from '../src/backend/native.js';
import { tuningFromEnv } from '../src/util/tuning.js';
import { FR_BYTES, FR_MODULUS, G1, G1_BYTES, G2, G2_BYTES, g1Vector, g2Vector, writeFr } from '../src/field/layout.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const runs = arg('--runs', 3);
const maxLog = arg('--max-log', 16);
const threads = arg('--threads', 0);

function randomFr(n: number): Uint8Array {
  const out = new Uint8Array(n * FR_BYTES);
  const bytes = randomBytes(n * 40);
  for (let i = 0; i < n; i++) {
    let x = 0n;
    for (let k = 0; k < 40; k++) x = (x << 8n) | BigInt(bytes[i * 40 + k]);
    writeFr(out, i, x % FR_MODULUS);
  }
  return out;
}

/** Process CPU time of the last best() call, ms (all threads): on a loaded machine (other jobs
 *  sharing the 2 cores) wall time overstates, and CPU time / threads is the idle-machine estimate. */
let lastCpuMs = 0;

async function best(fn: () => Promise<unknown>): Promise<number> {
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (wall < min) {
      min = wall;
      lastCpuMs = (c.user + c.system) / 1000;
    }
  }
  return min;
}

const cpu = (): string => `cpu ${lastCpuMs.toFixed(0)} ms`;

async function main(): Promise<void> {
  // KILN_NO_IFMA=1: the scalar path
  const be = new NativeBackend({ ...(threads ? { threads } : {}), noIfma: tuningFromEnv(process.env).noIfma });
  const caps = be.addon.capabilities();
  console.log(`kiln native ${be.version()}: ${caps.threads} threads, mulx/adx asm: ${caps.mulx}`);
  for (const op of ['fq_mul', 'fq_sqr', 'fq_add', 'fr_mul', 'fq2_mul']) {
    const ns = Math.min(...[0, 1, 2].map(() => be.addon.microBench(op, 2_000_000)));
    console.log(`${op.padEnd(8)} ${ns.toFixed(1)} ns`);
  }
  console.log(`fq_inv   ${(be.addon.microBench('fq_inv', 2000) / 1000).toFixed(1)} µs`);

  const nMax = 1 << maxLog;
  const t0 = performance.now();
  const basesG1 = await be.fixedBaseMulG1(g1Vector([G1.BASE]), randomFr(nMax));
  console.log(`fixedBaseMulG1 2^${maxLog}: ${(performance.now() - t0).toFixed(0)} ms`);
  const t1 = performance.now();
  const basesG2 = await be.fixedBaseMulG2(g2Vector([G2.BASE]), randomFr(nMax));
  console.log(`fixedBaseMulG2 2^${maxLog}: ${(performance.now() - t1).toFixed(0)} ms`);
  const scalars = randomFr(nMax);

  for (let log = 12; log <= maxLog; log += 2) {
    const n = 1 << log;
    const s = scalars.subarray(0, n * FR_BYTES);
    const g1 = await best(() => be.msmG1(basesG1.subarray(0, n * G1_BYTES), s));
    const c1 = cpu();
    const g2 = await best(() => be.msmG2(basesG2.subarray(0, n * G2_BYTES), s));
    console.log(
      `MSM 2^${log}: G1 ${(g1 * 1000).toFixed(0)} µs (${((g1 * 1e6) / n).toFixed(0)} ns/point, ${c1}), ` +
        `G2 ${(g2 * 1000).toFixed(0)} µs (${((g2 * 1e6) / n).toFixed(0)} ns/point, ${cpu()})`,
    );
  }
  // The witness mix of a PoRep-like circuit (src/r1cs/demo-circuit.ts): ~47% zeros, ~47% ones (bits), 3%
  // 32-bit words, 3% full-size values.
  const mix = new Uint8Array(nMax * FR_BYTES);
  const full = randomFr(nMax);
  for (let i = 0; i < nMax; i++) {
    const u = (i * 2654435761) >>> 0;
    const kind = u % 100;
    if (kind < 47) continue;
    if (kind < 94) writeFr(mix, i, 1n);
    else if (kind < 97) writeFr(mix, i, BigInt(u));
    else mix.set(full.subarray(i * FR_BYTES, (i + 1) * FR_BYTES), i * FR_BYTES);
  }
  for (const [name, fn] of [
    ['G1', () => be.msmG1(basesG1, mix)],
    ['G2', () => be.msmG2(basesG2, mix)],
  ] as const) {
    let t = { classify: 0, batchAdd: 0, msm: 0 };
    const ms = await best(async () => {
      t = (await fn()).timings;
    });
    console.log(
      `MSM ${name} 2^${maxLog}, PoRep-like scalars (47% 0, 47% 1, 3% u32, 3% full): ${ms.toFixed(1)} ms ` +
        `(classify ${t.classify.toFixed(1)}, batchAdd ${t.batchAdd.toFixed(1)}, msm ${t.msm.toFixed(1)}; ${cpu()})`,
    );
  }

  const v = randomFr(nMax);
  const nttMs = await best(() => be.ntt(v, { inverse: false, coset: false }));
  console.log(`NTT 2^${maxLog}: ${nttMs.toFixed(2)} ms (${cpu()})`);
  const a = randomFr(nMax), b = randomFr(nMax), c = randomFr(nMax);
  const q = await best(() => be.quotient(a, b, c));
  console.log(`quotient 2^${maxLog} (7 NTTs): ${q.toFixed(2)} ms (${cpu()})`);
  const loadavg = (await import('node:os')).loadavg();
  console.log(`load average during the run: ${loadavg.map((x) => x.toFixed(2)).join(' ')} (other processes share the cores when > 0)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
