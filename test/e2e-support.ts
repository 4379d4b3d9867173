/**
 * What the end-to-end tests of every kind share (porep-e2e, post-e2e, snap-e2e): the `kiln` CLI run in a child
 * process, and a daemon of this process with a cuzk.v1.ProvingEngine client over its unix socket, for one test or a
 * whole suite. No tests here.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Logger } from 'pino';
import type { BackendName } from '../src/backend/select.js';
import type { EngineConfig } from '../src/engine/config.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import type { PoStProofInfo, PoStSectorProof } from '../src/filecoin/post/types.js';
import { parsePoStSectorProof, readVanillaFile } from '../src/filecoin/post/vanilla.js';
import { runDaemon, type Daemon } from '../src/server/daemon.js';
import { repoRoot, testDaemonDirs } from './support.js';

const CLI = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `kiln ARGS…` (dist/src/cli/main.js) in a child process with this process's environment and `env`. */
export async function kilnCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  const t0 = performance.now();
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { maxBuffer: 64 << 20, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr, ms: performance.now() - t0 };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '', ms: performance.now() - t0 };
  }
}

/** A daemon and a client of it. */
export interface TestDaemon {
  readonly daemon: Daemon;
  /** A unary call of cuzk.v1.ProvingEngine (the proto's field names, enums as numbers). */
  call(method: string, req: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  /** Prove({submit}) → its result. */
  prove(submit: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

export interface TestDaemonOptions {
  /** The unix socket's path. */
  socket: string;
  configure?: (c: EngineConfig) => void;
  logger?: Logger;
  /** The HTTP status server's address ('' for none; default an ephemeral port on 127.0.0.1). */
  httpListen?: string;
  /** Default deadline of a call (default 10 minutes). */
  timeoutMs?: number;
  /** [kiln] backend (default: the configuration's, i.e. the CPU unless the test says otherwise). */
  backend?: BackendName;
}

/** Starts a daemon (no signal handlers, 5 s of shutdown grace, quiet unless `logger`) and a client of it. */
export async function startTestDaemon(o: TestDaemonOptions): Promise<TestDaemon> {
  const daemon = await runDaemon({
    listen: `unix://${o.socket}`,
    httpListen: o.httpListen ?? '127.0.0.1:0',
    ...(o.logger ? { logger: o.logger } : { logLevel: 'silent' }),
    handleSignals: false,
    shutdownGraceSeconds: 5,
    configure: o.configure,
    ...(o.backend ? { backend: o.backend } : {}),
  });
  let client: any;
  try {
    const def = protoLoader.loadSync(join(repoRoot, 'proto', 'cuzk.proto'), { keepCase: true, longs: Number, enums: Number, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as any;
    client = new pkg.cuzk.v1.ProvingEngine(daemon.grpcAddress, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 256 << 20,
      'grpc.max_send_message_length': 256 << 20,
    });
  } catch (e) {
    await daemon.close();
    throw e;
  }
  const call = (method: string, req: Record<string, unknown>, timeoutMs = o.timeoutMs ?? 600_000): Promise<any> =>
    new Promise((resolve, reject) => client[method](req, { deadline: Date.now() + timeoutMs }, (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res))));
  return {
    daemon,
    call,
    prove: async (submit, timeoutMs) => (await call('Prove', { submit }, timeoutMs)).result,
    async close() {
      client.close();
      await daemon.close();
    },
  };
}

/** A daemon for the enclosing suite: started in its before(), closed in its after(); `get()` inside its tests. */
export function suiteDaemon(options: () => TestDaemonOptions): { get(): TestDaemon } {
  let d: TestDaemon | undefined;
  before(async () => {
    d = await startTestDaemon(options());
  });
  after(async () => {
    await d?.close();
  });
  return {
    get() {
      if (d === undefined) throw new Error('the suite daemon is not running');
      return d;
    },
  };
}

/**
 * The small-sector daemon of the PoSt and SnapDeals suites, in `dir`: parameters in dir/params (made by the
 * development setup on first use), one GPU worker, one synthesis thread.
 */
export function smallSectorDaemon(dir: () => string, timeoutMs: number, backend?: BackendName): { get(): TestDaemon } {
  return suiteDaemon(() => ({
    socket: join(dir(), 'kiln.sock'),
    timeoutMs,
    backend,
    configure: (c) => {
      testDaemonDirs(c, join(dir(), 'params'));
      c.srs.dev_params = true;
      c.gpus.gpu_workers_per_device = 1;
      c.synthesis.threads = 1;
    },
  }));
}

/** The vanilla proofs of one PoSt type made by `kiln gen-vanilla`, as a file and parsed. */
export interface PoStInput {
  info: PoStProofInfo;
  proofs: PoStSectorProof[];
  elements: Uint8Array[];
  file: string;
}

/**
 * Two 2 KiB sectors (40, 41) sealed by `kiln seal --sector-dir` into `dir` (keeping replica, tree_r_last and comm_c)
 * and their WindowPoSt (StackedDrgWindow2KiBV1_1: both sectors) and WinningPoSt (StackedDrgWinning2KiBV1: one)
 * vanilla proofs by `kiln gen-vanilla` for `randomness` (hex).
 */
export async function sealPoStInputs(dir: string, randomness: string): Promise<Record<'window' | 'winning', PoStInput>> {
  const sectorArgs: string[] = [];
  for (const n of [40, 41]) {
    const s = await kilnCli(['seal', '--sector-size', '2KiB', '--out', join(dir, `c1-${n}.json`), '--sector', String(n), '--miner', 'f01234', '--rng-seed', `post-${n}`, '--sector-dir', join(dir, `sector-${n}`)]);
    assert.equal(s.code, 0, s.stderr);
    sectorArgs.push('--sector', join(dir, `sector-${n}`));
  }
  const out = {} as Record<'window' | 'winning', PoStInput>;
  for (const [type, info] of [['window', postProofById(10)!], ['winning', postProofById(0)!]] as const) {
    const file = join(dir, `${type}.vanilla.json`);
    const g = await kilnCli(['gen-vanilla', '--type', type, ...sectorArgs, '--randomness', randomness, '--registered-proof', String(info.id), '--out', file]);
    assert.equal(g.code, 0, g.stderr);
    const elements = readVanillaFile(file);
    out[type] = { info, proofs: elements.map((e) => parsePoStSectorProof(e, info)), elements, file };
  }
  assert.deepEqual(out.window.proofs.map((p) => p.sectorId), [40n, 41n]);
  assert.equal(out.winning.proofs.length, 1);
  return out;
}

/**
 * A 2 KiB sector (7) sealed by kiln into dir/sector (dir made when missing) and updated by `kiln update` with 2,032 bytes of data into
 * dir/upd (update.json, vanilla.json), and a second update of the same sector with one bit of other data into
 * dir/upd2 (other comm_d_new / comm_r_new). Returns the first update's file and its vanilla proof elements.
 */
export async function sealSnapUpdates(dir: string): Promise<{ update: string; other: string; elements: Uint8Array[] }> {
  mkdirSync(dir, { recursive: true });
  const s = await kilnCli(['seal', '--sector-size', '2KiB', '--out', join(dir, 'c1.json'), '--sector', '7', '--rng-seed', 'snap-7', '--sector-dir', join(dir, 'sector')]);
  assert.equal(s.code, 0, s.stderr);
  const data = Buffer.alloc(2032);
  for (let i = 0; i < data.length; i++) data[i] = (i * 37 + 11) & 0xff;
  writeFileSync(join(dir, 'data.bin'), data);
  const u = await kilnCli(['update', '--sector-dir', join(dir, 'sector'), '--data', join(dir, 'data.bin'), '--out', join(dir, 'upd')]);
  assert.equal(u.code, 0, u.stderr);
  assert.match(u.stderr, /StackedDrg2KiBV1 update of sector 7: comm_r_old [0-9a-f]{64}, comm_d_new [0-9a-f]{64}, comm_r_new [0-9a-f]{64} \(h = 1\)/);
  const update = join(dir, 'upd', 'update.json');
  const elements = readVanillaFile(join(dir, 'upd', 'vanilla.json'));
  assert.equal(elements.length, 1);
  // comm_r_old is the sealed sector's comm_r
  const sector = JSON.parse(readFileSync(join(dir, 'sector', 'sector.json'), 'utf8'));
  assert.equal(JSON.parse(readFileSync(update, 'utf8')).commROld, sector.commR);
  data[0] ^= 1;
  writeFileSync(join(dir, 'data2.bin'), data);
  const u2 = await kilnCli(['update', '--sector-dir', join(dir, 'sector'), '--data', join(dir, 'data2.bin'), '--out', join(dir, 'upd2')]);
  assert.equal(u2.code, 0, u2.stderr);
  return { update, other: join(dir, 'upd2', 'update.json'), elements };
}
