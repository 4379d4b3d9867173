/** The AVX-512 IFMA NTT and quotient (native/src/ntt/ntt_ifma.hpp) against their slow twin, the
 *  scalar path of the same addon (native/src/ntt/ntt.hpp): this process runs the IFMA path, a child
 *  process whose addon is told noIfma (applyNativeTuning, what KILN_NO_IFMA=1 asks at the edges) runs the
 *  scalar one on the same inputs (written to a temp file); every output must be byte-identical. Forward/inverse × plain/coset NTT for n = 2^1 … 2^18
 *  and the quotient for n = 2^1 … 2^16 (a, b and c after the call), on random canonical vectors
 *  (with 0 and r − 1 mixed in) and the edge vectors all zero, all r − 1 and all one. Outputs are
 *  compared by SHA-256 digest. (native-ntt.test.ts checks whichever path the CPU runs against bigint
 *  references.) */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyNativeTuning, loadNative } from '../src/backend/native.js';
import { frVector } from '../src/field/layout.js';
import { r } from './native-helpers.js';
import { rng } from './support.js';

const WORKER = 'KILN_NTT_IFMA_WORKER';
const INPUT = 'KILN_NTT_IFMA_INPUT';
const NTT_LOGS = Array.from({ length: 18 }, (_, i) => i + 1);
const QUOTIENT_LOGS = Array.from({ length: 16 }, (_, i) => i + 1);
const R3 = r >> 192n; // top limb of r: a top limb below it keeps the value below r

/** Random canonical Fr vectors (raw little-endian limbs < r), some entries 0 and r − 1. */
function randomVector(n: number, seed: number): Uint8Array {
  const buf = new Uint8Array(n * 32);
  const dv = new DataView(buf.buffer);
  const next = rng(seed);
  const step = (): bigint => (BigInt(next.u32()) << 32n) | BigInt(next.u32());
  const rm1 = frVector([r - 1n]);
  for (let i = 0; i < n; i++) {
    if (n >= 8 && i % 61 === 5) continue; // 0
    if (n >= 8 && i % 67 === 6) {
      buf.set(rm1, i * 32);
      continue;
    }
    for (let k = 0; k < 3; k++) dv.setBigUint64(i * 32 + 8 * k, step(), true);
    let top = step() & 0x7fffffffffffffffn;
    if (top >= R3) top -= R3;
    dv.setBigUint64(i * 32 + 24, top, true);
  }
  return buf;
}

/** n copies of one element (Montgomery form of x). */
function constVector(n: number, x: bigint): Uint8Array {
  const one = frVector([x]);
  const buf = new Uint8Array(n * 32);
  for (let i = 0; i < n; i++) buf.set(one, i * 32);
  return buf;
}

/** The random inputs of every case, concatenated: NTT vectors, then a, b, c of each quotient. */
function makeInputs(): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const lg of NTT_LOGS) parts.push(randomVector(1 << lg, lg));
  for (const lg of QUOTIENT_LOGS) for (const k of [0, 1, 2]) parts.push(randomVector(1 << lg, 100 * lg + k));
  const total = parts.reduce((s, p) => s + p.length, 0);
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const digest = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Runs every case on this process's path; returns case name → digest of the outputs. */
async function runCases(inputs: Uint8Array): Promise<Record<string, string>> {
  const ad = loadNative();
  const out: Record<string, string> = {};
  let o = 0;
  const take = (n: number): Uint8Array => {
    const v = inputs.subarray(o, o + n * 32);
    o += n * 32;
    return v;
  };
  const kinds = (n: number, random: Uint8Array): [string, Uint8Array][] => [
    ['random', random],
    ['zero', new Uint8Array(n * 32)],
    ['r-1', constVector(n, r - 1n)],
    ['one', constVector(n, 1n)],
  ];
  for (const lg of NTT_LOGS) {
    const n = 1 << lg;
    for (const [kind, v] of kinds(n, take(n))) {
      for (const inverse of [false, true]) {
        for (const coset of [false, true]) {
          const buf = v.slice();
          await ad.ntt(buf, inverse, coset);
          out[`ntt 2^${lg} ${kind} inverse=${inverse} coset=${coset}`] = digest(buf);
        }
      }
    }
  }
  for (const lg of QUOTIENT_LOGS) {
    const n = 1 << lg;
    const abc = [take(n), take(n), take(n)];
    const cases: [string, Uint8Array[]][] = [
      ['random', abc],
      ['zero', [0, 1, 2].map(() => new Uint8Array(n * 32))],
      ['r-1', [0, 1, 2].map(() => constVector(n, r - 1n))],
      ['one', [0, 1, 2].map(() => constVector(n, 1n))],
      ['mixed', [abc[0], constVector(n, r - 1n), abc[2]]],
    ];
    for (const [kind, vs] of cases) {
      const [a, b, c] = vs.map((v) => v.slice());
      await ad.quotient(a, b, c);
      out[`quotient 2^${lg} ${kind}`] = `${digest(a)} ${digest(b)} ${digest(c)}`;
    }
  }
  assert.equal(o, inputs.length, 'all inputs consumed');
  return out;
}

if (process.env[WORKER] === '1') {
  applyNativeTuning({ noIfma: true }); // the scalar twin, chosen before the first kernel
  const inputs = new Uint8Array(readFileSync(process.env[INPUT] as string));
  const res = await runCases(inputs);
  process.stdout.write(JSON.stringify({ ifma: loadNative().capabilities().ifma, res }));
} else {
  const ifma = loadNative().capabilities().ifma;

  test(
    'IFMA NTT and quotient equal the scalar path byte for byte (2^1 … 2^18, random and edge vectors)',
    { skip: ifma ? false : 'this CPU (or build) has no AVX-512 IFMA: only the scalar path exists (native-ntt.test.ts covers it)' },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kiln-ntt-ifma-'));
      try {
        const inputs = makeInputs();
        const file = join(dir, 'inputs.bin');
        writeFileSync(file, inputs);
        // The scalar twin in a child (the IFMA choice is fixed once per process).
        const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
          env: { ...process.env, [WORKER]: '1', [INPUT]: file },
          encoding: 'utf8',
          maxBuffer: 1 << 26,
        });
        assert.equal(child.status, 0, `scalar worker failed: ${child.stderr}`);
        const slow = JSON.parse(child.stdout) as { ifma: boolean; res: Record<string, string> };
        assert.equal(slow.ifma, false, 'the child runs the scalar path');
        const fast = await runCases(inputs); // this process: the IFMA path
        const keys = Object.keys(slow.res);
        assert.equal(keys.length, NTT_LOGS.length * 16 + QUOTIENT_LOGS.length * 5);
        assert.deepEqual(Object.keys(fast).sort(), keys.slice().sort());
        for (const k of keys) assert.equal(fast[k], slow.res[k], k);
        // Not trivially equal: the cases produce different outputs.
        assert.ok(new Set(keys.map((k) => slow.res[k])).size > keys.length / 2);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  test('ntt round trips on this process path (the IFMA path when the CPU has it)', async () => {
    const ad = loadNative();
    for (const lg of [1, 5, 6, 7, 12, 13, 17]) {
      const a = randomVector(1 << lg, 7 * lg);
      for (const coset of [false, true]) {
        const buf = a.slice();
        await ad.ntt(buf, false, coset);
        if (lg > 1) assert.notDeepEqual(buf, a);
        await ad.ntt(buf, true, coset);
        assert.deepEqual(buf, a, `2^${lg} coset=${coset}`);
      }
    }
  });
}
