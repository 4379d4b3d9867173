/**
 * The native zcash-uncompressed codec (decodeG1Uncompressed … encodeG2Uncompressed, NativeBackend
 * decodePoints / encodePoints) against its slow twin, src/curve/codec.ts: byte-for-byte equal
 * outputs, the same first bad point with the same reason, the same params files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { NativeBackend } from '../src/backend/native.js';
import { ReferenceBackend } from '../src/backend/reference.js';
import { FQ_MODULUS, G1, G1_BYTES, G2, G2_BYTES, frVector, g1Vector, g2Vector } from '../src/field/layout.js';
import {
  PointEncodingError,
  decodeG1Points,
  decodeG2Points,
  decodePoints,
  encodeG1Points,
  encodeG2Points,
  encodePoints,
  errorIndex,
} from '../src/curve/codec.js';
import {
  ParamsFormatError,
  decodeParams,
  encodeParams,
  readParamsFile,
  writeParamsFile,
  type Parameters,
} from '../src/groth16/keys.js';
import { rng } from './support.js';

const be = new NativeBackend();
const p = FQ_MODULUS;
type Group = 'G1' | 'G2';
const WIRE = { G1: 96, G2: 192 } as const;
const NATIVE = { G1: G1_BYTES, G2: G2_BYTES } as const;

/** n random subgroup points in native layout, computed natively (fast). */
async function randomNative(group: Group, n: number, seed: number): Promise<Uint8Array> {
  const next = rng(seed);
  const scalars = frVector(Array.from({ length: n }, () => next()));
  return group === 'G1' ? be.fixedBaseMulG1(g1Vector([G1.BASE]), scalars) : be.fixedBaseMulG2(g2Vector([G2.BASE]), scalars);
}

function tsEncode(group: Group, nat: Uint8Array): Uint8Array {
  const n = nat.length / NATIVE[group];
  const out = new Uint8Array(n * WIRE[group]);
  if (group === 'G1') encodeG1Points(nat, 0, n, out);
  else encodeG2Points(nat, 0, n, out);
  return out;
}

async function nativeEncode(group: Group, nat: Uint8Array): Promise<Uint8Array> {
  const out = new Uint8Array((nat.length / NATIVE[group]) * WIRE[group]);
  await be.encodePoints(group, nat, out);
  return out;
}

type Outcome = { ok: true; out: Uint8Array } | { ok: false; index: number | undefined; message: string };

function tsDecode(group: Group, wire: Uint8Array, check: boolean): Outcome {
  const n = wire.length / WIRE[group];
  const out = new Uint8Array(n * NATIVE[group]);
  try {
    if (group === 'G1') decodeG1Points(wire, n, out, 0, check);
    else decodeG2Points(wire, n, out, 0, check);
    return { ok: true, out };
  } catch (e) {
    assert.ok(e instanceof PointEncodingError, String(e));
    return { ok: false, index: errorIndex(e), message: e.message };
  }
}

async function nativeDecode(group: Group, wire: Uint8Array, check: boolean): Promise<Outcome> {
  const n = wire.length / WIRE[group];
  const out = new Uint8Array(n * NATIVE[group]);
  try {
    await decodePoints(group, wire, n, out, 0, check, be);
    return { ok: true, out };
  } catch (e) {
    assert.ok(e instanceof PointEncodingError, String(e));
    return { ok: false, index: errorIndex(e), message: e.message };
  }
}

/** Both paths agree: same bytes, or the same first bad index and reason (curve/subgroup reasons
 *  are worded by noble on the TS side, so only their prefix is compared). */
async function assertSame(group: Group, wire: Uint8Array, check: boolean, label: string): Promise<Outcome> {
  const t = tsDecode(group, wire, check);
  const n = await nativeDecode(group, wire, check);
  assert.equal(n.ok, t.ok, `${label}: ok ${n.ok} vs ts ${t.ok} (${!t.ok ? t.message : ''} / ${!n.ok ? n.message : ''})`);
  if (t.ok && n.ok) assert.deepEqual(n.out, t.out, label);
  if (!t.ok && !n.ok) {
    assert.equal(n.index, t.index, `${label}: index`);
    if (t.message.startsWith('not a valid')) assert.ok(n.message.startsWith(`not a valid ${group} point`), n.message);
    else assert.equal(n.message, t.message, label);
  }
  return n;
}

function be48(x: bigint): Uint8Array {
  const out = new Uint8Array(48);
  let t = x;
  for (let k = 47; k >= 0; k--) {
    out[k] = Number(t & 0xffn);
    t >>= 8n;
  }
  return out;
}

/** A wire point from raw coordinates (wire order) and first-byte flags ORed in. */
function rawWire(coords: bigint[], flags = 0): Uint8Array {
  const out = new Uint8Array(48 * coords.length);
  coords.forEach((c, k) => out.set(be48(c), 48 * k));
  out[0] |= flags;
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((t, x) => t + x.length, 0));
  let o = 0;
  for (const x of parts) {
    out.set(x, o);
    o += x.length;
  }
  return out;
}

/** An on-curve G1 point outside the prime-order subgroup: x with x³ + 4 a square. */
function g1OffSubgroup(seed: number): Uint8Array {
  const Fp = bls12_381.fields.Fp;
  for (let x = BigInt(seed); ; x++) {
    const rhs = Fp.add(Fp.mul(Fp.sqr(x), x), 4n);
    let y: bigint;
    try {
      y = Fp.sqrt(rhs);
    } catch {
      continue;
    }
    return rawWire([x, y]);
  }
}

function g2OffSubgroup(seed: number): Uint8Array {
  const Fp2 = bls12_381.fields.Fp2;
  const b = Fp2.create({ c0: 4n, c1: 4n });
  for (let k = BigInt(seed); ; k++) {
    const x = Fp2.create({ c0: k, c1: 1n });
    const rhs = Fp2.add(Fp2.mul(Fp2.sqr(x), x), b);
    let y: { c0: bigint; c1: bigint };
    try {
      y = Fp2.sqrt(rhs);
    } catch {
      continue;
    }
    if (!Fp2.eql(Fp2.sqr(y), rhs)) continue;
    return rawWire([x.c1, x.c0, y.c1, y.c0]);
  }
}

test('encode: native equals the TypeScript codec byte-for-byte (random points, identity, raw limbs)', async () => {
  for (const group of ['G1', 'G2'] as const) {
    const nat = await randomNative(group, 5000, group === 'G1' ? 1 : 2);
    const nb = NATIVE[group];
    nat.fill(0, 7 * nb, 8 * nb); // identity
    nat.fill(0, 4999 * nb, 5000 * nb);
    // arbitrary limb patterns (≥ p, all ones, a lone 1): encode reduces them like the TS path
    nat.fill(0xff, 10 * nb, 11 * nb);
    nat.fill(0, 12 * nb, 13 * nb);
    nat[12 * nb + nb - 1] = 1;
    const next = rng(3);
    for (let i = 20; i < 40; i++) for (let k = 0; k < nb; k += 8) nat.set(be48(next(1n << 384n)).subarray(0, 8), i * nb + k);
    assert.deepEqual(await nativeEncode(group, nat), tsEncode(group, nat), group);
    // the infinity encoding
    const id = await nativeEncode(group, new Uint8Array(nb));
    assert.equal(id[0], 0x40);
    assert.ok(id.subarray(1).every((b) => b === 0));
    // empty input
    assert.equal((await nativeEncode(group, new Uint8Array(0))).length, 0);
  }
});

test('decode: native equals the TypeScript codec on random points and the identity; round trip', async () => {
  for (const group of ['G1', 'G2'] as const) {
    const nat = await randomNative(group, group === 'G1' ? 3000 : 1000, group === 'G1' ? 4 : 5);
    nat.fill(0, 0, NATIVE[group]); // identity first
    const wire = tsEncode(group, nat);
    for (const check of [false, true]) {
      const small = wire.subarray(0, 40 * WIRE[group]); // noble's check is slow: fewer points
      const o = await assertSame(group, check ? small : wire, check, `${group} check=${check}`);
      assert.ok(o.ok);
      assert.deepEqual(o.out, nat.subarray(0, o.out.length));
    }
    // native round trip over the whole vector, with the native subgroup check
    const back = new Uint8Array(nat.length);
    await be.decodePoints(group, await nativeEncode(group, nat), back, true, true);
    assert.deepEqual(back, nat);
  }
});

test('decode: flag and canonical-range edge cases match the TypeScript codec, with the index', async () => {
  const valid1 = tsEncode('G1', await randomNative('G1', 1, 6));
  const valid2 = tsEncode('G2', await randomNative('G2', 1, 7));
  const top = (1n << 381n) - 1n;
  const cases: { group: Group; name: string; bytes: Uint8Array }[] = [];
  const add = (group: Group, name: string, bytes: Uint8Array): void => void cases.push({ group, name, bytes });
  for (const [group, valid, coords] of [
    ['G1', valid1, 2],
    ['G2', valid2, 4],
  ] as const) {
    const W = WIRE[group];
    const inf = new Uint8Array(W);
    inf[0] = 0x40;
    add(group, 'identity', inf);
    add(group, 'compressed', rawWire(Array(coords).fill(1n), 0x80));
    add(group, 'compressed identity', rawWire(Array(coords).fill(0n), 0xc0));
    add(group, 'sort', rawWire(Array(coords).fill(1n), 0x20));
    add(group, 'infinity + sort', rawWire(Array(coords).fill(0n), 0x60));
    const inf1 = inf.slice();
    inf1[0] = 0x41;
    add(group, 'infinity, low bits in the flag byte', inf1);
    const inf2 = inf.slice();
    inf2[W - 1] = 1;
    add(group, 'infinity, last byte set', inf2);
    add(group, '(0, 0) without infinity', new Uint8Array(W));
    const validMod = valid.slice();
    validMod[0] |= 0x80;
    add(group, 'valid point with the compression flag', validMod);
    for (let k = 0; k < coords; k++) {
      for (const [what, v] of [
        ['p', p],
        ['p + 1', p + 1n],
        ['2^381 - 1', top],
        ['p - 1', p - 1n],
        ['0', 0n],
      ] as const) {
        const c: bigint[] = Array(coords).fill(1n);
        c[k] = v;
        add(group, `coordinate ${k} = ${what}`, rawWire(c));
      }
      // bits above 2^381 in a coordinate other than the first (no flags there)
      if (k > 0) {
        const b = valid.slice();
        b[48 * k] |= 0x80;
        add(group, `coordinate ${k} top bit`, b);
      }
    }
    add(group, 'valid', valid);
    const off = valid.slice();
    off[W - 1] ^= 1;
    add(group, 'off the curve', off);
    add(group, 'on the curve, outside the subgroup', group === 'G1' ? g1OffSubgroup(5) : g2OffSubgroup(3));
  }
  add('G1', '(0, 2): 3-torsion', rawWire([0n, 2n]));

  for (const { group, name, bytes } of cases) {
    for (const check of [false, true]) {
      // alone, and as point 2 of 3 after two valid points (the index is reported)
      await assertSame(group, bytes, check, `${group} ${name} check=${check}`);
      const valid = group === 'G1' ? valid1 : valid2;
      await assertSame(group, concat([valid, valid, bytes]), check, `${group} ${name} at 2 check=${check}`);
    }
  }
  // the subgroup check really runs natively: on the curve but of small order
  await assert.rejects(be.decodePoints('G1', rawWire([0n, 2n]), new Uint8Array(96), true, true), (e: unknown) => {
    const err = e as Error & { pointIndex: number; reason: string; code: string };
    assert.equal(err.code, 'KILN_BAD_POINT');
    assert.equal(err.pointIndex, 0);
    assert.match(err.reason, /subgroup/);
    return true;
  });
  await be.decodePoints('G1', rawWire([0n, 2n]), new Uint8Array(96), true, false); // curve only: accepted
  await assert.rejects(be.decodePoints('G2', g2OffSubgroup(3), new Uint8Array(192), true, true), /G2 point \(not in the prime-order subgroup\)/);
  await be.decodePoints('G2', g2OffSubgroup(3), new Uint8Array(192), true, false);
});

test('the Backend point codec: ReferenceBackend.decodePoints / encodePoints equal the NativeBackend\'s (bytes, bad points, curve-only mode, lengths)', async () => {
  const ref = new ReferenceBackend();
  for (const group of ['G1', 'G2'] as const) {
    const nat = await randomNative(group, 17, group === 'G1' ? 31 : 32);
    nat.fill(0, 5 * NATIVE[group], 6 * NATIVE[group]); // an identity among them
    const wireRef = new Uint8Array(17 * WIRE[group]);
    await ref.encodePoints(group, nat, wireRef);
    assert.deepEqual(wireRef, await nativeEncode(group, nat), `${group} encode`);
    for (const [checkOnCurve, checkSubgroup] of [[false, false], [true, false], [true, true]] as const) {
      const a = new Uint8Array(nat.length);
      const b = new Uint8Array(nat.length);
      await ref.decodePoints(group, wireRef, a, checkOnCurve, checkSubgroup);
      await be.decodePoints(group, wireRef, b, checkOnCurve, checkSubgroup);
      assert.deepEqual(a, b, `${group} decode ${checkOnCurve}/${checkSubgroup}`);
      assert.deepEqual(a, nat, `${group} round trip`);
    }
  }
  // off the curve (y + 1), then on the curve but outside the subgroup: the same point index either way
  const valid = tsEncode('G1', await randomNative('G1', 2, 33));
  const off = valid.slice();
  off[191] ^= 1;
  const torsion = concat([valid, rawWire([0n, 2n])]);
  for (const [wire, onCurve, subgroup, fails] of [[off, true, false, 1], [off, false, false, -1], [torsion, true, false, -1], [torsion, true, true, 2]] as const) {
    const dst = new Uint8Array((wire.length / 96) * 96);
    const outcomes = await Promise.all(
      [ref, be].map((x) => decodePoints('G1', wire, wire.length / 96, dst.slice(), 0, false, {
        decodePoints: (g, s2, d, _c, _s) => x.decodePoints(g, s2, d, onCurve, subgroup),
        encodePoints: (g, s2, d) => x.encodePoints(g, s2, d),
      }).then(() => -1, (e: unknown) => {
        assert.ok(e instanceof PointEncodingError, String(e));
        return errorIndex(e) ?? -2;
      })),
    );
    assert.deepEqual(outcomes, [fails, fails], `onCurve ${onCurve} subgroup ${subgroup}`);
  }
  await assert.rejects(ref.decodePoints('G1', new Uint8Array(5), new Uint8Array(96), false), RangeError);
  await assert.rejects(ref.encodePoints('G3' as Group, new Uint8Array(0), new Uint8Array(0)), RangeError);
});

test('decode: random bytes and mutated points agree with the TypeScript codec', async () => {
  const next = rng(9);
  for (const group of ['G1', 'G2'] as const) {
    const W = WIRE[group];
    const nat = await randomNative(group, 64, group === 'G1' ? 10 : 11);
    const wire = tsEncode(group, nat);
    for (let trial = 0; trial < 150; trial++) {
      const bytes = wire.slice(0, 8 * W);
      const i = Number(next(8n));
      const kind = trial % 3;
      if (kind === 0) {
        for (let k = 0; k < W; k++) bytes[i * W + k] = Number(next(256n));
        bytes[i * W] &= Number(next(2n)) ? 0x1f : 0xff; // flags clear half of the time
      } else if (kind === 1) {
        bytes[i * W + Number(next(BigInt(W)))] ^= 1 << Number(next(8n));
      } else {
        bytes[i * W] = (bytes[i * W] & 0x1f) | (Number(next(8n)) << 5);
      }
      await assertSame(group, bytes, trial % 5 === 0, `${group} trial ${trial}`);
    }
  }
});

test('decode: the first bad point across threads, at any position in a large call', async () => {
  for (const group of ['G1', 'G2'] as const) {
    const n = 10000;
    const W = WIRE[group];
    const nat = await randomNative(group, n, 12);
    const wire = await nativeEncode(group, nat);
    for (const bad of [[9999], [8500, 3000, 6000], [0, 1]]) {
      const b = wire.slice();
      for (const i of bad) b[i * W] |= 0x20;
      const o = await nativeDecode(group, b, false);
      assert.ok(!o.ok);
      assert.equal(o.index, Math.min(...bad));
      assert.equal(o.message, 'sort flag set in an uncompressed point');
    }
    const ok = await nativeDecode(group, wire, false);
    assert.ok(ok.ok);
    assert.deepEqual(ok.out, nat);
    // on-curve check over many points
    const off = wire.slice();
    off[6789 * W + W - 1] ^= 1;
    const o = await nativeDecode(group, off, true);
    assert.ok(!o.ok);
    assert.equal(o.index, 6789);
    // codec helpers with an offset into the destination / source
    const dst = new Uint8Array((n + 3) * NATIVE[group]);
    await decodePoints(group, wire, n, dst, 3, false, be);
    assert.deepEqual(dst.subarray(3 * NATIVE[group]), nat);
    const enc = new Uint8Array(100 * W);
    await encodePoints(group, nat, 50, 100, enc, be);
    assert.deepEqual(enc, wire.subarray(50 * W, 150 * W));
  }
});

test('lengths and types are checked: RangeError / TypeError, never a crash', async () => {
  const a = be.addon;
  const bad: [() => Promise<void>, RegExp, ErrorConstructor][] = [
    [() => a.decodeG1Uncompressed(new Uint8Array(95), new Uint8Array(96), false), /not a multiple of 96/, RangeError],
    [() => a.decodeG1Uncompressed(new Uint8Array(96), new Uint8Array(95), false), /dst has 95 bytes/, RangeError],
    [() => a.decodeG2Uncompressed(new Uint8Array(192), new Uint8Array(96), false), /dst has 96 bytes/, RangeError],
    [() => a.decodeG2Uncompressed(new Uint8Array(96), new Uint8Array(96), false), /not a multiple of 192/, RangeError],
    [() => a.encodeG1Uncompressed(new Uint8Array(96), new Uint8Array(97)), /dst has 97 bytes/, RangeError],
    [() => a.encodeG2Uncompressed(new Uint8Array(100), new Uint8Array(192)), /not a multiple of 192/, RangeError],
    [() => a.decodeG1Uncompressed(new Uint8Array(96), new Uint8Array(96), 1 as unknown as boolean), /boolean/, TypeError],
    [() => a.decodeG1Uncompressed([] as unknown as Uint8Array, new Uint8Array(96), false), /Uint8Array/, TypeError],
    [() => a.encodeG1Uncompressed(new Uint8Array(96), new Uint16Array(48) as unknown as Uint8Array), /Uint8Array/, TypeError],
  ];
  for (const [f, re, type] of bad) {
    assert.throws(() => void f(), (e: unknown) => e instanceof type && re.test((e as Error).message));
  }
  // overlapping src/dst
  const buf = new Uint8Array(96 * 3);
  assert.throws(() => void a.decodeG1Uncompressed(buf.subarray(0, 192), buf.subarray(96), false), /overlap/);
  // NativeBackend rejects instead of throwing
  await assert.rejects(be.decodePoints('G1', new Uint8Array(5), new Uint8Array(0), false), RangeError);
  await assert.rejects(be.encodePoints('G3' as Group, new Uint8Array(0), new Uint8Array(0)), RangeError);
  // empty calls are fine; a view at an odd offset works
  await be.decodePoints('G1', new Uint8Array(0), new Uint8Array(0), true);
  const nat = await randomNative('G1', 3, 13);
  const wire = tsEncode('G1', nat);
  const odd = new Uint8Array(wire.length + 1);
  odd.set(wire, 1);
  const out = new Uint8Array(nat.length + 3);
  await be.decodePoints('G1', odd.subarray(1), out.subarray(3), false);
  assert.deepEqual(out.subarray(3), nat);
});

async function randomParams(counts: { h: number; l: number; a: number; b: number }, seed: number): Promise<Parameters> {
  const g1At = (i: number) => G1.BASE.multiply(BigInt(seed * 10 + i + 2));
  const g2At = (i: number) => G2.BASE.multiply(BigInt(seed * 10 + i + 2));
  const l = await randomNative('G1', counts.l, seed + 2);
  if (counts.l > 1) l.fill(0, 96, 192); // an identity l point
  return {
    vk: { alphaG1: g1At(0), betaG1: g1At(1), betaG2: g2At(0), gammaG2: g2At(1), deltaG1: g1At(2), deltaG2: g2At(2), ic: [g1At(3), g1At(4), g1At(5)] },
    h: await randomNative('G1', counts.h, seed + 1),
    l,
    a: await randomNative('G1', counts.a, seed + 3),
    bG1: await randomNative('G1', counts.b, seed + 4),
    bG2: await randomNative('G2', counts.b, seed + 5),
  };
}

function assertQueriesEqual(x: Parameters, y: Parameters): void {
  for (const k of ['h', 'l', 'a', 'bG1', 'bG2'] as const) assert.deepEqual(new Uint8Array(x[k]), new Uint8Array(y[k]), k);
  assert.equal(x.vk.ic.length, y.vk.ic.length);
  assert.ok(x.vk.alphaG1.equals(y.vk.alphaG1));
}

test('params: written and read natively equals the TypeScript path (multi-chunk sections)', async () => {
  // h spans two 4 MiB read chunks (43,690 G1 points each) and two write chunks
  const params = await randomParams({ h: 50000, l: 300, a: 200, b: 100 }, 20);
  const tsBytes = encodeParams(params);
  const dir = await mkdtemp(join(tmpdir(), 'kiln-native-decode-'));
  try {
    const nativePath = join(dir, 'native.params');
    await writeParamsFile(nativePath, params, { codec: be });
    assert.deepEqual(await readFile(nativePath), Buffer.from(tsBytes));
    const tsPath = join(dir, 'ts.params');
    await writeParamsFile(tsPath, params);
    assert.deepEqual(await readFile(tsPath), Buffer.from(tsBytes));

    const viaBackend = await readParamsFile(nativePath, { memory: be }); // memory has decodePoints
    const viaTs = await readParamsFile(tsPath, { codec: null });
    assertQueriesEqual(viaBackend, params);
    assertQueriesEqual(viaTs, params);
    assertQueriesEqual(await decodeParams(tsBytes, { codec: be }), params);
    for (const k of ['h', 'l', 'a', 'bG1', 'bG2'] as const) be.release(viaBackend[k]);

    // a bad point in the second read chunk of h, and one in b_g2: the same error both ways
    const vkLen = tsBytes.length - 4 * 5 - (50000 + 300 + 200 + 100) * 96 - 100 * 192;
    const hPoint = (i: number) => vkLen + 4 + i * 96;
    const bg2Point = (i: number) => tsBytes.length - (100 - i) * 192;
    for (const [at, section, index] of [
      [hPoint(45000), 'h', 45000],
      [bg2Point(77), 'b_g2', 77],
    ] as const) {
      const broken = tsBytes.slice();
      broken[at] |= 0x80;
      const path = join(dir, `bad-${section}.params`);
      await writeFile(path, broken);
      const released: Uint8Array[] = [];
      const memory = { alloc: (n: number) => be.alloc(n), release: (b: Uint8Array) => (released.push(b), be.release(b)) };
      const messages: string[] = [];
      for (const opts of [{ memory, codec: be }, { codec: null }]) {
        await assert.rejects(readParamsFile(path, opts), (e: unknown) => {
          assert.ok(e instanceof ParamsFormatError, String(e));
          assert.equal(e.section, section);
          assert.match(e.message, new RegExp(`point ${index}: compression flag set`));
          messages.push(e.message);
          return true;
        });
      }
      assert.equal(messages[0], messages[1]);
      assert.ok(released.length > 0); // the native-memory buffers were handed back
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
