/**
 * Poseidon through the native CPU addon (native/src/hash/poseidon.hpp: neptune's optimized form over
 * Montgomery Fr), for the C1 consistency checks (filecoin/c1-checks.ts, tree/path.ts): their ~170 hashes per
 * challenge took 10.7 s per 32 GiB partition in bigint TypeScript on the H100 machine; and for the sealer's
 * column hashes and trees (seal/poseidon-fast.ts hashGroupsInto: an 8 MiB seal's 60 s of Poseidon). The
 * constants are poseidon.ts's, handed to the addon once per arity; poseidon.ts's poseidonHash is the slow
 * twin (test/native-poseidon.test.ts) and what fastPoseidonHash falls back to without the addon.
 */
import { loadNative, type NativeAddon } from '../../backend/native.js';
import { FR_MODULUS } from '../../field/layout.js';
import { poseidonHash, poseidonOptimizedConstants } from './poseidon.js';

let addon: NativeAddon | null | undefined;
const ready = new Set<number>();

/** Whether fastPoseidonHash may use the addon (default true); false: poseidon.ts's hash, for A/B benches. */
export function useNativePoseidon(on: boolean): void {
  addon = on ? undefined : null;
}

/** The addon when it loads and has Poseidon; null otherwise (the TypeScript hash is used). */
export function nativePoseidon(): NativeAddon | null {
  if (addon === undefined) {
    try {
      const a = loadNative();
      addon = typeof a.poseidonHash === 'function' ? a : null;
    } catch {
      addon = null;
    }
  }
  return addon;
}

/** Canonical Fr elements as little-endian 32-byte words, one after another. */
export function frWords(xs: readonly bigint[]): Uint8Array {
  const out = new Uint8Array(32 * xs.length);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < xs.length; i++) {
    let x = xs[i]!;
    for (let w = 0; w < 4; w++) {
      dv.setBigUint64(32 * i + 8 * w, x & 0xffffffffffffffffn, true);
      x >>= 64n;
    }
  }
  return out;
}

function readWord(b: Uint8Array, i: number): bigint {
  const dv = new DataView(b.buffer, b.byteOffset + 32 * i, 32);
  return dv.getBigUint64(0, true) | (dv.getBigUint64(8, true) << 64n) | (dv.getBigUint64(16, true) << 128n) | (dv.getBigUint64(24, true) << 192n);
}

function setup(a: NativeAddon, arity: number): void {
  if (ready.has(arity)) return;
  const c = poseidonOptimizedConstants(arity);
  a.poseidonSetup(
    arity,
    c.fullRounds,
    c.partialRounds,
    frWords(c.compressedRoundConstants),
    frWords(c.preSparseMatrix.flat()),
    frWords(c.mds.flat()),
    frWords(c.sparseMatrices.flatMap((m) => m.wHat)),
    frWords(c.sparseMatrices.flatMap((m) => m.vRest)),
  );
  ready.add(arity);
}

const NATIVE_ARITIES = new Set([2, 4, 8, 11, 16, 24, 36]);

/** poseidonHash(inputs, domainTag), natively when the addon is there (the same value; RangeError for an input
 *  that is not a canonical Fr element, as poseidonHash). */
export function fastPoseidonHash(inputs: readonly bigint[], domainTag?: bigint): bigint {
  const a = nativePoseidon();
  if (a === null || !NATIVE_ARITIES.has(inputs.length)) return poseidonHash(inputs, domainTag);
  for (const x of inputs) if (x < 0n || x >= FR_MODULUS) throw new RangeError('Poseidon input is not a canonical Fr element');
  if (domainTag !== undefined && (domainTag < 0n || domainTag >= FR_MODULUS)) throw new RangeError('Poseidon domain tag is not a canonical Fr element');
  setup(a, inputs.length);
  return readWord(a.poseidonHash(inputs.length, frWords(inputs), domainTag === undefined ? undefined : frWords([domainTag])), 0);
}

/** Many hashes of one arity in one call: preimages.length · arity inputs → one hash each. */
export function fastPoseidonHashMany(arity: number, preimages: readonly (readonly bigint[])[]): bigint[] {
  const a = nativePoseidon();
  if (a === null || !NATIVE_ARITIES.has(arity)) return preimages.map((p) => poseidonHash(p));
  const flat: bigint[] = [];
  for (const p of preimages) {
    if (p.length !== arity) throw new RangeError(`Poseidon preimage of ${p.length} elements, expected ${arity}`);
    for (const x of p) {
      if (x < 0n || x >= FR_MODULUS) throw new RangeError('Poseidon input is not a canonical Fr element');
      flat.push(x);
    }
  }
  setup(a, arity);
  const out = a.poseidonHash(arity, frWords(flat));
  return preimages.map((_, i) => readWord(out, i));
}

/**
 * Groups of `arity` canonical little-endian 32-byte elements (bytes.length / 32 / arity of them) → one 32-byte hash
 * each (the MerkleTree domain tag), natively; undefined when the addon or the arity is not there (hash them in
 * TypeScript). RangeError for an element that is not canonical (≥ r).
 */
export function nativeHashGroups(arity: number, bytes: Uint8Array): Uint8Array | undefined {
  const a = nativePoseidon();
  if (a === null || !NATIVE_ARITIES.has(arity)) return undefined;
  setup(a, arity);
  return a.poseidonHash(arity, bytes);
}
