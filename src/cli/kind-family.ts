/**
 * `kiln prove` and `kiln verify` over every proof kind: `--kind porep | winning | window | snap` (the
 * daemon's four), each with its own inputs, and the kind taken from the inputs when not named (--c1: porep,
 * --update: snap). `prove-post`/`verify-post` and `prove-snap`/`verify-snap` stay as the same commands under
 * their old names (post-commands.ts, snap-commands.ts); all of them end in the same run functions.
 */
import type { Command } from 'commander';
import type { Backend } from '../backend/backend.js';
import { proveArgs, proveOptions } from './kind-commands.js';

export const KIND_NAMES = ['porep', 'winning', 'window', 'snap'] as const;
export type KindName = (typeof KIND_NAMES)[number];

export interface KindFamilyDefaults {
  paramsDir(): string;
  cacheDir(): string;
  selectBackend(name: string, opts: { device: number }): Backend;
}

/** Each kind's own inputs (commander's camelCase keys, and the flag a user typed). */
const OWN: Record<KindName, Record<string, string>> = {
  porep: { c1: '--c1', insecureStatedChallenges: '--insecure-stated-challenges' },
  winning: { vanilla: '--vanilla', randomness: '--randomness', registeredProof: '--registered-proof', minerId: '--miner-id' },
  window: { vanilla: '--vanilla', randomness: '--randomness', registeredProof: '--registered-proof', minerId: '--miner-id', partitionIndex: '--partition-index' },
  snap: { update: '--update', vanilla: '--vanilla' },
};
/** What each kind must be given (prove; verify adds --proof). */
const REQUIRED: Record<KindName, string[]> = { porep: ['c1'], winning: ['vanilla', 'randomness'], window: ['vanilla', 'randomness'], snap: ['update'] };
const ALL_INPUTS: Record<string, string> = Object.assign({}, ...Object.values(OWN));

/** The kind a prove/verify command line names (--kind), or that its inputs imply; throws naming what is wrong:
 *  an unknown kind, inputs of another kind, missing inputs, or inputs that fit several kinds. */
export function resolveKind(opts: Record<string, unknown>): KindName {
  const given = Object.keys(ALL_INPUTS).filter((k) => opts[k] !== undefined && opts[k] !== false);
  let kind: KindName;
  if (opts.kind !== undefined) {
    const k = String(opts.kind);
    if (!(KIND_NAMES as readonly string[]).includes(k)) throw new Error(`--kind ${k}: not a proof kind (${KIND_NAMES.join(', ')})`);
    kind = k as KindName;
  } else if (given.includes('c1')) kind = 'porep';
  else if (given.includes('update')) kind = 'snap';
  else if (given.includes('vanilla') || given.includes('randomness')) throw new Error('WinningPoSt or WindowPoSt: name it with --kind winning or --kind window');
  else throw new Error(`name the proof with --kind (${KIND_NAMES.join(', ')}) and give its inputs (--c1 for porep)`);
  const foreign = given.filter((k) => !(k in OWN[kind]));
  if (foreign.length > 0) throw new Error(`${foreign.map((k) => ALL_INPUTS[k]).join(', ')}: not an input of --kind ${kind} (its inputs: ${Object.values(OWN[kind]).join(', ')})`);
  const missing = REQUIRED[kind].filter((k) => opts[k] === undefined);
  if (missing.length > 0) throw new Error(`--kind ${kind} needs ${missing.map((k) => ALL_INPUTS[k]).join(' and ')}`);
  return kind;
}

function kindInputs(c: Command, d: KindFamilyDefaults): Command {
  return c
    .option('--kind <kind>', `the proof: ${KIND_NAMES.join(' | ')} (default: what the inputs imply: --c1 porep, --update snap)`)
    .option('--c1 <file>', 'porep: the C1 output (Commit2In wrapper, raw C1 JSON or gpuproxy\'s C2 input)')
    .option('--insecure-stated-challenges', 'porep, INSECURE, benchmarks only: an NI-PoRep C1 of `kiln synth-c1 --ni` with the challenges it states')
    .option('--vanilla <file>', 'winning/window: the vanilla proofs (JSON array of base64 bincode sector proofs); snap: instead of the file update.json names')
    .option('--randomness <hex>', 'winning/window: the 32-byte randomness as hex')
    .option('--registered-proof <id|name>', 'winning/window: the RegisteredPoStProof (default: from the vanilla proofs\' size)')
    .option('--partition-index <k>', 'window: the partition index (default 0)')
    .option('--update <file>', 'snap: update.json (kiln update / kiln synth-snap)')
    .option('--params-dir <dir>', 'Filecoin parameter cache', d.paramsDir())
    .option('--cache-dir <dir>', 'kiln cache (compiled shapes, development parameters)', d.cacheDir());
}

/** Registers `prove` and `verify` on the program. */
export function registerKindFamily(program: Command, d: KindFamilyDefaults): void {
  const prove = kindInputs(
    program
      .command('prove')
      .description(
        'prove a proof of any kind, verify it and print the timing breakdown: PoRep C2 (--c1: every partition of a C1 output, ' +
          '192 B per partition), WinningPoSt / WindowPoSt (--kind winning|window: one partition from vanilla proofs + randomness), ' +
          'SnapDeals (--update: every partition of an update). Without official parameters in --params-dir it generates INSECURE ' +
          'development parameters (once, cached) and says so. prove-post and prove-snap are the same for their kinds.',
      ),
    d,
  ).option('--miner-id <f0…|n>', 'winning/window: the miner (for the record; the circuit does not use it)');
  proveOptions(prove).action(async (opts: Record<string, unknown>) => {
    const kind = resolveKind(opts);
    const common = proveArgs(opts, d.selectBackend);
    const s = (k: string): string | undefined => opts[k] as string | undefined;
    if (kind === 'porep') {
      const { runProve } = await import('./porep-commands.js');
      await runProve({ c1: s('c1')!, statedNiChallenges: Boolean(opts.insecureStatedChallenges), ...common });
    } else if (kind === 'snap') {
      const { runProveSnap } = await import('./snap-commands.js');
      await runProveSnap({ update: s('update')!, vanilla: s('vanilla'), ...common });
    } else {
      const { runProvePoSt } = await import('./post-commands.js');
      await runProvePoSt({ type: kind, vanilla: s('vanilla')!, randomness: s('randomness')!, minerId: s('minerId'), registeredProof: s('registeredProof'), partitionIndex: s('partitionIndex'), ...common });
    }
  });

  kindInputs(
    program
      .command('verify')
      .description(
        'verify a proof of any kind against its public inputs (exit status 0 when valid, 1 when not): --c1 (porep), ' +
          '--kind winning|window with --vanilla and --randomness (the sectors\' ids and comm_r from the vanilla file), --update (snap). ' +
          'verify-post and verify-snap are the same for their kinds.',
      ),
    d,
  )
    .requiredOption('--proof <file>', 'the proof file')
    .action(async (opts: Record<string, unknown>) => {
      const kind = resolveKind(opts);
      const paramsDir = opts.paramsDir as string;
      const cacheDir = opts.cacheDir as string;
      const s = (k: string): string | undefined => opts[k] as string | undefined;
      const proof = s('proof')!;
      let ok: boolean;
      if (kind === 'porep') {
        const { runVerify } = await import('./porep-commands.js');
        ok = await runVerify({ c1: s('c1')!, proof, paramsDir, cacheDir, statedNiChallenges: Boolean(opts.insecureStatedChallenges) });
      } else if (kind === 'snap') {
        if (opts.vanilla !== undefined) throw new Error('--vanilla: verify --kind snap reads update.json\'s public inputs only');
        const { runVerifySnap } = await import('./snap-commands.js');
        ok = await runVerifySnap({ update: s('update')!, proof, paramsDir, cacheDir });
      } else {
        const { runVerifyPoSt } = await import('./post-commands.js');
        ok = await runVerifyPoSt({ type: kind, vanilla: s('vanilla')!, randomness: s('randomness')!, registeredProof: s('registeredProof'), partitionIndex: s('partitionIndex'), proof, paramsDir, cacheDir });
      }
      if (!ok) process.exitCode = 1;
    });
}
