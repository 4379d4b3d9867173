/** The AVX-512 IFMA MSMs (native/src/msm/ifma.hpp) against their slow twin, the scalar mulx/adx
 *  path of the same addon: one child process runs with the IFMA path, one with its addon told noIfma
 *  (NativeBackend's option, what KILN_NO_IFMA=1 asks at the edges), on
 *  the same deterministic inputs (random bases and scalars, and the edges: zero, one, r − 1, equal
 *  scalars, repeated and opposite bases, identity bases, sizes around the 8-lane groups, and runs of
 *  one digit long enough to overflow the bucket queues), plain and over precomputed tables, G1 and
 *  G2; every result must be byte-identical. (The other native MSM tests compare whichever path the
 *  CPU runs against noble.) */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NativeBackend } from '../src/backend/native.js';
import { G1, G1_BYTES, G2, G2_BYTES, frVector, g1Vector, g2Vector } from '../src/field/layout.js';
import { r } from './native-helpers.js';
import { rng } from './support.js';

const WORKER = 'KILN_IFMA_TWIN_WORKER';

async function worker(noIfma: boolean): Promise<void> {
  const be = new NativeBackend({ noIfma });
  const ad = be.addon;
  const next = rng(4242);
  const out: Record<string, string> = { ifma: String(ad.capabilities().ifma) };
  const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

  // Bases t_i·G plus edge bases; scalars random with edges mixed in.
  const N1 = 1 << 14;
  const g1 = await be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(Array.from({ length: N1 }, () => next())));
  const N2 = 1 << 11;
  const g2 = await be.fixedBaseMulG2(g2Vector([G2.BASE]), frVector(Array.from({ length: N2 }, () => next())));
  const edgeBases = (buf: Uint8Array, size: number): Uint8Array => {
    const b = buf.slice();
    const n = b.length / size;
    for (let i = 9; i < n; i += 37) b.copyWithin(i * size, 10 * size, 11 * size); // repeated base
    for (let i = 40; i < n; i += 97) b.fill(0, i * size, (i + 1) * size); // identity
    return b;
  };
  const scalars = (n: number, mode: 'random' | 'edges' | 'same'): Uint8Array => {
    const k = next();
    const pool = [0n, 1n, r - 1n, 2n, k];
    return frVector(
      Array.from({ length: n }, (_, i) => (mode === 'same' ? k : mode === 'edges' && i % 3 === 0 ? pool[(i / 3) % pool.length] : next())),
    );
  };

  const G1E = edgeBases(g1, G1_BYTES);
  const G2E = edgeBases(g2, G2_BYTES);
  for (const n of [1, 2, 7, 8, 9, 17, 100, 1000, N1]) {
    for (const mode of ['random', 'edges', 'same'] as const) {
      const s = scalars(n, mode);
      out[`g1 msm ${n} ${mode}`] = hex((await ad.msmG1(G1E.subarray(0, n * G1_BYTES), s)).point);
      if (n <= N2) out[`g2 msm ${n} ${mode}`] = hex((await ad.msmG2(G2E.subarray(0, n * G2_BYTES), s)).point);
    }
  }
  // P and −P of every base, equal scalars: the result is the identity, through cancelling buckets.
  const negs = be.addon.g1Op('neg', G1E.subarray(0, 300 * G1_BYTES));
  const pm = new Uint8Array(600 * G1_BYTES);
  pm.set(G1E.subarray(0, 300 * G1_BYTES));
  pm.set(negs, 300 * G1_BYTES);
  out['g1 P and −P'] = hex((await ad.msmG1(pm, scalars(600, 'same'))).point);
  // Batch addition (G1), with and without repeated and identity bases.
  for (const n of [1, 8, 9, 1025, N1]) {
    const idx = Uint32Array.from({ length: n }, (_, i) => (i * 7919) % N1);
    out[`g1 batchAdd ${n}`] = hex(await ad.batchAddG1(G1E, idx));
  }
  // Precomputed tables: the table-path and plain-fallback thresholds, with a scalar index.
  for (const [group, bases, size, n] of [
    ['G1', G1E, G1_BYTES, 4096],
    ['G2', G2E, G2_BYTES, 1024],
  ] as const) {
    const b = bases.subarray(0, n * size);
    const c = ad.msmPrecomputeWindow(n);
    const t = new Uint8Array(n * Math.ceil(256 / c) * size);
    if (group === 'G1') await ad.msmPrecomputeG1(b, c, t);
    else await ad.msmPrecomputeG2(b, c, t);
    for (const mode of ['random', 'edges', 'same'] as const) {
      for (const m of [n, 40]) {
        const s = scalars(m, mode);
        const idx = m === n ? undefined : Uint32Array.from({ length: n }, (_, i) => (i * 31) % m);
        const res = group === 'G1' ? await ad.msmPrecomputedG1(t, c, s, idx) : await ad.msmPrecomputedG2(t, c, s, idx);
        out[`${group} precomputed ${n} ${mode} ${m}`] = hex(res.point);
      }
    }
  }
  process.stdout.write(JSON.stringify(out));
}

/** A child process running worker(): `path` 'scalar' keeps its addon off IFMA (the choice is fixed once per process). */
function runWorker(path: 'ifma' | 'scalar'): Record<string, string> {
  const file = fileURLToPath(import.meta.url);
  const res = spawnSync(process.execPath, [file], { env: { ...process.env, [WORKER]: path }, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(res.status, 0, `worker failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as Record<string, string>;
}

if (process.env[WORKER] !== undefined) {
  await worker(process.env[WORKER] === 'scalar');
} else {
  const ifma = new NativeBackend().addon.capabilities().ifma;
  test('IFMA MSMs equal the scalar path byte for byte (G1, G2, batch addition, precomputed tables)', { skip: ifma ? false : 'this CPU (or build) has no AVX-512 IFMA: only the scalar path exists' }, () => {
    const fast = runWorker('ifma');
    const slow = runWorker('scalar');
    assert.equal(fast.ifma, 'true');
    assert.equal(slow.ifma, 'false');
    const keys = Object.keys(slow).filter((k) => k !== 'ifma');
    assert.ok(keys.length > 60, `${keys.length} cases`);
    for (const k of keys) assert.equal(fast[k], slow[k], k);
    // Not all trivially equal: the cases produce different points.
    assert.ok(new Set(keys.map((k) => slow[k])).size > keys.length / 2);
  });
}
