/**
 * Groth16 verification of a partition proof in a worker thread (the engine's verification pool,
 * synth-pool.ts): noble's pairing takes 40–150 ms of JavaScript per proof (the input sum is native when the
 * CPU addon is built: verify-proof.ts), which on the event loop
 * would delay every GetStatus behind it. The verifying key arrives encoded and is prepared once per
 * key id in each worker.
 */
import { createHash } from 'node:crypto';
import { decodeVerifyingKey, encodeVerifyingKey, type VerifyingKey } from '../groth16/keys.js';
import { encodeProof, type Proof } from '../groth16/proof.js';
import { G1, G2 } from '../field/layout.js';
import { prepareVerifyingKey, type PreparedVerifyingKey } from '../groth16/verifier.js';
import { verifyPartitionProof } from './verify-proof.js';

/** A proof as affine coordinates (plain bigints: structured-cloneable, unlike noble's points). */
export interface AffineProof {
  a: { x: bigint; y: bigint };
  b: { x: { c0: bigint; c1: bigint }; y: { c0: bigint; c1: bigint } };
  c: { x: bigint; y: bigint };
}

export function affineProof(p: Proof): AffineProof {
  const b = p.b.toAffine();
  return { a: p.a.toAffine(), b: { x: { c0: b.x.c0, c1: b.x.c1 }, y: { c0: b.y.c0, c1: b.y.c1 } }, c: p.c.toAffine() };
}

export interface VerifyArg {
  vkId: string;
  vk: Uint8Array;
  proof: AffineProof;
  inputs: bigint[];
}

const prepared = new Map<string, Promise<PreparedVerifyingKey>>();

/** The prepared key of `vkId` in this worker, decoded and prepared on its first use (16 kept). */
function preparedKey(arg: { vkId: string; vk: Uint8Array }): Promise<PreparedVerifyingKey> {
  let pvk = prepared.get(arg.vkId);
  if (pvk === undefined) {
    pvk = decodeVerifyingKey(arg.vk, { checkPoints: false }).then(prepareVerifyingKey);
    prepared.set(arg.vkId, pvk);
    if (prepared.size > 16) prepared.delete(prepared.keys().next().value!);
  }
  return pvk;
}

/** Prepares a key ahead of its first proof (the engine's PreloadSRS): that proof's verification then
 *  finds it ready. The worker's modules (the pairing's, the native input sum's) load with it, and one
 *  verification of a stand-in proof (the generators; it fails, and is meant to) and its encoding run, so the
 *  first real proof's verification does not pay for cold code: a WinningPoSt's first verification in the
 *  urgent worker took 523 ms under load in bench:mixed (2026-12-07), 31-54 ms warm. */
export async function prepareKey(arg: { vkId: string; vk: Uint8Array }): Promise<{ ms: number; warmed: boolean }> {
  const t0 = performance.now();
  const pvk = await preparedKey(arg);
  const standIn: Proof = { a: G1.BASE, b: G2.BASE, c: G1.BASE };
  const inputs = new Array<bigint>(Math.max(0, pvk.ic.length - 1)).fill(1n);
  const ok = await verifyPartitionProof(pvk, standIn, inputs);
  encodeProof(standIn);
  return { ms: performance.now() - t0, warmed: !ok };
}

/** Verifies the proof and encodes it (the 192 bytes of the answer: encoding checks each point,
 *  which costs about as much as a pairing in JavaScript, so it is done here too). */
export async function verifyEncoded(arg: VerifyArg): Promise<{ ok: boolean; encoded: Uint8Array; ms: number }> {
  const t0 = performance.now();
  const pvk = preparedKey(arg);
  const proof: Proof = {
    a: G1.fromAffine(arg.proof.a),
    b: G2.fromAffine(arg.proof.b as Parameters<typeof G2.fromAffine>[0]),
    c: G1.fromAffine(arg.proof.c),
  };
  const ok = await verifyPartitionProof(await pvk, proof, arg.inputs);
  return { ok, encoded: encodeProof(proof), ms: performance.now() - t0 };
}

/** The encoded verifying key and its id (sha256), computed once per key object. */
const encoded = new WeakMap<VerifyingKey, { vk: Uint8Array; vkId: string }>();
export function encodedVerifyingKey(vk: VerifyingKey): { vk: Uint8Array; vkId: string } {
  let e = encoded.get(vk);
  if (e === undefined) {
    const bytes = encodeVerifyingKey(vk);
    e = { vk: bytes, vkId: createHash('sha256').update(bytes).digest('hex') };
    encoded.set(vk, e);
  }
  return e;
}
