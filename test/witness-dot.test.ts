/** The witness interpreter's linear combinations (native/src/ff/dot.hpp: one reduction per run of up to 64
 *  products; kernels_fr_ifma.cpp: eight products at a time on AVX-512 IFMA) against the TypeScript interpreter,
 *  their slow twin, byte for byte: a program of LCs of every length around the runs (1 … 1000 terms) over edge
 *  values (0, 1, r − 1, r − 2, 2^64, 2^128 − 1, ONE) and random ones, with edge coefficients (0, 1, r − 1, 2) and
 *  random ones, the largest sums there are (r − 1 times r − 1, a thousand times) and repeated variables. One child
 *  process runs the addon on IFMA (where the CPU has it), one with it told noIfma: both must equal the TypeScript
 *  interpreter. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NativeBackend } from '../src/backend/native.js';
import { FR_MODULUS } from '../src/field/layout.js';
import { type WitnessProgram, WOP, WOP_INP, encodeTape } from '../src/r1cs/program.js';
import { interpretProgram } from '../src/r1cs/program-interpreter.js';
import { rng } from './support.js';

const WORKER = 'KILN_DOT_TWIN_WORKER';
const R = FR_MODULUS;

/** The program and its tape (deterministic). */
function dotProgram(): { program: WitnessProgram; tape: bigint[]; lengths: number[] } {
  const next = rng(77);
  const tape = [0n, 1n, 2n, R - 1n, R - 2n, 1n << 64n, (1n << 128n) - 1n, ...Array.from({ length: 57 }, () => next())];
  const coeffValues = [0n, 1n, R - 1n, 2n, ...Array.from({ length: 60 }, () => next())];
  const words: number[] = [];
  for (let s = 0; s < tape.length; s++) words.push(WOP.INPUT, s); // aux s = tape[s]
  let numAux = tape.length;
  const lengths = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 57, 63, 64, 65, 66, 127, 128, 129, 200, 1000];
  for (const n of lengths) {
    for (const mode of ['random', 'max', 'repeat'] as const) {
      words.push(WOP.LC | (n << 9));
      for (let i = 0; i < n; i++) {
        if (mode === 'max') {
          words.push(3, 2); // (r − 1)·(r − 1): every product and run at its largest
        } else if (mode === 'repeat') {
          words.push(i % 3 === 0 ? WOP_INP : next.int(numAux), next.int(4)); // ONE and edge coefficients
        } else {
          words.push(next.int(numAux), next.int(coeffValues.length)); // earlier LC results too
        }
      }
      numAux += 1;
    }
  }
  const program: WitnessProgram = {
    numInputs: 1,
    numAux,
    numSlots: tape.length,
    coeffs: encodeTape(coeffValues),
    blocks: [Uint32Array.from(words)],
    segments: [{ block: 0, auxBase: 0, inputBase: 1, slotBase: 0 }],
  };
  return { program, tape, lengths };
}

const digest = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

async function worker(noIfma: boolean): Promise<void> {
  const be = new NativeBackend({ noIfma });
  const { program, tape } = dotProgram();
  const out = new Uint8Array((program.numInputs + program.numAux) * 32);
  await be.runWitnessProgram(program, encodeTape(tape), out);
  process.stdout.write(JSON.stringify({ ifma: be.addon.capabilities().ifma, digest: digest(out), hex: Buffer.from(out).toString('hex') }));
}

function runWorker(path: 'ifma' | 'scalar'): { ifma: boolean; digest: string; hex: string } {
  const file = fileURLToPath(import.meta.url);
  const res = spawnSync(process.execPath, [file], { env: { ...process.env, [WORKER]: path }, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(res.status, 0, `worker failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as { ifma: boolean; digest: string; hex: string };
}

if (process.env[WORKER] !== undefined) {
  await worker(process.env[WORKER] === 'scalar');
} else {
  test('linear combinations of 1 … 1000 terms: the native sums (IFMA and scalar) equal the TypeScript interpreter byte for byte', () => {
    const { program, tape, lengths } = dotProgram();
    const want = interpretProgram(program, tape);
    // the TypeScript twin's sums are not all trivial: the max LCs are 1000·(r − 1)² mod r, distinct per length
    const ifmaCpu = new NativeBackend().addon.capabilities().ifma;
    const fast = runWorker('ifma');
    const slow = runWorker('scalar');
    assert.equal(slow.ifma, false);
    assert.equal(fast.ifma, ifmaCpu);
    const first = (hex: string): number => {
      const got = Buffer.from(hex, 'hex');
      for (let i = 0; i < want.length; i += 32) if (!got.subarray(i, i + 32).equals(want.subarray(i, i + 32))) return i / 32;
      return -1;
    };
    assert.equal(first(slow.hex), -1, 'scalar path: first differing variable');
    assert.equal(first(fast.hex), -1, 'IFMA path: first differing variable');
    assert.equal(fast.digest, digest(want));
    // a max LC of n terms is n·(r − 1)² = n (mod r): its bytes are Montgomery n, so the sums were not all zero
    const maxIndex = (k: number): number => 1 + tape.length + 3 * k + 1;
    for (const [k, n] of lengths.entries()) assert.deepEqual(want.subarray(32 * maxIndex(k), 32 * maxIndex(k) + 32), encodeTape([BigInt(n)]), `max LC of ${n}`);
  });
}
