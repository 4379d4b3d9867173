/**
 * ChaCha8 as `rand_chacha::ChaCha8Rng::from_seed` (stream 0, 64-bit block counter), only what the
 * DRG sampler needs: `nextU64` reads two consecutive 32-bit output words, low word first.
 */
const CONSTANTS = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574];

function quarter(x: Uint32Array, a: number, b: number, c: number, d: number): void {
  x[a] += x[b]; x[d] ^= x[a]; x[d] = (x[d] << 16) | (x[d] >>> 16);
  x[c] += x[d]; x[b] ^= x[c]; x[b] = (x[b] << 12) | (x[b] >>> 20);
  x[a] += x[b]; x[d] ^= x[a]; x[d] = (x[d] << 8) | (x[d] >>> 24);
  x[c] += x[d]; x[b] ^= x[c]; x[b] = (x[b] << 7) | (x[b] >>> 25);
}

export class ChaCha8Rng {
  private readonly key: Uint32Array;
  private counter = 0n;
  private readonly block = new Uint32Array(16);
  private pos = 16;

  constructor(seed: Uint8Array) {
    if (seed.length !== 32) throw new RangeError('ChaCha8 seed must be 32 bytes');
    const dv = new DataView(seed.buffer, seed.byteOffset, 32);
    this.key = Uint32Array.from({ length: 8 }, (_, i) => dv.getUint32(i * 4, true));
  }

  private refill(): void {
    const s = new Uint32Array(16);
    s.set(CONSTANTS, 0);
    s.set(this.key, 4);
    s[12] = Number(this.counter & 0xffffffffn);
    s[13] = Number(this.counter >> 32n);
    const x = Uint32Array.from(s);
    for (let i = 0; i < 4; i++) { // 8 rounds = 4 double rounds
      quarter(x, 0, 4, 8, 12); quarter(x, 1, 5, 9, 13); quarter(x, 2, 6, 10, 14); quarter(x, 3, 7, 11, 15);
      quarter(x, 0, 5, 10, 15); quarter(x, 1, 6, 11, 12); quarter(x, 2, 7, 8, 13); quarter(x, 3, 4, 9, 14);
    }
    for (let i = 0; i < 16; i++) this.block[i] = x[i] + s[i];
    this.counter++;
    this.pos = 0;
  }

  nextU32(): number {
    if (this.pos >= 16) this.refill();
    return this.block[this.pos++];
  }

  nextU64(): bigint {
    const lo = this.nextU32();
    const hi = this.nextU32();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }
}
