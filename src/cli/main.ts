#!/usr/bin/env node
/**
 * The `kiln` command. Subcommands parse their options and call the library; no maths here.
 */
import { Command, InvalidArgumentError } from 'commander';
import { runDemo } from './demo.js';
import { selectBackend } from '../backend/select.js';

const program = new Command();
program
  .name('kiln')
  .description(
    'kiln: a Groth16 proving engine for Filecoin (BLS12-381), native C++ backend on the CPU.\n' +
      'Until the PoRep circuit lands, `kiln demo` proves and verifies a built-in demo circuit.',
  )
  .version('0.1.0');

const positiveInt = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
};

program
  .command('demo')
  .description(
    'prove and verify the built-in demo circuit end to end (shape, witness, development setup cached on disk, ' +
      'prove, verify) and print the timing breakdown',
  )
  .option('--constraints <n>', 'approximate number of constraints of the demo circuit', positiveInt, 65_000)
  .option('--seed <n>', 'seed of the demo witness', positiveInt, 1)
  .option('--backend <name>', 'compute backend: native (C++, all cores) or reference (TypeScript, slow)', 'native')
  .option('--cache-dir <dir>', 'where development parameters are cached', defaultCacheDir())
  .option('--json', 'print the result and span tree as JSON')
  .action(async (opts) => {
    await runDemo({
      constraints: opts.constraints,
      seed: opts.seed,
      backend: selectBackend(opts.backend),
      cacheDir: opts.cacheDir,
      json: Boolean(opts.json),
    });
  });

program
  .command('info')
  .description('show the compute backends available on this machine (threads, GPUs)')
  .action(() => {
    console.log(JSON.stringify(selectBackend('native').capabilities(), null, 2));
  });

program
  .command('prove')
  .description(
    'PoRep C2: prove every partition of a C1 output (lotus-bench/Curio Commit2In wrapper or raw C1 JSON), verify each ' +
      'proof, write the concatenated proof (192 B per partition) and print the timing breakdown. Without official ' +
      'parameters in --params-dir it generates INSECURE development parameters (once, cached) and says so.',
  )
  .requiredOption('--c1 <file>', 'C1 output file')
  .option('--out <file>', 'where to write the proof (default: print it as hex)')
  .option('--params-dir <dir>', 'Filecoin parameter cache', defaultParamsDir())
  .option('--cache-dir <dir>', 'kiln cache (compiled shapes, development parameters)', defaultCacheDir())
  .option('--backend <name>', 'compute backend: native or reference', 'native')
  .option('--json', 'print the result and span tree as JSON')
  .action(async (opts) => {
    const { runProve } = await import('./porep.js');
    await runProve({
      c1: opts.c1,
      out: opts.out,
      paramsDir: opts.paramsDir,
      cacheDir: opts.cacheDir,
      backend: selectBackend(opts.backend),
      json: Boolean(opts.json),
    });
  });

program
  .command('verify')
  .description('verify a PoRep C2 proof against its C1 output (exit status 0 when valid, 1 when not)')
  .requiredOption('--c1 <file>', 'C1 output file')
  .requiredOption('--proof <file>', 'proof file (192 B per partition)')
  .option('--params-dir <dir>', 'Filecoin parameter cache', defaultParamsDir())
  .option('--cache-dir <dir>', 'kiln cache (compiled shapes, development parameters)', defaultCacheDir())
  .action(async (opts) => {
    const { runVerify } = await import('./porep.js');
    const ok = await runVerify({ c1: opts.c1, proof: opts.proof, paramsDir: opts.paramsDir, cacheDir: opts.cacheDir });
    if (!ok) process.exitCode = 1;
  });

program
  .command('circuit-info')
  .description(
    'figures of the PoRep partition circuit as JSON: constraints (with and without the prover\'s input constraints), ' +
      'public inputs, aux variables, A and B densities. Counts without storing, so 32GiB fits in memory (about a minute).',
  )
  .option('--sector-size <size>', '2KiB | 8MiB | 512MiB | 32GiB | 64GiB')
  .option('--c1 <file>', 'take the sector size from a C1 output file instead')
  .action(async (opts) => {
    if (!opts.sectorSize && !opts.c1) throw new InvalidArgumentError('give --sector-size or --c1');
    const { runCircuitInfo } = await import('./porep.js');
    console.log(JSON.stringify(runCircuitInfo({ sectorSize: opts.sectorSize, c1: opts.c1 }), null, 2));
  });

program
  .command('daemon')
  .description(
    'run the proving engine: cuzk-compatible gRPC service (cuzk.v1.ProvingEngine) plus an HTTP status server; ' +
      'config in cuzk\'s TOML format (see README)',
  )
  .option('-c, --config <file>', 'TOML config file (defaults apply when absent)')
  .option('--listen <addr>', 'gRPC address: host:port or unix:///path (overrides [daemon] listen)')
  .option('--http <addr>', 'HTTP status/metrics address host:port (overrides [daemon] status_listen; "" disables)')
  .option('--backend <name>', 'compute backend: native or reference (overrides [kiln] backend)')
  .option('--log-level <level>', 'trace|debug|info|warn|error (overrides [logging] level)')
  .action(async (opts) => {
    const { runDaemon } = await import('../server/index.js');
    const d = await runDaemon({
      configPath: opts.config,
      listen: opts.listen,
      httpListen: opts.http,
      backend: opts.backend,
      logLevel: opts.logLevel,
    });
    console.error(`kiln daemon: gRPC on ${d.grpcAddress}${d.httpAddress ? `, HTTP on ${d.httpAddress}` : ''}`);
    await d.closed;
  });

const bench = program
  .command('bench')
  .description('client for a running daemon: single proofs, batches, status, SRS preload/evict, cancel, metrics, traces')
  .option('--addr <addr>', 'daemon gRPC address (host:port or unix:///path)', 'unix:///run/curio/cuzk.sock');
const addr = (): string => bench.opts().addr;
bench
  .command('single')
  .description('submit one proof and wait; prints the timings, wall time, proof size and hex')
  .requiredOption('--type <kind>', 'porep | snap | wpost | winning')
  .option('--c1 <file>', 'C1 output (Commit2In wrapper or raw JSON) for porep')
  .option('--vanilla <file>', 'vanilla proof file for snap/wpost/winning')
  .option('--priority <p>', 'low | normal | high | critical')
  .option('--request-id <id>', 'request id (a repeated id returns the existing job)')
  .action(async (o) => {
    const { benchSingle } = await import('../server/index.js');
    await benchSingle({ addr: addr(), type: o.type, c1: o.c1, vanilla: o.vanilla, priority: o.priority, requestId: o.requestId });
  });
bench
  .command('batch')
  .description('submit N proofs with J in flight; prints proofs/min and s/proof')
  .requiredOption('--type <kind>', 'porep | snap | wpost | winning')
  .option('--c1 <file>', 'C1 output for porep')
  .option('--vanilla <file>', 'vanilla proof file')
  .option('-c, --count <n>', 'number of proofs', positiveInt, 4)
  .option('-j, --concurrency <n>', 'proofs in flight', positiveInt, 2)
  .action(async (o) => {
    const { benchBatch } = await import('../server/index.js');
    await benchBatch({ addr: addr(), type: o.type, c1: o.c1, vanilla: o.vanilla, count: o.count, concurrency: o.concurrency });
  });
bench.command('status').description('GetStatus as JSON').action(async () => {
  const { benchStatus } = await import('../server/index.js');
  await benchStatus({ addr: addr() });
});
bench.command('metrics').description('GetMetrics: Prometheus text').action(async () => {
  const { benchMetrics } = await import('../server/index.js');
  await benchMetrics({ addr: addr() });
});
bench
  .command('preload <circuitId>')
  .description('PreloadSRS, e.g. porep-32g')
  .action(async (circuitId: string) => {
    const { benchPreload } = await import('../server/index.js');
    await benchPreload({ addr: addr(), circuitId });
  });
bench
  .command('evict <circuitId>')
  .description('EvictSRS: free a loaded SRS')
  .action(async (circuitId: string) => {
    const { benchEvict } = await import('../server/index.js');
    await benchEvict({ addr: addr(), circuitId });
  });
bench
  .command('cancel <jobId>')
  .description('CancelProof: cancel a queued or running job')
  .action(async (jobId: string) => {
    const { benchCancel } = await import('../server/index.js');
    await benchCancel({ addr: addr(), jobId });
  });
bench
  .command('trace <jobIds...>')
  .description('export jobs as a Chrome trace-event JSON file (open in Perfetto); reads the daemon HTTP server')
  .requiredOption('--out <file>', 'output file')
  .requiredOption('--http <addr>', 'daemon HTTP status address host:port')
  .action(async (jobIds: string[], o) => {
    const { benchTrace } = await import('../server/index.js');
    await benchTrace({ http: o.http, jobIds, outFile: o.out });
  });

function defaultParamsDir(): string {
  return process.env.FIL_PROOFS_PARAMETER_CACHE ?? '/var/tmp/filecoin-proof-parameters';
}

function defaultCacheDir(): string {
  return process.env.KILN_CACHE_DIR ?? `${process.env.HOME ?? '/tmp'}/.cache/kiln`;
}

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`kiln: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
