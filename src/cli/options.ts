/**
 * The CLI's one vocabulary: every command names a thing the same way, `--help` says which
 * options are required, what the defaults are and which environment variables count. Older spellings stay as
 * hidden aliases so that existing scripts keep working:
 *
 *   --sector-dir <dir>          a sealed sector's directory (gen-vanilla's --sector)
 *   --sector-number <n>         a sector number (seal's --sector)
 *   --first-sector-number <n>   synth-post's --first-sector
 *   --partition-index <k>       a WindowPoSt partition (synth-post's --partition)
 *   --rng-seed <s>              the seed of pseudo-random values (demo-circuit's and synth-snap's --seed);
 *                               --seed is only ever the PoRep interactive seed (seal)
 *   --params-dir <dir>          the Filecoin parameter cache (params' --dir)
 *   --miner-id <f0…|n>          the miner, as an ID address or an actor id (seal's --miner)
 */
import { type Command, Option } from 'commander';
import { type Span, formatSpanTree } from '../util/timing.js';
import { type Tuning, tuningFromEnv } from '../util/tuning.js';

let tuning: Tuning | undefined;

/** The CLI's tuning variables (src/util/tuning.ts), read from the environment once per process, when a command
 *  first needs them (main.ts reads them before every command's action: a bad value is the command's error,
 *  naming the variable). The CLI passes them down: to selectBackend, the proof kinds, runDaemon. */
export function cliTuning(): Tuning {
  tuning ??= tuningFromEnv(process.env);
  return tuning;
}

/** Adds `flags` as a hidden spelling of the option whose value is stored under `attribute` (its camelCase
 *  name: `sectorDir` for --sector-dir): both set the same value, the alias is not shown in --help. */
export function hiddenAlias<T>(cmd: Command, flags: string, attribute: string, parse?: (value: string, previous: T) => T): Command {
  const o = new Option(flags).hideHelp();
  if (parse !== undefined) o.argParser(parse);
  o.attributeName = (): string => attribute;
  return cmd.addOption(o);
}

/** A command's span tree for its output; each parent's uncovered time (a debug detail) only with KILN_SPAN_GAPS=1. */
export function spanTreeText(root: Span): string {
  return formatSpanTree(root, { gaps: process.env.KILN_SPAN_GAPS === '1' });
}


/** Appends "(required)" to the help of every required option of `program` and its subcommands, so that
 *  --help tells them from the optional ones. */
export function markRequiredOptions(program: Command): void {
  for (const cmd of [program, ...program.commands]) {
    for (const o of cmd.options) if (o.mandatory && !o.description.endsWith('(required)')) o.description = `${o.description} (required)`;
    if (cmd !== program) markRequiredOptions(cmd);
  }
}

/** The environment variables kiln reads, for the top-level --help. */
export const ENVIRONMENT_HELP = `
Environment:
  FIL_PROOFS_PARAMETER_CACHE  default of --params-dir and of [srs] param_cache: the official Filecoin parameters
  KILN_CACHE_DIR              default of --cache-dir: compiled shapes and INSECURE development parameters
  KILN_PROGRESS               0: no progress at all; 1: progress bars even when stdout or stderr is not a terminal
  KILN_PROGRESS_INTERVAL      seconds between progress lines when there is no terminal (default 10)
  KILN_SPAN_GAPS=1            list each span's uncovered time in the timing breakdown (a debug detail)
  KILN_GPU_MEMORY_LIMIT       cap on the device memory each GPU's plans use: bytes, a size ("24GiB") or "75%"
  KILN_DEV_SETUP=cpu          make development parameters on the CPU even with the CUDA backend
  KILN_WITNESS=ts             witnesses by the TypeScript generator instead of the native interpreter
  KILN_NO_IFMA=1              do not use the AVX-512 IFMA kernels
  KILN_CUDA_ADDON             path of another build of the CUDA addon
  KILN_POST_SHAPE_CACHE=0     record PoSt shapes every time instead of caching them

Exit status: 0 on success; 1 on an error, a proof that does not verify, or (kiln bench) a job that did not complete.
Times in the output are in ms below 10 s and in s (min, h) above.`;
