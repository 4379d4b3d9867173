/**
 * What the Filecoin parameter directory (`[srs] param_cache`, the CLI's --params-dir) holds, by sector size,
 * and what to tell a person about it: the daemon checks it at start, `kiln params` prints it. A sector size
 * needs the official `.params` file of four circuits (PoRep C2, WinningPoSt, WindowPoSt, SnapDeals; Curio uses
 * the SHA256 SnapDeals circuit, not the poseidon one): `curio fetch-params 32GiB` or `lotus fetch-params 32GiB`
 * downloads them (with their `.vk` files) into $FIL_PROOFS_PARAMETER_CACHE.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { allOfficialCircuits, type OfficialCircuit } from '../filecoin/params-names.js';
import { allSectorSizes } from '../filecoin/registry.js';

export interface SectorSizeParams {
  /** "2KiB" … "64GiB". */
  label: string;
  /** The circuits a daemon proving this size needs, found by their official name or `<circuit id>.params`. */
  present: OfficialCircuit[];
  missing: OfficialCircuit[];
}

export interface ParamsDirReport {
  dir: string;
  exists: boolean;
  sizes: SectorSizeParams[];
}

/** The circuits a sector size needs (every official one of its size but the unused poseidon SnapDeals). */
function neededCircuits(sectorSize: number): OfficialCircuit[] {
  return allOfficialCircuits().filter((c) => c.sectorSize === sectorSize && !c.circuitId.startsWith('snap-poseidon-'));
}

/** Looks for each needed circuit's `.params` file in `dir` (names only: `kiln params` checks the contents). */
export function checkParamsDir(dir: string): ParamsDirReport {
  const exists = existsSync(dir) && statSync(dir).isDirectory();
  const has = (c: OfficialCircuit): boolean => exists && (existsSync(join(dir, c.fileName)) || existsSync(join(dir, `${c.circuitId}.params`)));
  return {
    dir,
    exists,
    sizes: allSectorSizes().map((s) => {
      const need = neededCircuits(s.sectorSize);
      return { label: s.label, present: need.filter(has), missing: need.filter((c) => !has(c)) };
    }),
  };
}

/** How to fetch a sector size's official parameters. */
export function fetchParamsHint(label = '32GiB'): string {
  return `\`curio fetch-params ${label}\` or \`lotus fetch-params ${label}\` downloads them (each circuit's .params and .vk) into $FIL_PROOFS_PARAMETER_CACHE (default /var/tmp/filecoin-proof-parameters)`;
}

/**
 * What to say about the directory: `ok` when at least one sector size has every circuit it needs (and
 * nothing is half there), else the lines of a warning: the directory missing or empty of official files,
 * which files a sector size needs (32 GiB named file by file), how to fetch them, and `meanwhile`: what
 * happens to proofs of a circuit without its file (daemonWithout, or the CLI's line).
 */
export function paramsDirAdvice(r: ParamsDirReport, meanwhile: string): { ok: boolean; lines: string[] } {
  const complete = r.sizes.filter((s) => s.missing.length === 0).map((s) => s.label);
  const partial = r.sizes.filter((s) => s.present.length > 0 && s.missing.length > 0);
  const lines: string[] = [];
  if (!r.exists) lines.push(`the Filecoin parameter directory ${r.dir} does not exist: no official parameters`);
  else if (complete.length === 0 && partial.length === 0) lines.push(`the Filecoin parameter directory ${r.dir} holds no official parameters`);
  else lines.push(`the Filecoin parameter directory ${r.dir} has every official parameter file of: ${complete.length ? complete.join(', ') : 'no sector size'}`);
  for (const s of partial) lines.push(`${s.label} is missing ${s.missing.map((c) => `${c.circuitId} (${c.fileName})`).join(', ')}; ${fetchParamsHint(s.label)}`);
  if (complete.length === 0 && partial.length === 0) {
    const need = r.sizes.find((s) => s.label === '32GiB')!.missing;
    lines.push(`a 32 GiB sector needs ${need.length} files: ${need.map((c) => `${c.fileName} (${c.circuitId})`).join(', ')}; ${fetchParamsHint('32GiB')}`);
  }
  const ok = complete.length > 0 && partial.length === 0;
  if (!ok) lines.push(meanwhile);
  return { ok, lines };
}

/** What the daemon does with a request whose circuit has no official file. */
export function daemonWithout(devParams: boolean): string {
  return devParams
    ? 'circuits without official parameters get INSECURE development parameters ([srs] dev_params = true): their proofs are never accepted on chain'
    : 'every proof request of a circuit without its official file fails ([srs] dev_params = false; true makes INSECURE development parameters, for tests only)';
}

/** What the CLI's prove commands do without official parameters. */
export const CLI_WITHOUT =
  'kiln prove, demo, prove-post and prove-snap make INSECURE development parameters for a circuit without its official file (cached in the kiln cache): their proofs are never accepted on chain';
