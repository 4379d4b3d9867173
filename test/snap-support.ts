/**
 * rust-fil-proofs' test randomness, so tests can reproduce its pinned vectors: `XorShiftRng::from_seed(TEST_SEED)`
 * (rand_xorshift 0.3: xorshift128, next_u64 = low word first) and blstrs `Scalar::random` (four u64 little-endian
 * limbs, the top bit masked, rejected until below r). No tests here.
 */
import { FR_MODULUS } from '../src/field/layout.js';

export const RUST_TEST_SEED = Uint8Array.from([0x59, 0x62, 0xbe, 0x5d, 0x76, 0x3d, 0x31, 0x8d, 0x17, 0xdb, 0x37, 0x32, 0x54, 0x06, 0xbc, 0xe5]);

export class XorShiftRng {
  private x: number;
  private y: number;
  private z: number;
  private w: number;
  constructor(seed: Uint8Array = RUST_TEST_SEED) {
    const dv = new DataView(seed.buffer, seed.byteOffset, 16);
    this.x = dv.getUint32(0, true);
    this.y = dv.getUint32(4, true);
    this.z = dv.getUint32(8, true);
    this.w = dv.getUint32(12, true);
  }
  nextU32(): number {
    const x = this.x;
    const t = (x ^ (x << 11)) >>> 0;
    this.x = this.y;
    this.y = this.z;
    this.z = this.w;
    this.w = (this.w ^ (this.w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return this.w;
  }
  nextU64(): bigint {
    const lo = BigInt(this.nextU32());
    const hi = BigInt(this.nextU32());
    return (hi << 32n) | lo;
  }
  /** blstrs `Scalar::random`. */
  fr(): bigint {
    for (;;) {
      let v = 0n;
      for (let i = 0; i < 4; i++) v |= this.nextU64() << BigInt(64 * i);
      v &= (1n << 255n) - 1n;
      if (v < FR_MODULUS) return v;
    }
  }
}

import { snapParams, type SnapParams } from '../src/filecoin/snap/registry.js';
import { snapUpdateInMemory, snapPartitionProofs, type SnapUpdate } from '../src/filecoin/snap/update.js';
import type { SnapPartitionProof } from '../src/filecoin/snap/vanilla.js';
import { rng } from './support.js';

/**
 * rust's `test_empty_sector_update_circuit` fixture: random old replica labels and comm_c, random new data, the
 * new replica encoded with h = hs[log2 H_SELECT] (H_SELECT = 1 << 2), and every partition's vanilla proof.
 */
export function snapFixture(nodes: number, seed = 1, hIndex = 2): { p: SnapParams; update: SnapUpdate; proofs: SnapPartitionProof[] } {
  const p = snapParams(nodes);
  const next = rng(seed);
  const labelsROld = Array.from({ length: nodes }, () => next());
  const commC = next();
  const labelsDNew = Array.from({ length: nodes }, () => next());
  const update = snapUpdateInMemory(p, p.hs[hIndex]!, commC, labelsROld, labelsDNew);
  return { p, update, proofs: snapPartitionProofs(p, update.pub.commRNew, update.trees) };
}
