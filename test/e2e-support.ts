/**
 * What the end-to-end tests of every kind share (porep-e2e, post-e2e, snap-e2e): the `kiln` CLI run in a child
 * process, and a daemon of this process with a cuzk.v1.ProvingEngine client over its unix socket, for one test or a
 * whole suite. No tests here.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Logger } from 'pino';
import type { EngineConfig } from '../src/engine/config.js';
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
export function smallSectorDaemon(dir: () => string, timeoutMs: number): { get(): TestDaemon } {
  return suiteDaemon(() => ({
    socket: join(dir(), 'kiln.sock'),
    timeoutMs,
    configure: (c) => {
      testDaemonDirs(c, join(dir(), 'params'));
      c.srs.dev_params = true;
      c.gpus.gpu_workers_per_device = 1;
      c.synthesis.threads = 1;
    },
  }));
}
