#!/usr/bin/env node
/**
 * The `kiln` command. Subcommands parse their options and call the library; no maths here. One of the edges that
 * read the environment: the tuning variables once (options.ts cliTuning, before any command's action), passed
 * down to the backends (`select`), the proof kinds and the daemon.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { Backend } from '../backend/backend.js';
import { applyNativeTuning, nativeAvailable } from '../backend/native.js';
import { type SelectOptions, selectBackend } from '../backend/select.js';
import { defaultCacheDir as cacheDirOf, defaultParamCache } from '../engine/config.js';
import { registerKindFamily } from './kind-family.js';
import { registerPostCommands } from './post-commands.js';
import { registerPostVanillaCommands } from './post-vanilla-commands.js';
import { registerSnapCommands } from './snap-commands.js';
import { ENVIRONMENT_HELP, cliTuning, hiddenAlias, markRequiredOptions } from './options.js';

/** selectBackend with the CLI's tuning (KILN_GPU_MEMORY_LIMIT, KILN_CUDA_ADDON, KILN_DEV_SETUP, …). */
const select = (name: string, opts: Omit<SelectOptions, 'tuning'> = {}): Backend => selectBackend(name, { ...opts, tuning: cliTuning() });

const program = new Command();
program
  .name('kiln')
  .description(
    'kiln: a Groth16 proving engine for Filecoin (BLS12-381). PoRep C2 from C1 outputs (prove, verify), a small-sector ' +
      'sealer, a cuzk-compatible proving daemon and its bench client. `kiln demo` seals, proves and verifies a 2 KiB sector.',
  )
  .version('0.1.0')
  // the tuning variables, read before any command runs (a bad value is the command's error, naming it); the CPU
  // addon's IFMA choice (KILN_NO_IFMA) is process-wide and must be made before its first kernel
  .hook('preAction', () => {
    const { noIfma } = cliTuning();
    if (noIfma !== undefined && nativeAvailable()) applyNativeTuning({ noIfma });
  });

const positiveInt = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

program
  .command('demo')
  .description(
    'the main job: seal a 2 KiB sector (random data), prove its C1 with the StackedDrg circuit, verify, and print ' +
      'the timing breakdown. The first run generates INSECURE development parameters for the 2 KiB circuit ' +
      '(about 5 minutes on 2 cores, 10 on a busy machine; peak RSS 2.7 GB; cached) unless official ones are in --params-dir.',
  )
  .option('--params-dir <dir>', 'Filecoin parameter cache', defaultParamsDir())
  .option('--cache-dir <dir>', 'kiln cache (compiled shapes, development parameters, the sealed C1)', defaultCacheDir())
  .option('--backend <name>', 'compute backend: auto (the GPU when usable, else the CPU), cuda, native or reference', 'auto')
  .option('--device <n>', 'GPU ordinal for the cuda/auto backends', '0')
  .option('--json', 'print the result and span tree as JSON')
  .action(async (opts) => {
    const { runMainJob } = await import('./demo-command.js');
    await runMainJob({ paramsDir: opts.paramsDir, cacheDir: opts.cacheDir, backend: select(opts.backend, { device: Number(opts.device) }), json: Boolean(opts.json) });
  });

const demoCircuit = program
  .command('demo-circuit')
  .description('prove and verify the built-in synthetic demo circuit (bits, packing, multiplications): a quick smoke test')
  .option('--constraints <n>', 'number of constraints', positiveInt, 65_000)
  .option('--rng-seed <n>', 'seed of the witness', positiveInt, 1)
  .option('--backend <name>', 'compute backend: auto (the GPU when usable, else the CPU), cuda, native or reference', 'auto')
  .option('--device <n>', 'GPU ordinal for the cuda/auto backends', '0')
  .option('--cache-dir <dir>', 'where development parameters are cached', defaultCacheDir())
  .option('--json', 'print the result and span tree as JSON')
  .action(async (opts) => {
    const { runDemoCircuit } = await import('./demo-circuit-command.js');
    await runDemoCircuit({
      constraints: opts.constraints,
      seed: opts.rngSeed,
      backend: select(opts.backend, { device: Number(opts.device) }),
      cacheDir: opts.cacheDir,
      json: Boolean(opts.json),
    });
  });

program
  .command('info')
  .description('show the compute backends available on this machine (threads, GPUs)')
  .action(async () => {
    const { cudaCapabilities } = await import('../backend/cuda.js');
    const cpu = select('native').capabilities();
    const gpu = cudaCapabilities(cliTuning().addonPath);
    const chosen = select('auto', { warn: () => {} }).name;
    console.log(JSON.stringify({ auto: chosen, cpu: { backend: cpu.backend, threads: cpu.threads, features: cpu.cpuFeatures ?? [] }, cuda: gpu }, null, 2));
  });

const seal = program
  .command('seal')
  .description(
    'seal a small sector for real (SDR labels, trees, comm_r) and run commit phase 1: writes a lotus-bench style ' +
      'Commit2In JSON for `kiln prove`. Random data unless --data is given.',
  )
  .requiredOption('--sector-size <size>', '2KiB | 8MiB | 512MiB (512MiB takes about an hour on 2 cores)')
  .requiredOption('--out <file>', 'where to write the Commit2In JSON')
  .option('--data <file>', 'sector data: sector-size bytes of Fr32 nodes, or 127/128 of that (padded)')
  .option('--miner-id <f0…|n>', 'the miner: its ID address (f0…) or actor id', 'f01000')
  .option('--sector-number <n>', 'the sector\'s number', '0')
  .option('--ticket <hex>', '32-byte ticket (default: derived from --rng-seed)')
  .option('--seed <hex>', 'the PoRep interactive seed (the C1\'s seed), 32 bytes of hex (default: lotus-bench\'s)')
  .option('--rng-seed <s>', 'seed of the random data and default ticket (default: random without --data, "0" with it)')
  .option('--sector-dir <dir>', 'also keep what PoSt proofs need (replica, tree_r_last, comm_c) in DIR, for `kiln gen-vanilla`')
  .option('--ni', 'NI-PoRep (registered proofs 15-19, StackedDrg…V1_2_Feat_NonInteractivePoRep): challenges from comm_r, 13 partitions')
  .action(async (opts) => {
    const { runSeal } = await import('./seal.js');
    runSeal({
      ni: Boolean(opts.ni),
      sectorSize: opts.sectorSize,
      data: opts.data,
      miner: opts.minerId,
      sector: opts.sectorNumber,
      ticket: opts.ticket,
      seed: opts.seed,
      rngSeed: opts.rngSeed,
      out: opts.out,
      sectorDir: opts.sectorDir,
    });
  });

program
  .command('synth-c1')
  .description(
    'write a synthetic C1 of the full shape (e.g. 32GiB) whose vanilla proofs are internally consistent, without ' +
      'sealing: only opened nodes and path siblings exist. For benchmarks of large sizes.',
  )
  .requiredOption('--sector-size <size>', '32GiB | 64GiB (any size works)')
  .requiredOption('--out <file>', 'where to write the Commit2In JSON')
  .option('--rng-seed <s>', 'seed of every pseudo-random value', '0')
  .option('--data <mode>', 'zero (replica_id derived from comm_d) | random', 'zero')
  .option('--ni', 'NI-PoRep (126 partitions at 32/64 GiB); its challenges are stated, not derived from its comm_r: for benchmarks only (README "NI-PoRep")')
  .action(async (opts) => {
    const { runSynthC1 } = await import('./seal.js');
    runSynthC1({ sectorSize: opts.sectorSize, rngSeed: opts.rngSeed, data: opts.data, out: opts.out, ni: Boolean(opts.ni) });
  });

registerKindFamily(program, { paramsDir: defaultParamsDir, cacheDir: defaultCacheDir, selectBackend: select });

program
  .command('circuit-info')
  .description(
    'figures of the PoRep partition circuit as JSON: constraints (with and without the prover\'s input constraints), ' +
      'public inputs, aux variables, A and B densities. Counts without storing, so 32GiB fits in memory; a 32GiB ' +
      'partition takes many minutes (17 on 2 cores), with progress on stderr.',
  )
  .option('--sector-size <size>', '2KiB | 8MiB | 512MiB | 32GiB | 64GiB')
  .option('--c1 <file>', 'take the sector size from a C1 output file instead')
  .option('--circuit <id>', 'a PoSt circuit instead: winning-2k … winning-64g, wpost-2k … wpost-64g (FallbackPoSt); or snap-2k … snap-64g (SnapDeals)')
  .action(async (opts) => {
    if (opts.circuit && String(opts.circuit).startsWith('snap-')) {
      const { runSnapCircuitInfo } = await import('./snap-commands.js');
      console.log(JSON.stringify(await runSnapCircuitInfo(opts.circuit), null, 2));
      return;
    }
    if (opts.circuit) {
      const { runPoStCircuitInfo } = await import('./post-commands.js');
      console.log(JSON.stringify(await runPoStCircuitInfo(opts.circuit), null, 2));
      return;
    }
    if (!opts.sectorSize && !opts.c1) throw new InvalidArgumentError('give --sector-size, --c1 or --circuit');
    const { runCircuitInfo } = await import('./porep-commands.js');
    const { commandProgress } = await import('../util/progress.js');
    const ui = commandProgress(false);
    let info: Record<string, unknown>;
    try {
      info = runCircuitInfo({ sectorSize: opts.sectorSize, c1: opts.c1 }, ui.progress);
    } finally {
      ui.stop();
    }
    console.log(JSON.stringify(info, null, 2));
  });

program
  .command('setup')
  .description(
    'make INSECURE development parameters for the PoRep partition circuit of a sector size (toxic waste from a ' +
      'public seed: for tests and benchmarks only) into the cache where prove, demo and the daemon look for them, ' +
      'without loading them: on the GPU with the CUDA backend (the 32 GiB circuit\'s ~47 GB file streamed from the ' +
      'device), else on the CPU (small sizes only)',
  )
  .requiredOption('--sector-size <size>', '2KiB | 8MiB | 512MiB | 32GiB | 64GiB')
  .option('--cache-dir <dir>', 'kiln cache (compiled shapes, development parameters)', defaultCacheDir())
  .option('--backend <name>', 'compute backend: auto (the GPU when usable, else the CPU), cuda, native or reference', 'auto')
  .option('--device <n>', 'GPU ordinal for the cuda/auto backends', '0')
  .option('--json', 'print the result as JSON')
  .action(async (opts) => {
    const { runSetup } = await import('./porep-commands.js');
    const r = await runSetup({
      sectorSize: opts.sectorSize,
      cacheDir: opts.cacheDir,
      backend: select(opts.backend, { device: Number(opts.device) }),
      json: Boolean(opts.json),
    });
    if (opts.json) console.log(JSON.stringify(r, null, 2));
  });

registerPostCommands(program, { paramsDir: defaultParamsDir, cacheDir: defaultCacheDir, selectBackend: select });
registerSnapCommands(program, { paramsDir: defaultParamsDir, cacheDir: defaultCacheDir, selectBackend: select });

program
  .command('daemon')
  .description(
    'run the proving engine: cuzk-compatible gRPC service (cuzk.v1.ProvingEngine) plus an HTTP status server; ' +
      'config in cuzk\'s TOML format (see README)',
  )
  .option('-c, --config <file>', 'TOML config file (defaults apply when absent)')
  .option('--listen <addr>', 'gRPC address: host:port or unix:///path (overrides [daemon] listen)')
  .option('--http <addr>', 'HTTP status/metrics address host:port (overrides [daemon] status_listen; "" disables)')
  .option('--backend <name>', 'compute backend: auto, cuda, native or reference (overrides [kiln] backend)')
  .option('--log-level <level>', 'trace|debug|info|warn|error (overrides [logging] level)')
  .option('--demo-kind <constraints>', 'also serve the demo proof kind (proof_kind 1000: synthetic circuits of this many constraints, INSECURE development parameters): tests and smoke benches only')
  .option('--demo-cache <dir>', 'where the demo kind caches its development parameters (default: a directory under the system temp dir)')
  .action(async (opts) => {
    const { runDaemon } = await import('../server/index.js');
    const demoConstraints = opts.demoKind === undefined ? undefined : Number(opts.demoKind);
    if (demoConstraints !== undefined && !(Number.isSafeInteger(demoConstraints) && demoConstraints >= 4)) {
      throw new Error(`--demo-kind: expected a number of constraints (≥ 4), got ${opts.demoKind}`);
    }
    const d = await runDaemon({
      configPath: opts.config,
      listen: opts.listen,
      httpListen: opts.http,
      backend: opts.backend,
      logLevel: opts.logLevel,
      demo: demoConstraints === undefined ? undefined : { constraints: demoConstraints, cacheDir: opts.demoCache },
      tuning: cliTuning(),
    });
    console.error(`kiln daemon: gRPC on ${d.grpcAddress}${d.httpAddress ? `, HTTP on ${d.httpAddress}` : ''}`);
    const stop = await d.closed;
    if (stop.stillRunning.length > 0) {
      // a native call (an MSM, a GPU partition) that cancellation could not interrupt: the exit ends it
      console.error(`kiln daemon: exiting with proof work still running (${stop.stillRunning.join('; ')}); the exit ends it`);
      process.exit(0);
    }
  });

const params = program
  .command('params')
  .description(
    'list the parameter cache: each .params/.vk/.meta file, the circuit it serves (official v28 names computed from each ' +
      'circuit\'s identifier), its header and sizes checked; --sample/--deep check points on the curve and in the subgroup',
  )
  .option('--params-dir <dir>', 'Filecoin parameter cache (default $FIL_PROOFS_PARAMETER_CACHE or /var/tmp/filecoin-proof-parameters)')
  .option('--cache-dir <dir>', 'kiln cache whose INSECURE development parameters (dev-params/) are listed too', defaultCacheDir())
  .option('--sample <n>', 'check n points of every section (spread over it)', positiveInt)
  .option('--deep', 'check every point (slow for official files: tens of GB)')
  .option('--counts', 'count each PoRep circuit and check ic, h and l against it (~10 s a small size, minutes for 32 GiB)')
  .action(async (o) => {
    const { runParamsCommand } = await import('./params-command.js');
    const { cliProgressRenderer } = await import('../util/progress.js');
    const bar = cliProgressRenderer();
    try {
      const ok = await runParamsCommand({ dir: o.paramsDir ?? defaultParamsDir(), cacheDir: o.cacheDir, deep: Boolean(o.deep), sample: o.sample, counts: Boolean(o.counts), progress: bar.progress, out: bar.log });
      if (!ok) process.exitCode = 1;
    } finally {
      bar.stop();
    }
  });

const bench = program
  .command('bench')
  .description('client for a running daemon: single proofs, batches, status, SRS preload/evict, cancel, metrics, traces')
  .option('--addr <addr>', 'daemon gRPC address (host:port or unix:///path)', 'unix:///run/curio/cuzk.sock')
  .option('--token-file <file>', "file whose first line is the daemon's bearer token ([daemon] auth_token)")
  .hook('preAction', async () => {
    const file = bench.opts().tokenFile as string | undefined;
    if (file === undefined) return;
    const { readFile } = await import('node:fs/promises');
    const token = (await readFile(file, 'utf8')).split('\n')[0].trim();
    if (token === '') throw new Error(`--token-file ${file}: empty`);
    (await import('../client/grpc-client.js')).setAuthToken(token);
  });
const addr = (): string => bench.opts().addr;
bench
  .command('single')
  .description('submit one proof and wait; prints cuzk-bench\'s result block (status, job_id, timings, wall time, proof), then kiln\'s lines')
  .requiredOption('--type <kind>', 'porep | snap | wpost | winning')
  .option('--c1 <file>', 'C1 output (Commit2In wrapper, raw C1 JSON or gpuproxy\'s C2 input); required with --type porep')
  .option('--vanilla <file>', 'vanilla proof file; required with --type wpost and winning, and with snap unless --update names it')
  .option('--update <file>', 'snap: update.json (kiln update / synth-snap) with the commitments and the vanilla file; required with --type snap')
  .option('--priority <p>', 'low | normal | high | critical (default: the kind\'s: critical for winning, high for wpost, normal for porep and snap)')
  .option('--request-id <id>', 'request id (a repeated id returns the existing job; default: none)')
  .option('--randomness <hex>', '32-byte randomness as hex; required with --type wpost and winning')
  .option('--registered-proof <id|name>', 'wpost/winning: RegisteredPoStProof (default: from the vanilla proofs\' size)')
  .option('--miner-id <f0…|n>', 'wpost/winning: the miner, an ID address or actor id (default: 0)')
  .option('--partition-index <k>', 'wpost: the partition index (default: 0)')
  .action(async (o) => {
    const { benchSingle } = await import('../client/grpc-client.js');
    const { commandProgress } = await import('../util/progress.js');
    const waiting = commandProgress(false);
    const r = await benchSingle({
      addr: addr(), type: o.type, c1: o.c1, vanilla: o.vanilla, update: o.update, priority: o.priority, requestId: o.requestId, waiting, ...postBenchOptions(o),
    }).finally(waiting.stop);
    // cuzk-bench's lines are printed either way; a job that did not complete is the command's failure
    if (r.status !== 1) process.exitCode = 1;
  });
bench
  .command('batch')
  .description('submit N proofs with J in flight; prints cuzk-bench\'s batch lines and summary (wall/prove times, proofs/min), then kiln\'s lines')
  .requiredOption('--type <kind>', 'porep | snap | wpost | winning')
  .option('--c1 <file>', 'C1 output (Commit2In wrapper, raw C1 JSON or gpuproxy\'s C2 input); required with --type porep')
  .option('--vanilla <file>', 'vanilla proof file; required with --type wpost and winning, and with snap unless --update names it')
  .option('--update <file>', 'snap: update.json (kiln update / synth-snap); required with --type snap')
  .option('-c, --count <n>', 'number of proofs', positiveInt, 4)
  .option('-j, --concurrency <n>', 'proofs in flight', positiveInt, 2)
  .option('--randomness <hex>', '32-byte randomness as hex; required with --type wpost and winning')
  .option('--registered-proof <id|name>', 'wpost/winning: RegisteredPoStProof (default: from the vanilla proofs\' size)')
  .option('--miner-id <f0…|n>', 'wpost/winning: the miner, an ID address or actor id (default: 0)')
  .option('--partition-index <k>', 'wpost: the partition index (default: 0)')
  .action(async (o) => {
    const { benchBatch } = await import('../client/grpc-client.js');
    const { cliProgressRenderer } = await import('../util/progress.js');
    const bar = cliProgressRenderer();
    try {
      const r = await benchBatch({
        addr: addr(), type: o.type, c1: o.c1, vanilla: o.vanilla, update: o.update, count: o.count, concurrency: o.concurrency,
        out: bar.log, onProgress: (done, total) => bar.progress('proofs', done, total), ...postBenchOptions(o),
      });
      if (r.failed > 0) process.exitCode = 1;
    } finally {
      bar.stop();
    }
  });
bench.command('status').description('GetStatus as JSON').action(async () => {
  const { benchStatus } = await import('../client/grpc-client.js');
  await benchStatus({ addr: addr() });
});
bench.command('metrics').description('GetMetrics: Prometheus text').action(async () => {
  const { benchMetrics } = await import('../client/grpc-client.js');
  await benchMetrics({ addr: addr() });
});
bench
  .command('preload <circuitId>')
  .description('PreloadSRS, e.g. porep-32g')
  .action(async (circuitId: string) => {
    const { benchPreload } = await import('../client/grpc-client.js');
    await benchPreload({ addr: addr(), circuitId });
  });
bench
  .command('evict <circuitId>')
  .description('EvictSRS: free a loaded SRS')
  .action(async (circuitId: string) => {
    const { benchEvict } = await import('../client/grpc-client.js');
    await benchEvict({ addr: addr(), circuitId });
  });
bench
  .command('cancel <jobId>')
  .description('CancelProof: cancel a queued or running job')
  .action(async (jobId: string) => {
    const { benchCancel } = await import('../client/grpc-client.js');
    await benchCancel({ addr: addr(), jobId });
  });
bench
  .command('trace <jobIds...>')
  .description('export jobs as a Chrome trace-event JSON file (open in Perfetto); reads the daemon HTTP server')
  .requiredOption('--out <file>', 'output file')
  .requiredOption('--http <addr>', 'daemon HTTP status address host:port')
  .action(async (jobIds: string[], o) => {
    const { benchTrace } = await import('../client/grpc-client.js');
    await benchTrace({ http: o.http, jobIds, outFile: o.out });
  });

registerPostVanillaCommands(program);

// old spellings (scripts keep working), hidden from --help; then "(required)" on every required option
hiddenAlias(demoCircuit, '--seed <n>', 'rngSeed', positiveInt);
hiddenAlias(seal, '--miner <addr>', 'minerId');
hiddenAlias(seal, '--sector <n>', 'sectorNumber');
hiddenAlias(params, '--dir <dir>', 'paramsDir');
markRequiredOptions(program);
program.addHelpText('after', ENVIRONMENT_HELP);

/** The bench's WinningPoSt / WindowPoSt request options. */
function postBenchOptions(o: Record<string, string | undefined>): { randomness?: string; registeredProof?: string; minerId?: string; partitionIndex?: string } {
  return { randomness: o.randomness, registeredProof: o.registeredProof, minerId: o.minerId, partitionIndex: o.partitionIndex };
}

/** The daemon's defaults ([srs] param_cache, [kiln] cache_dir): one rule for both (config.ts). */
function defaultParamsDir(): string {
  return defaultParamCache(process.env);
}

function defaultCacheDir(): string {
  return cacheDirOf(process.env);
}

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`kiln: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
