/**
 * The daemon's configuration: cuzk's TOML file (docs/filecoin.md §5; sections and defaults as cuzk-core's
 * config.rs at curio e0294b0f) plus a few kiln keys, marked below. Read once by the daemon and
 * passed down; nothing else reads the file or the environment.
 *
 * An unknown section or key is refused with a ConfigError naming it, the file, line and column, and the key
 * it is probably a typo of (a typo of `dev_params` would otherwise silently change behaviour); cuzk's
 * deprecated keys and the cuzk keys kiln accepts but does not use (IGNORED below) are warnings, so that a
 * cuzk config still works. A value of the wrong type or out of range is refused with a ConfigError naming
 * `section.key` (and where it is). Keys that are read but have no effect with the rest
 * of the file (safety_margin beside an explicit total_budget, …) are warned about too (noEffectWarnings).
 */
import type { MemoryLimit } from '../backend/cuda.js';
import { BACKEND_NAMES, type BackendName } from '../backend/select.js';
import { readFile } from 'node:fs/promises';
import { homedir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { LogFormat } from '../util/log.js';
import { closest } from '../util/suggest.js';

export class ConfigError extends Error {
  constructor(
    /** `section.key` (`[section]` for a section, '' for the file as a whole). */
    readonly key: string,
    readonly detail: string,
    /** `file:line:column` where the file is known (loadConfig, parseConfig with `file`). */
    readonly location?: string,
  ) {
    super([location, key === '' ? '' : `config ${key}`, detail].filter((x) => x).join(': '));
    this.name = 'ConfigError';
  }
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface EngineConfig {
  daemon: {
    /** gRPC listen address: `host:port` or `unix:///path`. cuzk default `unix:///run/curio/cuzk.sock`. */
    listen: string;
    /** HTTP status API (`GET /status`, `/metrics`, `/trace/<job>`); '' = disabled. */
    status_listen: string;
    /** kiln: jobs waiting (planning + queued) beyond which SubmitProof answers RESOURCE_EXHAUSTED. */
    max_queued_jobs: number;
    /** kiln: directory of the job journal (durable jobs); '' = jobs live in memory only; undefined (the
     *  key unset) = `<[kiln] cache_dir>/state` (stateDirOf). */
    state_dir: string | undefined;
    /** kiln: bearer token every gRPC call must carry (`authorization: Bearer <token>`) and that the
     *  HTTP server asks for job details; '' = none. */
    auth_token: string;
    /** kiln: file holding the token (first line), instead of auth_token. */
    auth_token_file: string;
    /** kiln: TLS certificate and key (PEM files) for gRPC over TCP; '' = no TLS. */
    tls_cert: string;
    tls_key: string;
    /** kiln: CA (PEM) of client certificates: when set, clients must present one (mutual TLS). */
    tls_client_ca: string;
    /** kiln: Host header names the HTTP server answers besides the loopback ones. */
    status_hosts: string[];
  };
  srs: {
    /** Directory of the Filecoin .params/.vk files: $FIL_PROOFS_PARAMETER_CACHE, else
     *  /var/tmp/filecoin-proof-parameters (where lotus, Curio and `kiln --params-dir` look; cuzk's own
     *  default /data/zk/params is not kiln's). Only official files are read here; kiln writes nothing in it. */
    param_cache: string;
    /** kiln: allow INSECURE development parameters (generated and cached in [kiln] cache_dir) for
     *  circuits without official parameters. Default false. Tests and benches only. */
    dev_params: boolean;
  };
  memory: {
    /** Bytes; resolved from "auto" (total RAM − safety_margin) or an explicit size. */
    total_budget: number;
    /** The configured text ("auto" or a size), for status. */
    total_budget_text: string;
    safety_margin: number;
    /** Idle time (ms) before a cached SRS may be evicted under pressure (cuzk "5m"). */
    eviction_min_idle_ms: number;
  };
  gpus: {
    /** GPU ordinals the daemon drives, each with its own prover lanes and SRS copy; [] = every GPU. */
    devices: number[];
    /** Prover lanes per device; 0 (the default, the key unset) = picked per machine when the engine starts
     *  (lanesForDevices: one lane on a GPU with less than SMALL_GPU_BUDGET_BYTES to plan with, else 2). */
    gpu_workers_per_device: number;
    /** kiln: ms between health probes of a GPU taken out of service by a failed partition proof
     *  (key probe_interval). */
    probe_interval_ms: number;
    /** kiln: ms a partition waits for a healthy GPU it has not failed on before its job fails
     *  (key device_wait). */
    device_wait_ms: number;
    /** kiln: cap on the device memory each GPU's backend plans with: bytes (at least 1 GiB)
     *  or a fraction of the card (key memory_limit: an integer, a size such as "24GiB" or a percentage
     *  such as "75%"); what does not fit streams from pinned host memory. undefined = the free memory. */
    memory_limit: MemoryLimit | undefined;
  };
  scheduler: {
    max_batch_size: number;
    max_batch_wait_ms: number;
  };
  synthesis: {
    /** Synthesis worker threads; 0 = auto (half the CPUs, at least 1). */
    threads: number;
  };
  pipeline: {
    enabled: boolean;
    synthesis_lookahead: number;
    synthesis_concurrency: number;
  };
  logging: {
    level: LogLevel;
    /** "json" (default: one JSON object a line, for log collectors) or "text" (a line for a person; "pretty" too). */
    format: LogFormat;
  };
  kiln: {
    /** Compute backend: 'auto' (default: the GPU when one is usable, else the CPU), 'cuda' (the GPU;
     *  falls back to the CPU with a warning), 'native' (CPU) or 'reference' (TypeScript, slow). The
     *  GPUs are [gpus] devices (default: every GPU of the machine). */
    backend: BackendName;
    /** How long finished jobs are kept for AwaitProof / traces (seconds, default 600). */
    job_retention_s: number;
    /** kiln's own files (compiled shapes, INSECURE development parameters, the job journal's default
     *  state_dir): $KILN_CACHE_DIR, else ~/.cache/kiln. The same directory as the CLI's --cache-dir
     *  default, so what `kiln setup` makes the daemon uses. */
    cache_dir: string;
    /** INSECURE, benchmarks only (default false): prove an NI-PoRep C1 with the challenges its vanilla
     *  proofs state instead of those derived from its comm_r (`kiln synth-c1 --ni` C1s cannot derive
     *  theirs; filecoin/c1.ts withStatedChallenges). Every other check stays. */
    insecure_stated_ni_challenges: boolean;
  };
}

const GIB = 1024 ** 3;

/** The Filecoin parameter directory of lotus, Curio and rust-fil-proofs when $FIL_PROOFS_PARAMETER_CACHE is unset. */
export const FILECOIN_PARAMS_DIR = '/var/tmp/filecoin-proof-parameters';

/** `[srs] param_cache`'s default and the CLI's --params-dir: `$FIL_PROOFS_PARAMETER_CACHE` when set (as
 *  rust-fil-proofs reads it), else /var/tmp/filecoin-proof-parameters. */
export function defaultParamCache(env: NodeJS.ProcessEnv = process.env): string {
  return env.FIL_PROOFS_PARAMETER_CACHE || FILECOIN_PARAMS_DIR;
}

/** `[kiln] cache_dir`'s default and the CLI's --cache-dir: `$KILN_CACHE_DIR`, else ~/.cache/kiln. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.KILN_CACHE_DIR || join(env.HOME || homedir(), '.cache', 'kiln');
}

/** The job journal's directory: `[daemon] state_dir` when set ('' = none: jobs in memory only), else
 *  `<[kiln] cache_dir>/state` (durable by default). */
export function stateDirOf(config: Pick<EngineConfig, 'daemon' | 'kiln'>): string {
  return config.daemon.state_dir ?? join(config.kiln.cache_dir, 'state');
}

export function defaultConfig(totalRamBytes = totalmem(), env: NodeJS.ProcessEnv = process.env): EngineConfig {
  const margin = 5 * GIB;
  return {
    daemon: {
      listen: 'unix:///run/curio/cuzk.sock',
      status_listen: '',
      max_queued_jobs: 1024,
      state_dir: undefined,
      auth_token: '',
      auth_token_file: '',
      tls_cert: '',
      tls_key: '',
      tls_client_ca: '',
      status_hosts: [],
    },
    srs: { param_cache: defaultParamCache(env), dev_params: false },
    memory: {
      total_budget: Math.max(0, totalRamBytes - margin),
      total_budget_text: 'auto',
      safety_margin: margin,
      eviction_min_idle_ms: 5 * 60_000,
    },
    gpus: { devices: [], gpu_workers_per_device: 0, probe_interval_ms: 10_000, device_wait_ms: 10 * 60_000, memory_limit: undefined },
    scheduler: { max_batch_size: 1, max_batch_wait_ms: 10_000 },
    synthesis: { threads: 0 },
    pipeline: { enabled: true, synthesis_lookahead: 1, synthesis_concurrency: 1 },
    logging: { level: 'info', format: 'json' },
    kiln: { backend: 'auto', job_retention_s: 600, cache_dir: defaultCacheDir(env), insecure_stated_ni_challenges: false },
  };
}

/** Keys cuzk still accepts but ignores. */
const DEPRECATED = new Set([
  'srs.preload',
  'memory.pinned_budget',
  'memory.working_memory_budget',
  'synthesis.partition_workers',
  'pipeline.max_parallel_synthesis',
  'pipeline.slot_size',
  'pipeline.max_gpu_queue_depth',
]);

/** cuzk keys kiln accepts (their values still checked) for cuzk compatibility but does not use:
 *  gpus.gpu_threads (CUDA threads per GPU worker: kiln's kernels size their own launches) and
 *  scheduler.sort_by_type (kiln's queue orders by priority, then arrival). Each one set in a file is
 *  reported as a warning naming it. */
const IGNORED = new Set(['gpus.gpu_threads', 'scheduler.sort_by_type']);

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: GIB,
  gb: 1000 ** 3,
  gib: GIB,
  t: 1024 ** 4,
  tb: 1000 ** 4,
  tib: 1024 ** 4,
};

/** "5GiB", "512 MiB", "1.5GB", 1073741824 → bytes. */
export function parseSize(v: unknown, key: string): number {
  if (typeof v === 'number' || typeof v === 'bigint') {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 0) throw new ConfigError(key, `expected a non-negative byte count, got ${String(v)}`);
    return n;
  }
  if (typeof v !== 'string') throw new ConfigError(key, `expected a size such as "5GiB", got ${typeof v}`);
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(v);
  const unit = m ? SIZE_UNITS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new ConfigError(key, `expected a size such as "5GiB", got ${JSON.stringify(v)}`);
  return Math.round(Number(m[1]) * unit);
}

/** "5m", "300s", "250ms", "1h" or an integer number of seconds → milliseconds. */
export function parseDuration(v: unknown, key: string): number {
  if (typeof v === 'number' || typeof v === 'bigint') {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new ConfigError(key, `expected a non-negative duration, got ${String(v)}`);
    return n * 1000;
  }
  const m = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(v) : null;
  if (!m) throw new ConfigError(key, `expected a duration such as "5m" or "300s", got ${JSON.stringify(v)}`);
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * mult;
}

/** A duration (parseDuration) in [minMs, maxMs]. */
function durationIn(v: unknown, key: string, minMs: number, maxMs: number): number {
  const ms = parseDuration(v, key);
  const show = (x: number): string => (x % 1000 === 0 ? `${x / 1000}s` : `${x}ms`);
  if (ms < minMs || ms > maxMs) throw new ConfigError(key, `${show(ms)} out of range (${show(minMs)}..${show(maxMs)})`);
  return ms;
}

/** [gpus] memory_limit: a byte count or size of at least 1 GiB, or a percentage of the card in (0, 100]. */
function memoryLimit(v: unknown, key: string): MemoryLimit {
  if (typeof v === 'string' && v.includes('%')) {
    const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(v);
    if (!m) throw new ConfigError(key, `expected a percentage such as "75%", got ${JSON.stringify(v)}`);
    const pct = Number(m[1]);
    if (pct <= 0 || pct > 100) throw new ConfigError(key, `${m[1]}% out of range (a percentage of the card, above 0 and at most 100)`);
    return { fraction: pct / 100 };
  }
  const bytes = parseSize(v, key);
  if (bytes < GIB) throw new ConfigError(key, `${bytes} bytes is below 1 GiB (a GPU proof needs more device memory)`);
  return { bytes };
}

function int(v: unknown, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new ConfigError(key, `expected an integer, got ${JSON.stringify(String(v))}`);
  if (n < min || n > max) throw new ConfigError(key, `${n} out of range (${min}..${max === Number.MAX_SAFE_INTEGER ? '' : max})`);
  return n;
}

function bool(v: unknown, key: string): boolean {
  if (typeof v !== 'boolean') throw new ConfigError(key, `expected true or false, got ${JSON.stringify(v)}`);
  return v;
}

function str(v: unknown, key: string): string {
  if (typeof v !== 'string') throw new ConfigError(key, `expected a string, got ${typeof v}`);
  return v;
}

export interface ParsedConfig {
  config: EngineConfig;
  /** Unknown or deprecated keys (the daemon logs them). */
  warnings: string[];
}

/** Parses TOML text into a config (defaults for every missing key). Errors say where: `file:line:column`
 *  (`file` defaults to "config"). */
export function parseConfig(text: string, opts: { totalRamBytes?: number; env?: NodeJS.ProcessEnv; file?: string } = {}): ParsedConfig {
  const file = opts.file ?? 'config';
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    const t = e as Error & { line?: number; column?: number; codeblock?: string };
    const reason = t.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
    const where = t.line !== undefined ? `${file}:${t.line}:${t.column ?? 1}` : file;
    throw new ConfigError('', `not valid TOML: ${reason}${t.codeblock ? `\n${t.codeblock.replace(/\n+$/, '')}` : ''}`, where);
  }
  try {
    return configFromObject(doc, opts);
  } catch (e) {
    if (!(e instanceof ConfigError) || e.location !== undefined) throw e;
    const at = keyPosition(text, e.key);
    throw new ConfigError(e.key, e.detail, at ? `${file}:${at.line}:${at.column}` : file);
  }
}

/** Line and column (1-based) of `section.key` (or `[section]`) in TOML text: the key's line in its table. */
function keyPosition(text: string, key: string): { line: number; column: number } | undefined {
  const m = /^\[?([A-Za-z0-9_-]+)\]?(?:\.([A-Za-z0-9_-]+))?/.exec(key);
  if (!m) return undefined;
  const [, section, name] = m;
  let current = '';
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const header = /^\s*\[\s*([A-Za-z0-9_-]+)\s*\]/.exec(line);
    if (header) {
      current = header[1]!;
      if (name === undefined && current === section) return { line: i + 1, column: line.indexOf('[') + 1 };
      continue;
    }
    if (name !== undefined && current === section) {
      const kv = new RegExp(`^(\\s*)["']?${name}["']?\\s*=`).exec(line);
      if (kv) return { line: i + 1, column: kv[1]!.length + 1 };
    }
  }
  return undefined;
}

/** What an unknown `section.key` is probably a typo of: a key of its section, the same key in another section,
 *  or the closest key anywhere; else the section's keys. */
function unknownKeyHint(section: string, key: string, handlers: Record<string, Record<string, unknown>>): string {
  const own = Object.keys(handlers[section]!);
  const near = closest(key, own);
  if (near !== undefined) return `did you mean ${section}.${near}?`;
  const elsewhere = Object.keys(handlers).find((sec) => key in handlers[sec]!);
  if (elsewhere !== undefined) return `did you mean ${elsewhere}.${key}? (it belongs in [${elsewhere}])`;
  const all = Object.entries(handlers).flatMap(([sec, hs]) => Object.keys(hs).map((k) => `${sec}.${k}`));
  const anywhere = closest(`${section}.${key}`, all);
  if (anywhere !== undefined) return `did you mean ${anywhere}?`;
  return `[${section}] has ${own.join(', ')}`;
}

/** Validates an already-parsed TOML document. */
export function configFromObject(
  doc: Record<string, unknown>,
  opts: { totalRamBytes?: number; env?: NodeJS.ProcessEnv; collectKeys?: string[] } = {},
): ParsedConfig {
  const ram = opts.totalRamBytes ?? totalmem();
  const c = defaultConfig(ram, opts.env);
  const warnings: string[] = [];
  let totalBudget: unknown = 'auto';

  const handlers: Record<string, Record<string, (v: unknown, key: string) => void>> = {
    daemon: {
      listen: (v, k) => {
        c.daemon.listen = str(v, k);
        if (c.daemon.listen === '') throw new ConfigError(k, 'must not be empty');
      },
      status_listen: (v, k) => (c.daemon.status_listen = str(v, k)),
      max_queued_jobs: (v, k) => (c.daemon.max_queued_jobs = int(v, k, 1, 1_000_000)),
      state_dir: (v, k) => (c.daemon.state_dir = str(v, k)),
      auth_token: (v, k) => (c.daemon.auth_token = str(v, k)),
      auth_token_file: (v, k) => (c.daemon.auth_token_file = str(v, k)),
      tls_cert: (v, k) => (c.daemon.tls_cert = str(v, k)),
      tls_key: (v, k) => (c.daemon.tls_key = str(v, k)),
      tls_client_ca: (v, k) => (c.daemon.tls_client_ca = str(v, k)),
      status_hosts: (v, k) => {
        if (!Array.isArray(v)) throw new ConfigError(k, `expected an array of host names, got ${typeof v}`);
        c.daemon.status_hosts = v.map((x, i) => str(x, `${k}[${i}]`).toLowerCase());
      },
    },
    srs: {
      param_cache: (v, k) => (c.srs.param_cache = str(v, k)),
      dev_params: (v, k) => (c.srs.dev_params = bool(v, k)),
    },
    memory: {
      total_budget: (v, k) => {
        if (v !== 'auto') parseSize(v, k);
        totalBudget = v;
      },
      safety_margin: (v, k) => (c.memory.safety_margin = parseSize(v, k)),
      eviction_min_idle: (v, k) => (c.memory.eviction_min_idle_ms = parseDuration(v, k)),
    },
    gpus: {
      devices: (v, k) => {
        if (!Array.isArray(v)) throw new ConfigError(k, `expected an array of GPU ordinals, got ${typeof v}`);
        c.gpus.devices = v.map((x, i) => int(x, `${k}[${i}]`, 0, 1023));
        const dup = c.gpus.devices.find((d, i) => c.gpus.devices.indexOf(d) !== i);
        if (dup !== undefined) throw new ConfigError(k, `lists GPU ${dup} twice (each GPU is driven once, by gpu_workers_per_device lanes)`);
      },
      gpu_threads: (v, k) => int(v, k, 0, 4096),
      gpu_workers_per_device: (v, k) => (c.gpus.gpu_workers_per_device = int(v, k, 1, 16)),
      probe_interval: (v, k) => (c.gpus.probe_interval_ms = durationIn(v, k, 10, 3_600_000)),
      device_wait: (v, k) => (c.gpus.device_wait_ms = durationIn(v, k, 0, 7 * 86_400_000)),
      memory_limit: (v, k) => (c.gpus.memory_limit = memoryLimit(v, k)),
    },
    scheduler: {
      max_batch_size: (v, k) => (c.scheduler.max_batch_size = int(v, k, 1, 64)),
      max_batch_wait_ms: (v, k) => (c.scheduler.max_batch_wait_ms = int(v, k, 0, 3_600_000)),
      sort_by_type: (v, k) => bool(v, k),
    },
    synthesis: {
      threads: (v, k) => (c.synthesis.threads = int(v, k, 0, 4096)),
    },
    pipeline: {
      enabled: (v, k) => (c.pipeline.enabled = bool(v, k)),
      synthesis_lookahead: (v, k) => (c.pipeline.synthesis_lookahead = int(v, k, 0, 32)),
      synthesis_concurrency: (v, k) => (c.pipeline.synthesis_concurrency = int(v, k, 1, 64)),
    },
    logging: {
      level: (v, k) => {
        const s = str(v, k).toLowerCase();
        if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(s)) {
          throw new ConfigError(k, `expected one of trace, debug, info, warn, error, got ${JSON.stringify(v)}`);
        }
        c.logging.level = s as LogLevel;
      },
      format: (v, k) => {
        const f = str(v, k).toLowerCase();
        if (f !== 'json' && f !== 'text' && f !== 'pretty') throw new ConfigError(k, `expected "json" or "text", got ${JSON.stringify(v)}`);
        c.logging.format = f === 'json' ? 'json' : 'text';
      },
    },
    kiln: {
      backend: (v, k) => {
        if (typeof v !== 'string' || !(BACKEND_NAMES as readonly string[]).includes(v)) {
          throw new ConfigError(k, `expected one of ${BACKEND_NAMES.map((b) => `"${b}"`).join(', ')}, got ${JSON.stringify(v)}`);
        }
        c.kiln.backend = v as BackendName;
      },
      job_retention_s: (v, k) => (c.kiln.job_retention_s = int(v, k, 0, 7 * 86_400)),
      cache_dir: (v, k) => {
        c.kiln.cache_dir = str(v, k);
        if (c.kiln.cache_dir === '') throw new ConfigError(k, 'must not be empty (kiln keeps its shapes and development parameters there)');
      },
      insecure_stated_ni_challenges: (v, k) => (c.kiln.insecure_stated_ni_challenges = bool(v, k)),
    },
  };

  opts.collectKeys?.push(...Object.entries(handlers).flatMap(([sec, hs]) => Object.keys(hs).map((k) => `${sec}.${k}`)));
  for (const [section, body] of Object.entries(doc)) {
    const hs = handlers[section];
    if (hs === undefined) {
      const near = closest(section, Object.keys(handlers));
      throw new ConfigError(`[${section}]`, `unknown section; ${near !== undefined ? `did you mean [${near}]?` : `the sections are ${Object.keys(handlers).map((x) => `[${x}]`).join(', ')}`}`);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ConfigError(section, 'expected a table');
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      const full = `${section}.${key}`;
      const h = hs[key];
      if (h !== undefined) {
        h(value, full);
        if (IGNORED.has(full)) warnings.push(`config ${full} is accepted for cuzk compatibility and ignored by kiln`);
      } else if (DEPRECATED.has(full)) warnings.push(`config ${full} is deprecated in cuzk and ignored`);
      else throw new ConfigError(full, `unknown key; ${unknownKeyHint(section, key, handlers)}`);
    }
  }
  warnings.push(...noEffectWarnings(doc, c));
  c.memory.total_budget_text = String(totalBudget);
  c.memory.total_budget =
    totalBudget === 'auto' ? Math.max(0, ram - c.memory.safety_margin) : parseSize(totalBudget, 'memory.total_budget');
  if (c.memory.total_budget <= 0) throw new ConfigError('memory.total_budget', `resolves to ${c.memory.total_budget} bytes (RAM ${ram}, safety_margin ${c.memory.safety_margin})`);
  return { config: c, warnings };
}

/** Reads and parses a TOML config file; no file = defaults. */
export async function loadConfig(path?: string, opts: { totalRamBytes?: number } = {}): Promise<ParsedConfig> {
  if (path === undefined) return { config: defaultConfig(opts.totalRamBytes), warnings: [] };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ConfigError('', `cannot read the config file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, path);
  }
  return parseConfig(text, { ...opts, file: path });
}

/** Every `section.key` the parser reads (its schema); kiln.example.toml lists each (a test checks). */
export function configKeys(): string[] {
  const keys: string[] = [];
  configFromObject({}, { totalRamBytes: 64 * GIB, collectKeys: keys });
  return keys;
}

/**
 * Keys that are parsed and implemented but have no effect with the rest of the file: each one set is
 * reported at start ("parsed but has no effect"), like the IGNORED keys.
 */
function noEffectWarnings(doc: Record<string, unknown>, c: EngineConfig): string[] {
  const set = (section: string, key: string): boolean => {
    const body = doc[section];
    return typeof body === 'object' && body !== null && key in (body as Record<string, unknown>);
  };
  const out: string[] = [];
  const warn = (key: string, why: string): void => void out.push(`config ${key} is parsed but has no effect: ${why}`);
  if (set('memory', 'safety_margin') && set('memory', 'total_budget') && (doc.memory as Record<string, unknown>).total_budget !== 'auto') {
    warn('memory.safety_margin', 'it only sizes total_budget = "auto"');
  }
  if (!c.pipeline.enabled) {
    for (const k of ['synthesis_lookahead', 'synthesis_concurrency']) if (set('pipeline', k)) warn(`pipeline.${k}`, 'pipeline.enabled = false');
  }
  if (c.scheduler.max_batch_size <= 1 && set('scheduler', 'max_batch_wait_ms')) warn('scheduler.max_batch_wait_ms', 'max_batch_size = 1 (no batches to wait for)');
  if (c.kiln.backend === 'native' || c.kiln.backend === 'reference') {
    // gpu_workers_per_device is not among them: the CPU backend is one device with that many lanes
    for (const k of ['devices', 'probe_interval', 'device_wait', 'memory_limit']) if (set('gpus', k)) warn(`gpus.${k}`, `kiln.backend = "${c.kiln.backend}" (no GPU)`);
  } else if (c.gpus.devices.length === 1) {
    for (const k of ['probe_interval', 'device_wait']) if (set('gpus', k)) warn(`gpus.${k}`, 'devices lists one GPU (a failed proof fails its job: there is no other GPU to retry on)');
  }
  return out;
}

/** A GPU with less device memory than this to plan with (a 16-24 GiB card) gets one prover lane when
 *  `gpu_workers_per_device` is not set. Its plans stream the 32 GiB parameters and prefetch no witness, so a
 *  second lane would only hold one more witness buffer in host memory (4.2 GB at 32 GiB PoRep) while it waits
 *  for the device: measured on the H200 with 16 GiB free, one lane proved as fast (GPU busy the whole time)
 *  with 4 GiB less host RSS (bench/RESULTS.md, 32 GiB at 24 and 16 GiB of device memory). */
export const SMALL_GPU_BUDGET_BYTES = 40 * 2 ** 30;

/** The lanes per device when `gpu_workers_per_device` is not set (0): 1 when any GPU has less than
 *  SMALL_GPU_BUDGET_BYTES to plan with (its memory plan's budget, else its free memory), else 2 (also on the
 *  CPU backend, which reports no device memory). */
export function lanesForDevices(devices: readonly { memoryPlan?(): { budgetBytes: number } | undefined; deviceMemory?(): { freeBytes: number } | undefined }[]): number {
  for (const d of devices) {
    const budget = d.memoryPlan?.()?.budgetBytes ?? d.deviceMemory?.()?.freeBytes;
    if (budget !== undefined && budget < SMALL_GPU_BUDGET_BYTES) return 1;
  }
  return 2;
}

/** The CLI's in-process engines (prove, prove-post, prove-snap): one lane on the CPU backend (its prover
 *  already uses every core), lanesForDevices on a GPU. */
export function cliLanesPerDevice(backend: Parameters<typeof lanesForDevices>[0][number] & { capabilities(): { gpus: readonly unknown[] } }): number {
  return backend.capabilities().gpus.length === 0 ? 1 : lanesForDevices([backend]);
}
