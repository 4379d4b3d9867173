/**
 * A SNAP_DEALS_UPDATE request's checks and plan, shared by the planner (planner.ts: the cheap field checks on
 * the event loop) and the synthesis worker (tasks.ts snapPlanTask: the parse and vanilla.rs `verify` checks).
 */
import { PlanError, type ProofRequest } from '../../engine/types.js';
import { FR_MODULUS } from '../../field/layout.js';
import { snapHDefault, snapProofById, type SnapProofInfo } from '../../filecoin/snap/registry.js';
import { checkSnapPartition, parseSnapPartitionProof, SnapInputError, VanillaProofError, type SnapPartitionProof, type SnapPublic } from '../../filecoin/snap/vanilla.js';

/** The parsed, checked request. */
export interface SnapPlan {
  info: SnapProofInfo;
  h: number;
  pub: SnapPublic;
  partitions: SnapPartitionProof[];
}

function fr32(bytes: Uint8Array, name: string): bigint {
  if (bytes.length !== 32) throw new PlanError(`${name} must be 32 bytes, got ${bytes.length}`);
  let x = 0n;
  for (let i = 31; i >= 0; i--) x = (x << 8n) | BigInt(bytes[i]!);
  if (x >= FR_MODULUS) throw new PlanError(`${name} is not a canonical field element (≥ r)`);
  return x;
}

/** The request's fields checked (cheap: no element parsed); its partition proof elements (PlanError naming the problem). */
export function checkSnapRequest(req: ProofRequest): { info: SnapProofInfo; h: number; pub: SnapPublic; elements: Uint8Array[] } {
  const info = snapProofById(req.registeredProof);
  if (!info) throw new PlanError(`registered_proof ${req.registeredProof} is not a RegisteredUpdateProof (0–4: StackedDrg{2KiB,8MiB,512MiB,32GiB,64GiB}V1)`);
  if (req.sectorSize !== 0 && req.sectorSize !== info.size.sectorSize) {
    throw new PlanError(`sector_size ${req.sectorSize} does not match registered_proof ${info.name} (${info.size.sectorSize})`);
  }
  const pub: SnapPublic = { commROld: fr32(req.commROld, 'comm_r_old'), commDNew: fr32(req.commDNew, 'comm_d_new'), commRNew: fr32(req.commRNew, 'comm_r_new') };
  const n = info.params.partitionCount;
  const elements = req.vanillaProofs;
  if (elements.length !== n) {
    throw new PlanError(`vanilla_proofs has ${elements.length} elements; a ${info.size.label} SnapDeals update takes ${n} PartitionProof${n > 1 ? 's' : ''}, one per partition in order`);
  }
  return { info, h: snapHDefault(info.params.sectorNodes), pub, elements };
}

/**
 * Parses every partition proof (errors name the element, field and offset) and checks it as vanilla.rs `verify`
 * does (errors name the partition and challenge): about a second for a 32 GiB update's 16 × 561,768 B, so the
 * engine runs it in a synthesis worker (tasks.ts snapPlanTask). PlanError naming the problem.
 */
export function planSnapPartitions(info: SnapProofInfo, elements: readonly Uint8Array[], h: number, pub: SnapPublic): SnapPartitionProof[] {
  return elements.map((bytes, k) => {
    let pp: SnapPartitionProof;
    try {
      pp = parseSnapPartitionProof(bytes, info.params);
    } catch (e) {
      if (e instanceof VanillaProofError) throw new PlanError(`vanilla_proofs[${k}]: ${e.message}`);
      throw new PlanError(`vanilla_proofs[${k}]: ${(e as Error).message}`);
    }
    try {
      checkSnapPartition(info.params, k, h, pub, pp);
    } catch (e) {
      if (e instanceof SnapInputError) throw new PlanError(`${info.name} vanilla_proofs[${k}]: ${e.message}`);
      throw e;
    }
    return pp;
  });
}

/** Validates a SNAP_DEALS_UPDATE request and parses and checks its partition proofs, in this thread (PlanError naming the problem). */
export function planSnapRequest(req: ProofRequest): SnapPlan {
  const { info, h, pub, elements } = checkSnapRequest(req);
  return { info, h, pub, partitions: planSnapPartitions(info, elements, h, pub) };
}
