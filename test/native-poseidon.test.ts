/**
 * The native Poseidon (native/src/hash/poseidon.hpp via filecoin/hash/poseidon-native.ts) against its slow
 * twin, poseidon.ts's plain poseidonHash (itself checked against neptune's published vectors in
 * filecoin-poseidon.test.ts): every Filecoin arity and the larger ones neptune defines, random and edge inputs
 * (0, 1, r − 1, equal elements), a custom domain tag, batches, and refusals of non-canonical inputs; the sealer's
 * group hashing (seal/poseidon-fast.ts hashGroupsInto: column hashes and tree levels) natively = in TypeScript.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FR_MODULUS } from '../src/field/layout.js';
import { poseidonHash } from '../src/filecoin/hash/poseidon.js';
import { fastPoseidonHash, fastPoseidonHashMany, frWords, nativePoseidon } from '../src/filecoin/hash/poseidon-native.js';
import { hashGroupsInto, useNativeGroups } from '../src/filecoin/seal/poseidon-fast.js';
import { poseidonPool } from '../src/filecoin/seal/poseidon-pool.js';

const addon = nativePoseidon();
const skip = addon === null ? 'the native addon is not built' : false;
const rand = (): bigint => BigInt(`0x${randomBytes(32).toString('hex')}`) % FR_MODULUS;

test('native Poseidon = poseidonHash: arities 2, 4, 8, 11, 16, 24, 36 on random and edge inputs', { skip }, () => {
  for (const arity of [2, 4, 8, 11, 16, 24, 36]) {
    const cases: bigint[][] = [
      Array.from({ length: arity }, rand),
      Array.from({ length: arity }, rand),
      Array.from({ length: arity }, () => 0n),
      Array.from({ length: arity }, () => FR_MODULUS - 1n),
      Array.from({ length: arity }, (_, i) => (i % 2 === 0 ? 1n : FR_MODULUS - 1n)),
    ];
    for (const xs of cases) assert.equal(fastPoseidonHash(xs), poseidonHash(xs), `arity ${arity}`);
    const xs = cases[0]!;
    for (const tag of [0n, 3n, FR_MODULUS - 1n, rand()]) assert.equal(fastPoseidonHash(xs, tag), poseidonHash(xs, tag), `arity ${arity}, tag ${tag}`);
  }
});

test('native Poseidon in batches: one call, each hash equal to its own', { skip }, () => {
  for (const arity of [8, 11]) {
    const pre = Array.from({ length: 33 }, () => Array.from({ length: arity }, rand));
    assert.deepEqual(fastPoseidonHashMany(arity, pre), pre.map((p) => poseidonHash(p)));
    assert.deepEqual(fastPoseidonHashMany(arity, []), []);
  }
  assert.throws(() => fastPoseidonHashMany(8, [[1n, 2n]]), /2 elements, expected 8/);
});

test('native Poseidon refuses what poseidonHash refuses, and bad calls name what is wrong', { skip }, () => {
  assert.throws(() => fastPoseidonHash([1n, FR_MODULUS]), RangeError);
  assert.throws(() => poseidonHash([1n, FR_MODULUS]), RangeError);
  assert.throws(() => fastPoseidonHash([-1n, 2n]), RangeError);
  assert.throws(() => fastPoseidonHash([1n, 2n], FR_MODULUS), RangeError);
  // the addon itself: a non-canonical word, a length not a multiple of 32·arity, an arity never set up
  const a = addon!;
  fastPoseidonHash([1n, 2n]); // arity 2 set up
  assert.throws(() => a.poseidonHash(2, frWords([1n, FR_MODULUS])), /poseidonHash: inputs\[1\]: not a canonical Fr element/);
  assert.throws(() => a.poseidonHash(2, new Uint8Array(65)), /not a multiple of 64/);
  assert.throws(() => a.poseidonHash(3, frWords([1n, 2n, 3n])), /no constants for arity 3/);
  assert.throws(() => a.poseidonHash(2, frWords([1n, 2n]), new Uint8Array(31)), /tag must be 32 bytes/);
  assert.throws(() => a.poseidonSetup(2, 8, 55, new Uint8Array(32), new Uint8Array(0), new Uint8Array(0), new Uint8Array(0), new Uint8Array(0)), /poseidonSetup: crc: expected 79 elements/);
  // poseidonHash's unsupported arity stays its error
  assert.throws(() => fastPoseidonHash([1n, 2n, 3n]), /unsupported Poseidon arity 3/);
});

test('the sealer\'s group hashes natively = in TypeScript (hashGroupsInto): arities 2, 8, 11, runs across 256, sub-ranges, a shared buffer, the pool; a run with an element ≥ r hashed as before', { skip }, () => {
  const hashBoth = (input: Uint8Array, arity: number, from: number, to: number): Uint8Array[] =>
    [true, false].map((on) => {
      const out = new Uint8Array(to * 32);
      useNativeGroups(on);
      try {
        let ticks = 0;
        hashGroupsInto(input, arity, out, from, to, (n) => void (ticks += n));
        assert.equal(ticks, to - from, 'tick counts every group once');
      } finally {
        useNativeGroups(true);
      }
      return out;
    });
  for (const arity of [2, 8, 11]) {
    const groups = 600; // three runs of ≤ 256
    const input = frWords(Array.from({ length: groups * arity }, (_, i) => (i % 97 === 0 ? FR_MODULUS - 1n : i % 89 === 0 ? 0n : rand())));
    for (const [from, to] of [[0, groups], [255, 513], [7, 8]] as const) {
      const [n, t] = hashBoth(input, arity, from, to);
      assert.ok(Buffer.from(n!).equals(Buffer.from(t!)), `arity ${arity} [${from}, ${to})`);
    }
    // spot check against the reference hash
    const [n] = hashBoth(input, arity, 0, 3);
    const words = (g: number): bigint[] => Array.from({ length: arity }, (_, k) => BigInt(`0x${Buffer.from(input.subarray((g * arity + k) * 32, (g * arity + k + 1) * 32)).reverse().toString('hex')}`));
    assert.equal(BigInt(`0x${Buffer.from(n!.subarray(64, 96)).reverse().toString('hex')}`), poseidonHash(words(2)));
    // from a SharedArrayBuffer (as the pool's workers get it) and through a pool of two workers
    const shared = new Uint8Array(new SharedArrayBuffer(input.length));
    shared.set(input);
    const [s1, t1] = hashBoth(shared, arity, 0, groups);
    assert.ok(Buffer.from(s1!).equals(Buffer.from(t1!)));
    const pool = poseidonPool(2, 64);
    try {
      assert.ok(Buffer.from(pool.hashGroups(input, arity)).equals(Buffer.from(t1!)));
    } finally {
      pool.close();
    }
  }
  // an element ≥ r (never made by the sealer): the addon refuses the run, TypeScript hashes it as it always did
  const bad = frWords(Array.from({ length: 4 }, rand));
  bad.set(frWords([FR_MODULUS]).subarray(0, 32), 32);
  const [n, t] = hashBoth(bad, 2, 0, 2);
  assert.ok(Buffer.from(n!).equals(Buffer.from(t!)));
});
