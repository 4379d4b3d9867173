/**
 * The gRPC client of the daemon (`kiln bench …`, cuzk-bench's subcommands; the benches and tests dial through it too), plus the trace export
 * over the daemon's HTTP status server. Each subcommand is one exported async function taking
 * plain options; output goes through `out` (default console.log). The lead's CLI wires them:
 *
 *   single  --addr A --type porep|snap|wpost|winning|demo (--c1 FILE | --vanilla FILE | --update FILE) [--priority P] [--request-id ID]
 *           wpost/winning: --randomness HEX [--registered-proof ID|NAME] [--miner-id N] [--partition-index K]
 *   batch   --addr A --type … --c1 FILE -c N -j J
 *   status  --addr A          preload --addr A --circuit ID     evict --addr A --circuit ID
 *   cancel  --addr A --job ID metrics --addr A                  trace --http H JOB --out FILE
 *
 * `--addr` is host:port or unix:///path (as Curio dials). For `--type porep`, `--c1` may be a Commit2In wrapper,
 * a raw C1 JSON (SealCommitPhase1Output, wrapped here like Curio does) or gpuproxy's C2 input (sent as it is).
 */
import { readFile, writeFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { type Commit2In, parseC1Input } from '../filecoin/c1.js';
import { readOptionFile } from '../util/files.js';
import type { ProgressFn } from '../util/progress.js';
import { INSECURE_TRAILER, INSECURE_TRAILER_TEXT, MAX_MESSAGE_BYTES, loadProvingEngine } from '../server/proto.js';

type Msg = Record<string, any>;
export type BenchType = 'porep' | 'snap' | 'wpost' | 'winning' | 'demo';
export type Out = (line: string) => void;

const KIND: Record<BenchType, number> = { porep: 1, snap: 2, wpost: 3, winning: 4, demo: 1000 };
const STATUS_NAMES = ['UNKNOWN', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'];
const PRIORITIES: Record<string, number> = { low: 1, normal: 2, high: 3, critical: 4 };

export interface BenchConnection {
  call(method: string, req: Msg, timeoutMs?: number): Promise<Msg>;
  /** The answer and the call's trailing metadata (kiln's INSECURE mark on a result: proto.ts INSECURE_TRAILER). */
  callWithTrailers(method: string, req: Msg, timeoutMs?: number): Promise<{ response: Msg; trailers: grpc.Metadata }>;
  close(): void;
}

let authToken = '';
/** The bearer token connectEngine sends as `authorization: Bearer …` (a daemon with [daemon]
 *  auth_token set refuses calls without it); `kiln bench --token-file` sets it. */
export function setAuthToken(token: string): void {
  authToken = token;
}

type UnaryCb = (e: grpc.ServiceError | null, r: Msg) => void;
type UnaryFn = (req: Msg, ...rest: [grpc.Metadata, grpc.CallOptions, UnaryCb] | [grpc.CallOptions, UnaryCb]) => grpc.ClientUnaryCall;

/** A ProvingEngine client (no TLS, 256 MiB messages, as Curio's). */
export function connectEngine(addr: string): BenchConnection {
  const { Client } = loadProvingEngine();
  const target = addr.includes('://') || addr.startsWith('unix:') ? addr : `dns:///${addr}`;
  const client = new Client(target, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  }) as unknown as Record<string, UnaryFn> & grpc.Client;
  const fail = (e: grpc.ServiceError): Error => connectionError(addr, e);
  const callWithTrailers = (method: string, req: Msg, timeoutMs?: number): Promise<{ response: Msg; trailers: grpc.Metadata }> =>
    new Promise((resolve, reject) => {
      const opts: grpc.CallOptions = timeoutMs ? { deadline: Date.now() + timeoutMs } : {};
      // grpc-js calls back with the answer, then emits 'status' with the trailers
      let response: Msg | undefined;
      const cb: UnaryCb = (e, r) => (e ? reject(fail(e)) : void (response = r));
      const fn = client[method]!.bind(client);
      const call = authToken !== '' ? fn(req, bearerMetadata(authToken), opts, cb) : fn(req, opts, cb);
      call.on('status', (st: grpc.StatusObject) => {
        if (response !== undefined) resolve({ response, trailers: st.metadata });
      });
    });
  return {
    call: (method, req, timeoutMs) => callWithTrailers(method, req, timeoutMs).then((r) => r.response),
    callWithTrailers,
    close: () => client.close(),
  };
}

/** The INSECURE mark of a result (proto.ts INSECURE_TRAILER), or undefined for official parameters. */
export function insecureMark(trailers: grpc.Metadata): string | undefined {
  const v = trailers.get(INSECURE_TRAILER)[0];
  return v === undefined ? undefined : String(v);
}

/** A gRPC error in words for the person running the bench: an unreachable daemon names the address and what to
 *  check, a refused token says so; other errors (the daemon's answers) keep their text and code. */
export function connectionError(addr: string, e: grpc.ServiceError): Error {
  let text: string | undefined;
  if (e.code === grpc.status.UNAVAILABLE) {
    const socket = addr.startsWith('unix:') ? addr.replace(/^unix:(\/\/)?/, '') : undefined;
    text =
      `no kiln daemon answers at ${addr} (${e.details.replace(/^No connection established\. Last error: (Error: )?/, '').replace(/\.?\s*Resolution note:\s*$/, '')}). Check that \`kiln daemon\` is running and that --addr is its ` +
      `[daemon] listen address (or its --listen)${socket !== undefined ? `; the socket ${socket} must exist and be open to this user (the daemon creates it 0600)` : ''}`;
  } else if (e.code === grpc.status.UNAUTHENTICATED) {
    text = `the daemon at ${addr} refused the call: ${e.details} (it has [daemon] auth_token set: pass --token-file with that token)`;
  }
  if (text === undefined) return e;
  return Object.assign(new Error(text), { code: e.code, details: e.details });
}

function bearerMetadata(token: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  return md;
}

export interface SubmitOptions {
  addr: string;
  type: BenchType;
  /** C1 output (porep): a Commit2In wrapper or raw C1 JSON. */
  c1?: string;
  /** Vanilla proof file(s) (snap/wpost/winning: sent as vanilla_proofs; demo: the JSON options). */
  vanilla?: string;
  /** snap: update.json (kiln update / synth-snap): registered proof, comm_r_old / comm_d_new / comm_r_new and the vanilla file. */
  update?: string;
  priority?: string;
  requestId?: string;
  /** wpost/winning: 32-byte randomness as hex (required). */
  randomness?: string;
  /** wpost/winning: RegisteredPoStProof id or name (default: from the vanilla proofs' size: Winning…V1 / Window…V1_1). */
  registeredProof?: string;
  minerId?: string;
  partitionIndex?: string;
  out?: Out;
  /** single: shows the wait for the daemon's answer (a bar with the time spent, or a line now and then), stopped
   *  before the result is printed. */
  waiting?: { progress: ProgressFn | undefined; stop(): void };
}

/** wpost/winning: the vanilla file's elements (cuzk-bench's JSON of base64 bincode proofs, or one raw element) as
 *  `vanilla_proofs`, with randomness, registered_proof, miner_id and partition_index. */
async function postRequestFields(o: SubmitOptions, req: Msg): Promise<void> {
  const { parseVanillaFile, postProofForVanilla } = await import('../filecoin/post/vanilla.js');
  const { parsePoStProof } = await import('../kinds/post/post.js');
  const { parseMinerId } = await import('../filecoin/registry.js');
  const elements = parseVanillaFile(new Uint8Array(readOptionFile('--vanilla', o.vanilla!)), o.vanilla);
  const type = o.type === 'winning' ? 'winning' : 'window';
  let info = o.registeredProof !== undefined ? parsePoStProof(o.registeredProof) : undefined;
  if (o.registeredProof !== undefined && info === undefined) throw new Error(`--registered-proof ${o.registeredProof}: not a RegisteredPoStProof (0–14 or a name)`);
  if (info === undefined) {
    info = postProofForVanilla(type, elements[0]!.length);
    if (info === undefined) throw new Error(`--vanilla ${o.vanilla}: ${elements[0]!.length}-byte vanilla proofs match no ${type} proof size; give --registered-proof`);
  }
  if (o.randomness === undefined) throw new Error(`--type ${o.type} needs --randomness HEX (32 bytes)`);
  const hex = o.randomness.replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`--randomness must be 32 bytes of hex, got '${o.randomness}'`);
  const int = (name: string, v: string | undefined): number => {
    if (v === undefined) return 0;
    if (!/^\d+$/.test(v)) throw new Error(`${name} must be a non-negative integer, got '${v}'`);
    return Number(v);
  };
  req.vanilla_proofs = elements.map((e) => Buffer.from(e));
  req.registered_proof = info.id;
  req.sector_size = info.size.sectorSize;
  req.randomness = Buffer.from(hex, 'hex');
  req.miner_id = parseMinerId('--miner-id', o.minerId);
  req.partition_index = int('--partition-index', o.partitionIndex);
}

/** Builds the SubmitProofRequest of a bench run. */
export async function buildRequest(o: SubmitOptions): Promise<Msg> {
  const kind = KIND[o.type];
  if (kind === undefined) throw new Error(`--type must be one of ${Object.keys(KIND).join(', ')}, got ${o.type}`);
  const req: Msg = { proof_kind: kind, request_id: o.requestId ?? '' };
  if (o.priority !== undefined) {
    const p = PRIORITIES[o.priority.toLowerCase()];
    if (p === undefined) throw new Error(`--priority must be low, normal, high or critical, got ${o.priority}`);
    req.priority = p;
  }
  if (o.type === 'porep') {
    if (o.c1 === undefined) throw new Error('--type porep needs --c1 FILE');
    const bytes = readOptionFile('--c1', o.c1);
    // any of the three forms (Commit2In wrapper, raw C1, gpuproxy's C2 input), checked here so that a bad file is named
    // with its option rather than by the daemon's gRPC field
    let c2: Commit2In;
    try {
      c2 = parseC1Input(bytes);
    } catch (e) {
      throw new Error(`--c1 ${o.c1}: ${(e as Error).message}`);
    }
    // a raw C1 is wrapped as Curio does (Go's json.Marshal base64-encodes []byte); the other two go as they are
    req.vanilla_proof = c2.form === 'c1' ? Buffer.from(JSON.stringify({ SectorNum: 0, Phase1Out: bytes.toString('base64'), SectorSize: c2.sectorSize })) : bytes;
    req.sector_size = c2.sectorSize;
    req.sector_number = c2.sectorNum;
  } else if (o.type === 'snap' && o.update !== undefined) {
    const { readUpdateFile } = await import('../filecoin/snap/update-file.js');
    const { readVanillaFile } = await import('../filecoin/post/vanilla.js');
    const u = await readUpdateFile(o.update);
    req.registered_proof = u.info.id;
    req.sector_size = u.info.size.sectorSize;
    req.vanilla_proofs = readVanillaFile(o.vanilla ?? u.vanillaPath).map((e) => Buffer.from(e));
    req.comm_r_old = Buffer.from(u.raw.commROld);
    req.comm_d_new = Buffer.from(u.raw.commDNew);
    req.comm_r_new = Buffer.from(u.raw.commRNew);
  } else if (o.type === 'demo') {
    req.vanilla_proof = o.vanilla ? await readFile(o.vanilla) : Buffer.alloc(0);
  } else {
    if (o.vanilla === undefined) throw new Error(`--type ${o.type} needs --vanilla FILE`);
    if (o.type === 'wpost' || o.type === 'winning') await postRequestFields(o, req);
    else req.vanilla_proofs = [await readFile(o.vanilla)];
  }
  return req;
}

/**
 * Rust's `{:.N}` of an f64: the exact decimal value of the double rounded to N places, ties to even
 * (JavaScript's toFixed rounds exact ties up: 0.25.toFixed(1) is "0.3", Rust prints "0.2").
 */
export function rustFixed(x: number, places: number): string {
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : x < 0 ? '-inf' : 'NaN';
  const exact = Math.abs(x).toFixed(100); // exact for every double ≥ 2^-100 we print here
  const dot = exact.indexOf('.');
  const rest = exact.slice(dot + 1 + places);
  let s = x.toFixed(places);
  if (rest[0] === '5' && /^50*$/.test(rest)) {
    // an exact tie: toFixed rounded away from zero; Rust keeps the even last digit
    const kept = exact.slice(0, dot + 1 + places).replace(/\.$/, '');
    const last = Number(kept[kept.length - 1]);
    if (last % 2 === 0) s = (x < 0 ? '-' : '') + kept;
  }
  return s;
}

/** cuzk-bench's timings line (print_result in curio extern/cuzk/cuzk-bench/src/main.rs). */
export function formatTimings(r: Msg): string {
  return `timings:   total=${r.total_ms} ms (queue=${r.queue_wait_ms} ms, srs=${r.srs_load_ms} ms, synth=${r.synthesis_ms} ms, gpu=${r.gpu_compute_ms} ms)`;
}

/**
 * cuzk-bench's `single` output, line for line (print_result in curio's
 * extern/cuzk/cuzk-bench/src/main.rs at 3f08cbe951f99fa8693f8bc3600dfaf44a927e8a): a blank line,
 * `=== Proof Result ===`, status, job_id, then timings / wall time / proof (≤ 256 bytes in full, else
 * the first 128 bytes and `...`) or the error. kiln's extra lines follow under `--- kiln ---`.
 */
export function formatProofResult(r: Msg, wallMs: number): string[] {
  const lines = ['', '=== Proof Result ===', `status:    ${STATUS_NAMES[r.status] ?? 'UNKNOWN'}`, `job_id:    ${r.job_id}`];
  const proof = Buffer.from(r.proof ?? []);
  if (r.status === 1) {
    lines.push(formatTimings(r));
    lines.push(`wall time: ${Math.floor(wallMs)} ms`);
    const hex = proof.length <= 256 ? proof.toString('hex') : `${proof.subarray(0, 128).toString('hex')}...`;
    lines.push(`proof:     ${proof.length} bytes (hex: ${hex})`);
  } else {
    lines.push(`error:     ${r.error_message}`);
  }
  return lines;
}

/** `single`: one Prove; prints cuzk-bench's result block, then kiln's lines (the whole proof hex). */
export async function benchSingle(o: SubmitOptions): Promise<Msg> {
  const out = o.out ?? console.log;
  const req = await buildRequest(o);
  const c = connectEngine(o.addr);
  try {
    const t0 = performance.now();
    o.waiting?.progress?.(`${o.type} proof in the daemon`, 0, 0);
    const answer = await c.callWithTrailers('Prove', { submit: req }).finally(() => o.waiting?.stop());
    const r = answer.response.result as Msg;
    const wall = performance.now() - t0;
    for (const l of formatProofResult(r, wall)) out(l);
    const proof = Buffer.from(r.proof ?? []);
    out('');
    out('--- kiln ---');
    const insecure = insecureMark(answer.trailers);
    if (insecure !== undefined) out(`INSECURE:   this proof was ${insecure}`);
    out(`request_id: ${req.request_id || '(none)'}`);
    out(`wall:       ${wall.toFixed(1)} ms`);
    if (proof.length > 256) out(`proof hex:  ${proof.toString('hex')}`);
    return r;
  } finally {
    c.close();
  }
}

export interface BatchOptions extends SubmitOptions {
  /** Number of proofs (-c). */
  count: number;
  /** Concurrent requests (-j). */
  concurrency: number;
  /** Called after each proof (progress bars): done so far, total. */
  onProgress?: (done: number, total: number) => void;
}

export interface BatchResult {
  completed: number;
  failed: number;
  wallMs: number;
  proofsPerMin: number;
  secondsPerProof: number;
}

/**
 * `batch`: N proofs with J in flight, printed as cuzk-bench prints them (the Batch arm of main in
 * curio's extern/cuzk/cuzk-bench/src/main.rs at 3f08cbe951f99fa8693f8bc3600dfaf44a927e8a): the
 * header, one `  [i/N] STATUS — 1.2s (prove=… ms, queue=… ms)` line per proof, the summary with
 * wall/prove avg/min/max and throughput; then kiln's extra lines (synth and SRS averages).
 */
export async function benchBatch(o: BatchOptions): Promise<BatchResult> {
  const out = o.out ?? console.log;
  if (!(o.count >= 1) || !(o.concurrency >= 1)) throw new Error('-c and -j must be ≥ 1');
  const base = await buildRequest(o);
  out('=== Batch Benchmark ===');
  out(`proof type:  ${o.type}`);
  out(`count:       ${o.count}`);
  out(`concurrency: ${o.concurrency}`);
  out('');
  o.onProgress?.(0, o.count);
  const c = connectEngine(o.addr);
  let next = 0;
  let done = 0;
  const results: { i: number; r: Msg; wallS: number }[] = [];
  const byIndex: ({ i: number; r: Msg; wallS: number } | undefined)[] = [];
  let printed = 0;
  /** Proofs made with INSECURE development parameters. */
  let insecure = 0;
  const t0 = performance.now();
  try {
    const worker = async (): Promise<void> => {
      for (let i = next++; i < o.count; i = next++) {
        const req: Msg = { ...base, request_id: base.request_id ? `${base.request_id}-${i}` : '' };
        if (o.type === 'demo' && base.vanilla_proof.length === 0) req.vanilla_proof = Buffer.from(JSON.stringify({ seed: i + 1 }));
        const t = performance.now();
        const answer = await c.callWithTrailers('Prove', { submit: req });
        const r = answer.response.result as Msg;
        const wallS = (performance.now() - t) / 1000;
        if (insecureMark(answer.trailers) !== undefined) insecure++;
        byIndex[i] = { i, r, wallS };
        // cuzk-bench prints in submission order (it awaits its handles in order)
        for (; printed < o.count && byIndex[printed]; printed++) {
          const x = byIndex[printed]!;
          results.push(x);
          out(`  [${x.i + 1}/${o.count}] ${STATUS_NAMES[x.r.status] ?? 'UNKNOWN'} — ${rustFixed(x.wallS, 1)}s (prove=${x.r.gpu_compute_ms} ms, queue=${x.r.queue_wait_ms} ms)`);
        }
        o.onProgress?.(++done, o.count);
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, o.count) }, worker));
  } finally {
    c.close();
  }
  const wallMs = performance.now() - t0;
  const totalS = wallMs / 1000;
  const ok = results.filter((x) => x.r.status === 1);
  const failed = results.length - ok.length;
  out('');
  out('=== Batch Summary ===');
  out(`total time:    ${rustFixed(totalS, 1)}s`);
  out(`completed:     ${ok.length}`);
  out(`failed:        ${failed}`);
  const proofsPerMin = (ok.length / totalS) * 60;
  const secondsPerProof = ok.length ? totalS / ok.length : Infinity;
  if (ok.length) {
    const stats = (v: number[]): string => {
      const avg = v.reduce((a, b) => a + b, 0) / v.length;
      return `avg=${rustFixed(avg, 1)}s min=${rustFixed(Math.min(...v), 1)}s max=${rustFixed(Math.max(...v), 1)}s`;
    };
    out(`wall time:     ${stats(ok.map((x) => x.wallS))}`);
    out(`prove time:    ${stats(ok.map((x) => Number(x.r.gpu_compute_ms) / 1000))}`);
    out(`throughput:    ${rustFixed(proofsPerMin, 3)} proofs/min (${rustFixed(secondsPerProof, 1)}s/proof)`);
    const mean = (f: (r: Msg) => number): string => (ok.reduce((a, x) => a + f(x.r), 0) / ok.length).toFixed(0);
    out('');
    out('--- kiln ---');
    if (insecure > 0) out(`INSECURE:      ${insecure} of ${ok.length} proofs ${INSECURE_TRAILER_TEXT}`);
    out(`synth time:    avg=${mean((r) => Number(r.synthesis_ms))} ms`);
    out(`srs load:      avg=${mean((r) => Number(r.srs_load_ms))} ms`);
    out(`queue wait:    avg=${mean((r) => Number(r.queue_wait_ms))} ms`);
  }
  return { completed: ok.length, failed, wallMs, proofsPerMin, secondsPerProof };
}

async function simple(addr: string, method: string, req: Msg, out: Out): Promise<Msg> {
  const c = connectEngine(addr);
  try {
    const r = await c.call(method, req, 600_000);
    out(JSON.stringify(r, (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v), 2));
    return r;
  } finally {
    c.close();
  }
}

export const benchStatus = (o: { addr: string; out?: Out }): Promise<Msg> => simple(o.addr, 'GetStatus', {}, o.out ?? console.log);
export const benchPreload = (o: { addr: string; circuitId: string; out?: Out }): Promise<Msg> =>
  simple(o.addr, 'PreloadSRS', { circuit_id: o.circuitId }, o.out ?? console.log);
export const benchEvict = (o: { addr: string; circuitId: string; out?: Out }): Promise<Msg> =>
  simple(o.addr, 'EvictSRS', { circuit_id: o.circuitId }, o.out ?? console.log);
export const benchCancel = (o: { addr: string; jobId: string; out?: Out }): Promise<Msg> =>
  simple(o.addr, 'CancelProof', { job_id: o.jobId }, o.out ?? console.log);

export async function benchMetrics(o: { addr: string; out?: Out }): Promise<string> {
  const c = connectEngine(o.addr);
  try {
    const r = await c.call('GetMetrics', {}, 60_000);
    (o.out ?? console.log)(r.prometheus_text);
    return r.prometheus_text as string;
  } finally {
    c.close();
  }
}

/** `trace JOB --out FILE`: fetches GET /trace/<job> (or /trace?jobs=a,b) from the daemon's HTTP
 *  status server (`[daemon] status_listen`) and writes the Chrome trace JSON (open it in
 *  https://ui.perfetto.dev or chrome://tracing). */
export async function benchTrace(o: { http: string; jobIds: string[]; outFile: string; out?: Out }): Promise<number> {
  const base = o.http.startsWith('http') ? o.http : `http://${o.http}`;
  const url = o.jobIds.length === 1 ? `${base}/trace/${encodeURIComponent(o.jobIds[0])}` : `${base}/trace?jobs=${o.jobIds.map(encodeURIComponent).join(',')}`;
  const res = await fetch(url);
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${text}`);
  await writeFile(o.outFile, text);
  const n = (JSON.parse(text) as { traceEvents: unknown[] }).traceEvents.length;
  (o.out ?? console.log)(`wrote ${n} trace events to ${o.outFile}`);
  return n;
}
