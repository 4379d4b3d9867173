/**
 * `kiln daemon`: reads the config once, checks the Filecoin parameter directory ([srs] param_cache: what is
 * missing, how to fetch it), builds the engine (backend, built-in proof kinds, optional demo kind), restores
 * the journal's jobs ([daemon] state_dir, by default <[kiln] cache_dir>/state, held by one daemon at a
 * time), starts the gRPC ProvingEngine server
 * and the HTTP status server, then plans the recovered jobs again behind them, and shuts down
 * gracefully on SIGINT/SIGTERM (refuse new work, cancel queued jobs or leave them in the journal, let
 * running ones finish within a grace period, cancel them and wait, bounded and logged, for the native
 * step in flight to end, free workers and SRS; "kiln daemon stopped" only when nothing runs).
 * The daemon is one of the edges that read the environment's tuning variables (src/util/tuning.ts: the CUDA
 * addon's build, KILN_GPU_MEMORY_LIMIT, the witness path, the PoSt shape cache, KILN_NO_IFMA, diagnostics): once,
 * when it starts, unless its caller passes them; they go down to the backends and the proof kinds from here.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import type { Logger } from 'pino';
import { createLogger } from '../util/log.js';
import { type Tuning, tuningFromEnv } from '../util/tuning.js';
import type { Backend } from '../backend/backend.js';
import { applyNativeTuning, nativeAvailable } from '../backend/native.js';
import { type BackendName, describeBackend, selectBackend, selectDevices } from '../backend/select.js';
import { lanesForDevices, loadConfig, stateDirOf, type EngineConfig } from '../engine/config.js';
import { Engine } from '../engine/engine.js';
import { Journal, cleanTempFiles, lockStateDir, type JournalOpenResult } from '../engine/journal.js';
import { builtinKinds, createDemoKind } from '../kinds/index.js';
import { checkParamsDir, daemonWithout, paramsDirAdvice } from '../kinds/params-dir.js';
import { grpcServerCredentials, resolveAuthToken } from './auth.js';
import { startGrpcServer, type GrpcServerHandle } from './grpc.js';
import { startHttpServer, type HttpServerHandle } from './http.js';

export interface DaemonOptions {
  /** TOML config file (cuzk's format); defaults when absent. */
  configPath?: string;
  /** Overrides [daemon] listen (host:port or unix:///path). */
  listen?: string;
  /** Overrides [daemon] status_listen (host:port; '' disables). */
  httpListen?: string;
  /** Overrides [kiln] backend. */
  backend?: BackendName;
  /** The compute devices to use instead of selecting them from the config (tests: stand-in GPUs),
   *  one backend each; the first is the primary backend. */
  devices?: Backend[];
  /** Overrides [logging] level. */
  logLevel?: string;
  /** Edits applied to the parsed config (tests). */
  configure?: (c: EngineConfig) => void;
  /** Registers the demo proof kind (proof_kind 1000), for tests and smoke benches. */
  demo?: { constraints?: number; partitions?: number; cacheDir?: string };
  /** Install SIGINT/SIGTERM handlers that close the daemon (default true). */
  handleSignals?: boolean;
  /** Seconds running jobs get to finish on shutdown (default 30); then they are cancelled. */
  shutdownGraceSeconds?: number;
  /** Seconds the cancelled jobs' work gets to stop after that (default 30): a native step in flight
   *  (an MSM, a GPU partition) cannot be interrupted. close() resolves at the latest then, with the
   *  jobs still running, if any (Engine.close). */
  proverWaitSeconds?: number;
  /** A logger to use instead of a new pino logger on stdout. */
  logger?: Logger;
  /** The tuning variables (src/util/tuning.ts); default: read from process.env now (`kiln daemon` passes the
   *  CLI's, read once). A bad value refuses to start, naming the variable. */
  tuning?: Tuning;
}

export interface Daemon {
  engine: Engine;
  /** Bound gRPC address (real port when :0 was asked). */
  grpcAddress: string;
  /** Bound HTTP address, or undefined when disabled. */
  httpAddress: string | undefined;
  /** Graceful shutdown; resolves when everything is closed ("kiln daemon stopped"), or when the
   *  proof work of cancelled jobs has still not ended after proverWaitSeconds (`stillRunning` names
   *  it: only the process's exit ends it; `kiln daemon` then exits). */
  close(): Promise<DaemonStop>;
  /** Resolves after close() completes (e.g. after a signal). */
  closed: Promise<DaemonStop>;
}

export interface DaemonStop {
  /** Jobs whose work was still running when close() gave up waiting (empty: everything stopped). */
  stillRunning: string[];
}

export async function runDaemon(opts: DaemonOptions = {}): Promise<Daemon> {
  const tuning = opts.tuning ?? tuningFromEnv(process.env);
  // the CPU addon's process-wide choice (KILN_NO_IFMA), before any kernel runs
  if (tuning.noIfma !== undefined && nativeAvailable()) applyNativeTuning({ noIfma: tuning.noIfma });
  const { config, warnings } = await loadConfig(opts.configPath);
  if (opts.listen !== undefined) config.daemon.listen = opts.listen;
  if (opts.httpListen !== undefined) config.daemon.status_listen = opts.httpListen;
  if (opts.backend !== undefined) config.kiln.backend = opts.backend;
  if (opts.logLevel !== undefined) config.logging.level = opts.logLevel as EngineConfig['logging']['level'];
  opts.configure?.(config);
  const log = opts.logger ?? createLogger({ level: config.logging.level, format: config.logging.format });
  for (const w of warnings) log.warn(w);

  // one backend per GPU of [gpus] devices (all GPUs when empty), or the CPU backend
  let devices: Backend[];
  if (opts.devices !== undefined && opts.devices.length > 0) devices = opts.devices;
  else {
    try {
      devices = selectDevices(config.kiln.backend, { devices: config.gpus.devices, memoryLimit: config.gpus.memory_limit, tuning, warn: (m) => log.warn(m) });
    } catch (e) {
      if (config.kiln.backend !== 'native') throw e;
      log.warn({ err: (e as Error).message }, 'native backend unavailable, falling back to the reference backend');
      devices = [selectBackend('reference')];
    }
  }
  const backend = devices[0];
  const lanesAuto = config.gpus.gpu_workers_per_device === 0;
  if (lanesAuto) config.gpus.gpu_workers_per_device = lanesForDevices(devices);
  log.info(
    { backend: backend.name, devices: devices.map((d) => describeBackend(d)), lanesPerDevice: config.gpus.gpu_workers_per_device, lanesPerDeviceAuto: lanesAuto },
    `compute backend: ${backend.name}${devices.length > 1 ? ` on ${devices.length} GPUs` : ''}`,
  );
  // the Filecoin parameter directory, checked once: what is missing and how to get it
  const advice = paramsDirAdvice(checkParamsDir(config.srs.param_cache), daemonWithout(config.srs.dev_params));
  if (advice.ok) log.info({ paramCache: config.srs.param_cache }, advice.lines.join('; '));
  else log.warn({ paramCache: config.srs.param_cache, devParams: config.srs.dev_params }, `[srs] param_cache: ${advice.lines.join('; ')}`);
  const oldCache = join(config.srs.param_cache, 'kiln-cache');
  if (resolve(oldCache) !== resolve(config.kiln.cache_dir) && existsSync(oldCache)) {
    log.warn(`${oldCache} holds kiln files of an older version (shapes, development parameters): kiln keeps them in [kiln] cache_dir ${config.kiln.cache_dir} now ($KILN_CACHE_DIR, else ~/.cache/kiln); move them there to use them`);
  }
  // leftovers of writes a crash interrupted (development parameters, shapes): removed at start
  const demoCache = opts.demo ? (opts.demo.cacheDir ?? join(tmpdir(), 'kiln-dev-params')) : undefined;
  const kilnCache = config.kiln.cache_dir;
  const cacheDirs = [kilnCache, join(kilnCache, 'dev-params'), join(kilnCache, 'shapes')];
  if (demoCache !== undefined) cacheDirs.push(demoCache, join(demoCache, 'dev-params'), join(demoCache, 'shapes'));
  const removedTemp = await cleanTempFiles(cacheDirs);
  if (removedTemp.length > 0) log.warn({ files: removedTemp }, `removed ${removedTemp.length} partial file(s) of an interrupted write`);
  // durable jobs: the journal in [daemon] state_dir, by default <cache_dir>/state (src/engine/journal.ts)
  const stateDir = stateDirOf(config);
  let recovered: JournalOpenResult | undefined;
  let stateLock: Awaited<ReturnType<typeof lockStateDir>> | undefined;
  if (stateDir !== '') {
    stateLock = await lockStateDir(stateDir); // one daemon per journal
    try {
      // read streaming, before listening: every job it holds answers from the first call (engine.restore)
      recovered = await Journal.open(stateDir, { retentionMs: config.kiln.job_retention_s * 1000 });
    } catch (e) {
      await stateLock.release();
      throw e;
    }
    log.info({ stateDir }, `durable jobs: the job journal is in ${stateDir}${config.daemon.state_dir === undefined ? ' (<[kiln] cache_dir>/state; [daemon] state_dir = "" keeps jobs in memory only)' : ''}`);
  } else log.info('[daemon] state_dir = "": jobs live in memory only and are lost when the daemon stops');
  // parameters found or made: a line about INSECURE development parameters is a warning, not news
  const kinds = builtinKinds(config, backend, (m) => (m.includes('INSECURE') ? log.warn(m) : log.info(m)), tuning);
  const engine = new Engine({ config, backend, devices, logger: log, planners: kinds.planners, providers: kinds.providers, journal: recovered?.journal });
  if (opts.demo) {
    const demo = createDemoKind({
      constraints: opts.demo.constraints,
      partitions: opts.demo.partitions,
      cacheDir: demoCache!,
      backend,
    });
    engine.registerPlanner(demo.planner);
    engine.registerCircuits(demo.circuits);
  }
  // listen first, recover behind: the journal's jobs are in the table now (recovering, queued, finished);
  // their requests are planned again (C1 checks included) once the servers answer
  if (recovered !== undefined) engine.restore(recovered);

  let grpcServer: GrpcServerHandle | undefined;
  let httpServer: HttpServerHandle | undefined;
  try {
    const token = await resolveAuthToken(config.daemon);
    const credentials = await grpcServerCredentials(config.daemon);
    const warn = (m: string): void => log.warn(m);
    grpcServer = await startGrpcServer(engine, config.daemon.listen, { token, credentials, warn });
    if (config.daemon.status_listen !== '') {
      httpServer = await startHttpServer(engine, config.daemon.status_listen, { token, hosts: config.daemon.status_hosts, warn });
    }
  } catch (e) {
    await grpcServer?.close();
    await engine.close(0);
    await stateLock?.release();
    throw e;
  }
  const caps = engine.devices.capabilities();
  log.info(
    {
      grpc: grpcServer.address,
      http: httpServer?.address,
      backend: caps.backend,
      threads: caps.threads,
      gpus: caps.gpus.length,
      lanes: engine.laneCount,
      synthesisWorkers: engine.synthPool.size,
      memoryBudget: config.memory.total_budget,
      demo: opts.demo !== undefined,
    },
    'kiln daemon listening',
  );
  if (recovered !== undefined) void engine.replanRestored().catch((e: unknown) => log.error({ err: (e as Error).message }, 'job journal: planning the recovered jobs again failed'));

  let closing: Promise<DaemonStop> | undefined;
  let resolveClosed!: (r: DaemonStop) => void;
  const closed = new Promise<DaemonStop>((r) => (resolveClosed = r));
  const onSignal = (sig: NodeJS.Signals): void => {
    log.info({ signal: sig }, 'shutting down');
    void close();
  };
  const close = (): Promise<DaemonStop> => {
    closing ??= (async () => {
      // a second signal now ends the process at once (Node's default action)
      if (opts.handleSignals ?? true) {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      const stop = await engine.close((opts.shutdownGraceSeconds ?? 30) * 1000, (opts.proverWaitSeconds ?? 30) * 1000);
      await grpcServer!.close();
      await httpServer?.close();
      // the journal is closed (engine.close): another daemon may take the state_dir now
      await stateLock?.release();
      // "stopped" only once no proof work runs: a native call the cancellation could not interrupt ends only with the process
      if (stop.stillRunning.length === 0) log.info('kiln daemon stopped');
      else log.warn({ stillRunning: stop.stillRunning }, 'kiln daemon: servers closed, proof work still running (a native call cannot be interrupted): only the process\'s exit ends it');
      resolveClosed(stop);
      return stop;
    })();
    return closing;
  };
  if (opts.handleSignals ?? true) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  return { engine, grpcAddress: grpcServer.address, httpAddress: httpServer?.address, close, closed };
}
