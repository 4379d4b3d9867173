/**
 * `kiln gen-vanilla` (vanilla PoSt proofs of sectors kiln sealed) and `kiln synth-post` (synthetic full-size ones).
 * Both write cuzk-bench's vanilla file format: a JSON array of base64-encoded raw bincode
 * `FallbackPoStSectorProof`s (read back with readVanillaFile in src/filecoin/post/vanilla.ts).
 */
import { writeFileSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import { allPoStProofs, postProofById, postProofName } from '../filecoin/post/registry.js';
import type { PoStProofInfo, PoStType } from '../filecoin/post/types.js';
import { parseSectorSize, sectorSizeRefusal } from '../filecoin/registry.js';
import { hiddenAlias } from './options.js';

/** `--type`: window | winning (cuzk-bench's wpost/winning too). */
export function parsePoStType(v: string): PoStType {
  const t = v.toLowerCase();
  if (t === 'window' || t === 'wpost' || t === 'window-post') return 'window';
  if (t === 'winning' || t === 'winning-post') return 'winning';
  throw new InvalidArgumentError('expected window or winning');
}

/**
 * `--registered-proof`: the RegisteredPoStProof id (0–14, as cuzk-bench) or its name ("StackedDrgWindow32GiBV1_1");
 * absent: the current proof of that type and size (Window …V1_1, Winning …V1).
 */
export function resolvePoStProof(type: PoStType, sectorSize: number, registered?: string): PoStProofInfo {
  let info: PoStProofInfo | undefined;
  if (registered === undefined) {
    info = allPoStProofs().find((p) => p.type === type && p.size.sectorSize === sectorSize && (type === 'winning' || p.api === 'V1_2'));
  } else if (/^\d+$/.test(registered.trim())) {
    info = postProofById(Number(registered.trim()));
    if (info === undefined) throw new Error(`--registered-proof ${registered}: RegisteredPoStProof ids are 0–14`);
  } else {
    info = allPoStProofs().find((p) => postProofName(p) === registered.trim());
    if (info === undefined) throw new Error(`--registered-proof ${registered}: unknown (e.g. StackedDrgWindow32GiBV1_1 or 13)`);
  }
  if (info === undefined) throw new Error(`no ${type} PoSt proof for ${sectorSize}-byte sectors`);
  if (info.type !== type) throw new Error(`--registered-proof ${postProofName(info)} is a ${info.type} proof, not --type ${type}`);
  if (info.size.sectorSize !== sectorSize) throw new Error(`--registered-proof ${postProofName(info)} proves ${info.size.label} sectors, not ${sectorSize}-byte ones`);
  return info;
}

export function parseRandomness(hex: string): Uint8Array {
  const h = hex.trim().replace(/^0x/, '');
  if (!/^[0-9a-fA-F]{64}$/.test(h)) throw new Error('--randomness must be 32 bytes as 64 hex digits');
  return new Uint8Array(Buffer.from(h, 'hex'));
}

/** The output files of a window PoSt of several partitions: the names given, or FILE with -p<k> inserted. */
export function partitionOutFiles(outs: readonly string[], partitions: number): string[] {
  if (outs.length === partitions) return [...outs];
  if (outs.length !== 1) throw new Error(`${partitions} partitions need ${partitions} --out files (or one, numbered)`);
  const m = /^(.*?)(\.[^./]*)?$/.exec(outs[0]!)!;
  return Array.from({ length: partitions }, (_, k) => `${m[1]}-p${k}${m[2] ?? ''}`);
}

export interface GenVanillaOptions {
  type: PoStType;
  sectors: string[];
  randomness: string;
  registeredProof?: string;
  out: string[];
}

/** Writes the vanilla proof file(s); returns their names. */
export async function runGenVanilla(o: GenVanillaOptions, log: (s: string) => void = console.error): Promise<string[]> {
  const { readSectorDir } = await import('../filecoin/seal/sector-store.js');
  const { windowPoStVanilla, winningPoStVanilla } = await import('../filecoin/post/generate.js');
  const { vanillaFileText } = await import('../filecoin/post/vanilla.js');
  if (o.sectors.length === 0) throw new Error('give at least one --sector-dir DIR');
  const sectors = o.sectors.map((d) => readSectorDir(d));
  const size = sectors[0]!.info.sectorSize;
  const info = resolvePoStProof(o.type, size, o.registeredProof);
  const randomness = parseRandomness(o.randomness);
  if (o.type === 'winning') {
    if (o.out.length !== 1) throw new Error('a WinningPoSt writes one --out file');
    const r = winningPoStVanilla(info, sectors, randomness);
    writeFileSync(o.out[0]!, vanillaFileText([r.element]));
    log(`${postProofName(info)}: sector ${r.sectorId} challenged (index ${r.sectorIndex} of the ${sectors.length} sectors in ascending id order); 1 vanilla proof (${r.element.length} B) written to ${o.out[0]}`);
    return [o.out[0]!];
  }
  const partitions = windowPoStVanilla(info, sectors, randomness);
  const files = partitionOutFiles(o.out, partitions.length);
  partitions.forEach((els, k) => {
    writeFileSync(files[k]!, vanillaFileText(els));
    log(`${postProofName(info)} partition ${k}: ${els.length} vanilla proofs (${els.reduce((a, e) => a + e.length, 0)} B) written to ${files[k]}`);
  });
  return files;
}

function parseU64(v: string, what: string): bigint {
  if (!/^\d+$/.test(v.trim()) || BigInt(v.trim()) >= 1n << 64n) throw new Error(`${what} must be a u64`);
  return BigInt(v.trim());
}

export interface SynthPostCliOptions {
  type: PoStType;
  sectorSize: string;
  sectors?: number;
  randomness: string;
  registeredProof?: string;
  partition?: number;
  firstSector?: string;
  rngSeed?: string;
  threads?: number;
  out: string;
}

export async function runSynthPost(o: SynthPostCliOptions, log: (s: string) => void = console.error): Promise<void> {
  const { synthPoSt, synthPoStLabel } = await import('../filecoin/post/synthetic.js');
  const { vanillaFileText } = await import('../filecoin/post/vanilla.js');
  const size = parseSectorSize(o.sectorSize);
  if (size === undefined) throw new Error(sectorSizeRefusal(o.sectorSize, '--sector-size'));
  const info = resolvePoStProof(o.type, size.sectorSize, o.registeredProof);
  const t0 = performance.now();
  const r = synthPoSt({
    info,
    randomness: parseRandomness(o.randomness),
    sectors: o.sectors,
    partitionIndex: o.partition,
    firstSectorId: o.firstSector !== undefined ? parseU64(o.firstSector, '--first-sector-number') : undefined,
    rngSeed: o.rngSeed,
    threads: o.threads,
  });
  const text = vanillaFileText(r.elements);
  writeFileSync(o.out, text);
  const raw = r.elements.reduce((a, e) => a + e.length, 0);
  const stages = Object.entries(r.timings).map(([k, v]) => `${k} ${v} ms`).join(', ');
  log(
    `synthetic ${synthPoStLabel(info, r.elements.length)}: ${raw} B of vanilla proofs (${text.length} B file) written to ${o.out} ` +
      `in ${((performance.now() - t0) / 1000).toFixed(1)} s (${stages})`,
  );
}

const positiveInt = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
};
const nonNegativeInt = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
};
const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

/** Registers gen-vanilla and synth-post on the kiln program. */
export function registerPostVanillaCommands(program: Command): void {
  const gen = program
    .command('gen-vanilla')
    .description(
      'WindowPoSt or WinningPoSt vanilla proofs of sectors sealed with `kiln seal --sector-dir DIR`: challenges from ' +
        'the randomness, inclusion proofs from tree_r_last. Writes cuzk-bench\'s vanilla file (a JSON array of ' +
        'base64 bincode FallbackPoStSectorProofs). Window: sectors sorted by id, one file per partition; winning: ' +
        'the challenged sector of the set.',
    )
    .requiredOption('--type <type>', 'window | winning', parsePoStType)
    .requiredOption('--sector-dir <dir>', 'a sealed sector\'s directory, from kiln seal --sector-dir (repeat for several sectors)', collect)
    .requiredOption('--randomness <hex>', '32-byte randomness, a canonical field element (Curio masks byte 31 with 0x3f)')
    .option('--registered-proof <id|name>', 'RegisteredPoStProof id 0–14 or name (default: Window…V1_1 / Winning…V1 of the sector size)')
    .requiredOption('--out <file>', 'output file (window: repeat once per partition, or one name numbered -p<k>)', collect)
    .action(async (opts) => {
      await runGenVanilla({ type: opts.type, sectors: opts.sectorDir, randomness: opts.randomness, registeredProof: opts.registeredProof, out: opts.out });
    });
  hiddenAlias(gen, '--sector <dir>', 'sectorDir', collect);

  const synth = program
    .command('synth-post')
    .description(
      'synthetic WindowPoSt / WinningPoSt vanilla proofs of full size without sealing (e.g. a 2349-sector 32GiB ' +
        'partition): leaves at exactly the derived challenges, every path of a sector leading to its comm_r_last, ' +
        'comm_r = Poseidon2(comm_c, comm_r_last). Writes cuzk-bench\'s vanilla file. For benchmarks.',
    )
    .requiredOption('--type <type>', 'window | winning', parsePoStType)
    .requiredOption('--sector-size <size>', '2KiB | 8MiB | 512MiB | 32GiB | 64GiB')
    .requiredOption('--randomness <hex>', '32-byte randomness, a canonical field element')
    .requiredOption('--out <file>', 'output file')
    .option('--sectors <n>', 'sectors (window: default the partition size, 2349 for 32GiB; winning: 1)', positiveInt)
    .option('--registered-proof <id|name>', 'RegisteredPoStProof id 0–14 or name (default: Window…V1_1 / Winning…V1)')
    .option('--partition-index <k>', 'WindowPoSt partition index (V1 window challenges depend on it)', nonNegativeInt, 0)
    .option('--first-sector-number <n>', 'number of the first sector, the others follow', '1')
    .option('--rng-seed <s>', 'seed of every pseudo-random value', '0')
    .option('--threads <n>', 'Poseidon worker threads (default: all cores)', positiveInt)
    .action(async (opts) => {
      await runSynthPost({
        type: opts.type, sectorSize: opts.sectorSize, sectors: opts.sectors, randomness: opts.randomness,
        registeredProof: opts.registeredProof, partition: opts.partitionIndex, firstSector: opts.firstSectorNumber,
        rngSeed: opts.rngSeed, threads: opts.threads, out: opts.out,
      });
    });
  hiddenAlias(synth, '--partition <k>', 'partitionIndex', nonNegativeInt);
  hiddenAlias(synth, '--first-sector <id>', 'firstSectorNumber');
}
