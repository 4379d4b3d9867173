/**
 * What a sealed sector keeps for its later PoSt proofs (`kiln seal --sector-dir DIR`): WindowPoSt and WinningPoSt
 * open leaves of tree_r_last and need comm_c and comm_r_last (rust-fil-proofs keeps the same in its cache
 * directory: tree-r-last-*.dat and p_aux). A sector directory holds:
 *
 *   sector.json     { format: "kiln-sealed-sector/1", registeredSealProof, sectorSize, sectorNumber, minerId,
 *                     commD, commR, commC, commRLast, replicaId, ticket (32-byte LE hex each), treeRLastArities,
 *                     replicaFile, treeFile }
 *   replica.bin     the sealed replica: sectorSize bytes, node v = 32-byte LE field element (the leaves of
 *                   tree_r_last)
 *   tree-r-last.bin tree_r_last's levels above the leaves, bottom up, 32 bytes per node (the last node is the
 *                   root = comm_r_last); without it the tree is rebuilt from replica.bin.
 *
 * Loading checks the sizes, that the tree's root is comm_r_last and that comm_r = Poseidon2(comm_c, comm_r_last).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToBigintLE, frFromBytesLE, frToBytesLE } from '../hash/fr32.js';
import { sealProofInfo, type SealProofInfo } from '../registry.js';
import { shapeArities } from '../tree/build.js';
import type { PathElement } from '../tree/path.js';
import { fastPoseidon } from './poseidon-fast.js';
import { DensePoseidonTree } from './trees.js';

export const SECTOR_DIR_FORMAT = 'kiln-sealed-sector/1';
export const SECTOR_JSON = 'sector.json';
export const REPLICA_FILE = 'replica.bin';
export const TREE_R_LAST_FILE = 'tree-r-last.bin';

/** A sealed sector's PoSt material in memory. */
export interface SealedSectorData {
  readonly info: SealProofInfo;
  readonly sectorNumber: bigint;
  readonly minerId: bigint;
  readonly commD: Uint8Array;
  readonly commR: Uint8Array;
  readonly replicaId: Uint8Array;
  readonly ticket: Uint8Array;
  readonly commC: bigint;
  readonly commRLast: bigint;
  /** tree_r_last: levels[0] = the replica (leaves), levels[arities.length] = the root, 32 B LE per node. */
  readonly treeRLast: { readonly arities: readonly number[]; readonly levels: readonly Uint8Array[] };
}

/** A problem with a sector directory (missing, inconsistent, wrong sizes). */
export class SectorDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SectorDirError';
  }
}

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** Writes a sector directory (created if needed). */
export function writeSectorDir(dir: string, s: SealedSectorData): void {
  mkdirSync(dir, { recursive: true });
  const json = {
    format: SECTOR_DIR_FORMAT,
    registeredSealProof: s.info.name,
    sectorSize: s.info.sectorSize,
    sectorNumber: s.sectorNumber.toString(),
    minerId: s.minerId.toString(),
    commD: hex(s.commD),
    commR: hex(s.commR),
    commC: hex(frToBytesLE(s.commC)),
    commRLast: hex(frToBytesLE(s.commRLast)),
    replicaId: hex(s.replicaId),
    ticket: hex(s.ticket),
    treeRLastArities: s.treeRLast.arities,
    replicaFile: REPLICA_FILE,
    treeFile: TREE_R_LAST_FILE,
  };
  writeFileSync(join(dir, REPLICA_FILE), s.treeRLast.levels[0]!);
  const upper = s.treeRLast.levels.slice(1);
  const tree = new Uint8Array(upper.reduce((a, l) => a + l.length, 0));
  let at = 0;
  for (const l of upper) {
    tree.set(l, at);
    at += l.length;
  }
  writeFileSync(join(dir, TREE_R_LAST_FILE), tree);
  writeFileSync(join(dir, SECTOR_JSON), `${JSON.stringify(json, null, 2)}\n`);
}

function field32(json: Record<string, unknown>, key: string, dir: string): Uint8Array {
  const v = json[key];
  if (typeof v !== 'string' || !/^[0-9a-fA-F]{64}$/.test(v)) throw new SectorDirError(`${dir}/${SECTOR_JSON}: ${key} must be 64 hex digits`);
  return new Uint8Array(Buffer.from(v, 'hex'));
}

function u64(json: Record<string, unknown>, key: string, dir: string): bigint {
  const v = json[key];
  if (typeof v !== 'string' || !/^\d+$/.test(v) || BigInt(v) >= 1n << 64n) throw new SectorDirError(`${dir}/${SECTOR_JSON}: ${key} must be a u64 as a decimal string`);
  return BigInt(v);
}

/** Reads and checks a sector directory written by writeSectorDir. */
export function readSectorDir(dir: string): SealedSectorData {
  const jsonPath = join(dir, SECTOR_JSON);
  if (!existsSync(jsonPath)) throw new SectorDirError(`${dir}: no ${SECTOR_JSON} (seal with \`kiln seal --sector-dir ${dir}\`)`);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(jsonPath, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new SectorDirError(`${jsonPath}: ${(e as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || json.format !== SECTOR_DIR_FORMAT) {
    throw new SectorDirError(`${jsonPath}: format must be "${SECTOR_DIR_FORMAT}"`);
  }
  const info = typeof json.registeredSealProof === 'string' ? sealProofInfo(json.registeredSealProof) : undefined;
  if (info === undefined) throw new SectorDirError(`${jsonPath}: unknown registeredSealProof ${JSON.stringify(json.registeredSealProof)}`);
  const arities = shapeArities(info.tree);
  const replicaFile = join(dir, typeof json.replicaFile === 'string' ? json.replicaFile : REPLICA_FILE);
  const replica = new Uint8Array(readFileSync(replicaFile));
  if (replica.length !== info.sectorSize) throw new SectorDirError(`${replicaFile}: ${replica.length} bytes, a ${info.name} replica has ${info.sectorSize}`);
  const treeFile = join(dir, typeof json.treeFile === 'string' ? json.treeFile : TREE_R_LAST_FILE);
  let levels: Uint8Array[];
  if (existsSync(treeFile)) {
    const tree = new Uint8Array(readFileSync(treeFile));
    levels = [replica];
    let width = info.nodes;
    let at = 0;
    for (const a of arities) {
      width /= a;
      if (at + width * 32 > tree.length) throw new SectorDirError(`${treeFile}: too short for a ${info.name} tree_r_last`);
      levels.push(tree.subarray(at, at + width * 32));
      at += width * 32;
    }
    if (at !== tree.length) throw new SectorDirError(`${treeFile}: ${tree.length - at} bytes too many for a ${info.name} tree_r_last`);
  } else {
    levels = new DensePoseidonTree(replica, arities).levels;
  }
  const commC = frFromBytesLE(field32(json, 'commC', dir));
  const commRLast = frFromBytesLE(field32(json, 'commRLast', dir));
  const commR = field32(json, 'commR', dir);
  const root = bytesToBigintLE(levels[arities.length]!.slice(0, 32));
  if (root !== commRLast) throw new SectorDirError(`${dir}: tree_r_last's root is not the stated comm_r_last`);
  if (fastPoseidon([commC, commRLast]) !== bytesToBigintLE(commR)) throw new SectorDirError(`${dir}: comm_r ≠ Poseidon2(comm_c, comm_r_last)`);
  return {
    info,
    sectorNumber: u64(json, 'sectorNumber', dir),
    minerId: u64(json, 'minerId', dir),
    commD: field32(json, 'commD', dir),
    commR,
    replicaId: field32(json, 'replicaId', dir),
    ticket: field32(json, 'ticket', dir),
    commC,
    commRLast,
    treeRLast: { arities, levels },
  };
}

/** Leaf `index` of tree_r_last. */
export function sectorTreeLeaf(s: SealedSectorData, index: number): bigint {
  return bytesToBigintLE(s.treeRLast.levels[0]!.slice(index * 32, index * 32 + 32));
}

/** The path of leaf `index` in tree_r_last, bottom up (as DensePoseidonTree.path). */
export function sectorTreePath(s: SealedSectorData, index: number): PathElement<bigint>[] {
  const { arities, levels } = s.treeRLast;
  if (!Number.isInteger(index) || index < 0 || index >= s.info.nodes) throw new RangeError(`leaf ${index} is outside the sector`);
  const out: PathElement<bigint>[] = [];
  let i = index;
  arities.forEach((a, level) => {
    const first = i - (i % a);
    const hashes: bigint[] = [];
    for (let k = 0; k < a; k++) if (k !== i % a) hashes.push(bytesToBigintLE(levels[level]!.slice((first + k) * 32, (first + k) * 32 + 32)));
    out.push({ hashes, index: i % a });
    i = Math.floor(i / a);
  });
  return out;
}
