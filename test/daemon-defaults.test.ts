/**
 * The daemon's defaults (issue 25): the parameter directory is checked at start (what is missing, how to fetch
 * it), jobs are durable with no configuration (a journal in `<[kiln] cache_dir>/state`; `state_dir = ""` keeps
 * them in memory only), one daemon per state_dir, and a proof of INSECURE development parameters says so
 * after a restart too. Daemons with the demo kind (1000 constraints: development parameters in milliseconds).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { connectEngine, insecureMark } from '../src/client/grpc-client.js';
import type { EngineConfig } from '../src/engine/config.js';
import { allOfficialCircuits } from '../src/filecoin/params-names.js';
import { runDaemon, type Daemon } from '../src/server/daemon.js';
import { testDaemonDirs } from './support.js';

let dir: string;
const savedCache = process.env.KILN_CACHE_DIR;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-daemon-defaults-'));
});

after(async () => {
  process.env.KILN_CACHE_DIR = savedCache;
  await rm(dir, { recursive: true, force: true });
});

/** A daemon on 127.0.0.1 with the demo kind; its log lines (level, msg) collected. */
async function daemon(configure: (c: EngineConfig) => void, lines: { level: number; msg: string }[] = []): Promise<Daemon> {
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) });
  return runDaemon({
    listen: '127.0.0.1:0',
    httpListen: '127.0.0.1:0',
    handleSignals: false,
    logger,
    backend: 'native',
    demo: { constraints: 1000, partitions: 1, cacheDir: join(dir, 'demo') },
    configure: (c) => {
      c.synthesis.threads = 1;
      configure(c);
    },
  });
}

const WARN = 40;

test('the parameter directory is checked at start: missing, empty or partial is a warning naming it, what a sector size needs and how to fetch it', async () => {
  const need32 = allOfficialCircuits().filter((c) => c.sectorSize === 32 * 2 ** 30 && !c.circuitId.startsWith('snap-poseidon'));
  assert.deepEqual(need32.map((c) => c.circuitId), ['porep-32g', 'winning-32g', 'wpost-32g', 'snap-32g']);
  const startWith = async (paramsDir: string, devParams = false): Promise<{ level: number; msg: string }> => {
    const lines: { level: number; msg: string }[] = [];
    const d = await daemon((c) => {
      testDaemonDirs(c, paramsDir, join(dir, 'cache'));
      c.srs.dev_params = devParams;
    }, lines);
    await d.close();
    const found = lines.filter((l) => l.msg.includes('Filecoin parameter directory'));
    assert.equal(found.length, 1, lines.map((l) => l.msg).join('\n'));
    return found[0]!;
  };
  const missing = await startWith(join(dir, 'no-such-dir'));
  assert.equal(missing.level, WARN);
  assert.ok(missing.msg.startsWith(`[srs] param_cache: the Filecoin parameter directory ${join(dir, 'no-such-dir')} does not exist: no official parameters`), missing.msg);
  for (const c of need32) assert.ok(missing.msg.includes(`${c.fileName} (${c.circuitId})`), `${c.circuitId} named: ${missing.msg}`);
  assert.match(missing.msg, /`curio fetch-params 32GiB` or `lotus fetch-params 32GiB`/);
  assert.match(missing.msg, /every proof request of a circuit without its official file fails \(\[srs\] dev_params = false/);
  assert.match((await startWith(join(dir, 'no-such-dir'), true)).msg, /get INSECURE development parameters \(\[srs\] dev_params = true\): their proofs are never accepted on chain/);

  const empty = join(dir, 'empty');
  await mkdir(empty);
  assert.match((await startWith(empty)).msg, /holds no official parameters; a 32 GiB sector needs 4 files/);
  // kiln's files of an older version there (<param_cache>/kiln-cache): where they belong now
  await mkdir(join(empty, 'kiln-cache'));
  const lines: { level: number; msg: string }[] = [];
  await (await daemon((c) => testDaemonDirs(c, empty, join(dir, 'cache')), lines)).close();
  const moved = `${join(empty, 'kiln-cache')} holds kiln files of an older version (shapes, development parameters): kiln keeps them in [kiln] cache_dir ${join(dir, 'cache')} now`;
  assert.ok(lines.some((l) => l.level === WARN && l.msg.startsWith(moved)), lines.map((l) => l.msg).join('\n'));

  const partial = join(dir, 'partial');
  await mkdir(partial);
  await writeFile(join(partial, need32[0]!.fileName), ''); // names only: `kiln params` checks the contents
  const p = await startWith(partial);
  assert.equal(p.level, WARN);
  assert.match(p.msg, /has every official parameter file of: no sector size; 32GiB is missing winning-32g .*, wpost-32g .*, snap-32g .*; `curio fetch-params 32GiB`/);

  for (const c of need32.slice(1)) await writeFile(join(partial, c.fileName), '');
  const full = await startWith(partial);
  assert.equal(full.level, 30); // info: nothing to do
  assert.equal(full.msg, `the Filecoin parameter directory ${partial} has every official parameter file of: 32GiB`);
});

test('durable jobs with no configuration: the journal is in <KILN_CACHE_DIR>/state, a proof outlives a restart and keeps its INSECURE mark; state_dir = "" is memory only', async () => {
  const cache = join(dir, 'kiln-cache-of-env');
  process.env.KILN_CACHE_DIR = cache; // the one rule: the daemon's [kiln] cache_dir, as the CLI's --cache-dir
  const only = (c: EngineConfig): void => void (c.srs.param_cache = join(dir, 'no-such-dir')); // nothing else configured
  const lines: { level: number; msg: string }[] = [];
  let d = await daemon(only, lines);
  let jobId: string;
  try {
    assert.equal(d.engine.journal?.path, join(cache, 'state', 'journal.log'));
    assert.ok(lines.some((l) => l.msg.startsWith(`durable jobs: the job journal is in ${join(cache, 'state')} (<[kiln] cache_dir>/state`)));
    const c = connectEngine(d.grpcAddress);
    try {
      const r = await c.callWithTrailers('Prove', { submit: { proof_kind: 1000, request_id: 'durable-default', vanilla_proof: Buffer.from('{"seed": 3}') } });
      assert.equal(r.response.result.status, 1, r.response.result.error_message);
      jobId = r.response.result.job_id as string;
      assert.equal(insecureMark(r.trailers), 'made with INSECURE development parameters: never accepted on chain');
    } finally {
      c.close();
    }
    // the job's own log line is a warning saying it
    assert.ok(lines.some((l) => l.level === WARN && /^proof job completed with INSECURE development parameters/.test(l.msg)));
    assert.ok(readFileSync(join(cache, 'state', 'journal.log'), 'utf8').includes(jobId));
  } finally {
    await d.close();
  }
  assert.ok(!existsSync(join(cache, 'state', 'daemon.pid')), 'the state_dir lock is released at close');

  d = await daemon(only);
  try {
    const c = connectEngine(d.grpcAddress);
    try {
      const r = await c.callWithTrailers('AwaitProof', { job_id: jobId, timeout_ms: 1000 });
      assert.equal(r.response.status, 1, 'COMPLETED, from the journal');
      assert.equal(r.response.proof.length, 192);
      assert.equal(insecureMark(r.trailers), 'made with INSECURE development parameters: never accepted on chain');
    } finally {
      c.close();
    }
    const st = (await (await fetch(`http://${d.httpAddress}/status`)).json()) as { jobs: { id: string; insecureParams: boolean }[]; durability: { journal: string } };
    assert.equal(st.durability.journal, join(cache, 'state', 'journal.log'));
    assert.equal(st.jobs.find((j) => j.id === jobId)!.insecureParams, true);
  } finally {
    await d.close();
  }

  // the opt-out: memory only, nothing read or written in the state directory
  d = await daemon((c) => {
    only(c);
    c.daemon.state_dir = '';
  });
  try {
    assert.equal(d.engine.journal, undefined);
    const c = connectEngine(d.grpcAddress);
    try {
      await assert.rejects(c.call('AwaitProof', { job_id: jobId, timeout_ms: 1000 }), /NOT_FOUND|job not found/);
    } finally {
      c.close();
    }
  } finally {
    await d.close();
  }
});

test('one daemon per state_dir: a second one is refused naming the first; a lock left by a process that is gone is taken over', async () => {
  const state = join(dir, 'shared-state');
  const dirs = (c: EngineConfig): void => {
    testDaemonDirs(c, join(dir, 'no-such-dir'), join(dir, 'cache'));
    c.daemon.state_dir = state;
  };
  const first = await daemon(dirs);
  try {
    await assert.rejects(daemon(dirs), (e: Error) => e.message === `[daemon] state_dir ${state} is in use by another daemon of this process (${join(state, 'daemon.pid')}): two daemons cannot share one job journal; give this one its own state_dir, or state_dir = "" for jobs in memory only`);
    assert.equal(readFileSync(join(state, 'daemon.pid'), 'utf8'), `${process.pid}\n`);
  } finally {
    await first.close();
  }
  // another process's lock: refused while it lives, taken over once it is gone
  const sleeper = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const gone = Number(sleeper.stdout);
  assert.ok(gone > 0);
  await writeFile(join(state, 'daemon.pid'), `${gone}\n`);
  const second = await daemon(dirs);
  await second.close();
  await writeFile(join(state, 'daemon.pid'), `${process.ppid}\n`); // alive: the test runner
  await assert.rejects(daemon(dirs), new RegExp(`is in use by the kiln daemon of pid ${process.ppid}`));
  await rm(join(state, 'daemon.pid'));
});
