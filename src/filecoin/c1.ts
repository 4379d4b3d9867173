/**
 * Parsing and format validation of the SealCommitPhase1Output JSON (docs/filecoin.md §3) and of the
 * lotus-bench / Curio `Commit2In` wrapper around it. Every malformed input is refused with a
 * `C1FormatError` naming the JSON path of the offending field; nothing here trusts the input's shape.
 *
 * Representation choices (what the circuit consumes): SHA256-domain values (comm_d tree, labeling
 * parents, ids, seed, ticket) stay 32-byte arrays; Poseidon-domain values (tree_r_last, tree_c,
 * column rows) become canonical bigints. Indices are JS numbers (< 2^31 for every sector size).
 * Cryptographic consistency (paths, labels, parents) is checked separately by `c1-checks.ts`.
 */
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../util/limits.js';
import { FR_MODULUS } from '../field/layout.js';
import { bytesToBigintLE } from './hash/fr32.js';
import type { MerkleProof, MerkleProofShape, PathElement } from './tree/path.js';
import { DRG_DEGREE, EXP_DEGREE, LABEL_PARENTS, niChallenges, proverIdFromActorId } from './graph.js';
import { sealProofInfo, type SealProofInfo, type TreeShape } from './registry.js';

export class C1FormatError extends Error {
  /** JSON path of the offending field inside the C1 JSON (or the wrapper field), e.g. `comm_r` or `vanilla_proofs.StackedDrg2KiBV1[0][1].labeling_proofs`. */
  readonly path: string;

  constructor(path: string, detail: string, prefix = '') {
    super(`${prefix}${path === '' ? '(root)' : path}: ${detail}`);
    this.name = 'C1FormatError';
    this.path = path;
  }
}

/** What the daemon's errors about a request's C1 start with (its gRPC field); the CLI puts the option and file the
 *  user gave in its place (`--c1 c1.json: …`). */
export const VANILLA_PROOF_PREFIX = 'vanilla_proof (Commit2In): ';

export interface ColumnProof {
  /** Node index of the column. */
  readonly index: number;
  /** One label per layer (layer 1 first), as field elements. */
  readonly rows: readonly bigint[];
  /** Inclusion of the column hash in tree_c (root = comm_c). */
  readonly inclusion: MerkleProof<bigint>;
}

export interface LabelingProof {
  /** The 37 parent labels hashed into this label, 32 bytes each. */
  readonly parents: readonly Uint8Array[];
  /** 1-based layer. */
  readonly layerIndex: number;
  readonly node: number;
}

export interface ChallengeProof {
  /** The challenged node (= c_x.column.index). */
  readonly challenge: number;
  readonly commDProof: MerkleProof<Uint8Array>;
  readonly commRLastProof: MerkleProof<bigint>;
  readonly cX: ColumnProof;
  /** Columns of the 6 DRG parents. */
  readonly drgParents: readonly ColumnProof[];
  /** Columns of the 8 expander parents. */
  readonly expParents: readonly ColumnProof[];
  /** One labeling proof per layer. */
  readonly labelingProofs: readonly LabelingProof[];
  readonly encodingProof: LabelingProof;
}

export interface C1Output {
  readonly registeredProof: SealProofInfo;
  readonly commR: Uint8Array;
  readonly commD: Uint8Array;
  readonly replicaId: Uint8Array;
  readonly seed: Uint8Array;
  readonly ticket: Uint8Array;
  /** vanilla proofs: [partition][challenge]. */
  readonly partitions: readonly (readonly ChallengeProof[])[];
  /** INSECURE, benchmarks only: the challenges are the vanilla proofs' own (c_x.column.index), not
   *  derived (a synthetic NI-PoRep C1 cannot derive them from a comm_r that depends on them; see
   *  withStatedChallenges). Never set by parsing. */
  readonly statedChallenges?: true;
}

/** The forms a C1 comes in: lotus-bench / Curio's `Commit2In` wrapper, the raw C1 JSON, or gpuproxy's C2 input
 *  (venus-cluster / damocles operators: `{c1out, prover_id, sector_id, miner_id}`). */
export type C1InputForm = 'commit2in' | 'c1' | 'gpuproxy';

export interface Commit2In {
  readonly sectorNum: number;
  readonly sectorSize: number;
  /** "f0…" ID address when the input carries one (the fixtures' wrapper and gpuproxy's miner_id do; lotus-bench does not). */
  readonly miner: string | undefined;
  /** gpuproxy's prover_id as given (checked against miner_id when both are there); else derived from `miner`. */
  readonly proverId?: Uint8Array;
  readonly form: C1InputForm;
  readonly phase1Out: C1Output;
}

// ---------------------------------------------------------------------------------------------
// Path-tracking readers

type Json = unknown;

function typeName(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function show(v: Json): string {
  const s = JSON.stringify(v) ?? typeName(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

function asObject(v: Json, path: string): Record<string, Json> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new C1FormatError(path, `expected an object, got ${typeName(v)}`);
  return v as Record<string, Json>;
}

function field(o: Record<string, Json>, key: string, path: string): [Json, string] {
  const p = path === '' ? key : `${path}.${key}`;
  if (!Object.prototype.hasOwnProperty.call(o, key) || o[key] === undefined) throw new C1FormatError(p, 'missing field');
  return [o[key], p];
}

function asArray(v: Json, path: string, length?: number): Json[] {
  if (!Array.isArray(v)) throw new C1FormatError(path, `expected an array, got ${typeName(v)}`);
  if (length !== undefined && v.length !== length) throw new C1FormatError(path, `expected ${length} elements, got ${v.length}`);
  return v;
}

function asUint(v: Json, path: string, bound?: number, what = 'value'): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new C1FormatError(path, `expected a non-negative integer, got ${show(v)}`);
  if (bound !== undefined && v >= bound) throw new C1FormatError(path, `${what} ${v} out of range (must be < ${bound})`);
  return v;
}

function asBytes32(v: Json, path: string): Uint8Array {
  const a = asArray(v, path);
  if (a.length !== 32) throw new C1FormatError(path, `expected 32 bytes, got ${a.length}`);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    const b = a[i];
    if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255) throw new C1FormatError(`${path}[${i}]`, `expected a byte 0..255, got ${show(b)}`);
    out[i] = b;
  }
  return out;
}

/** 32 bytes that must encode a canonical field element (little-endian, < r). */
function asFrBytes(v: Json, path: string): Uint8Array {
  const b = asBytes32(v, path);
  if (bytesToBigintLE(b) >= FR_MODULUS) throw new C1FormatError(path, 'field element not canonical (≥ r)');
  return b;
}

function asFr(v: Json, path: string): bigint {
  const b = asBytes32(v, path);
  const x = bytesToBigintLE(b);
  if (x >= FR_MODULUS) throw new C1FormatError(path, 'field element not canonical (≥ r)');
  return x;
}

// ---------------------------------------------------------------------------------------------
// Merkle proofs

interface PathSpec {
  /** Per level arity of this path segment. */
  readonly arities: readonly number[];
}

function parsePath<T>(v: Json, path: string, spec: PathSpec, leafOf: (v: Json, p: string) => T): PathElement<T>[] {
  const o = asObject(v, path);
  const [raw, p] = field(o, 'path', path);
  const levels = asArray(raw, p, spec.arities.length);
  return levels.map((lv, i) => {
    const lp = `${p}[${i}]`;
    const lo = asObject(lv, lp);
    const arity = spec.arities[i];
    const [h, hp] = field(lo, 'hashes', lp);
    const hashes = asArray(h, hp, arity - 1).map((x, j) => leafOf(x, `${hp}[${j}]`));
    const [idx, ip] = field(lo, 'index', lp);
    return { hashes, index: asUint(idx, ip, arity, 'path index') };
  });
}

/** Expected path segments: [base, sub, top] arities (sub/top empty when absent). */
function segments(tree: TreeShape): { shape: MerkleProofShape; base: number[]; sub: number[]; top: number[] } {
  const base = new Array<number>(tree.baseLevels).fill(tree.baseArity);
  const sub = tree.subArity ? [tree.subArity] : [];
  const top = tree.topArity ? [tree.topArity] : [];
  const shape: MerkleProofShape = top.length ? 'Top' : sub.length ? 'Sub' : 'Single';
  return { shape, base, sub, top };
}

function parseMerkleProof<T>(
  v: Json, path: string, seg: ReturnType<typeof segments>, leafOf: (v: Json, p: string) => T,
): MerkleProof<T> {
  const o = asObject(v, path);
  const [d, dp] = field(o, 'data', path);
  const data = asObject(d, dp);
  const keys = Object.keys(data);
  if (keys.length !== 1) throw new C1FormatError(dp, `expected exactly one of Single/Sub/Top, got ${keys.length === 0 ? 'none' : keys.join(', ')}`);
  const shape = keys[0];
  if (shape !== seg.shape) {
    if (shape === 'Single' || shape === 'Sub' || shape === 'Top') throw new C1FormatError(`${dp}.${shape}`, `wrong proof shape for this sector size (expected ${seg.shape})`);
    throw new C1FormatError(`${dp}.${shape}`, 'unknown proof shape (expected Single, Sub or Top)');
  }
  const [b, bp] = field(data, shape, dp);
  const body = asObject(b, bp);
  const [rootV, rp] = field(body, 'root', bp);
  const [leafV, lp] = field(body, 'leaf', bp);
  const root = leafOf(rootV, rp);
  const leaf = leafOf(leafV, lp);
  if (shape === 'Single') {
    const [pv, pp] = field(body, 'path', bp);
    return { shape, root, leaf, base: parsePath(pv, pp, { arities: seg.base }, leafOf), sub: [], top: [] };
  }
  const [bv, bpp] = field(body, 'base_proof', bp);
  const [sv, spp] = field(body, 'sub_proof', bp);
  const base = parsePath(bv, bpp, { arities: seg.base }, leafOf);
  const sub = parsePath(sv, spp, { arities: seg.sub }, leafOf);
  if (shape === 'Sub') return { shape, root, leaf, base, sub, top: [] };
  const [tv, tpp] = field(body, 'top_proof', bp);
  return { shape, root, leaf, base, sub, top: parsePath(tv, tpp, { arities: seg.top }, leafOf) };
}

// ---------------------------------------------------------------------------------------------
// Vanilla proof pieces

interface Ctx {
  readonly info: SealProofInfo;
  readonly treeSeg: ReturnType<typeof segments>;
  readonly commDSeg: ReturnType<typeof segments>;
}

function parseColumnProof(v: Json, path: string, ctx: Ctx): ColumnProof {
  const o = asObject(v, path);
  const [c, cp] = field(o, 'column', path);
  const col = asObject(c, cp);
  const [iv, ip] = field(col, 'index', cp);
  const index = asUint(iv, ip, ctx.info.nodes, 'node index');
  const [rv, rp] = field(col, 'rows', cp);
  const rows = asArray(rv, rp, ctx.info.layers).map((x, i) => asFr(x, `${rp}[${i}]`));
  const [pv, pp] = field(o, 'inclusion_proof', path);
  const inclusion = parseMerkleProof(pv, pp, ctx.treeSeg, asFr);
  return { index, rows, inclusion };
}

function parseLabelingProof(v: Json, path: string, ctx: Ctx): LabelingProof {
  const o = asObject(v, path);
  const [pv, pp] = field(o, 'parents', path);
  const parents = asArray(pv, pp, LABEL_PARENTS).map((x, i) => asFrBytes(x, `${pp}[${i}]`));
  const [lv, lp] = field(o, 'layer_index', path);
  const layerIndex = asUint(lv, lp, ctx.info.layers + 1, 'layer index');
  if (layerIndex === 0) throw new C1FormatError(lp, 'layer index 0 out of range (layers are 1-based)');
  const [nv, np] = field(o, 'node', path);
  return { parents, layerIndex, node: asUint(nv, np, ctx.info.nodes, 'node index') };
}

function parseChallengeProof(v: Json, path: string, ctx: Ctx): ChallengeProof {
  const o = asObject(v, path);
  const [dv, dp] = field(o, 'comm_d_proofs', path);
  const commDProof = parseMerkleProof(dv, dp, ctx.commDSeg, asFrBytes);
  const [rv, rp] = field(o, 'comm_r_last_proof', path);
  const commRLastProof = parseMerkleProof(rv, rp, ctx.treeSeg, asFr);
  const [cv, cp] = field(o, 'replica_column_proofs', path);
  const cols = asObject(cv, cp);
  const [xv, xp] = field(cols, 'c_x', cp);
  const cX = parseColumnProof(xv, xp, ctx);
  const [gv, gp] = field(cols, 'drg_parents', cp);
  const drgParents = asArray(gv, gp, DRG_DEGREE).map((x, i) => parseColumnProof(x, `${gp}[${i}]`, ctx));
  const [ev, ep] = field(cols, 'exp_parents', cp);
  const expParents = asArray(ev, ep, EXP_DEGREE).map((x, i) => parseColumnProof(x, `${ep}[${i}]`, ctx));
  const [lv, lp] = field(o, 'labeling_proofs', path);
  const labelingProofs = asArray(lv, lp, ctx.info.layers).map((x, i) => parseLabelingProof(x, `${lp}[${i}]`, ctx));
  const [nv, np] = field(o, 'encoding_proof', path);
  const encodingProof = parseLabelingProof(nv, np, ctx);
  return { challenge: cX.index, commDProof, commRLastProof, cX, drgParents, expParents, labelingProofs, encodingProof };
}

// ---------------------------------------------------------------------------------------------
// Entry points

function parseJsonText(input: string | Uint8Array, path: string, prefix: string): Json {
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(input);
    } catch {
      throw new C1FormatError(path, 'input is not valid UTF-8', prefix);
    }
  }
  // refused before JSON.parse and the recursive walk below ("Maximum call stack size exceeded")
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw new C1FormatError(path, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, prefix);
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    throw new C1FormatError(path, `not valid JSON (${(e as Error).message})`, prefix);
  }
}

/** A C1's fields other than its vanilla proofs, read and checked; the vanilla proofs' partition array (`value`) and
 *  its JSON path, unread. */
interface C1Head {
  readonly head: Omit<C1Output, 'partitions'>;
  readonly partitions: { readonly value: Json; readonly path: string };
}

function parseC1Head(value: Json, root: string): C1Head {
  const o = asObject(value, root);
  const [rpv, rpp] = field(o, 'registered_proof', root);
  if (typeof rpv !== 'string') throw new C1FormatError(rpp, `expected a string, got ${typeName(rpv)}`);
  const info = sealProofInfo(rpv);
  if (info === undefined) throw new C1FormatError(rpp, `unknown registered proof ${show(rpv)}`);
  const [cr, crp] = field(o, 'comm_r', root);
  const commR = asFrBytes(cr, crp);
  const [cd, cdp] = field(o, 'comm_d', root);
  const commD = asFrBytes(cd, cdp);
  const [ri, rip] = field(o, 'replica_id', root);
  const replicaId = asFrBytes(ri, rip);
  const [sd, sdp] = field(o, 'seed', root);
  const seed = asBytes32(sd, sdp);
  const [tk, tkp] = field(o, 'ticket', root);
  const ticket = asBytes32(tk, tkp);
  // refused by rust-fil-proofs' seal_commit_phase2 (every version; NI-PoRep derives nothing from the seed)
  for (const [v, p] of [[commD, cdp], [commR, crp], [seed, sdp]] as const) {
    if (v.every((b) => b === 0)) throw new C1FormatError(p, 'all 32 bytes zero (rust-fil-proofs refuses it in commit phase 2)');
  }

  const [vp, vpp] = field(o, 'vanilla_proofs', root);
  const vo = asObject(vp, vpp);
  const keys = Object.keys(vo);
  if (keys.length !== 1 || keys[0] !== info.vanillaKey) {
    throw new C1FormatError(vpp, `expected exactly the key ${info.vanillaKey} for ${info.name}, got ${keys.length ? keys.join(', ') : 'none'}`);
  }
  const [pv, pp] = field(vo, info.vanillaKey, vpp);
  // partitions are the registered proof's (13 × 2 or 126 × 18 for NI-PoRep)
  asArray(pv, pp, info.partitions);
  return { head: { registeredProof: info, commR, commD, replicaId, seed, ticket }, partitions: { value: pv, path: pp } };
}

const ctxOf = (info: SealProofInfo): Ctx => ({
  info,
  treeSeg: segments(info.tree),
  commDSeg: { shape: 'Single', base: new Array<number>(info.commDLevels).fill(2), sub: [], top: [] },
});

/** One partition's challenge proofs (`path`: the partition's JSON path, e.g. vanilla_proofs.StackedDrg32GiBV1_1[3]). */
function parseC1Partition(value: Json, path: string, ctx: Ctx): ChallengeProof[] {
  return asArray(value, path, ctx.info.challengesPerPartition).map((c, i) => parseChallengeProof(c, `${path}[${i}]`, ctx));
}

/** Validates an already-decoded C1 JSON value; `root` is its JSON path in the input (gpuproxy's `c1out`). */
export function parseC1Value(value: Json, root = ''): C1Output {
  const { head, partitions: p } = parseC1Head(value, root);
  const ctx = ctxOf(head.registeredProof);
  return { ...head, partitions: (p.value as Json[]).map((part, k) => parseC1Partition(part, `${p.path}[${k}]`, ctx)) };
}

/**
 * An NI-PoRep C1 whose challenges are not those derived from its comm_r, marked to be proved with
 * the challenges its vanilla proofs state: INSECURE, for benchmarks of `kiln synth-c1 --ni` C1s only
 * (a synthetic sector's comm_r depends on its challenges, so they cannot be derived from it; every
 * other check stays). Other C1s (interactive, or NI with derived challenges) are returned unchanged.
 */
export function withStatedChallenges(c1: C1Output): C1Output {
  const info = c1.registeredProof;
  if (info.challengeDerivation !== 'non-interactive') return c1;
  const derived = c1.partitions.every((part, k) => {
    const want = niChallenges(c1.replicaId, c1.commR, info.nodes, part.length, k);
    return part.every((p, i) => p.challenge === want[i]);
  });
  return derived ? c1 : { ...c1, statedChallenges: true };
}

/** Parses raw C1 JSON text (or UTF-8 bytes). */
export function parseC1(input: string | Uint8Array): C1Output {
  return parseC1Value(parseJsonText(input, '', ''));
}

// Linear-time check (a repeated group `(?:x{4})*` overflows the regex stack on a 50 MB 32 GiB C1).
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict standard base64 (with padding, as Go's encoding/json writes []byte). */
function decodeBase64(s: string, path: string): Uint8Array {
  if (s.length % 4 !== 0 || !BASE64.test(s)) throw new C1FormatError(path, 'not valid base64');
  return new Uint8Array(Buffer.from(s, 'base64'));
}

/** Parses the lotus-bench / Curio wrapper `{SectorNum, Phase1Out: base64(C1 JSON), SectorSize, Miner?}`. */
export function parseCommit2In(input: string | Uint8Array): Commit2In {
  return commit2InFromValue(asObject(parseJsonText(input, '', ''), ''));
}

function commit2InFromValue(
  o: Record<string, Json>,
  phase1Bytes?: Uint8Array,
  parsePhase1: (bytes: Uint8Array) => C1Output = (bytes) => parseC1Value(parseJsonText(bytes, '', '')),
): Commit2In {
  const [sn, snp] = field(o, 'SectorNum', '');
  const sectorNum = asUint(sn, snp);
  const [ss, ssp] = field(o, 'SectorSize', '');
  const sectorSize = asUint(ss, ssp);
  let miner: string | undefined;
  if (o.Miner !== undefined && o.Miner !== null) {
    if (typeof o.Miner !== 'string') throw new C1FormatError('Miner', `expected a string, got ${typeName(o.Miner)}`);
    miner = o.Miner;
  }
  let bytes = phase1Bytes;
  if (bytes === undefined) {
    const [po, pop] = field(o, 'Phase1Out', '');
    if (typeof po !== 'string') throw new C1FormatError(pop, `expected a base64 string, got ${typeName(po)}`);
    bytes = decodeBase64(po, pop);
  }
  let phase1Out: C1Output;
  try {
    phase1Out = parsePhase1(bytes);
  } catch (e) {
    if (e instanceof C1FormatError) throw new C1FormatError(e.path, e.message.slice(e.message.indexOf(': ') + 2), 'Phase1Out → ');
    throw e;
  }
  if (phase1Out.registeredProof.sectorSize !== sectorSize) {
    throw new C1FormatError(ssp, `${sectorSize} does not match ${phase1Out.registeredProof.name} (${phase1Out.registeredProof.sectorSize})`);
  }
  return { sectorNum, sectorSize, miner, form: 'commit2in', phase1Out };
}

/** Inputs past this size are looked at as bytes first (largeCommit2In): a wrapper's base64 is then never a string
 *  to decode, scan and parse as JSON (0.6 s of a 32 GiB C1's 3.3 s parse). */
const LARGE_INPUT_BYTES = 4 * 2 ** 20;

const isJsonSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The byte range of the value of a top-level `"Phase1Out"` key when it is a string without escapes
 *  (base64 needs none), else undefined. */
function phase1OutRange(b: Uint8Array): [number, number] | undefined {
  let depth = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x22) {
      const start = i + 1;
      let j = start;
      for (; j < b.length && b[j] !== 0x22; j++) if (b[j] === 0x5c) j++;
      if (j >= b.length) return undefined;
      if (depth === 1 && j - start === 9 && Buffer.from(b.buffer, b.byteOffset + start, 9).toString('latin1') === 'Phase1Out') {
        let k = j + 1;
        while (isJsonSpace(b[k])) k++;
        if (b[k] === 0x3a) {
          k++;
          while (isJsonSpace(b[k])) k++;
          if (b[k] !== 0x22) return undefined;
          const end = b.indexOf(0x22, k + 1);
          if (end < 0 || b.subarray(k + 1, end).includes(0x5c)) return undefined;
          return [k + 1, end];
        }
      }
      i = j;
    }
  }
  return undefined;
}

/** decodeBase64 of bytes (strict, as decodeBase64): checked byte by byte, then decoded a piece at a time into
 *  one buffer (no string of the whole, no concatenation). */
function decodeBase64Bytes(b: Uint8Array, path: string, shared = false): Uint8Array {
  if (b.length % 4 !== 0) throw new C1FormatError(path, 'not valid base64');
  let pad = 0;
  if (b.length > 0 && b[b.length - 1] === 0x3d) pad = b[b.length - 2] === 0x3d ? 2 : 1;
  for (let i = 0; i < b.length - pad; i++) if (BASE64_BYTE[b[i]!] === 0) throw new C1FormatError(path, 'not valid base64');
  const n = (b.length / 4) * 3 - pad;
  const out = shared ? Buffer.from(new SharedArrayBuffer(n)) : Buffer.allocUnsafe(n);
  const step = 4 << 22;
  let at = 0;
  for (let o = 0; o < b.length; o += step) {
    at += out.write(Buffer.from(b.buffer, b.byteOffset + o, Math.min(step, b.length - o)).toString('latin1'), at, 'base64');
  }
  if (at !== out.length) throw new C1FormatError(path, 'not valid base64');
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}
/** 1 for the bytes of standard base64's alphabet (A-Z a-z 0-9 + /), 0 for every other. */
const BASE64_BYTE = (() => {
  const t = new Uint8Array(256);
  for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') t[c.charCodeAt(0)] = 1;
  return t;
})();

/**
 * A Commit2In wrapper read from its bytes without making a string of it: Phase1Out's base64 is cut
 * out and decoded in pieces, the rest parsed as JSON. A 32 GiB NI-PoRep wrapper (126 × 18 challenges,
 * ~650 MB) is past V8's longest string (2^29 − 24 characters); its C1 (~490 MB) is not. Undefined when
 * the bytes have no top-level Phase1Out string. Same result and errors as parseCommit2In.
 */
export function largeCommit2In(b: Uint8Array): Commit2In | undefined {
  const r = phase1OutRange(b);
  if (r === undefined) return undefined;
  const o = asObject(parseJsonText(Buffer.concat([b.subarray(0, r[0]), b.subarray(r[1])]), '', ''), '');
  if (o.Phase1Out !== '') throw new C1FormatError('Phase1Out', 'given more than once');
  return commit2InFromValue(o, decodeBase64Bytes(b.subarray(r[0], r[1]), 'Phase1Out'));
}

/** The smallest wrapper splitCommit2In splits by default: a 2 KiB NI-PoRep C1 (13 partitions, 1.7 MB) is split, an
 *  interactive one (one partition, 134 kB) is not. */
export const SPLIT_MIN_BYTES = 2 ** 20;

/**
 * A large Commit2In read in parts (splitCommit2In): the wrapper and its C1's fields read and checked, the
 * partitions' vanilla proofs left as byte ranges of the decoded C1 JSON, each parsed on its own
 * (parseSplitPartition), in parallel. Its phase1Out has no partitions.
 */
export interface SplitCommit2In {
  readonly c2: Commit2In;
  /** Phase1Out decoded (the C1's JSON), in shared memory. */
  readonly json: Uint8Array;
  /** Each partition's byte range in `json`. */
  readonly ranges: readonly (readonly [number, number])[];
  /** The partitions' JSON path (vanilla_proofs.<key>). */
  readonly path: string;
}

/**
 * A Commit2In wrapper of `minBytes` or more and several partitions, split for a parallel parse; undefined when it is not one, or when
 * anything in it is not as a valid C1 has it (then parseC1Input, whole, names what). The partitions' array is
 * found by a scan of the decoded JSON's structure; what is not partitions is parsed with that array replaced by
 * as many zeros (the same checks as parseC1Value's, the partitions' count included).
 */
export function splitCommit2In(b: Uint8Array, minBytes = SPLIT_MIN_BYTES): SplitCommit2In | undefined {
  if (b.length < minBytes) return undefined;
  try {
    const r = phase1OutRange(b);
    if (r === undefined) return undefined;
    const o = asObject(parseJsonText(Buffer.concat([b.subarray(0, r[0]), b.subarray(r[1])]), '', ''), '');
    if (o.Phase1Out !== '') return undefined;
    const json = decodeBase64Bytes(b.subarray(r[0], r[1]), 'Phase1Out', true);
    const found = partitionRanges(json);
    if (found === undefined) return undefined;
    const { at, ranges } = found;
    if (ranges.length < 2) return undefined;
    const zeros = Buffer.from(`[${new Array<string>(ranges.length).fill('0').join(',')}]`, 'latin1');
    let path = '';
    const c2 = commit2InFromValue(o, Buffer.concat([json.subarray(0, at[0]), zeros, json.subarray(at[1])]), (bytes) => {
      const h = parseC1Head(parseJsonText(bytes, '', ''), '');
      path = h.partitions.path;
      return { ...h.head, partitions: [] };
    });
    return { c2, json, ranges, path };
  } catch {
    return undefined;
  }
}

/** Partition `k` of a split C1 (splitCommit2In), parsed and checked as parseC1Value does it; throws C1FormatError. */
export function parseSplitPartition(json: Uint8Array, range: readonly [number, number], path: string, k: number, info: SealProofInfo): ChallengeProof[] {
  const p = `${path}[${k}]`;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(json.subarray(range[0], range[1]));
  } catch {
    throw new C1FormatError(p, 'input is not valid UTF-8');
  }
  // a partition lies three levels down (the C1, vanilla_proofs, the partitions' array)
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH - 3)) throw new C1FormatError(p, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch (e) {
    throw new C1FormatError(p, `not valid JSON (${(e as Error).message})`);
  }
  return parseC1Partition(value, p, ctxOf(info));
}

/**
 * In a C1's JSON bytes: the byte range of `vanilla_proofs.<its one key>`'s array (`at`) and of each of its
 * elements, in one pass over the bytes. Undefined where the structure is not that (vanilla_proofs twice or with
 * several keys, another shape, a syntax error found on the way).
 */
function partitionRanges(b: Uint8Array): { at: [number, number]; ranges: [number, number][] } | undefined {
  const ws = (i: number): number => {
    while (isJsonSpace(b[i])) i++;
    return i;
  };
  /** The object at `i`, each member's value read by `value(key, start)` (its end, or undefined: not as wanted);
   *  the index after the object. */
  const object = (i: number, value: (key: string, start: number) => number | undefined): number | undefined => {
    if (b[i] !== 0x7b) return undefined;
    i = ws(i + 1);
    if (b[i] === 0x7d) return i + 1;
    for (;;) {
      if (b[i] !== 0x22) return undefined;
      const kEnd = valueEnd(b, i);
      if (kEnd === undefined) return undefined;
      const key = Buffer.from(b.buffer, b.byteOffset + i + 1, kEnd - i - 2).toString('latin1');
      i = ws(kEnd);
      if (b[i] !== 0x3a) return undefined;
      const vEnd = value(key, ws(i + 1));
      if (vEnd === undefined) return undefined;
      i = ws(vEnd);
      if (b[i] === 0x7d) return i + 1;
      if (b[i] !== 0x2c) return undefined;
      i = ws(i + 1);
    }
  };
  /** The array at `i`: its elements' ranges and the index after it. */
  const array = (i: number): { ranges: [number, number][]; end: number } | undefined => {
    if (b[i] !== 0x5b) return undefined;
    const ranges: [number, number][] = [];
    i = ws(i + 1);
    if (b[i] === 0x5d) return { ranges, end: i + 1 };
    for (;;) {
      const e = valueEnd(b, i);
      if (e === undefined) return undefined;
      ranges.push([i, e]);
      i = ws(e);
      if (b[i] === 0x5d) return { ranges, end: i + 1 };
      if (b[i] !== 0x2c) return undefined;
      i = ws(i + 1);
    }
  };
  let found: { at: [number, number]; ranges: [number, number][] } | undefined;
  const end = object(ws(0), (key, v) => {
    if (key !== 'vanilla_proofs') return valueEnd(b, v);
    if (found !== undefined) return undefined;
    let keys = 0;
    return object(v, (_k, a) => {
      if (++keys > 1) return undefined;
      const arr = array(a);
      if (arr === undefined) return undefined;
      found = { at: [a, arr.end], ranges: arr.ranges };
      return arr.end;
    });
  });
  return end !== undefined && ws(end) === b.length ? found : undefined;
}

/** The index after the JSON value starting at `i` (strings with their escapes, nested arrays and objects;
 *  a scalar runs to the next separator); undefined when it does not end. Not a validator: JSON.parse is. */
function valueEnd(b: Uint8Array, i: number): number | undefined {
  const c = b[i];
  if (c === 0x22) {
    for (let j = i + 1; j < b.length; j++) {
      if (b[j] === 0x5c) j++;
      else if (b[j] === 0x22) return j + 1;
    }
    return undefined;
  }
  if (c === 0x5b || c === 0x7b) {
    let depth = 0;
    for (let j = i; j < b.length; j++) {
      const d = b[j];
      if (d === 0x5b || d === 0x7b) depth++;
      else if (d === 0x5d || d === 0x7d) {
        if (--depth === 0) return j + 1;
      } else if (d === 0x22) {
        const e = valueEnd(b, j);
        if (e === undefined) return undefined;
        j = e - 1;
      }
    }
    return undefined;
  }
  let j = i;
  while (j < b.length && b[j] !== 0x2c && b[j] !== 0x5d && b[j] !== 0x7d && !isJsonSpace(b[j])) j++;
  return j > i ? j : undefined;
}

/**
 * gpuproxy's C2 input (ipfs-force-community/gpuproxy `C2Input`, what venus-cluster / damocles send):
 * `{"c1out": <raw C1>, "prover_id": [32 bytes], "sector_id": n, "miner_id": n}` (serde: SectorId and ActorID as
 * plain numbers, ProverId as 32 integers). prover_id must be the miner's (its actor id as LEB128, zero-padded); with
 * no miner_id (gpuproxy's stored C2Resource has none) the miner is read back from prover_id when it is one.
 */
function gpuproxyFromValue(o: Record<string, Json>): Commit2In {
  const [c, cp] = field(o, 'c1out', '');
  const phase1Out = parseC1Value(c, cp);
  const [pv, pp] = field(o, 'prover_id', '');
  const proverId = asBytes32(pv, pp);
  const [sv, sp] = field(o, 'sector_id', '');
  const sectorNum = asUint(sv, sp);
  let miner: string | undefined;
  if (o.miner_id !== undefined && o.miner_id !== null) {
    const minerId = asUint(o.miner_id, 'miner_id');
    const expected = proverIdFromActorId(minerId);
    if (!expected.every((b, i) => b === proverId[i])) {
      throw new C1FormatError(pp, `is not miner_id ${minerId}'s prover id (f0${minerId}: [${expected.slice(0, 4).join(',')},0,…])`);
    }
    miner = `f0${minerId}`;
  } else miner = actorIdOfProverId(proverId);
  return { sectorNum, sectorSize: phase1Out.registeredProof.sectorSize, miner, proverId, form: 'gpuproxy', phase1Out };
}

/** The "f0…" address whose prover id these 32 bytes are (canonical LEB128, zero-padded); undefined when none. */
function actorIdOfProverId(p: Uint8Array): string | undefined {
  let v = 0n;
  let i = 0;
  for (; i < 10; i++) {
    v |= BigInt(p[i]! & 0x7f) << BigInt(7 * i);
    if ((p[i]! & 0x80) === 0) break;
  }
  if (i === 10 || v >= 1n << 64n) return undefined;
  const expected = proverIdFromActorId(v);
  return expected.every((b, k) => b === p[k]) ? `f0${v}` : undefined;
}

/**
 * Any of the three forms a C1 comes in (C1InputForm): the Commit2In wrapper (what Curio and lotus-bench send,
 * an object with `Phase1Out`, `SectorNum` or `SectorSize`), the raw C1 JSON (`registered_proof` and no `Phase1Out`; then SectorNum is 0 and
 * there is no miner) or gpuproxy's C2 input (`c1out`). An object that is none of them is refused naming all three. Wrappers over 128 MiB are read
 * as bytes (largeCommit2In).
 */
export function parseC1Input(input: string | Uint8Array): Commit2In {
  if (typeof input !== 'string' && input.length > LARGE_INPUT_BYTES) {
    const large = largeCommit2In(input);
    if (large !== undefined) return large;
  }
  const o = asObject(parseJsonText(input, '', ''), '');
  // a wrapper missing Phase1Out is a broken wrapper (named so), not another form
  if (o.Phase1Out !== undefined || o.SectorNum !== undefined || o.SectorSize !== undefined) return commit2InFromValue(o);
  if (o.registered_proof !== undefined) {
    const phase1Out = parseC1Value(o);
    return { sectorNum: 0, sectorSize: phase1Out.registeredProof.sectorSize, miner: undefined, form: 'c1', phase1Out };
  }
  if (o.c1out !== undefined) return gpuproxyFromValue(o);
  const keys = Object.keys(o);
  throw new C1FormatError(
    '',
    'not a C1 in any form kiln reads: a Commit2In wrapper {SectorNum, Phase1Out, SectorSize}, a raw C1 {registered_proof, vanilla_proofs, …} ' +
      `or gpuproxy's C2 input {c1out, prover_id, sector_id, miner_id}; this object has ${keys.length ? `the keys ${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', …' : ''}` : 'no keys'}`,
  );
}
