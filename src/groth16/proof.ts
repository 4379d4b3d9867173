/**
 * A Groth16 proof and its bytes as bellperson writes them (docs/filecoin.md §4): A (G1) ‖ B (G2) ‖ C (G1),
 * each zcash-compressed, 48 + 96 + 48 = 192 bytes. A multi-partition proof (C2 output) is the
 * partition proofs concatenated in order (1,920 bytes for ten).
 *
 * Decoding validates like bellperson's `Proof::read`: flags, canonical coordinates, on the curve,
 * in the subgroup (curve/encoding.ts, the strict point decoder), and not the point at infinity.
 */
import { decodeG1, decodeG2, encodeG1, encodeG2 } from '../curve/encoding.js';
import { FLAG_COMPRESSED, G1_COMPRESSED_BYTES, G2_COMPRESSED_BYTES, type G1Point, type G2Point } from '../field/layout.js';

export interface Proof {
  a: G1Point;
  b: G2Point;
  c: G1Point;
}

export { G1_COMPRESSED_BYTES, G2_COMPRESSED_BYTES };
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
  out.set(encodeG1(p.a), 0);
  out.set(encodeG2(p.b), G1_COMPRESSED_BYTES);
  out.set(encodeG1(p.c), G1_COMPRESSED_BYTES + G2_COMPRESSED_BYTES);
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
    a: decodeCompressed('A', aBytes, decodeG1),
    b: decodeCompressed('B', bBytes, decodeG2),
    c: decodeCompressed('C', cBytes, decodeG1),
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

function decodeCompressed<P extends G1Point | G2Point>(name: string, bytes: Uint8Array, decode: (b: Uint8Array) => P): P {
  if ((bytes[0] & FLAG_COMPRESSED) === 0) throw new ProofFormatError(`${name}: not a compressed point`);
  let p: P;
  try {
    p = decode(bytes); // strict: canonical coordinates (zcash refuses x ≥ p, noble would reduce), curve, subgroup
  } catch (e) {
    throw new ProofFormatError(`${name}: ${(e as Error).message.replace(/^G[12]: /, '')}`);
  }
  if (p.is0()) throw new ProofFormatError(`${name}: point at infinity`);
  return p;
}
