/**
 * The GPU's field arithmetic without a GPU: native/cuda/field.cuh (32-bit limbs, PTX carry chains) compiled by
 * g++ with the PTX primitives emulated (native/cuda/ptx_host.hpp) and compared with the CPU addon's fields and
 * curve formulas (native/src/ff, native/src/ec) on random and edge values: Fq, Fr and Fq2 add, sub, neg, mul,
 * sqr, dbl, inverse (the binary GCD, which must never need its Fermat fallback, and Fermat); G1 and G2 mixed and general additions, doublings, P + P, P + (−P), normalisation
 * (native/cuda/tools/field-host-check.cpp). test:gpu runs the same code on the device; this is its slow twin in CI.
 * The MSM's batch-affine levels (native/cuda/msm_affine.cuh) run the same way, one thread at a time, against the
 * CPU's bucket sums (native/cuda/tools/msm-affine-host-check.cpp); mutants of both must fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync, cpSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { G1, G2, writeG1, writeG2 } from '../src/field/layout.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const hasGxx = spawnSync('g++', ['--version']).status === 0;

function gens(): [string, string] {
  const a = new Uint8Array(96);
  writeG1(a, 0, G1.BASE);
  const b = new Uint8Array(192);
  writeG2(b, 0, G2.BASE);
  return [Buffer.from(a).toString('hex'), Buffer.from(b).toString('hex')];
}

function build(src: string, out: string): void {
  const r = spawnSync('g++', ['-std=c++17', '-O1', '-Wall', '-Wno-unknown-pragmas', '-Wno-unused-variable', '-o', out, src], { encoding: 'utf8' });
  assert.equal(r.status, 0, `g++ failed:\n${r.stderr}`);
}

/** Builds native/cuda/tools/<tool>.cpp from `tree` (the repository or a mutated copy) and runs it with `args`. */
function runCheck(tree: string, tool: string, args: string[]): SpawnSyncReturns<string> {
  const dir = mkdtempSync(join(tmpdir(), `kiln-${tool}-`));
  try {
    const bin = join(dir, tool);
    build(join(tree, 'native/cuda/tools', `${tool}.cpp`), bin);
    return spawnSync(bin, args, { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `tool` passes on the tree and reports at least `least` checks. */
function passes(tool: string, args: string[], least: number): void {
  assert.ok(existsSync(join(root, 'native/cuda/tools', `${tool}.cpp`)), tool);
  const r = runCheck(root, tool, args);
  assert.equal(r.status, 0, `${tool}: ${r.stdout}${r.stderr}`);
  const m = /^ok (\d+)$/m.exec(r.stdout);
  assert.ok(m, r.stdout);
  assert.ok(Number(m[1]) > least, `checks made: ${m[1]}`);
}

/** A copy of the native tree with `from` replaced by `to` in `file`: `tool` must report a mismatch. */
function mutantFails(file: string, from: string, to: string, tool: string, args: string[]): void {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-host-mut-'));
  try {
    cpSync(join(root, 'native/cuda'), join(dir, 'native/cuda'), { recursive: true });
    cpSync(join(root, 'native/src'), join(dir, 'native/src'), { recursive: true });
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    const broken = text.replace(from, to);
    assert.notEqual(broken, text, `the line to break is where the test expects it: ${from.trim()}`);
    writeFileSync(path, broken);
    const r = runCheck(dir, tool, args);
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stdout, /^FAIL /m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const skip = hasGxx ? false : 'g++ not installed';

test('device field arithmetic (field.cuh, PTX emulated on the host) equals the CPU fields and curve formulas', { skip }, () => {
  passes('field-host-check', ['3000', ...gens()], 50_000);
});

test('field-host-check catches a wrong carry: the emulated addc without its carry-in fails', { skip }, () => {
  // a copy of the native tree with one primitive broken: the harness must report a mismatch
  mutantFails(
    'native/cuda/ptx_host.hpp',
    'inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + ptx_host::cf; }',
    'inline uint32_t addc(uint32_t a, uint32_t b) { return a + b; }',
    'field-host-check',
    ['300', ...gens()],
  );
});

test('field-host-check catches a binary GCD inversion cut short or dividing inexactly', { skip }, () => {
  const mutants: [string, string][] = [
    ['  static constexpr int GCD_STEPS = 25;    // 381 bits', '  static constexpr int GCD_STEPS = 12;    // 381 bits'], // too few steps for Fq
    ['    const long long k = (long long)((t[0] * P::INV) & 0x7fffffffu);', '    const long long k = (long long)((t[0] * P::INV) & 0x3fffffffu);'], // u, v not divisible by 2^31
  ];
  for (const [from, to] of mutants) mutantFails('native/cuda/field.cuh', from, to, 'field-host-check', ['300', ...gens()]);
});

test('the MSM batch-affine levels (msm_affine.cuh, run on the host) sum every bucket as the CPU does', { skip }, () => {
  passes('msm-affine-host-check', gens(), 2000);
});

test('msm-affine-host-check catches a wrong doubling and a wrong batch inverse', { skip }, () => {
  const mutants: [string, string][] = [
    ['    num = xx.dbl() + xx;', '    num = xx.dbl();'], // λ of a doubling: 2x² instead of 3x²
    ['      const F il = j >= t + T ? inv * out[j - T].x : inv;', '      const F il = inv;'], // the prefix before the pair dropped
  ];
  for (const [from, to] of mutants) mutantFails('native/cuda/msm_affine.cuh', from, to, 'msm-affine-host-check', gens());
});
