/**
 * The PoSt vanilla proof codec: raw bincode 1.x `FallbackPoStSectorProof` exactly as Curio sends it to cuzk
 * (docs/filecoin.md §8; rust-fil-proofs v19 filecoin-proofs/src/types/mod.rs, storage-proofs-post/src/fallback/vanilla.rs,
 * storage-proofs-core/src/merkle/proof.rs). bincode 1.x: little-endian, fixed-width integers, u64 sequence
 * lengths, u32 enum tags, fixed arrays without a length; a Poseidon domain element is its 32-byte LE repr.
 *
 *   FallbackPoStSectorProof = sector_id: u64, comm_r: [32],
 *     vanilla_proof: Proof { sectors: u64 n (= 1), n × SectorProof }
 *   SectorProof = inclusion_proofs: u64 m, m × MerkleProof; comm_c: [32]; comm_r_last: [32]
 *   MerkleProof = u32 tag:
 *     0 Single { root, leaf, path }          (trees 8-0-0: 2 KiB, 8 MiB, 512 MiB)
 *     1 Sub    { base_proof, sub_proof, root, leaf }            (8-8-0: 32 GiB)
 *     2 Top    { base_proof, sub_proof, top_proof, root, leaf } (8-8-2: 64 GiB)
 *   InclusionPath = u64 len, len × PathElement { hashes: u64 k, k × [32]; index: u64 }
 *
 * The parser checks every length, tag, index (< the level's arity), path length and field element (canonical,
 * < r) against the registered proof's tree shape and challenge count, and rejects trailing bytes; any problem
 * is a `VanillaProofError` naming the field and its byte offset. In the names, `base`/`sub`/`top` are the
 * levels of `path` (Single) or `base_proof`/`sub_proof`/`top_proof` (Sub/Top), as in kiln's `MerkleProof`.
 *
 * Vanilla proof files (`readVanillaFile`): cuzk-bench's format, a JSON array of base64-encoded elements (or one
 * base64 string), which `kiln gen-vanilla` and `kiln synth-post` write; a file that is not such JSON is read
 * as one raw bincode element.
 */
import { readFileSync } from 'node:fs';
import { FR_MODULUS } from '../../field/layout.js';
import type { TreeShape } from '../registry.js';
import { fastPoseidon } from '../seal/poseidon-fast.js';
import { fullPath, pathLeafIndex, type MerkleProof, type MerkleProofShape, type PathElement } from '../tree/path.js';
import { postSectorChallenges } from './challenges.js';
import { WINNING_POST_CHALLENGE_COUNT, allPoStProofs } from './registry.js';
import type { PoStProofInfo, PoStSectorProof, PoStType } from './types.js';

/** A malformed vanilla proof; the message names the field and its byte offset. */
export class VanillaProofError extends Error {
  constructor(message: string, readonly field?: string, readonly offset?: number) {
    super(message);
    this.name = 'VanillaProofError';
  }
}

/** The layout every inclusion proof of a registered proof must have. */
export interface PoStProofLayout {
  readonly shape: MerkleProofShape;
  /** bincode tag of the MerkleProof enum (0 Single, 1 Sub, 2 Top). */
  readonly tag: number;
  /** Per part (base, sub, top): the number of levels and their arity. */
  readonly base: { readonly levels: number; readonly arity: number };
  readonly sub: { readonly levels: number; readonly arity: number };
  readonly top: { readonly levels: number; readonly arity: number };
  /** Inclusion proofs per sector proof: 66 (winning) or 10 (window). */
  readonly inclusionProofs: number;
}

const SHAPE_TAG: Record<MerkleProofShape, number> = { Single: 0, Sub: 1, Top: 2 };
const TAG_SHAPE: readonly MerkleProofShape[] = ['Single', 'Sub', 'Top'];

/** Inclusion proofs in one sector's vanilla proof: 66 for WinningPoSt, the challenge count (10) for WindowPoSt. */
export function inclusionProofCount(info: PoStProofInfo): number {
  return info.type === 'winning' ? WINNING_POST_CHALLENGE_COUNT : info.challengeCount;
}

export function postProofLayout(info: PoStProofInfo): PoStProofLayout {
  const t: TreeShape = info.size.tree;
  const shape: MerkleProofShape = t.topArity ? 'Top' : t.subArity ? 'Sub' : 'Single';
  return {
    shape,
    tag: SHAPE_TAG[shape],
    base: { levels: t.baseLevels, arity: t.baseArity },
    sub: { levels: t.subArity ? 1 : 0, arity: t.subArity },
    top: { levels: t.topArity ? 1 : 0, arity: t.topArity },
    inclusionProofs: inclusionProofCount(info),
  };
}

/** Bytes of one inclusion proof of this layout. */
export function merkleProofBytes(l: PoStProofLayout): number {
  const path = (p: { levels: number; arity: number }): number => 8 + p.levels * (8 + (p.arity - 1) * 32 + 8);
  let n = 4 + 64 + path(l.base);
  if (l.shape !== 'Single') n += path(l.sub);
  if (l.shape === 'Top') n += path(l.top);
  return n;
}

/** Exact byte size of one `FallbackPoStSectorProof` of this registered proof (5,680 B for 2 KiB window). */
export function postSectorProofSize(info: PoStProofInfo): number {
  const l = postProofLayout(info);
  return 8 + 32 + 8 + 8 + l.inclusionProofs * merkleProofBytes(l) + 32 + 32;
}

/** The proof a vanilla file of `type` determines by the size of its sector proofs: the current one of that size
 *  (Winning…V1; Window…V1_1, whose proofs are the size of Window…V1's); undefined when no size matches. */
export function postProofForVanilla(type: PoStType, sectorProofBytes: number): PoStProofInfo | undefined {
  return allPoStProofs().find((p) => p.type === type && (type === 'winning' || p.api === 'V1_2') && postSectorProofSize(p) === sectorProofBytes);
}

// ---------------------------------------------------------------------------------------------
// Parsing

/** The bincode reader (shared with the SnapDeals codec, snap/vanilla.ts). */
export class Reader {
  readonly dv: DataView;
  pos = 0;

  constructor(readonly bytes: Uint8Array) {
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  fail(field: string, what: string, at = this.pos): never {
    throw new VanillaProofError(`vanilla proof: ${field} ${what} (byte offset ${at})`, field, at);
  }

  need(n: number, field: string): void {
    if (this.pos + n > this.bytes.length) {
      this.fail(field, `is truncated: needs ${n} bytes, ${this.bytes.length - this.pos} left of ${this.bytes.length}`);
    }
  }

  u32(field: string): number {
    this.need(4, field);
    const v = this.dv.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  u64(field: string): bigint {
    this.need(8, field);
    const v = this.dv.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** A u64 length that must equal `expected`. */
  len(field: string, expected: number): void {
    const at = this.pos;
    const v = this.u64(field);
    if (v !== BigInt(expected)) this.fail(field, `length = ${v}, expected ${expected}`, at);
  }

  fr(field: string): bigint {
    this.need(32, field);
    const at = this.pos;
    const dv = this.dv;
    const v = dv.getBigUint64(at, true) | (dv.getBigUint64(at + 8, true) << 64n)
      | (dv.getBigUint64(at + 16, true) << 128n) | (dv.getBigUint64(at + 24, true) << 192n);
    this.pos += 32;
    if (v >= FR_MODULUS) this.fail(field, `= 0x${v.toString(16)} is not a canonical field element (≥ r)`, at);
    return v;
  }
}

function readPath(r: Reader, field: string, levels: number, arity: number): PathElement<bigint>[] {
  r.len(field, levels);
  const out: PathElement<bigint>[] = [];
  for (let j = 0; j < levels; j++) {
    const f = `${field}[${j}]`;
    r.len(`${f}.hashes`, arity - 1);
    const hashes: bigint[] = [];
    for (let k = 0; k < arity - 1; k++) hashes.push(r.fr(`${f}.hashes[${k}]`));
    const at = r.pos;
    const index = r.u64(`${f}.index`);
    if (index >= BigInt(arity)) r.fail(`${f}.index`, `= ${index} is out of range for arity ${arity}`, at);
    out.push({ hashes, index: Number(index) });
  }
  return out;
}

export function readMerkleProof(r: Reader, field: string, l: PoStProofLayout): MerkleProof<bigint> {
  const at = r.pos;
  const tag = r.u32(`${field}.tag`);
  if (tag !== l.tag) {
    const name = tag < TAG_SHAPE.length ? ` (${TAG_SHAPE[tag]})` : '';
    r.fail(`${field}.tag`, `= ${tag}${name} is wrong: this sector size's tree needs ${l.tag} (${l.shape})`, at);
  }
  if (l.shape === 'Single') {
    const root = r.fr(`${field}.root`);
    const leaf = r.fr(`${field}.leaf`);
    const base = readPath(r, `${field}.base`, l.base.levels, l.base.arity);
    return { shape: 'Single', root, leaf, base, sub: [], top: [] };
  }
  const base = readPath(r, `${field}.base`, l.base.levels, l.base.arity);
  const sub = readPath(r, `${field}.sub`, l.sub.levels, l.sub.arity);
  const top = l.shape === 'Top' ? readPath(r, `${field}.top`, l.top.levels, l.top.arity) : [];
  const root = r.fr(`${field}.root`);
  const leaf = r.fr(`${field}.leaf`);
  return { shape: l.shape, root, leaf, base, sub, top };
}

/** Parses one raw bincode `FallbackPoStSectorProof` for the registered proof `info`; throws VanillaProofError. */
export function parsePoStSectorProof(bytes: Uint8Array, info: PoStProofInfo): PoStSectorProof {
  if (!(bytes instanceof Uint8Array)) throw new VanillaProofError('vanilla proof: expected bytes');
  const l = postProofLayout(info);
  const r = new Reader(bytes);
  const sectorId = r.u64('sector_id');
  const commR = r.fr('comm_r');
  r.len('sectors', 1);
  r.len('inclusion_proofs', l.inclusionProofs);
  const inclusionProofs: MerkleProof<bigint>[] = [];
  for (let i = 0; i < l.inclusionProofs; i++) inclusionProofs.push(readMerkleProof(r, `inclusion_proofs[${i}]`, l));
  const commC = r.fr('comm_c');
  const commRLast = r.fr('comm_r_last');
  if (r.pos !== bytes.length) {
    r.fail('end', `has ${bytes.length - r.pos} trailing bytes (a ${info.size.label} ${info.type} sector proof is ${postSectorProofSize(info)} bytes, got ${bytes.length})`);
  }
  return { sectorId, commR, inclusionProofs, commC, commRLast };
}

/**
 * Parses the elements of a request (`vanilla_proofs`, one per sector); an error names the element:
 * "vanilla_proofs[3]: vanilla proof: comm_c … (byte offset 5616)".
 */
export function parsePoStSectorProofs(elements: readonly Uint8Array[], info: PoStProofInfo): PoStSectorProof[] {
  return elements.map((el, i) => {
    try {
      return parsePoStSectorProof(el, info);
    } catch (e) {
      if (!(e instanceof VanillaProofError)) throw e;
      throw new VanillaProofError(`vanilla_proofs[${i}]: ${e.message}`, e.field === undefined ? undefined : `vanilla_proofs[${i}].${e.field}`, e.offset);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Serialising

export class Writer {
  readonly out: Uint8Array;
  private readonly dv: DataView;
  pos = 0;

  constructor(size: number) {
    this.out = new Uint8Array(size);
    this.dv = new DataView(this.out.buffer);
  }

  u32(v: number): void {
    this.dv.setUint32(this.pos, v, true);
    this.pos += 4;
  }

  u64(v: bigint | number): void {
    this.dv.setBigUint64(this.pos, BigInt(v), true);
    this.pos += 8;
  }

  fr(v: bigint, field: string): void {
    if (typeof v !== 'bigint' || v < 0n || v >= FR_MODULUS) {
      throw new VanillaProofError(`vanilla proof: ${field} is not a canonical field element`, field);
    }
    const m = 0xffffffffffffffffn;
    this.dv.setBigUint64(this.pos, v & m, true);
    this.dv.setBigUint64(this.pos + 8, (v >> 64n) & m, true);
    this.dv.setBigUint64(this.pos + 16, (v >> 128n) & m, true);
    this.dv.setBigUint64(this.pos + 24, v >> 192n, true);
    this.pos += 32;
  }
}

function writePath(w: Writer, path: readonly PathElement<bigint>[], field: string, levels: number, arity: number): void {
  if (path.length !== levels) throw new VanillaProofError(`vanilla proof: ${field} has ${path.length} levels, expected ${levels}`, field);
  w.u64(levels);
  path.forEach((el, j) => {
    const f = `${field}[${j}]`;
    if (el.hashes.length !== arity - 1) {
      throw new VanillaProofError(`vanilla proof: ${f}.hashes has ${el.hashes.length} elements, expected ${arity - 1}`, `${f}.hashes`);
    }
    if (!Number.isInteger(el.index) || el.index < 0 || el.index >= arity) {
      throw new VanillaProofError(`vanilla proof: ${f}.index = ${el.index} is out of range for arity ${arity}`, `${f}.index`);
    }
    w.u64(arity - 1);
    el.hashes.forEach((h, k) => w.fr(h, `${f}.hashes[${k}]`));
    w.u64(el.index);
  });
}

/** One MerkleProof in bincode (tag, then the fields in serde order), checked against the layout like the parser. */
export function writeMerkleProof(w: Writer, mp: MerkleProof<bigint>, f: string, l: PoStProofLayout): void {
  if (mp.shape !== l.shape) throw new VanillaProofError(`vanilla proof: ${f} is ${mp.shape}, this sector size's tree needs ${l.shape}`, `${f}.tag`);
  w.u32(l.tag);
  if (l.shape === 'Single') {
    w.fr(mp.root, `${f}.root`);
    w.fr(mp.leaf, `${f}.leaf`);
    writePath(w, mp.base, `${f}.base`, l.base.levels, l.base.arity);
    if (mp.sub.length || mp.top.length) throw new VanillaProofError(`vanilla proof: ${f} is Single but has sub/top levels`, f);
    return;
  }
  writePath(w, mp.base, `${f}.base`, l.base.levels, l.base.arity);
  writePath(w, mp.sub, `${f}.sub`, l.sub.levels, l.sub.arity);
  if (l.shape === 'Top') writePath(w, mp.top, `${f}.top`, l.top.levels, l.top.arity);
  else if (mp.top.length) throw new VanillaProofError(`vanilla proof: ${f} is Sub but has top levels`, f);
  w.fr(mp.root, `${f}.root`);
  w.fr(mp.leaf, `${f}.leaf`);
}

/** Serialises one sector proof as raw bincode `FallbackPoStSectorProof`; checks the layout like the parser. */
export function serializePoStSectorProof(p: PoStSectorProof, info: PoStProofInfo): Uint8Array {
  const l = postProofLayout(info);
  if (p.inclusionProofs.length !== l.inclusionProofs) {
    throw new VanillaProofError(`vanilla proof: inclusion_proofs has ${p.inclusionProofs.length} proofs, expected ${l.inclusionProofs}`, 'inclusion_proofs');
  }
  if (typeof p.sectorId !== 'bigint' || p.sectorId < 0n || p.sectorId >= 1n << 64n) {
    throw new VanillaProofError('vanilla proof: sector_id must be a u64', 'sector_id');
  }
  const w = new Writer(postSectorProofSize(info));
  w.u64(p.sectorId);
  w.fr(p.commR, 'comm_r');
  w.u64(1);
  w.u64(l.inclusionProofs);
  p.inclusionProofs.forEach((mp, i) => writeMerkleProof(w, mp, `inclusion_proofs[${i}]`, l));
  w.fr(p.commC, 'comm_c');
  w.fr(p.commRLast, 'comm_r_last');
  if (w.pos !== w.out.length) throw new Error(`vanilla proof: serialised ${w.pos} bytes, expected ${w.out.length}`);
  return w.out;
}

// ---------------------------------------------------------------------------------------------
// Consistency (what the circuit will enforce)

/**
 * The problems the FallbackPoSt circuit would find in a well-formed sector proof, [] when none:
 * comm_r ≠ Poseidon2(comm_c, comm_r_last); an inclusion proof whose root is not comm_r_last or whose path does
 * not lead from its leaf to its root; a leaf that is not at the derived challenge (challenges.ts; `sectorIndex` is
 * the sector's place in the whole PoSt, used by the V1 window derivation only).
 */
export function checkPoStSectorProof(p: PoStSectorProof, info: PoStProofInfo, randomness: Uint8Array, sectorIndex = 0): string[] {
  const problems: string[] = [];
  if (fastPoseidon([p.commC, p.commRLast]) !== p.commR) problems.push('comm_r ≠ Poseidon2(comm_c, comm_r_last)');
  const challenges = postSectorChallenges(info, randomness, p.sectorId, sectorIndex);
  p.inclusionProofs.forEach((mp, i) => {
    if (mp.root !== p.commRLast) problems.push(`inclusion_proofs[${i}].root ≠ comm_r_last`);
    const path = fullPath(mp);
    let cur = mp.leaf;
    for (const el of path) {
      const children = el.hashes.slice();
      children.splice(el.index, 0, cur);
      cur = fastPoseidon(children);
    }
    if (cur !== mp.root) problems.push(`inclusion_proofs[${i}]: the path does not lead from the leaf to the root`);
    const at = pathLeafIndex(path);
    if (at !== challenges[i]) problems.push(`inclusion_proofs[${i}] opens leaf ${at}, the challenge is ${challenges[i]}`);
  });
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Files

/** A problem with a vanilla proof file (not JSON of base64 strings, unreadable, empty). */
export class VanillaFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VanillaFileError';
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(s: unknown, where: string): Uint8Array {
  if (typeof s !== 'string' || s.length % 4 !== 0 || !BASE64.test(s)) throw new VanillaFileError(`${where}: expected a base64 string`);
  return new Uint8Array(Buffer.from(s, 'base64'));
}

/**
 * The elements of a vanilla proof file, in order: cuzk-bench's JSON (an array of base64 strings, or one base64
 * string); any other content is one raw bincode element. Elements are not parsed here (parsePoStSectorProof).
 */
export function parseVanillaFile(content: Uint8Array, name = 'vanilla file'): Uint8Array[] {
  let i = 0;
  while (i < content.length && (content[i] === 0x20 || content[i] === 0x0a || content[i] === 0x0d || content[i] === 0x09)) i++;
  const first = content[i];
  if (first === 0x5b /* [ */ || first === 0x22 /* " */) {
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8'));
    } catch {
      json = undefined; // not JSON: a raw element whose first byte happens to be '[' or '"'
    }
    if (typeof json === 'string') return [decodeBase64(json, name)];
    if (Array.isArray(json)) {
      if (json.length === 0) throw new VanillaFileError(`${name}: the JSON array holds no vanilla proofs`);
      return json.map((s, k) => decodeBase64(s, `${name}: element ${k}`));
    }
  }
  if (content.length === 0) throw new VanillaFileError(`${name}: empty file`);
  return [content];
}

/** Reads a vanilla proof file (see parseVanillaFile). */
export function readVanillaFile(path: string): Uint8Array[] {
  let content: Uint8Array;
  try {
    content = new Uint8Array(readFileSync(path));
  } catch (e) {
    throw new VanillaFileError(`${path}: ${(e as Error).message}`);
  }
  return parseVanillaFile(content, path);
}

/** cuzk-bench's vanilla file text: a JSON array of base64-encoded elements. */
export function vanillaFileText(elements: readonly Uint8Array[]): string {
  return `[\n${elements.map((e) => JSON.stringify(Buffer.from(e.buffer, e.byteOffset, e.byteLength).toString('base64'))).join(',\n')}\n]\n`;
}
