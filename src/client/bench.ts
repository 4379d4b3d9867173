/**
 * The bench client (`kiln bench …`, cuzk-bench's subcommands) over gRPC, plus the trace export
 * over the daemon's HTTP status server. Each subcommand is one exported async function taking
 * plain options; output goes through `out` (default console.log). The lead's CLI wires them:
 *
 *   single  --addr A --type porep|snap|wpost|winning|demo (--c1 FILE | --vanilla FILE | --update FILE) [--priority P] [--request-id ID]
 *   batch   --addr A --type … --c1 FILE -c N -j J
 *   status  --addr A          preload --addr A --circuit ID     evict --addr A --circuit ID
 *   cancel  --addr A --job ID metrics --addr A                  trace --http H JOB --out FILE
 *
 * `--addr` is host:port or unix:///path (as Curio dials). For `--type porep`, `--c1` may be either a
 * Commit2In wrapper or a raw C1 JSON (SealCommitPhase1Output), which is wrapped here like Curio does.
 */
import { readFile, writeFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { parseSectorSize } from '../filecoin/registry.js';
import { MAX_MESSAGE_BYTES, loadProvingEngine } from '../server/proto.js';

type Msg = Record<string, any>;
export type BenchType = 'porep' | 'snap' | 'wpost' | 'winning' | 'demo';
export type Out = (line: string) => void;

const KIND: Record<BenchType, number> = { porep: 1, snap: 2, wpost: 3, winning: 4, demo: 1000 };
const STATUS_NAMES = ['UNKNOWN', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'];
const PRIORITIES: Record<string, number> = { low: 1, normal: 2, high: 3, critical: 4 };

export interface BenchConnection {
  call(method: string, req: Msg, timeoutMs?: number): Promise<Msg>;
  close(): void;
}

/** A ProvingEngine client (no TLS, 256 MiB messages, as Curio's). */
export function connectEngine(addr: string): BenchConnection {
  const { Client } = loadProvingEngine();
  const target = addr.includes('://') || addr.startsWith('unix:') ? addr : `dns:///${addr}`;
  const client = new Client(target, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  }) as unknown as Record<string, (req: Msg, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: Msg) => void) => void> & grpc.Client;
  return {
    call: (method, req, timeoutMs) =>
      new Promise((resolve, reject) =>
        client[method](req, timeoutMs ? { deadline: Date.now() + timeoutMs } : {}, (e, r) => (e ? reject(e) : resolve(r))),
      ),
    close: () => client.close(),
  };
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
  out?: Out;
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
    const bytes = await readFile(o.c1);
    const json = JSON.parse(bytes.toString('utf8')) as Msg;
    if (typeof json.Phase1Out === 'string') {
      req.vanilla_proof = bytes;
      req.sector_size = json.SectorSize;
      req.sector_number = json.SectorNum;
    } else {
      // raw C1: wrap it as Curio does (Go's json.Marshal base64-encodes []byte)
      const size = parseSectorSize(String(json.registered_proof).replace(/^StackedDrg(\w+?)V1.*$/, '$1'))?.sectorSize ?? 0;
      req.vanilla_proof = Buffer.from(JSON.stringify({ SectorNum: 0, Phase1Out: bytes.toString('base64'), SectorSize: size }));
      req.sector_size = size;
    }
  } else if (o.type === 'snap' && o.update !== undefined) {
    const { readUpdateFile } = await import('../cli/snap-commands.js');
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
    req.vanilla_proofs = [await readFile(o.vanilla)];
  }
  return req;
}

export function formatTimings(r: Msg): string {
  return `timings: total=${r.total_ms} ms (queue=${r.queue_wait_ms}, srs=${r.srs_load_ms}, synth=${r.synthesis_ms}, gpu=${r.gpu_compute_ms})`;
}

/** `single`: one Prove, prints status, timings, wall time, proof size and hex. Returns the result. */
export async function benchSingle(o: SubmitOptions): Promise<Msg> {
  const out = o.out ?? console.log;
  const req = await buildRequest(o);
  const c = connectEngine(o.addr);
  try {
    const t0 = performance.now();
    const r = (await c.call('Prove', { submit: req })).result as Msg;
    const wall = performance.now() - t0;
    out(`job ${r.job_id}: ${STATUS_NAMES[r.status] ?? r.status}${r.error_message ? ` (${r.error_message})` : ''}`);
    out(formatTimings(r));
    out(`wall: ${wall.toFixed(0)} ms`);
    const proof = Buffer.from(r.proof ?? []);
    out(`proof: ${proof.length} bytes`);
    if (proof.length) out(proof.toString('hex'));
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
}

/** `batch`: N proofs with J in flight; prints throughput (proofs/min, s/proof). */
export async function benchBatch(o: BatchOptions): Promise<{ completed: number; failed: number; wallMs: number; proofsPerMin: number; secondsPerProof: number }> {
  const out = o.out ?? console.log;
  if (!(o.count >= 1) || !(o.concurrency >= 1)) throw new Error('-c and -j must be ≥ 1');
  const base = await buildRequest(o);
  const c = connectEngine(o.addr);
  let next = 0;
  let completed = 0;
  let failed = 0;
  const t0 = performance.now();
  try {
    const worker = async (): Promise<void> => {
      for (let i = next++; i < o.count; i = next++) {
        const req: Msg = { ...base, request_id: base.request_id ? `${base.request_id}-${i}` : '' };
        if (o.type === 'demo' && base.vanilla_proof.length === 0) req.vanilla_proof = Buffer.from(JSON.stringify({ seed: i + 1 }));
        const t = performance.now();
        const r = (await c.call('Prove', { submit: req })).result as Msg;
        if (r.status === 1) completed++;
        else failed++;
        out(`[${i + 1}/${o.count}] ${STATUS_NAMES[r.status]} wall=${(performance.now() - t).toFixed(0)} ms ${formatTimings(r)}${r.error_message ? ` ${r.error_message}` : ''}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, o.count) }, worker));
  } finally {
    c.close();
  }
  const wallMs = performance.now() - t0;
  const proofsPerMin = completed / (wallMs / 60_000);
  const secondsPerProof = completed ? wallMs / 1000 / completed : Infinity;
  out(`batch: ${completed} completed, ${failed} failed in ${(wallMs / 1000).toFixed(2)} s: ${proofsPerMin.toFixed(2)} proofs/min, ${secondsPerProof.toFixed(2)} s/proof`);
  return { completed, failed, wallMs, proofsPerMin, secondsPerProof };
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
