/**
 * `kiln params [--dir D] [--deep | --sample N]`: what the parameter cache holds. Each file is named
 * with the circuit it serves (official v28 names are computed from each circuit's identifier:
 * filecoin/params-names.ts; kiln's `<circuit id>.params`; `dev-<digest>.params` development files in
 * the kiln cache's `dev-params`), and checked: a .params file's count fields against its size (the native
 * reader's layout check: every section fits, b_g2 = b_g1, nothing trails), its verifying key's points,
 * h + 1 a power of two; with `--counts`, ic, h and l against the PoRep circuit (counted, not stored);
 * a .vk file's points; a .meta file's sector size. With `--sample N`, N points
 * of every section are decoded with the curve and subgroup checks (spread over the section); with
 * `--deep`, every point (slow for official files: tens of GB), with progress.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NativeBackend, nativeAvailable } from '../backend/native.js';
import { allOfficialCircuits, officialCircuitOfFile, type OfficialCircuit } from '../filecoin/params-names.js';
import { PARAMS_SECTIONS, decodeVerifyingKey, readParamsLayout, readVerifyingKeyFile, type ParamsLayout, type QuerySection } from '../groth16/keys.js';
import { checkParamsPoints, inspectParamsFile } from '../groth16/params-native.js';
import { domainSize } from '../groth16/queries.js';
import { allSealProofs, sectorSizeByBytes } from '../filecoin/registry.js';
import { porepCircuitSizes } from '../kinds/porep/porep-c2.js';
import { CLI_WITHOUT, checkParamsDir, paramsDirAdvice } from '../kinds/params-dir.js';

/** Circuit sizes counted once per run. */
const circuitSizes = new Map<string, { numConstraints: number; numInputs: number; numAux: number }>();
import type { ProgressFn } from '../util/progress.js';

export interface ParamsCommandOptions {
  dir: string;
  /** The kiln cache (`[kiln] cache_dir`, --cache-dir): its `dev-params` folder is listed too. */
  cacheDir?: string;
  /** Check every point (curve and subgroup). */
  deep?: boolean;
  /** Check this many points of each section (ignored with deep). */
  sample?: number;
  /** Count each PoRep circuit a file serves and check ic, h and l against it (about 10 s per small
   *  size, minutes for 32/64 GiB). */
  counts?: boolean;
  progress?: ProgressFn;
}

export interface ParamsFileReport {
  file: string;
  path: string;
  bytes: number;
  /** The circuit it serves, in words ('' when unknown). */
  serves: string;
  circuitId?: string;
  official: boolean;
  counts?: Record<QuerySection | 'ic', number>;
  points?: { checked: number; total: number; ms: number };
  problems: string[];
  notes: string[];
}

export interface ParamsReport {
  dir: string;
  /** Whether `dir` exists (a fresh machine has none: the report says what to fetch). */
  exists: boolean;
  /** The kiln cache whose `dev-params` files are listed (as `dev-params/<name>`). */
  cacheDir?: string;
  files: ParamsFileReport[];
  /** Official circuits with no .params file by their official name. */
  missing: OfficialCircuit[];
  ok: boolean;
}

/** Points checked per call (bounds the scratch memory: 1 MiB of G2 points). */
const CHUNK_POINTS = 4096;

function describe(file: string): { serves: string; circuitId?: string; official: boolean; problems: string[] } {
  const off = officialCircuitOfFile(file);
  if (off) return { serves: `${off.circuitId}: ${off.serves}`, circuitId: off.circuitId, official: true, problems: [] };
  const base = file.replace(/\.(params|vk|meta)$/, '');
  const kilnId = allOfficialCircuits().find((c) => c.circuitId === base);
  if (kilnId) return { serves: `${kilnId.circuitId} (kiln's name): ${kilnId.serves}`, circuitId: kilnId.circuitId, official: false, problems: [] };
  const dev = /^dev-([0-9a-f]+)$/.exec(base);
  if (dev) return { serves: `INSECURE development parameters (shape digest ${dev[1]!.slice(0, 16)}…)`, official: false, problems: [] };
  if (/^v\d+-/.test(file)) {
    return { serves: '', official: false, problems: ['a v28-style name that is no official circuit kiln knows (renamed, or an unknown identifier digest)'] };
  }
  return { serves: '', official: false, problems: [] };
}

async function layoutOf(path: string): Promise<ParamsLayout> {
  return nativeAvailable() ? inspectParamsFile(path) : readParamsLayout(path);
}

/** `n` points spread over `total`: windows of up to 64 consecutive points, evenly spaced. */
function sampleRanges(total: number, n: number): [number, number][] {
  if (n >= total) return [[0, total]];
  const win = Math.min(64, n);
  const windows = Math.ceil(n / win);
  const out: [number, number][] = [];
  for (let i = 0; i < windows; i++) {
    const start = windows === 1 ? 0 : Math.floor(((total - win) * i) / (windows - 1));
    const prev = out[out.length - 1];
    if (prev && start < prev[0] + prev[1]) continue;
    out.push([start, Math.min(win, total - start)]);
  }
  return out;
}

async function checkParams(r: ParamsFileReport, o: ParamsCommandOptions, backend: NativeBackend | undefined): Promise<void> {
  let layout: ParamsLayout;
  try {
    layout = await layoutOf(r.path);
  } catch (e) {
    r.problems.push((e as Error).message);
    return;
  }
  r.counts = { ic: layout.icCount, h: 0, l: 0, a: 0, b_g1: 0, b_g2: 0 };
  for (const s of PARAMS_SECTIONS) r.counts[s.section] = layout.sections[s.section].count;
  r.notes.push(`header: counts fit the file size exactly (${layout.size} bytes)`);
  const h = layout.sections.h.count;
  if (h < 1 || ((h + 1) & h) !== 0) r.problems.push(`h has ${h} points: h + 1 is not a power of two (the evaluation domain)`);
  try {
    await decodeVerifyingKey(layout.vkBytes, { checkPoints: true, source: r.path });
    r.notes.push('verifying key: every point on the curve and in the subgroup');
  } catch (e) {
    r.problems.push(`verifying key: ${(e as Error).message}`);
  }
  if (o.counts && r.circuitId?.startsWith('porep-')) {
    const info = allSealProofs().find((p) => p.version === 'V1_1' && `porep-${sectorSizeByBytes(p.sectorSize)!.circuitLabel}` === r.circuitId)!;
    const sizes = circuitSizes.get(r.circuitId) ?? porepCircuitSizes(info);
    circuitSizes.set(r.circuitId, sizes);
    const want = { ic: sizes.numInputs, h: domainSize(sizes) - 1, l: sizes.numAux };
    const bad = (Object.keys(want) as (keyof typeof want)[]).filter((k) => r.counts![k] !== want[k]);
    if (bad.length) r.problems.push(`counts do not match the ${r.circuitId} circuit: ${bad.map((k) => `${k} ${r.counts![k]} (circuit: ${want[k]})`).join(', ')}`);
    else r.notes.push(`counts match the ${r.circuitId} circuit (ic ${want.ic}, h ${want.h}, l ${want.l})`);
  }
  if (!o.deep && !(o.sample && o.sample > 0)) return;
  if (!backend) {
    r.problems.push('point checks need the native addon (build/Release/kiln_native.node)');
    return;
  }
  const t0 = performance.now();
  let checked = 0;
  let total = 0;
  const plan = PARAMS_SECTIONS.map((s) => {
    const count = layout.sections[s.section].count;
    total += count;
    return { section: s.section, ranges: o.deep ? [[0, count] as [number, number]] : sampleRanges(count, o.sample!) };
  });
  const toCheck = plan.reduce((t, p) => t + p.ranges.reduce((u, [, n]) => u + n, 0), 0);
  const stage = `${o.deep ? 'points' : 'sample'} ${r.file.length > 24 ? `${r.file.slice(0, 21)}…` : r.file}`;
  o.progress?.(stage, 0, toCheck);
  try {
    for (const p of plan) {
      for (const [start, n] of p.ranges) {
        for (let first = start; first < start + n; first += CHUNK_POINTS) {
          const k = Math.min(CHUNK_POINTS, start + n - first);
          await checkParamsPoints(layout, p.section, first, k, backend);
          checked += k;
          o.progress?.(stage, checked, toCheck);
        }
      }
    }
  } catch (e) {
    r.problems.push((e as Error).message);
  }
  r.points = { checked, total, ms: performance.now() - t0 };
}

/** Lists and checks the parameter cache `o.dir` (and the development parameters of the kiln cache). */
export async function paramsReport(o: ParamsCommandOptions): Promise<ParamsReport> {
  const exists = existsSync(o.dir) && statSync(o.dir).isDirectory();
  if (existsSync(o.dir) && !exists) throw new Error(`${o.dir}: not a directory (set --dir or FIL_PROOFS_PARAMETER_CACHE)`);
  const devDir = o.cacheDir === undefined ? undefined : join(o.cacheDir, 'dev-params');
  const dirs = [o.dir, ...(devDir === undefined ? [] : [devDir])].filter((d) => existsSync(d));
  const backend = nativeAvailable() ? new NativeBackend() : undefined;
  const files: ParamsFileReport[] = [];
  for (const d of dirs) {
    for (const file of readdirSync(d).sort()) {
      const path = join(d, file);
      const st = statSync(path);
      if (!st.isFile() || !/\.(params|vk|meta)$/.test(file)) continue;
      const desc = describe(file);
      const r: ParamsFileReport = { file: d === o.dir ? file : join('dev-params', file), path, bytes: st.size, ...desc, notes: [] };
      if (file.endsWith('.params')) await checkParams(r, o, backend);
      else if (file.endsWith('.vk')) {
        try {
          const vk = await readVerifyingKeyFile(path);
          r.counts = { ic: vk.ic.length, h: 0, l: 0, a: 0, b_g1: 0, b_g2: 0 };
          r.notes.push(`verifying key: ${vk.ic.length} IC points, every point on the curve and in the subgroup`);
        } catch (e) {
          r.problems.push((e as Error).message);
        }
      } else {
        try {
          const meta = JSON.parse(await readFile(path, 'utf8')) as { sector_size?: number };
          const want = allOfficialCircuits().find((c) => c.circuitId === r.circuitId)?.sectorSize;
          if (want !== undefined && meta.sector_size !== want) r.problems.push(`meta sector_size ${meta.sector_size} but the circuit's is ${want}`);
          else r.notes.push(`meta: sector_size ${meta.sector_size}`);
        } catch (e) {
          r.problems.push(`meta: not JSON (${(e as Error).message})`);
        }
      }
      files.push(r);
    }
  }
  const present = new Set(files.map((f) => f.file));
  const missing = allOfficialCircuits().filter((c) => !present.has(c.fileName));
  return { dir: o.dir, exists, cacheDir: o.cacheDir, files, missing, ok: files.every((f) => f.problems.length === 0) };
}

const GiB = 2 ** 30;
const fmtBytes = (n: number): string => (n >= GiB ? `${(n / GiB).toFixed(1)} GiB` : n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export function formatParamsReport(r: ParamsReport): string[] {
  const dev = r.files.filter((f) => f.file.startsWith('dev-params/')).length;
  const out = [`parameter cache ${r.dir}: ${r.exists ? `${r.files.length - dev} file(s)` : 'does not exist'}`];
  if (r.cacheDir !== undefined) out.push(`kiln cache ${r.cacheDir}: ${dev} development parameter file(s) (INSECURE) in dev-params/`);
  for (const f of r.files) {
    out.push('');
    out.push(`${f.problems.length ? 'BAD ' : 'ok  '}${f.file}  ${fmtBytes(f.bytes)}`);
    out.push(`    serves: ${f.serves || 'no circuit kiln knows'}`);
    if (f.counts && f.file.endsWith('.params')) {
      const c = f.counts;
      out.push(`    counts: ic ${c.ic}, h ${c.h}, l ${c.l}, a ${c.a}, b_g1 ${c.b_g1}, b_g2 ${c.b_g2}`);
    }
    for (const n of f.notes) out.push(`    ${n}`);
    if (f.points) {
      const all = f.points.checked === f.points.total;
      out.push(`    points: ${f.points.checked} of ${f.points.total} checked${all ? ' (all)' : ''} on the curve and in the subgroup in ${(f.points.ms / 1000).toFixed(1)} s`);
    }
    for (const p of f.problems) out.push(`    PROBLEM: ${p}`);
  }
  out.push('');
  const porep = r.missing.filter((m) => m.kind === 'porep');
  out.push(`official files present: ${allOfficialCircuits().length - r.missing.length} of ${allOfficialCircuits().length}` + (porep.length ? `; PoRep circuits without their official file: ${porep.map((m) => m.circuitId).join(', ')}` : ''));
  // by sector size: what is there, what a size needs, how to fetch it (the daemon says the same at start)
  out.push(...paramsDirAdvice(checkParamsDir(r.dir), CLI_WITHOUT).lines);
  out.push(r.ok ? 'all files check out' : `${r.files.filter((f) => f.problems.length).length} file(s) with problems`);
  return out;
}

/** The CLI action: prints the report; returns whether every file checked out. */
export async function runParamsCommand(o: ParamsCommandOptions & { out?: (l: string) => void }): Promise<boolean> {
  const r = await paramsReport(o);
  for (const l of formatParamsReport(r)) (o.out ?? console.log)(l);
  return r.ok;
}
