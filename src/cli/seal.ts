/** `kiln seal` and `kiln synth-c1`: C1 inputs that nobody hands you. */
import { randomBytes } from 'node:crypto';
import { readOptionFile, writeChunksAtomic } from '../util/files.js';
import { cliProgressRenderer, parseHex32, sealSector, synthC1, writeSectorDir } from '../filecoin/seal/index.js';
import type { SealProofVersion } from '../filecoin/registry.js';

export interface SealCliOptions {
  sectorSize: string;
  data?: string;
  miner?: string;
  sector?: string;
  ticket?: string;
  seed?: string;
  rngSeed?: string;
  out: string;
  /** Also keep the sector's PoSt material (replica, tree_r_last, comm_c) in this directory (sector-store.ts). */
  sectorDir?: string;
  /** NI-PoRep (registered proofs 15–19: challenges from comm_r, 13 partitions at these sizes). */
  ni?: boolean;
}

/** The seal proof version of `--ni` (V1_1, what lotus seals today, without it). */
const version = (ni: boolean | undefined): SealProofVersion => (ni ? 'V1_2_Feat_NonInteractivePoRep' : 'V1_1');

/** Seals a small sector and writes its Commit2In; returns the wrapper text. */
export function runSeal(o: SealCliOptions, quiet = false): string {
  const data = o.data !== undefined ? new Uint8Array(readOptionFile('--data', o.data)) : undefined;
  // Random data (and ticket) when no data file is given, unless --rng-seed pins them.
  const rngSeed = o.rngSeed ?? (data === undefined ? randomBytes(16).toString('hex') : '0');
  const bar = quiet ? undefined : cliProgressRenderer();
  try {
    const r = sealSector({
      sectorSize: o.sectorSize,
      version: version(o.ni),
      data,
      miner: o.miner,
      sectorNumber: o.sector !== undefined ? BigInt(o.sector) : undefined,
      ticket: o.ticket !== undefined ? parseHex32(o.ticket, '--ticket') : undefined,
      seed: o.seed !== undefined ? parseHex32(o.seed, '--seed') : undefined,
      rngSeed,
      progress: bar?.progress,
      keepSector: o.sectorDir !== undefined,
    });
    bar?.stop();
    writeChunksAtomic(o.out, r.commit2InChunks());
    if (o.sectorDir !== undefined && r.sector !== undefined) writeSectorDir(o.sectorDir, r.sector);
    if (!quiet) {
      const stages = Object.entries(r.timings)
        .map(([k, v]) => `${k} ${v.toFixed(0)} ms`)
        .join(', ');
      console.error(`sealed ${r.info.name}: comm_d ${hex(r.commD)}, comm_r ${hex(r.commR)}`);
      console.error(`  ${stages}`);
      console.error(`  Commit2In written to ${o.out}`);
      if (o.sectorDir !== undefined) console.error(`  sector kept for PoSt in ${o.sectorDir} (sector.json, replica.bin, tree-r-last.bin)`);
    }
    return r.commit2In;
  } finally {
    bar?.stop();
  }
}

export interface SynthCliOptions {
  sectorSize: string;
  rngSeed?: string;
  data?: 'zero' | 'random';
  out: string;
  /** NI-PoRep (126 partitions at 32/64 GiB), its challenges stated (see filecoin/seal/synthetic.ts): benchmarks only. */
  ni?: boolean;
}

export function runSynthC1(o: SynthCliOptions): void {
  const bar = cliProgressRenderer();
  try {
    const t0 = performance.now();
    const r = synthC1({ sectorSize: o.sectorSize, version: version(o.ni), rngSeed: o.rngSeed, data: o.data, progress: bar.progress });
    bar.stop();
    const chunks = r.commit2InChunks(); // a 32 GiB NI-PoRep wrapper (~650 MB) is past V8's longest string
    writeChunksAtomic(o.out, chunks);
    const bytes = chunks.reduce((n, c) => n + c.length, 0);
    console.error(
      `synthetic ${r.info.name} C1 (${(bytes / 2 ** 20).toFixed(1)} MiB) written to ${o.out} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    if (!r.challengesDerived) {
      console.error(
        `  its ${r.info.partitions} × ${r.info.challengesPerPartition} challenges are stated, not derived from its comm_r (a synthetic sector's comm_r depends on them): ` +
          'the daemon proves it only with [kiln] insecure_stated_ni_challenges = true, kiln prove with --insecure-stated-challenges (INSECURE, benchmarks only)',
      );
    }
  } finally {
    bar.stop();
  }
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
