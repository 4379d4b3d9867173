/**
 * The daemon end to end on this machine: `kiln bench single` of the 2 KiB fixture and `batch -c 4 -j 2`,
 * against a daemon started in this process (unix socket, INSECURE development parameters shared with
 * the CLI's cache directory). Prints what the bench client prints and appends the figures.
 *   node dist/bench/engine.js [--cache-dir DIR] [--count 4] [--concurrency 2] [--no-write]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchBatch, benchSingle } from '../src/client/grpc-client.js';
import { runDaemon } from '../src/server/daemon.js';
import { defaultCacheDir } from '../src/engine/config.js';
import { appendResults, markdownTable, repoRoot } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const cacheDir = opt('--cache-dir', defaultCacheDir());
const count = Number(opt('--count', '4'));
const concurrency = Number(opt('--concurrency', '2'));
const c1 = path.resolve(repoRoot, '..', 'shared', 'fixtures', '2KiB.commit2in.json');

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-bench-engine-'));
  const daemon = await runDaemon({
    listen: `unix://${path.join(dir, 'kiln.sock')}`,
    httpListen: '',
    logLevel: 'warn',
    handleSignals: false,
    configure: (c) => {
      c.srs.param_cache = dir;
      c.kiln.cache_dir = cacheDir; // the CLI's cache: shapes and development parameters made once
      c.daemon.state_dir = ''; // a bench's jobs: in memory (a journal would bring an interrupted run's jobs back)
      c.srs.dev_params = true;
    },
  });
  const lines: string[] = [];
  const out = (s: string): void => {
    console.log(s);
    lines.push(s);
  };
  try {
    out('$ kiln bench single --type porep --c1 2KiB.commit2in.json   (first: SRS load included)');
    await benchSingle({ addr: daemon.grpcAddress, type: 'porep', c1, out: (s) => out(s.length > 120 ? s.slice(0, 64) + '…' : s) });
    out('$ kiln bench single --type porep --c1 2KiB.commit2in.json   (SRS resident)');
    const single = await benchSingle({ addr: daemon.grpcAddress, type: 'porep', c1, out: (s) => out(s.length > 120 ? s.slice(0, 64) + '…' : s) });
    out(`$ kiln bench batch --type porep -c ${count} -j ${concurrency}`);
    const b = await benchBatch({ addr: daemon.grpcAddress, type: 'porep', c1, count, concurrency, out });
    const table = markdownTable(
      ['run', 'total (ms)', 'queue', 'srs', 'synth', 'gpu (prove)', 'throughput'],
      [
        ['single 2 KiB (SRS resident)', single.total_ms, single.queue_wait_ms, single.srs_load_ms, single.synthesis_ms, single.gpu_compute_ms, '–'],
        [`batch -c ${count} -j ${concurrency}`, '–', '–', '–', '–', '–', `${b.proofsPerMin.toFixed(2)} proofs/min, ${b.secondsPerProof.toFixed(2)} s/proof`],
      ],
    );
    console.log(table);
    if (!argv.includes('--no-write'))
      appendResults('Daemon, 2 KiB PoRep over gRPC (bench/engine.ts)', table + '\n\n```\n' + lines.join('\n') + '\n```', [
        'daemon in the same process as the client, unix socket, native CPU backend, INSECURE development parameters',
      ]);
  } finally {
    await daemon.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
