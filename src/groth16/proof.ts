/**
 * A Groth16 proof and its bytes as bellperson writes them (FACTS §4): A (G1) ‖ B (G2) ‖ C (G1),
 * each zcash-compressed, 48 + 96 + 48 = 192 bytes. A multi-partition proof (C2 output) is the
 * partition proofs concatenated in order (1,920 bytes for ten).
 *
 * Decoding validates like bellperson's `Proof::read`: flags, canonical coordinates, on the curve,
 * in the subgroup, and not the point at infinity.
 */
import { FQ_BYTES, FQ_MODULUS, G1, G2, type G1Point, type G2Point } from '../field/layout.js';

export interface Proof {
  a: G1Point;
  b: G2Point;
  c: G1Point;
}

export const G1_COMPRESSED_BYTES = 48;
export const G2_COMPRESSED_BYTES = 96;
export const PROOF_BYTES = G1_COMPRESSED_BYTES + G2_COMPRESSED_BYTES + G1_COMPRESSED_BYTES;

/** Bytes that are not a valid proof. */
export class ProofFormatError extends Error {
  override name = 'ProofFormatError';
}

export function encodeProof(p: Proof): Uint8Array {
  for (const [name, pt] of [['A', p.a], ['B', p.b], ['C', p.c]] as const) {
    if (pt.is0()) throw new RangeError(`proof: ${name} is the point at infinity`);
  }
  const out = new Uint8Array(PROOF_BYTES);
  out.set(p.a.toBytes(true), 0);
  out.set(p.b.toBytes(true), G1_COMPRESSED_BYTES);
  out.set(p.c.toBytes(true), G1_COMPRESSED_BYTES + G2_COMPRESSED_BYTES);
  return out;
}

export function decodeProof(bytes: Uint8Array): Proof {
  if (!(bytes instanceof Uint8Array) || bytes.length !== PROOF_BYTES) {
    throw new ProofFormatError(`a proof is ${PROOF_BYTES} bytes, got ${bytes?.length}`);
  }
  const aBytes = bytes.subarray(0, G1_COMPRESSED_BYTES);
  const bBytes = bytes.subarray(G1_COMPRESSED_BYTES, G1_COMPRESSED_BYTES + G2_COMPRESSED_BYTES);
  const cBytes = bytes.subarray(G1_COMPRESSED_BYTES + G2_COMPRESSED_BYTES);
  return {
    a: decodeCompressed('A', aBytes, 1, (b) => G1.fromBytes(b)),
    b: decodeCompressed('B', bBytes, 2, (b) => G2.fromBytes(b)),
    c: decodeCompressed('C', cBytes, 1, (b) => G1.fromBytes(b)),
  };
}

/** The C2 output: every partition proof, in order. */
export function encodeProofs(proofs: readonly Proof[]): Uint8Array {
  const out = new Uint8Array(proofs.length * PROOF_BYTES);
  proofs.forEach((p, i) => out.set(encodeProof(p), i * PROOF_BYTES));
  return out;
}

export function decodeProofs(bytes: Uint8Array): Proof[] {
  if (bytes.length === 0 || bytes.length % PROOF_BYTES !== 0) {
    throw new ProofFormatError(`concatenated proofs: ${bytes.length} bytes is not a positive multiple of ${PROOF_BYTES}`);
  }
  const out: Proof[] = [];
  for (let o = 0; o < bytes.length; o += PROOF_BYTES) {
    try {
      out.push(decodeProof(bytes.subarray(o, o + PROOF_BYTES)));
    } catch (e) {
      throw new ProofFormatError(`partition ${o / PROOF_BYTES}: ${(e as Error).message}`);
    }
  }
  return out;
}

function decodeCompressed<P extends G1Point | G2Point>(
  name: string,
  bytes: Uint8Array,
  coords: number,
  decode: (b: Uint8Array) => P,
): P {
  if ((bytes[0] & 0x80) === 0) throw new ProofFormatError(`${name}: not a compressed point`);
  // noble reduces an x ≥ p instead of refusing it; zcash refuses non-canonical encodings.
  for (let k = 0; k < coords; k++) {
    let x = 0n;
    for (let i = 0; i < FQ_BYTES; i++) {
      const byte = k === 0 && i === 0 ? bytes[0] & 0x1f : bytes[k * FQ_BYTES + i];
      x = (x << 8n) | BigInt(byte);
    }
    if (x >= FQ_MODULUS) throw new ProofFormatError(`${name}: coordinate is not canonical (≥ p)`);
  }
  let p: P;
  try {
    p = decode(bytes);
  } catch (e) {
    throw new ProofFormatError(`${name}: ${(e as Error).message}`);
  }
  if (p.is0()) throw new ProofFormatError(`${name}: point at infinity`);
  return p;
}
