/**
 * Option handling shared by the sealer and the synthetic C1 builder: sector sizes, hex values, the
 * sector's data (Fr32 checks and padding) and the deterministic random streams that stand in for
 * user input when it is absent. Everything here throws `SealOptionError` with a message fit for a CLI.
 */
import { createCipheriv, hash as nodeHash } from 'node:crypto';
import { parseSectorSize, sectorSizeRefusal, sealProofInfo, type SealProofInfo, type SealProofVersion } from '../registry.js';

export class SealOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealOptionError';
  }
}

/** Sizes a real seal can build in memory. */
export const SEALABLE_SIZES: readonly string[] = ['2KiB', '8MiB', '512MiB'];
/** Sizes synth-c1 builds (any size works; these are the ones it is meant for). */
export const SYNTHETIC_SIZES: readonly string[] = ['2KiB', '8MiB', '512MiB', '32GiB', '64GiB'];

/** Accepts what the registry's parseSectorSize accepts ("2KiB", "2kib", "2048", 2048 and the like);
 *  returns the registry label ("2KiB"). */
export function sectorSizeLabel(size: string | number): string {
  const found = parseSectorSize(size);
  if (found !== undefined) return found.label;
  throw new SealOptionError(sectorSizeRefusal(size, typeof size === 'string' ? '--sector-size' : undefined));
}

/**
 * The registered proof for a size (V1_1 by default, what lotus seals today) or by its full name
 * ("StackedDrg2KiBV1_1"). Interactive PoRep (V1, V1_1) and NI-PoRep (V1_2_Feat_NonInteractivePoRep)
 * are accepted; Synthetic PoRep (its C1 opens synthetic challenges) is not.
 */
export function resolveSealProof(opts: { sectorSize?: string | number; registeredProof?: string; version?: SealProofVersion }): SealProofInfo {
  let info: SealProofInfo | undefined;
  if (opts.registeredProof !== undefined) {
    info = sealProofInfo(opts.registeredProof);
    if (info === undefined) throw new SealOptionError(`unknown registered proof ${JSON.stringify(opts.registeredProof)} (e.g. StackedDrg2KiBV1_1)`);
    if (opts.sectorSize !== undefined && sectorSizeLabel(opts.sectorSize) !== sectorSizeLabel(info.sectorSize)) {
      throw new SealOptionError(`sector size ${opts.sectorSize} does not match ${info.name}`);
    }
  } else {
    if (opts.sectorSize === undefined) throw new SealOptionError('a sector size or a registered proof is required');
    const version = opts.version ?? 'V1_1';
    info = sealProofInfo(`StackedDrg${sectorSizeLabel(opts.sectorSize)}${version}`);
    if (info === undefined) throw new SealOptionError(`unknown seal proof version ${version}`);
  }
  if (info.challengeDerivation === 'synthetic') {
    throw new SealOptionError(`${info.name}: only interactive PoRep (V1, V1_1) and NI-PoRep (V1_2_Feat_NonInteractivePoRep) are supported`);
  }
  return info;
}

/** Parses 64 hex digits (an optional 0x prefix allowed) into 32 bytes. */
export function parseHex32(hex: string, what: string): Uint8Array {
  const s = hex.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]*$/.test(s)) throw new SealOptionError(`${what}: not hexadecimal: ${JSON.stringify(hex)}`);
  if (s.length !== 64) throw new SealOptionError(`${what}: expected 32 bytes (64 hex digits), got ${s.length} digits`);
  return new Uint8Array(Buffer.from(s, 'hex'));
}

export function check32(bytes: Uint8Array, what: string): Uint8Array {
  if (!(bytes instanceof Uint8Array) || bytes.length !== 32) throw new SealOptionError(`${what}: expected 32 bytes`);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

/** Canonical bytes of a user-facing RNG seed (a number, string, bigint or raw bytes). */
export function rngSeedBytes(seed: Uint8Array | string | number | bigint | undefined): Uint8Array {
  if (seed === undefined) return new TextEncoder().encode('0');
  if (seed instanceof Uint8Array) return seed;
  return new TextEncoder().encode(String(seed));
}

/** SHA256(domain ‖ 0x00 ‖ parts…): a domain-separated 32-byte key. */
export function deriveKey(domain: string, ...parts: readonly Uint8Array[]): Uint8Array {
  const enc = new TextEncoder().encode(domain);
  let n = enc.length + 1;
  for (const p of parts) n += p.length;
  const buf = new Uint8Array(n);
  buf.set(enc, 0);
  let o = enc.length + 1;
  for (const p of parts) {
    buf.set(p, o);
    o += p.length;
  }
  return new Uint8Array(nodeHash('sha256', buf, 'buffer'));
}

/** `length` bytes of AES-256-CTR keystream under `key` (IV 0): a fast deterministic byte stream. */
export function keystream(key: Uint8Array, length: number): Uint8Array {
  const cipher = createCipheriv('aes-256-ctr', key, new Uint8Array(16));
  const out = new Uint8Array(length);
  const chunk = 1 << 24;
  for (let o = 0; o < length; o += chunk) {
    const n = Math.min(chunk, length - o);
    out.set(cipher.update(new Uint8Array(n)), o);
  }
  return out;
}

/** Random sector data: keystream bytes with the top two bits of every 32-byte node cleared (valid Fr32). */
export function randomSectorData(sectorSize: number, rngSeed: Uint8Array): Uint8Array {
  const out = keystream(deriveKey('kiln seal data', rngSeed), sectorSize);
  for (let i = 31; i < out.length; i += 32) out[i] &= 0x3f;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sector data

/** Unpadded size of a sector: 127 bytes of payload per 128 (FR32 padding inserts 2 bits per 254). */
export function unpaddedSize(sectorSize: number): number {
  return (sectorSize / 128) * 127;
}

/**
 * FR32 padding (rust-fil-proofs `fr32::write_padded`): the input bit stream (LSB-first within each
 * byte) is cut into 254-bit chunks, and each chunk becomes one 32-byte node with its top 2 bits zero.
 * `unpadded.length` must be a multiple of 127.
 */
export function fr32Pad(unpadded: Uint8Array): Uint8Array {
  if (unpadded.length % 127 !== 0) throw new SealOptionError('unpadded data must be a multiple of 127 bytes');
  const nodes = (unpadded.length / 127) * 4;
  const out = new Uint8Array(nodes * 32);
  // 127 bytes = 1016 bits = 4 × 254 bits: handle each 127-byte quad independently.
  for (let q = 0; q < unpadded.length / 127; q++) {
    const src = unpadded.subarray(q * 127, q * 127 + 127);
    for (let k = 0; k < 4; k++) {
      const dst = out.subarray((q * 4 + k) * 32, (q * 4 + k + 1) * 32);
      const bitStart = k * 254;
      for (let b = 0; b < 32; b++) {
        // 8 bits of output starting at input bit bitStart + 8b (fewer for the last byte).
        const pos = bitStart + b * 8;
        const byte = pos >> 3;
        const shift = pos & 7;
        let v = src[byte] >> shift;
        if (shift !== 0 && byte + 1 < 127) v |= src[byte + 1] << (8 - shift);
        dst[b] = v & 0xff;
      }
      dst[31] &= 0x3f;
    }
  }
  return out;
}

/** Inverse of `fr32Pad` (used by tests). */
export function fr32Unpad(padded: Uint8Array): Uint8Array {
  if (padded.length % 128 !== 0) throw new SealOptionError('padded data must be a multiple of 128 bytes');
  const out = new Uint8Array((padded.length / 128) * 127);
  for (let q = 0; q < padded.length / 128; q++) {
    for (let bit = 0; bit < 1016; bit++) {
      const k = Math.floor(bit / 254);
      const r = bit % 254;
      const v = (padded[(q * 4 + k) * 32 + (r >> 3)] >> (r & 7)) & 1;
      out[q * 127 + (bit >> 3)] |= v << (bit & 7);
    }
  }
  return out;
}

/**
 * The sector's padded data from user input: exactly `sectorSize` bytes that are already Fr32 (every
 * node's top two bits zero), or exactly the unpadded size (127/128 of it), which is FR32-padded.
 */
export function prepareSectorData(data: Uint8Array, sectorSize: number): Uint8Array {
  if (data.length === sectorSize) {
    for (let i = 31; i < data.length; i += 32) {
      if ((data[i] & 0xc0) !== 0) {
        throw new SealOptionError(
          `data is not Fr32: node ${(i - 31) / 32} (bytes ${i - 31}..${i}) has one of its top two bits set; ` +
          `give already padded data (every 32-byte node < 2^254) or ${unpaddedSize(sectorSize)} unpadded bytes`,
        );
      }
    }
    return data;
  }
  if (data.length === unpaddedSize(sectorSize)) return fr32Pad(data);
  throw new SealOptionError(
    `data is ${data.length} bytes; a ${sectorSize}-byte sector takes exactly ${sectorSize} padded (Fr32) bytes ` +
    `or ${unpaddedSize(sectorSize)} unpadded bytes`,
  );
}
