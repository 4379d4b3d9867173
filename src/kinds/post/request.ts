/**
 * A WINNING_POST / WINDOW_POST_PARTITION request's checks and plan, shared by the planner (planner.ts: the
 * cheap field checks on the event loop) and the synthesis worker (tasks.ts postPlanTask: the parse, the
 * challenge checks and the public inputs).
 */
import { PlanError, type ProofRequest } from '../../engine/types.js';
import { FR_MODULUS } from '../../field/layout.js';
import { checkPoStSectors, PoStInputError, postPublicInputs, windowSectorInputs, type PoStChallengeContext } from '../../filecoin/post/circuit.js';
import { postProofById, postProofName } from '../../filecoin/post/registry.js';
import type { PoStProofInfo, PoStSectorProof } from '../../filecoin/post/types.js';
import { parsePoStSectorProof, VanillaProofError } from '../../filecoin/post/vanilla.js';

/** The parsed, checked request: what the ProofWork proves. */
export interface PoStPlan {
  info: PoStProofInfo;
  sectors: PoStSectorProof[];
  randomness: Uint8Array;
  partitionIndex: number;
  inputs: bigint[];
}

function le32(bytes: Uint8Array): bigint {
  let x = 0n;
  for (let i = 31; i >= 0; i--) x = (x << 8n) | BigInt(bytes[i]!);
  return x;
}

/** The request's fields checked (cheap: no element parsed) for `type`; its vanilla proof elements (PlanError naming the problem). */
export function checkPoStRequest(req: ProofRequest, type: 'winning' | 'window'): { info: PoStProofInfo; elements: Uint8Array[] } {
  const wire = type === 'winning' ? 'WINNING_POST' : 'WINDOW_POST_PARTITION';
  const info = postProofById(req.registeredProof);
  if (!info) throw new PlanError(`registered_proof ${req.registeredProof} is not a RegisteredPoStProof (0–4 Winning, 5–14 Window)`);
  if (info.type !== type) {
    throw new PlanError(`registered_proof ${req.registeredProof} is ${postProofName(info)}, not a ${type === 'winning' ? 'WinningPoSt' : 'WindowPoSt'} proof (${wire} takes ${type === 'winning' ? '0–4' : '5–14'})`);
  }
  if (req.sectorSize !== 0 && req.sectorSize !== info.size.sectorSize) {
    throw new PlanError(`sector_size ${req.sectorSize} does not match registered_proof ${postProofName(info)} (${info.size.sectorSize})`);
  }
  if (req.randomness.length !== 32) throw new PlanError(`randomness must be 32 bytes, got ${req.randomness.length}`);
  if (le32(req.randomness) >= FR_MODULUS) throw new PlanError('randomness is not a canonical field element (Curio masks its last byte with 0x3f)');
  if (!Number.isSafeInteger(req.partitionIndex) || req.partitionIndex < 0) throw new PlanError(`partition_index ${req.partitionIndex} is invalid`);
  if (type === 'winning' && req.partitionIndex !== 0) throw new PlanError(`partition_index must be 0 for WinningPoSt, got ${req.partitionIndex}`);
  const elements = req.vanillaProofs.length > 0 ? req.vanillaProofs : req.vanillaProof.length > 0 ? [req.vanillaProof] : [];
  if (elements.length === 0) throw new PlanError(`vanilla_proofs is empty: ${wire} needs ${type === 'winning' ? 'the challenged sector\'s' : 'one per sector of the partition:'} FallbackPoStSectorProof${type === 'winning' ? '' : 's'}`);
  if (type === 'winning' && elements.length !== 1) throw new PlanError(`WinningPoSt takes exactly one vanilla proof (the challenged sector), got ${elements.length}`);
  if (type === 'window' && elements.length > info.sectorCount) {
    throw new PlanError(`${elements.length} vanilla proofs; a ${info.size.label} WindowPoSt partition holds at most ${info.sectorCount} sectors`);
  }
  return { info, elements };
}

/**
 * Parses every element (errors name the element, field and offset), checks each challenged leaf against the
 * challenge the randomness derives and comm_r (errors name the sector and challenge), and derives the public
 * inputs: seconds for a full 32 GiB WindowPoSt partition, so the engine runs it in a synthesis worker
 * (tasks.ts postPlanTask). PlanError naming the problem.
 */
export function planPoStSectors(info: PoStProofInfo, elements: readonly Uint8Array[], randomness: Uint8Array, partitionIndex: number): { sectors: PoStSectorProof[]; inputs: bigint[] } {
  const { sectors, ctx } = checkPoStPiece(info, elements, randomness, partitionIndex, 0);
  return { sectors, inputs: postPublicInputs(info, sectors, ctx) };
}

/**
 * planPoStSectors of a WindowPoSt piece: `elements` are the partition's vanilla proofs from position `first` on
 * (messages and challenges count from there, as the whole parse's do); its public inputs unpadded
 * (windowSectorInputs: the planner joins the pieces' and pads, padWindowInputs).
 */
export function planPoStPiece(info: PoStProofInfo, elements: readonly Uint8Array[], randomness: Uint8Array, partitionIndex: number, first: number): { sectors: PoStSectorProof[]; inputs: bigint[] } {
  const { sectors, ctx } = checkPoStPiece(info, elements, randomness, partitionIndex, first);
  return { sectors, inputs: windowSectorInputs(info, sectors, ctx) };
}

function checkPoStPiece(info: PoStProofInfo, elements: readonly Uint8Array[], randomness: Uint8Array, partitionIndex: number, first: number): { sectors: PoStSectorProof[]; ctx: PoStChallengeContext } {
  const sectors = elements.map((bytes, k) => {
    try {
      return parsePoStSectorProof(bytes, info);
    } catch (e) {
      if (e instanceof VanillaProofError) throw new PlanError(`vanilla_proofs[${first + k}]: ${e.message}`);
      throw new PlanError(`vanilla_proofs[${first + k}]: ${(e as Error).message}`);
    }
  });
  const ctx: PoStChallengeContext = { randomness, partitionIndex, firstIndex: first };
  try {
    checkPoStSectors(info, sectors, ctx);
  } catch (e) {
    if (e instanceof PoStInputError) throw new PlanError(`${postProofName(info)}: ${e.message}`);
    throw e;
  }
  return { sectors, ctx };
}

/** Validates a PoSt request for `type` and parses its vanilla proofs, in this thread (PlanError naming the problem). */
export function planPoStRequest(req: ProofRequest, type: 'winning' | 'window'): PoStPlan {
  const { info, elements } = checkPoStRequest(req, type);
  const { sectors, inputs } = planPoStSectors(info, elements, req.randomness, req.partitionIndex);
  return { info, sectors, randomness: req.randomness, partitionIndex: req.partitionIndex, inputs };
}
