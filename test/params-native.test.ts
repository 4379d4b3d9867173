/**
 * The native .params loader (src/groth16/params-native.ts over native/src/params/) against its slow
 * twins, the TypeScript reader (keys.ts readParamsFile) and layout check (readParamsLayout): the same
 * sections byte for byte (random points, identities, sections over many chunks, the device-staging
 * path through a stand-in device), the same refusal with the same message for bad points, cut files
 * and inconsistent counts, proofs from natively loaded chunked parameters equal to proofs from the
 * TS-read ones, and the one loader (loadParams) behind official and development files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NativeBackend } from '../src/backend/native.js';
import { ReferenceBackend } from '../src/backend/reference.js';
import {
  hostChunks,
  isPointSection,
  msmSection,
  sectionCount,
  sectionHostBytes,
  sectionPoint,
  sectionToBytes,
  type DeviceTarget,
  type PointSection,
} from '../src/backend/section.js';
import type { PointGroup } from '../src/curve/codec.js';
import { FQ_MODULUS, FR_BYTES, G1, G2, frVector, g1Vector, g2Vector } from '../src/field/layout.js';
import {
  ParamsFormatError,
  encodeParams,
  paramsCounts,
  readParamsFile,
  readParamsLayout,
  verifyingKeyByteLength,
  writeParamsFile,
  type AnyParameters,
  type Parameters,
  type VerifyingKey,
} from '../src/groth16/keys.js';
import { inspectParamsFile, loadParams, loadParamsFile } from '../src/groth16/params-native.js';
import { encodeProof } from '../src/groth16/proof.js';
import { proveWithRandomness } from '../src/groth16/prover.js';
import { compiledOf } from '../src/groth16/compiled.js';
import { devParamsPath, insecureDevSetup, loadOrCreateDevParams } from '../src/groth16/setup.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { recordShape } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { rng } from './support.js';

const be = new NativeBackend();
const KEYS = [
  ['h', 'h', 'G1'],
  ['l', 'l', 'G1'],
  ['a', 'a', 'G1'],
  ['bG1', 'b_g1', 'G1'],
  ['bG2', 'b_g2', 'G2'],
] as const;

async function randomNative(group: PointGroup, n: number, seed: number): Promise<Uint8Array> {
  const next = rng(seed);
  const scalars = frVector(Array.from({ length: n }, () => next()));
  return group === 'G1' ? be.fixedBaseMulG1(g1Vector([G1.BASE]), scalars) : be.fixedBaseMulG2(g2Vector([G2.BASE]), scalars);
}

function vkOf(seed: number, ic = 3): VerifyingKey {
  const g1 = (i: number) => G1.BASE.multiply(BigInt(seed * 10 + i + 2));
  const g2 = (i: number) => G2.BASE.multiply(BigInt(seed * 10 + i + 2));
  return {
    alphaG1: g1(0),
    betaG1: g1(1),
    betaG2: g2(0),
    gammaG2: g2(1),
    deltaG1: g1(2),
    deltaG2: g2(2),
    ic: Array.from({ length: ic }, (_, i) => g1(3 + i)),
  };
}

/** Random parameters with identity points at the start of h, inside l and at the end of b_g2. */
async function randomParams(counts: { h: number; l: number; a: number; b: number }, seed: number): Promise<Parameters> {
  const p: Parameters = {
    vk: vkOf(seed),
    h: await randomNative('G1', counts.h, seed + 1),
    l: await randomNative('G1', counts.l, seed + 2),
    a: await randomNative('G1', counts.a, seed + 3),
    bG1: await randomNative('G1', counts.b, seed + 4),
    bG2: await randomNative('G2', counts.b, seed + 5),
  };
  if (counts.h > 0) p.h.fill(0, 0, 96);
  if (counts.l > 2) p.l.fill(0, 96, 192);
  if (counts.b > 0) p.bG2.fill(0, p.bG2.length - 192);
  return p;
}

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-params-native-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function assertSame(ts: Parameters, nat: AnyParameters): void {
  assert.equal(nat.vk.ic.length, ts.vk.ic.length);
  for (const k of ['alphaG1', 'betaG1', 'deltaG1'] as const) assert.ok(nat.vk[k].equals(ts.vk[k]), k);
  for (const k of ['betaG2', 'gammaG2', 'deltaG2'] as const) assert.ok(nat.vk[k].equals(ts.vk[k]), k);
  nat.vk.ic.forEach((p, i) => assert.ok(p.equals(ts.vk.ic[i]), `ic ${i}`));
  for (const [key, , group] of KEYS) {
    assert.equal(sectionCount(nat[key], group), ts[key].length / (group === 'G1' ? 96 : 192), key);
    assert.deepEqual(sectionToBytes(nat[key], group), new Uint8Array(ts[key]), key);
  }
}

function release(p: AnyParameters): void {
  for (const [key] of KEYS) {
    const s = p[key];
    if (isPointSection(s)) s.release();
  }
}

/** The error a promise rejects with (fails when it resolves). */
async function errorOf(p: Promise<unknown>): Promise<Error> {
  try {
    const v = await p;
    if (v && typeof v === 'object' && 'h' in v) release(v as AnyParameters);
  } catch (e) {
    return e as Error;
  }
  assert.fail('expected a rejection');
}

/** The curve / subgroup reason in parentheses is noble's wording on the TypeScript side. */
const core = (m: string): string => m.replace(/(not a valid G[12] point) \(.*\)$/, '$1');

/** The native loader and the TypeScript reader refuse `path` with a ParamsFormatError of the same
 *  section and message; for a layout problem the TypeScript layout check gives exactly the native one. */
async function bothRefuse(path: string, checkPoints = false): Promise<ParamsFormatError> {
  const ts = await errorOf(readParamsFile(path, { checkPoints, codec: null }));
  const nat = await errorOf(loadParamsFile(path, { backend: be, checkPoints, chunkBytes: 96 * 50 }));
  assert.ok(ts instanceof ParamsFormatError, `TS: ${ts.message}`);
  assert.ok(nat instanceof ParamsFormatError, `native: ${nat.message}`);
  assert.equal(nat.section, ts.section);
  assert.equal(core(nat.message), core(ts.message));
  if (!/point \d+:/.test(nat.message)) {
    const layoutTs = await errorOf(readParamsLayout(path));
    const layoutNat = await errorOf(inspectParamsFile(path, { backend: be }));
    assert.equal(layoutNat.message, nat.message);
    assert.equal(layoutTs.message, nat.message);
  }
  return nat;
}

test('native loader equals the TS reader byte for byte: random points, identities, many chunks; written back the same', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 1000, l: 301, a: 200, b: 97 }, 3);
    const path = join(dir, 'p.params');
    const bytes = encodeParams(params);
    await writeFile(path, bytes);
    const ts = await readParamsFile(path, { codec: null });
    // the layout twins agree
    assert.deepEqual(await inspectParamsFile(path, { backend: be }), await readParamsLayout(path));
    // one chunk per section, then chunks of 77 G1 / 38 G2 points (an uneven tail in every section),
    // then one point per chunk
    for (const chunkBytes of [undefined, 96 * 77, 192]) {
      const nat = await loadParamsFile(path, { backend: be, chunkBytes });
      assertSame(ts, nat);
      if (chunkBytes === 96 * 77) {
        assert.equal(nat.h.chunks.length, Math.ceil(1000 / 77));
        assert.equal(nat.bG2.chunks.length, Math.ceil(97 / 38));
      }
      if (chunkBytes === undefined) for (const [key] of KEYS) assert.equal(nat[key].chunks.length, 1);
      if (chunkBytes === 192) assert.equal(nat.h.chunks.length, 500);
      assert.equal(sectionHostBytes(nat.h), 1000 * 96);
      assert.deepEqual(paramsCounts(nat), paramsCounts(ts));
      // written back from the chunks (TypeScript and native codec): the same file
      assert.deepEqual(encodeParams(nat), bytes);
      await writeParamsFile(join(dir, 'back.params'), nat, { codec: be });
      assert.deepEqual(new Uint8Array(await readFile(join(dir, 'back.params'))), bytes);
      for (const i of [0, 1, 76, 77, 999]) assert.deepEqual(sectionPoint(nat.h, 'G1', i), params.h.subarray(i * 96, (i + 1) * 96), `h[${i}]`);
      release(nat);
      assert.equal(nat.h.chunks.length, 0, 'released');
      nat.h.release(); // idempotent
    }
    const checked = await loadParamsFile(path, { backend: be, checkPoints: true, chunkBytes: 96 * 300 });
    assertSame(ts, checked);
    release(checked);
  });
});

test('empty sections and a one-point circuit load like the TS reader', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 1, l: 0, a: 1, b: 0 }, 5);
    const path = join(dir, 'tiny.params');
    await writeFile(path, encodeParams(params));
    const nat = await loadParamsFile(path, { backend: be });
    assertSame(await readParamsFile(path), nat);
    assert.equal(nat.l.count, 0);
    assert.equal(nat.l.chunks.length, 0);
    assert.equal(nat.bG2.count, 0);
    assert.deepEqual(sectionToBytes(nat.bG2, 'G2'), new Uint8Array(0));
    release(nat);
  });
});

test('inspectParamsFile: counts and offsets without reading a point; expected counts checked first', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 31, l: 9, a: 7, b: 5 }, 7);
    const path = join(dir, 'p.params');
    await writeFile(path, encodeParams(params));
    const layout = await inspectParamsFile(path, { backend: be });
    const vkLen = verifyingKeyByteLength(3);
    assert.equal(layout.icCount, 3);
    assert.equal(layout.vkBytes.length, vkLen);
    assert.deepEqual(layout.sections.h, { group: 'G1', count: 31, offset: vkLen + 4 });
    assert.deepEqual(layout.sections.l, { group: 'G1', count: 9, offset: vkLen + 4 + 31 * 96 + 4 });
    assert.equal(layout.sections.b_g2.count, 5);
    assert.equal(layout.sections.b_g2.offset + 5 * 192, layout.size);
    release(await loadParamsFile(path, { backend: be, expected: { ic: 3, h: 31, l: 9, a: 7, b_g1: 5, b_g2: 5 } }));
    const e = await errorOf(loadParamsFile(path, { backend: be, expected: { h: 32 } }));
    assert.ok(e instanceof ParamsFormatError);
    assert.equal(e.section, 'h');
    assert.equal(e.message, `${path}: section h: count 31 but the circuit needs 32 points`);
    const ic = await errorOf(inspectParamsFile(path, { backend: be, expected: { ic: 4 } }));
    assert.equal(ic.message, `${path}: section vk.ic: count 3 but the circuit has 4 public inputs (ONE included)`);
    // loadParams without the addon's path (the reference backend): the same refusal, before reading a point
    const ref = await errorOf(loadParams(path, new ReferenceBackend(), { expected: { b_g2: 6 } }));
    assert.equal(ref.message, `${path}: section b_g2: count 5 but the circuit needs 6 points`);
  });
});

test('bad points: both readers refuse with the same section, index and reason', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 120, l: 60, a: 40, b: 30 }, 9);
    const good = encodeParams(params);
    const vkLen = verifyingKeyByteLength(3);
    const hAt = vkLen + 4;
    const lAt = hAt + 120 * 96 + 4;
    const bG2At = lAt + 60 * 96 + 4 + 40 * 96 + 4 + 30 * 96 + 4;
    const pBytes = (() => {
      const b = new Uint8Array(48);
      let x = FQ_MODULUS;
      for (let k = 47; k >= 0; k--, x >>= 8n) b[k] = Number(x & 0xffn);
      return b;
    })();
    const cases: { name: string; at: number; edit: (f: Uint8Array, o: number) => void; checkPoints?: boolean; want: RegExp }[] = [
      { name: 'compressed flag', at: hAt + 57 * 96, edit: (f, o) => (f[o] |= 0x80), want: /section h: point 57: compression flag/ },
      { name: 'sort flag', at: lAt + 3 * 96, edit: (f, o) => (f[o] |= 0x20), want: /section l: point 3: sort flag/ },
      { name: 'infinity with data', at: hAt, edit: (f, o) => (f[o + 95] = 1), want: /section h: point 0: infinity flag set but/ },
      { name: 'x ≥ p', at: lAt + 59 * 96, edit: (f, o) => f.set(pBytes, o), want: /section l: point 59: x is not a canonical/ },
      { name: 'G2 y.c0 ≥ p', at: bG2At + 7 * 192, edit: (f, o) => f.set(pBytes, o + 144), want: /section b_g2: point 7: y\.c0 is not a canonical/ },
      { name: '(0, 0)', at: hAt + 119 * 96, edit: (f, o) => f.fill(0, o, o + 96), want: /section h: point 119: \(0, 0\) without/ },
      { name: 'off the curve', at: lAt + 33 * 96, edit: (f, o) => (f[o + 95] ^= 1), checkPoints: true, want: /section l: point 33: not a valid G1 point/ },
      { name: 'G2 off the curve', at: bG2At + 28 * 192, edit: (f, o) => (f[o + 191] ^= 1), checkPoints: true, want: /section b_g2: point 28: not a valid G2 point/ },
    ];
    for (const c of cases) {
      const f = good.slice();
      c.edit(f, c.at);
      const path = join(dir, 'bad.params');
      await writeFile(path, f);
      const e = await bothRefuse(path, c.checkPoints);
      assert.match(e.message, c.want, c.name);
      assert.ok(e.message.startsWith(`${path}: section `), c.name);
    }
    // two bad points in different pieces of the pool: the lower one is reported
    const two = good.slice();
    two[hAt + 100 * 96] |= 0x80;
    two[hAt + 9 * 96] |= 0x20;
    await writeFile(join(dir, 'two.params'), two);
    assert.match((await bothRefuse(join(dir, 'two.params'))).message, /section h: point 9: sort flag/);
  });
});

test('cut files: both readers refuse at the same section with the same numbers', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 20, l: 10, a: 8, b: 6 }, 11);
    const good = encodeParams(params);
    const vkLen = verifyingKeyByteLength(3);
    const bounds = [vkLen + 4, vkLen + 4 + 20 * 96];
    for (const n of [10, 8, 6]) bounds.push(bounds[bounds.length - 1] + 4 + n * 96);
    const cuts = new Set<number>([0, 1, 95, 96, 300, 863, 864, 865, 867, 868, vkLen - 1, vkLen, good.length - 1, good.length - 192]);
    for (const b of bounds) for (const d of [-5, -1, 0, 1, 3, 4, 5, 100]) if (b + d > 0 && b + d < good.length) cuts.add(b + d);
    const path = join(dir, 'cut.params');
    const seen = new Set<string>();
    for (const cut of [...cuts].sort((x, y) => x - y)) {
      await writeFile(path, good.subarray(0, cut));
      const e = await bothRefuse(path);
      assert.match(e.message, /truncated|remain/, `cut at ${cut}: ${e.message}`);
      seen.add(e.section);
    }
    for (const s of ['vk.alpha_g1', 'vk.delta_g2', 'vk.ic', 'h', 'l', 'a', 'b_g1', 'b_g2']) assert.ok(seen.has(s), `a cut in ${s}`);
  });
});

test('inconsistent counts are refused with the section and the numbers', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 20, l: 10, a: 8, b: 6 }, 13);
    const good = encodeParams(params);
    const vkLen = verifyingKeyByteLength(3);
    const hCount = vkLen;
    const lCount = vkLen + 4 + 20 * 96;
    const bG2Count = lCount + 4 + 10 * 96 + 4 + 8 * 96 + 4 + 6 * 96;
    const withCount = (at: number, v: number): Uint8Array => {
      const f = good.slice();
      new DataView(f.buffer).setUint32(at, v);
      return f;
    };
    const path = join(dir, 'bad.params');
    const same: [string, Uint8Array, string][] = [
      ['h count 2^32 − 1', withCount(hCount, 0xffffffff), `section h: count 4294967295 needs 412316860320 bytes (4294967295 × 96) but only ${good.length - hCount - 4} remain: truncated or inconsistent`],
      ['l count beyond the file', withCount(lCount, 1000), `section l: count 1000 needs 96000 bytes (1000 × 96) but only ${good.length - lCount - 4} remain: truncated or inconsistent`],
      ['b_g2 ≠ b_g1', withCount(bG2Count, 5), 'section b_g2: count 5 differs from the b_g1 count 6 (the same selection of variables)'],
      ['ic count 0', withCount(864, 0), 'section vk.ic: count 0: there must be an IC point for ONE at least'],
      ['trailing bytes', new Uint8Array([...good, 1, 2, 3]), 'section end: 3 trailing bytes after the b_g2 section: inconsistent counts'],
    ];
    for (const [name, bytes, want] of same) {
      await writeFile(path, bytes);
      const e = await bothRefuse(path);
      assert.equal(e.message, `${path}: ${want}`, name);
    }
    // h count one off: the native layout check refuses before decoding anything, further on (the
    // TypeScript reader, decoding as it goes, fails on whatever follows: any refusal will do there)
    for (const v of [21, 19]) {
      await writeFile(path, withCount(hCount, v));
      const nat = await errorOf(loadParamsFile(path, { backend: be }));
      assert.ok(nat instanceof ParamsFormatError, nat.message);
      assert.match(nat.message, /section (l|a|b_g1|b_g2|end): /);
      assert.match(nat.message, /\d+ (trailing bytes|remain)|differs/);
      assert.equal((await errorOf(readParamsLayout(path))).message, nat.message);
      assert.ok((await errorOf(readParamsFile(path))) instanceof ParamsFormatError);
    }
    const missing = await errorOf(loadParamsFile(join(dir, 'nope.params'), { backend: be }));
    assert.ok(missing instanceof ParamsFormatError);
    assert.equal(missing.section, 'file');
    assert.match(missing.message, /section file: cannot open: No such file/);
    const notFile = await errorOf(loadParamsFile(dir, { backend: be }));
    assert.match(notFile.message, /section file: (not a regular file|cannot open)/);
  });
});

test('a file that changes after its layout was checked is refused; bad arguments are TypeErrors / RangeErrors', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 40, l: 4, a: 4, b: 2 }, 15);
    const path = join(dir, 'p.params');
    await writeFile(path, encodeParams(params));
    const layout = await inspectParamsFile(path, { backend: be });
    const addon = be.addon as unknown as { paramsDecode: (...a: unknown[]) => Promise<void> };
    const dst = be.alloc(40 * 96);
    await writeFile(path, encodeParams({ ...params, h: params.h.subarray(0, 39 * 96) }));
    await assert.rejects(addon.paramsDecode(path, layout.size, 'h', 'G1', layout.sections.h.offset, 40, dst, false), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'KILN_PARAMS_FORMAT');
      assert.match(e.message, /section h: the file changed since its layout was checked \(\d+ bytes then, \d+ now\)/);
      return true;
    });
    assert.throws(() => addon.paramsDecode(path, 1, 'h', 'G3', 0, 1, dst, false), /group must be 'G1' or 'G2'/);
    assert.throws(() => addon.paramsDecode(path, 1, 'h', 'G1', 0, 41, dst, false), RangeError);
    assert.throws(() => addon.paramsDecode(path, 1, 'h', 'G1', -1, 40, dst, false), RangeError);
    assert.throws(() => addon.paramsDecode(path, 1, 'h', 'G1', 0, 40, [1, 2], false), TypeError);
    assert.throws(() => (be.addon as unknown as { paramsInspect: (p: unknown) => unknown }).paramsInspect(7), TypeError);
    be.release(dst);
  });
});

/** A stand-in for the CUDA backend's device target: "device memory" is a plain array; writes
 *  resolve on a later tick, so a loader that reused a staging buffer too early would be caught. */
function fakeDevice(): DeviceTarget & { writes: number; staged: Set<Uint8Array>; live: Set<PointSection> } {
  const t = {
    writes: 0,
    staged: new Set<Uint8Array>(),
    live: new Set<PointSection>(),
    alloc: (n: number): Uint8Array => {
      const b = be.alloc(n);
      t.staged.add(b);
      return b;
    },
    release: (b: Uint8Array): void => {
      t.staged.delete(b);
      be.release(b);
    },
    createResident(group: PointGroup, count: number): PointSection {
      const mem = new Uint8Array(count * (group === 'G1' ? 96 : 192));
      const s: PointSection = { kind: 'points', group, count, chunks: [], device: { owner: t, handle: mem, ordinal: 0 }, release: () => void t.live.delete(s) };
      t.live.add(s);
      return s;
    },
    async writeResident(s: PointSection, first: number, bytes: Uint8Array): Promise<void> {
      const copy = bytes.slice(); // what the staging buffer holds when the copy starts
      t.writes++;
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(bytes, copy, 'the staging buffer changed while it was being copied');
      (s.device!.handle as Uint8Array).set(bytes, first * (s.group === 'G1' ? 96 : 192));
    },
  };
  return t;
}

test('device target: sections stream through two staging buffers, no host copy, same bytes; a bad point frees everything', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 500, l: 101, a: 64, b: 33 }, 17);
    const path = join(dir, 'p.params');
    await writeFile(path, encodeParams(params));
    const dev = fakeDevice();
    const nat = await loadParamsFile(path, { backend: be, device: dev, stagingBytes: 192 * 10 });
    assert.equal(dev.staged.size, 0, 'staging released');
    // 10 G2 = 20 G1 points per staging buffer: ⌈500/20⌉ + ⌈101/20⌉ + ⌈64/20⌉ + ⌈33/20⌉ + ⌈33/10⌉
    assert.equal(dev.writes, 25 + 6 + 4 + 2 + 4);
    for (const [key, , group] of KEYS) {
      assert.equal(nat[key].chunks.length, 0);
      assert.equal(sectionHostBytes(nat[key]), 0);
      assert.deepEqual(nat[key].device!.handle, params[key], `${key} (${group})`);
      assert.throws(() => hostChunks(nat[key], group), /lives on device 0 only/);
    }
    release(nat);
    assert.equal(dev.live.size, 0);
    // a bad point in the middle of a streamed section: refused, its device vector, the sections
    // before it and the staging freed
    const f = encodeParams(params);
    f[verifyingKeyByteLength(3) + 4 + 500 * 96 + 4 + 50 * 96] |= 0x80;
    await writeFile(path, f);
    const e = await errorOf(loadParamsFile(path, { backend: be, device: dev, stagingBytes: 192 * 10 }));
    assert.match(e.message, /section l: point 50: compression flag/);
    assert.equal(dev.staged.size, 0);
    assert.equal(dev.live.size, 0);
  });
});

test('msmSection over a chunked section equals one MSM over the whole vector', async () => {
  await withDir(async (dir) => {
    const params = await randomParams({ h: 300, l: 50, a: 40, b: 250 }, 19);
    const path = join(dir, 'p.params');
    await writeFile(path, encodeParams(params));
    const nat = await loadParamsFile(path, { backend: be, chunkBytes: 96 * 64 });
    assert.equal(hostChunks(nat.h, 'G1').length, 5);
    const next = rng(20);
    const scalars = frVector(Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? 0n : i % 3 === 1 ? 1n : next())));
    const whole = await be.msmG1(params.h, scalars);
    assert.deepEqual((await msmSection(be, 'G1', nat.h, scalars)).point, whole.point);
    const idx = Uint32Array.from({ length: 250 }, (_, i) => (i * 7) % 300);
    assert.deepEqual((await msmSection(be, 'G2', nat.bG2, scalars, { scalarIndex: idx })).point, (await be.msmG2(params.bG2, scalars, { scalarIndex: idx })).point);
    assert.deepEqual((await msmSection(be, 'G1', nat.bG1, scalars, { scalarIndex: idx })).point, (await be.msmG1(params.bG1, scalars, { scalarIndex: idx })).point);
    await assert.rejects(msmSection(be, 'G1', nat.h, scalars.subarray(0, 299 * FR_BYTES)), /300 bases but 299 scalars/);
    await assert.rejects(msmSection(be, 'G2', nat.h, scalars), /holds G1 points, not G2/);
    release(nat);
  });
});

test('a proof from natively loaded, chunked parameters equals the proof from the TS-read ones', async () => {
  await withDir(async (dir) => {
    const circuit = new DemoCircuit({ constraints: 60, bitsPerWord: 4, publicInputs: 2 });
    const shape = recordShape((cs) => circuit.synthesize(cs));
    const wg = new WitnessGenerator(shape.numInputs);
    circuit.synthesize(wg);
    const assignment = wg.assignment();
    const params = await insecureDevSetup(shape, be);
    const path = join(dir, 'demo.params');
    await writeFile(path, encodeParams(params));
    const ts = await readParamsFile(path, { memory: be });
    const nat = await loadParamsFile(path, { backend: be, chunkBytes: 96 * 16, expected: compiledOf(shape).expectedParamsCounts(), checkPoints: true });
    assert.ok(nat.h.chunks.length > 1);
    compiledOf(shape).checkParams(nat);
    const r = 123456789n;
    const s = 987654321n;
    const a = await proveWithRandomness(ts, shape, assignment, r, s, be);
    const b = await proveWithRandomness(nat, shape, assignment, r, s, be);
    assert.deepEqual(encodeProof(b.proof), encodeProof(a.proof));
    release(nat);
  });
});

test('one loader for official and development files: loadParams and the development-parameter cache', async () => {
  await withDir(async (dir) => {
    const circuit = new DemoCircuit({ constraints: 50, bitsPerWord: 4, publicInputs: 2 });
    const shape = recordShape((cs) => circuit.synthesize(cs));
    const cacheDir = join(dir, 'cache');
    // generated, written, then read through the loader like a cached file: host sections in native memory
    const dev = await loadOrCreateDevParams(shape, be, cacheDir);
    for (const [key] of KEYS) assert.ok(isPointSection(dev[key]), key);
    const again = await loadOrCreateDevParams(shape, be, cacheDir);
    assert.deepEqual(encodeParams(again), encodeParams(dev));
    // the reference backend (the TypeScript reader): the same parameters in Uint8Arrays
    const ref = await loadParams(devParamsPath(shape, cacheDir), new ReferenceBackend(), { expected: compiledOf(shape).expectedParamsCounts() });
    for (const [key] of KEYS) assert.ok(ref[key] instanceof Uint8Array, key);
    assert.deepEqual(encodeParams(ref), encodeParams(dev));
    // a wrong circuit is refused before a point is read
    const other = recordShape((cs) => new DemoCircuit({ constraints: 51, bitsPerWord: 4, publicInputs: 2 }).synthesize(cs));
    await assert.rejects(loadParams(devParamsPath(shape, cacheDir), be, { expected: compiledOf(other).expectedParamsCounts() }), /section (vk\.ic|h|l|a|b_g1|b_g2): count \d+ but the circuit/);
    release(dev);
    release(again);
  });
});
