/**
 * update.json: a sector update's public inputs and where its vanilla proofs are (what `kiln update` and `kiln
 * synth-snap` write, and `kiln prove-snap` / `verify-snap`, the gRPC client and the benches read): the registered
 * update proof, comm_r_old / comm_d_new / comm_r_new as 32-byte little-endian hex, h, the vanilla file beside it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { snapProofById, type SnapProofInfo } from './registry.js';
import type { SnapPublic } from './vanilla.js';

export const UPDATE_JSON_FORMAT = 'kiln-sector-update/1';

/** update.json: what prove-snap / verify-snap need besides the proofs. */
export interface UpdateFile {
  format: string;
  registeredUpdateProof: number;
  name: string;
  sectorSize: number;
  h: number;
  commROld: string;
  commDNew: string;
  commRNew: string;
  vanilla: string;
}

/** A field element as 32 bytes of little-endian hex (update.json's comm fields). */
export const hexLE = (x: bigint): string => Buffer.from(frHexBytes(x)).toString('hex');
function frHexBytes(x: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = x;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** 32 bytes of LE hex → bigint (RangeError naming the field). */
export function parseCommHex(hex: string, name: string): Uint8Array {
  const h = String(hex).trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{64}$/.test(h)) throw new RangeError(`${name} must be 32 bytes of hex (64 digits), got '${hex}'`);
  return new Uint8Array(Buffer.from(h, 'hex'));
}

const leBig = (b: Uint8Array): bigint => {
  let x = 0n;
  for (let i = 31; i >= 0; i--) x = (x << 8n) | BigInt(b[i]!);
  return x;
};

/** Reads and checks update.json; `vanilla` resolved against its directory. */
export async function readUpdateFile(path: string): Promise<{ u: UpdateFile; info: SnapProofInfo; pub: SnapPublic; raw: { commROld: Uint8Array; commDNew: Uint8Array; commRNew: Uint8Array }; vanillaPath: string }> {
  let u: UpdateFile;
  try {
    u = JSON.parse(readFileSync(path, 'utf8')) as UpdateFile;
  } catch (e) {
    throw new Error(`--update ${path}: not a readable update file (${(e as Error).message})`);
  }
  if (u?.format !== UPDATE_JSON_FORMAT) throw new Error(`--update ${path}: format is '${u?.format}', expected ${UPDATE_JSON_FORMAT}`);
  const info = snapProofById(u.registeredUpdateProof);
  if (!info) throw new Error(`--update ${path}: registeredUpdateProof ${u.registeredUpdateProof} is not a RegisteredUpdateProof (0–4)`);
  const raw = { commROld: parseCommHex(u.commROld, 'commROld'), commDNew: parseCommHex(u.commDNew, 'commDNew'), commRNew: parseCommHex(u.commRNew, 'commRNew') };
  return {
    u,
    info,
    pub: { commROld: leBig(raw.commROld), commDNew: leBig(raw.commDNew), commRNew: leBig(raw.commRNew) },
    raw,
    vanillaPath: resolve(dirname(path), u.vanilla),
  };
}

/** Writes `vanilla.json` (`vanillaFileText` of the partition proofs) and update.json into `outDir`; returns update.json's path. */
export function writeUpdateFiles(outDir: string, info: SnapProofInfo, h: number, pub: SnapPublic, elements: Uint8Array[], vanillaFileText: (e: readonly Uint8Array[]) => string): string {
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'vanilla.json'), vanillaFileText(elements));
  const u: UpdateFile = {
    format: UPDATE_JSON_FORMAT,
    registeredUpdateProof: info.id,
    name: info.name,
    sectorSize: info.size.sectorSize,
    h,
    commROld: hexLE(pub.commROld),
    commDNew: hexLE(pub.commDNew),
    commRNew: hexLE(pub.commRNew),
    vanilla: 'vanilla.json',
  };
  const file = join(outDir, 'update.json');
  writeFileSync(file, JSON.stringify(u, null, 2) + '\n');
  return file;
}
