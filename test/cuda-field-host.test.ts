/**
 * The GPU's field arithmetic without a GPU: native/cuda/field.cuh (32-bit limbs, PTX carry chains) compiled by
 * g++ with the PTX primitives emulated (native/cuda/ptx_host.hpp) and compared with the CPU addon's fields and
 * curve formulas (native/src/ff, native/src/ec) on random and edge values: Fq, Fr and Fq2 add, sub, neg, mul,
 * sqr, dbl, inverse; G1 and G2 mixed and general additions, doublings, P + P, P + (−P), normalisation
 * (native/cuda/tools/field-host-check.cpp). test:gpu runs the same code on the device; this is its slow twin in CI.
 * The MSM's batch-affine levels (native/cuda/msm_affine.cuh) run the same way, one thread at a time, against the
 * CPU's bucket sums (native/cuda/tools/msm-affine-host-check.cpp); mutants of both must fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, cpSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { G1, G2, writeG1, writeG2 } from '../src/field/layout.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const source = join(root, 'native/cuda/tools/field-host-check.cpp');
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

test('device field arithmetic (field.cuh, PTX emulated on the host) equals the CPU fields and curve formulas', { skip: hasGxx ? false : 'g++ not installed' }, () => {
  assert.ok(existsSync(source), source);
  const dir = mkdtempSync(join(tmpdir(), 'kiln-field-host-'));
  try {
    const bin = join(dir, 'field-host-check');
    build(source, bin);
    const [g1, g2] = gens();
    const r = spawnSync(bin, ['3000', g1, g2], { encoding: 'utf8' });
    assert.equal(r.status, 0, `field-host-check: ${r.stdout}${r.stderr}`);
    const m = /^ok (\d+)$/m.exec(r.stdout);
    assert.ok(m, r.stdout);
    assert.ok(Number(m[1]) > 50_000, `checks made: ${m[1]}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('field-host-check catches a wrong carry: the emulated addc without its carry-in fails', { skip: hasGxx ? false : 'g++ not installed' }, () => {
  // a copy of the native tree with one primitive broken: the harness must report a mismatch
  const dir = mkdtempSync(join(tmpdir(), 'kiln-field-host-mut-'));
  try {
    cpSync(join(root, 'native/cuda'), join(dir, 'native/cuda'), { recursive: true });
    cpSync(join(root, 'native/src'), join(dir, 'native/src'), { recursive: true });
    const shim = join(dir, 'native/cuda/ptx_host.hpp');
    const text = readFileSync(shim, 'utf8');
    const broken = text.replace('inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + ptx_host::cf; }', 'inline uint32_t addc(uint32_t a, uint32_t b) { return a + b; }');
    assert.notEqual(broken, text, 'the primitive to break is where the test expects it');
    writeFileSync(shim, broken);
    const bin = join(dir, 'check');
    build(join(dir, 'native/cuda/tools/field-host-check.cpp'), bin);
    const [g1, g2] = gens();
    const r = spawnSync(bin, ['300', g1, g2], { encoding: 'utf8' });
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stdout, /^FAIL /m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const affineSource = join(root, 'native/cuda/tools/msm-affine-host-check.cpp');

test('the MSM batch-affine levels (msm_affine.cuh, run on the host) sum every bucket as the CPU does', { skip: hasGxx ? false : 'g++ not installed' }, () => {
  assert.ok(existsSync(affineSource), affineSource);
  const dir = mkdtempSync(join(tmpdir(), 'kiln-msm-affine-host-'));
  try {
    const bin = join(dir, 'msm-affine-host-check');
    build(affineSource, bin);
    const r = spawnSync(bin, gens(), { encoding: 'utf8' });
    assert.equal(r.status, 0, `msm-affine-host-check: ${r.stdout}${r.stderr}`);
    const m = /^ok (\d+)$/m.exec(r.stdout);
    assert.ok(m, r.stdout);
    assert.ok(Number(m[1]) > 2000, `buckets checked: ${m[1]}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('msm-affine-host-check catches a wrong doubling and a wrong batch inverse', { skip: hasGxx ? false : 'g++ not installed' }, () => {
  const mutants: [string, string][] = [
    ['    num = xx.dbl() + xx;', '    num = xx.dbl();'], // λ of a doubling: 2x² instead of 3x²
    ['      const F il = j >= t + T ? inv * out[j - T].x : inv;', '      const F il = inv;'], // the prefix before the pair dropped
  ];
  for (const [from, to] of mutants) {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-msm-affine-mut-'));
    try {
      cpSync(join(root, 'native/cuda'), join(dir, 'native/cuda'), { recursive: true });
      cpSync(join(root, 'native/src'), join(dir, 'native/src'), { recursive: true });
      const file = join(dir, 'native/cuda/msm_affine.cuh');
      const text = readFileSync(file, 'utf8');
      const broken = text.replace(from, to);
      assert.notEqual(broken, text, `the line to break is where the test expects it: ${from.trim()}`);
      writeFileSync(file, broken);
      const bin = join(dir, 'check');
      build(join(dir, 'native/cuda/tools/msm-affine-host-check.cpp'), bin);
      const r = spawnSync(bin, gens(), { encoding: 'utf8' });
      assert.equal(r.status, 1, r.stdout);
      assert.match(r.stdout, /^FAIL /m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
