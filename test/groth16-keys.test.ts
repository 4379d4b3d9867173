/**
 * Groth16 keys and proof bytes: bellperson's layouts (FACTS §4), streaming reads, refusal of bad
 * files. The fast codec (src/curve/codec.ts) is checked against src/curve/encoding.ts (noble).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { G1, G1_BYTES, G2, G2_BYTES, g1Vector, g2Vector, type G1Point, type G2Point } from '../src/field/layout.js';
import { decodeG1Vector, decodeG2Vector, encodeG1Vector, encodeG2Vector } from '../src/curve/encoding.js';
import { decodeG1Points, decodeG2Points, encodeG1Points, encodeG2Points } from '../src/curve/codec.js';
import {
  ParamsFormatError,
  decodeParams,
  decodeVerifyingKey,
  encodeParams,
  encodeVerifyingKey,
  paramsByteLength,
  readParamsFile,
  readVerifyingKeyFile,
  verifyingKeyByteLength,
  writeParamsFile,
  writeVerifyingKeyFile,
  type Parameters,
  type VerifyingKey,
} from '../src/groth16/keys.js';
import {
  PROOF_BYTES,
  ProofFormatError,
  decodeProof,
  decodeProofs,
  encodeProof,
  encodeProofs,
  type Proof,
} from '../src/groth16/proof.js';
import { rng } from './support.js';


// Random points by cheap additions of a few random multiples (noble multiply is ~1 ms).
function randomG1s(n: number, next: () => bigint): G1Point[] {
  const p = G1.BASE.multiply(next());
  const q = G1.BASE.multiply(next());
  const out: G1Point[] = [];
  let acc = p;
  for (let i = 0; i < n; i++) {
    out.push(acc);
    acc = acc.add(i % 2 ? q : p).double();
  }
  return out;
}

function randomG2s(n: number, next: () => bigint): G2Point[] {
  const p = G2.BASE.multiply(next());
  const q = G2.BASE.multiply(next());
  const out: G2Point[] = [];
  let acc = p;
  for (let i = 0; i < n; i++) {
    out.push(acc);
    acc = acc.add(i % 2 ? q : p).double();
  }
  return out;
}

function randomVk(icCount: number, seed: number): VerifyingKey {
  const next = rng(seed).nonZero;
  const g1 = randomG1s(3 + icCount, next);
  const g2 = randomG2s(3, next);
  return { alphaG1: g1[0], betaG1: g1[1], betaG2: g2[0], gammaG2: g2[1], deltaG1: g1[2], deltaG2: g2[2], ic: g1.slice(3) };
}

function randomParams(seed: number, counts = { h: 7, l: 5, a: 6, b: 4 }, withIdentity = false): Parameters {
  const next = rng(seed).nonZero;
  const h = randomG1s(counts.h, next);
  const l = randomG1s(counts.l, next);
  if (withIdentity && l.length > 1) l[1] = G1.ZERO;
  return {
    vk: randomVk(3, seed + 1),
    h: g1Vector(h),
    l: g1Vector(l),
    a: g1Vector(randomG1s(counts.a, next)),
    bG1: g1Vector(randomG1s(counts.b, next)),
    bG2: g2Vector(randomG2s(counts.b, next)),
  };
}

function assertVkEqual(x: VerifyingKey, y: VerifyingKey): void {
  assert.ok(x.alphaG1.equals(y.alphaG1));
  assert.ok(x.betaG1.equals(y.betaG1));
  assert.ok(x.betaG2.equals(y.betaG2));
  assert.ok(x.gammaG2.equals(y.gammaG2));
  assert.ok(x.deltaG1.equals(y.deltaG1));
  assert.ok(x.deltaG2.equals(y.deltaG2));
  assert.equal(x.ic.length, y.ic.length);
  x.ic.forEach((p, i) => assert.ok(p.equals(y.ic[i]), `ic ${i}`));
}

function assertParamsEqual(x: Parameters, y: Parameters): void {
  assertVkEqual(x.vk, y.vk);
  for (const k of ['h', 'l', 'a', 'bG1', 'bG2'] as const) assert.deepEqual(x[k], y[k], k);
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-groth16-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('fast codec matches curve/encoding.ts (noble) both ways, identity included', () => {
  const next = rng(1).nonZero;
  const g1 = [...randomG1s(9, next), G1.ZERO];
  const g2 = [...randomG2s(5, next), G2.ZERO];
  const n1 = g1Vector(g1);
  const n2 = g2Vector(g2);
  const wire1 = encodeG1Vector(n1, false);
  const wire2 = encodeG2Vector(n2, false);

  const fast1 = new Uint8Array(wire1.length);
  encodeG1Points(n1, 0, g1.length, fast1);
  assert.deepEqual(fast1, wire1);
  const fast2 = new Uint8Array(wire2.length);
  encodeG2Points(n2, 0, g2.length, fast2);
  assert.deepEqual(fast2, wire2);

  for (const check of [false, true]) {
    const back1 = new Uint8Array(n1.length);
    decodeG1Points(wire1, g1.length, back1, 0, check);
    assert.deepEqual(back1, decodeG1Vector(wire1, g1.length));
    assert.deepEqual(back1, n1);
    const back2 = new Uint8Array(n2.length);
    decodeG2Points(wire2, g2.length, back2, 0, check);
    assert.deepEqual(back2, decodeG2Vector(wire2, g2.length));
    assert.deepEqual(back2, n2);
  }
  // G2 wire order is c1 before c0 (FACTS §4): the first coordinate written is x.c1.
  const x = g2[0].toAffine().x;
  const first = BigInt('0x' + Buffer.from(wire2.subarray(0, 48)).toString('hex'));
  assert.equal(first, x.c1);
});

test('verifying key with 40 IC points is exactly 4,708 bytes and round-trips byte-exactly', async () => {
  const vk = randomVk(40, 2);
  const bytes = encodeVerifyingKey(vk);
  assert.equal(bytes.length, 4708);
  assert.equal(verifyingKeyByteLength(40), 4708);
  // u32 big-endian IC count after the six fixed points (96 + 96 + 192 + 192 + 96 + 192 = 864 B)
  assert.deepEqual([...bytes.subarray(864, 868)], [0, 0, 0, 40]);
  const back = await decodeVerifyingKey(bytes);
  assertVkEqual(back, vk);
  assert.deepEqual(encodeVerifyingKey(back), bytes);
  await withTempDir(async (dir) => {
    const path = join(dir, 'x.vk');
    await writeVerifyingKeyFile(path, vk);
    assertVkEqual(await readVerifyingKeyFile(path), vk);
  });
});

test("verifying key: the IC points' fast writer equals noble's toBytes(false), projective and affine points alike", () => {
  const vk = randomVk(25, 7);
  const next = rng(8).nonZero;
  // points with Z != 1 (sums, not normalised) and the generator's multiples near the edges
  vk.ic = [...vk.ic, G1.BASE, G1.BASE.negate(), G1.BASE.multiply(next()).add(G1.BASE.multiply(next()))];
  const bytes = encodeVerifyingKey(vk);
  const tail = bytes.subarray(bytes.length - vk.ic.length * 96);
  vk.ic.forEach((p, i) => assert.deepEqual(tail.subarray(i * 96, (i + 1) * 96), p.toBytes(false), `IC point ${i}`));
  assert.throws(() => encodeVerifyingKey({ ...vk, ic: [G1.BASE, G1.ZERO] }), /an IC point is the identity/);
});

test('verifying key: truncation, trailing bytes and a point off the curve are refused', async () => {
  const bytes = encodeVerifyingKey(randomVk(4, 3));
  await assert.rejects(decodeVerifyingKey(bytes.subarray(0, 500)), (e: unknown) => {
    assert.ok(e instanceof ParamsFormatError);
    assert.equal(e.section, 'vk.gamma_g2'); // bytes 384..576
    return true;
  });
  await assert.rejects(decodeVerifyingKey(bytes.subarray(0, bytes.length - 1)), /section vk\.ic: count 4 needs 384 bytes/);
  const longer = new Uint8Array(bytes.length + 3);
  longer.set(bytes);
  await assert.rejects(decodeVerifyingKey(longer), /3 trailing bytes/);
  const bad = bytes.slice();
  bad[95] ^= 1; // α_g1.y changes: off the curve
  await assert.rejects(decodeVerifyingKey(bad), (e: unknown) => e instanceof ParamsFormatError && e.section === 'vk.alpha_g1');
  const inf = bytes.slice();
  inf.fill(0, 868, 868 + 96);
  inf[868] = 0x40; // IC[0] = identity
  await assert.rejects(decodeVerifyingKey(inf), /vk\.ic: point 0: point at infinity/);
});

test('params write → read round-trips, in memory and through a file', async () => {
  const p = randomParams(4, { h: 7, l: 5, a: 6, b: 4 }, true);
  const bytes = encodeParams(p);
  assert.equal(bytes.length, paramsByteLength(p));
  assertParamsEqual(await decodeParams(bytes), p);
  assertParamsEqual(await decodeParams(bytes, { checkPoints: true }), p);
  await withTempDir(async (dir) => {
    const path = join(dir, 'x.params');
    await writeParamsFile(path, p);
    const released: Uint8Array[] = [];
    const back = await readParamsFile(path, {
      memory: { alloc: (n) => new Uint8Array(n), release: (b) => void released.push(b) },
    });
    assertParamsEqual(back, p);
    assert.equal(released.length, 0);
    assertParamsEqual(await readVerifyingKeyFile(path, { prefix: true }).then((vk) => ({ ...p, vk })), p);
  });
});

test('params with empty sections round-trip', async () => {
  const p = randomParams(5, { h: 1, l: 0, a: 1, b: 0 });
  assertParamsEqual(await decodeParams(encodeParams(p)), p);
});

/** Byte offsets of each section's count in an encoded params file. */
function sectionOffsets(p: Parameters): Record<string, number> {
  const out: Record<string, number> = {};
  let o = verifyingKeyByteLength(p.vk.ic.length);
  for (const [name, buf, size] of [
    ['h', p.h, 96],
    ['l', p.l, 96],
    ['a', p.a, 96],
    ['b_g1', p.bG1, 96],
    ['b_g2', p.bG2, 192],
  ] as const) {
    out[name] = o;
    o += 4 + (buf.length / (size === 96 ? G1_BYTES : G2_BYTES)) * size;
  }
  out.end = o;
  return out;
}

test('a params file truncated inside each section is refused naming that section', async () => {
  const p = randomParams(6);
  const bytes = encodeParams(p);
  const off = sectionOffsets(p);
  const names = ['h', 'l', 'a', 'b_g1', 'b_g2'];
  await withTempDir(async (dir) => {
    for (let k = 0; k < names.length; k++) {
      const section = names[k];
      const end = k + 1 < names.length ? off[names[k + 1]] : off.end;
      // cut in the middle of the points, and inside the count itself
      for (const cut of [Math.floor((off[section] + 4 + end) / 2), off[section] + 2]) {
        const truncated = bytes.subarray(0, cut);
        const released: Uint8Array[] = [];
        const memory = { alloc: (n: number) => new Uint8Array(n), release: (b: Uint8Array) => void released.push(b) };
        await assert.rejects(decodeParams(truncated, { memory }), (e: unknown) => {
          assert.ok(e instanceof ParamsFormatError, String(e));
          assert.equal(e.section, section);
          assert.match(e.message, new RegExp(`section ${section}: `));
          return true;
        });
        // every buffer allocated for the earlier sections was handed back
        assert.equal(released.length, k);
        const path = join(dir, `cut-${section}-${cut}.params`);
        await writeFile(path, truncated);
        await assert.rejects(readParamsFile(path), (e: unknown) => {
          assert.ok(e instanceof ParamsFormatError);
          assert.equal(e.section, section);
          assert.ok(e.message.startsWith(path), e.message);
          return true;
        });
      }
    }
    // truncated inside the verifying key
    await assert.rejects(decodeParams(bytes.subarray(0, 100)), (e: unknown) => e instanceof ParamsFormatError && e.section.startsWith('vk.'));
  });
});

test('inconsistent counts are refused before allocating', async () => {
  const p = randomParams(7);
  const bytes = encodeParams(p);
  const off = sectionOffsets(p);
  const setCount = (b: Uint8Array, at: number, n: number): Uint8Array => {
    const c = b.slice();
    new DataView(c.buffer).setUint32(at, n);
    return c;
  };
  // a huge count: no multi-GB allocation, a clear error
  const huge = setCount(bytes, off.l, 0xffffffff);
  let allocated = 0;
  const memory = { alloc: (n: number) => ((allocated += n), new Uint8Array(n)), release: () => {} };
  await assert.rejects(decodeParams(huge, { memory }), /section l: count 4294967295 needs 412316860320 bytes/);
  assert.ok(allocated < 10_000, `allocated ${allocated} bytes`);
  // one point fewer in h: the rest is misread and refused, or trailing bytes remain
  await assert.rejects(decodeParams(setCount(bytes, off.h, 6)), ParamsFormatError);
  // b_g2 count differing from b_g1: same selection of variables, refused by name
  const bg1Fewer = bytes.slice(0, off.b_g2);
  const tail = setCount(bytes.slice(off.b_g2, off.end - 192), 0, 3);
  const mismatched = new Uint8Array(bg1Fewer.length + tail.length);
  mismatched.set(bg1Fewer);
  mismatched.set(tail, bg1Fewer.length);
  await assert.rejects(decodeParams(mismatched), /section b_g2: count 3 differs from the b_g1 count 4/);
  // trailing garbage
  const longer = new Uint8Array(bytes.length + 10);
  longer.set(bytes);
  await assert.rejects(decodeParams(longer), (e: unknown) => e instanceof ParamsFormatError && e.section === 'end');
  // a corrupted point inside a section names the section and the point
  const corrupt = bytes.slice();
  corrupt[off.a + 4 + 96 * 2] |= 0x80; // compression flag on point 2 of a
  await assert.rejects(decodeParams(corrupt), /section a: point 2: compression flag/);
  const offCurve = bytes.slice();
  offCurve[off.h + 4 + 96 * 3 + 95] ^= 1;
  await assert.doesNotReject(decodeParams(offCurve)); // not checked by default (slow)
  await assert.rejects(decodeParams(offCurve, { checkPoints: true }), /section h: point 3: not a valid G1 point/);
});

test('a random byte string is refused with a ParamsFormatError, never a crash', async () => {
  const next = rng(8).nonZero;
  for (let t = 0; t < 20; t++) {
    const len = Number(next() % 3000n);
    const b = new Uint8Array(len);
    for (let i = 0; i < len; i++) b[i] = Number(next() & 0xffn);
    await assert.rejects(decodeParams(b), ParamsFormatError);
  }
});

test('proof bytes: 192 B, A ‖ B ‖ C compressed, strict decoding, concatenation', () => {
  const next = rng(9).nonZero;
  const [a, c] = randomG1s(2, next);
  const [b] = randomG2s(1, next);
  const proof: Proof = { a, b, c };
  const bytes = encodeProof(proof);
  assert.equal(bytes.length, PROOF_BYTES);
  assert.equal(PROOF_BYTES, 192);
  assert.deepEqual(bytes.subarray(0, 48), a.toBytes(true));
  assert.deepEqual(bytes.subarray(48, 144), b.toBytes(true));
  assert.deepEqual(bytes.subarray(144), c.toBytes(true));
  const back = decodeProof(bytes);
  assert.ok(back.a.equals(a) && back.b.equals(b) && back.c.equals(c));

  assert.throws(() => decodeProof(bytes.subarray(0, 191)), ProofFormatError);
  const inf = bytes.slice();
  inf.fill(0, 0, 48);
  inf[0] = 0xc0;
  assert.throws(() => decodeProof(inf), /A: point at infinity/);
  const nonCanonical = bytes.slice();
  nonCanonical.fill(0xff, 144, 192);
  nonCanonical[144] = 0x9f;
  assert.throws(() => decodeProof(nonCanonical), /C: coordinate is not canonical/);

  const ten = encodeProofs(Array.from({ length: 10 }, () => proof));
  assert.equal(ten.length, 1920);
  assert.equal(decodeProofs(ten).length, 10);
  assert.throws(() => decodeProofs(ten.subarray(0, 1919)), ProofFormatError);
});
