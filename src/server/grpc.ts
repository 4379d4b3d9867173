/**
 * The gRPC ProvingEngine service (cuzk.v1, wire-compatible with Curio's cuzk client) over an
 * Engine. Bad input never throws out of a handler: proof requests that cannot be proved become
 * FAILED jobs with a message; unknown job ids are NOT_FOUND (as cuzk).
 */
import { chmod, lstat, mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { connect } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { DeviceMemoryPlanStatus } from '../backend/backend.js';
import type { Engine, JobResult } from '../engine/engine.js';
import { errorText, InvalidRequestError, OverloadError, RequestIdConflictError, UnavailableError } from '../engine/engine.js';
import { boundText } from '../util/limits.js';
import { grpcAuthorized, isLoopback } from './auth.js';
import { UnknownCircuitError } from '../engine/srs-cache.js';
import { proofRequest, type ProofRequest } from '../engine/types.js';
import { INSECURE_TRAILER, INSECURE_TRAILER_TEXT, MAX_MESSAGE_BYTES, SERVER_LOADER_OPTIONS, loadProvingEngine, parseListen, protoPath } from './proto.js';
import { installStreamDecoder } from './stream-decoder.js';

type Msg = Record<string, unknown>;
type Handler = (call: grpc.ServerUnaryCall<Msg, Msg>, cb: grpc.sendUnaryData<Msg>) => void;

const bytes = (v: unknown): Uint8Array => (v instanceof Uint8Array ? v : new Uint8Array(0));
const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : 0);

/** A request's uint64 field (an exact decimal string: proto.ts SERVER_LOADER_OPTIONS) as a number;
 *  one beyond 2^53 − 1, which a number cannot hold, is refused naming its exact value. */
function u64(m: Msg, field: string): number {
  const v = m[field];
  if (typeof v === 'string' && /^\d+$/.test(v) && BigInt(v) > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new InvalidRequestError(`${field} ${v} is above 2^53 − 1 (${Number.MAX_SAFE_INTEGER}), the largest value kiln takes in a proof request`);
  }
  return num(v);
}

/**
 * GPUStatus' kiln extension fields from a device's memory plan; zeros and "" without one.
 * streamed_bytes_per_partition is one circuit's, not a sum (one partition proof streams one circuit's
 * sections): the loaded circuit that streams the most, the worst case a partition can take. The bytes
 * the last partition proof actually streamed are in GET /status (devices[].memoryPlan.lastPartition).
 */
export function memoryPlanToWire(plan: DeviceMemoryPlanStatus | null): Msg {
  return {
    memory_budget_bytes: plan?.budgetBytes ?? 0,
    memory_limit_bytes: plan?.limitBytes ?? 0,
    resident_bytes: plan?.residentBytes ?? 0,
    streamed_bytes_per_partition: Math.max(0, ...(plan?.circuits ?? []).map((c) => c.streamedBytesPerPartition)),
    memory_plan: (plan?.circuits ?? []).map((c) => `${c.circuit}: ${c.summary}`).join('; '),
  };
}

export function requestFromWire(m: Msg): ProofRequest {
  return proofRequest({
    requestId: typeof m.request_id === 'string' ? m.request_id : '',
    proofKind: num(m.proof_kind),
    sectorSize: u64(m, 'sector_size'),
    registeredProof: u64(m, 'registered_proof'),
    priority: num(m.priority),
    vanillaProof: bytes(m.vanilla_proof),
    vanillaProofs: Array.isArray(m.vanilla_proofs) ? m.vanilla_proofs.map(bytes) : [],
    sectorNumber: u64(m, 'sector_number'),
    minerId: u64(m, 'miner_id'),
    randomness: bytes(m.randomness),
    partitionIndex: num(m.partition_index),
    commROld: bytes(m.comm_r_old),
    commRNew: bytes(m.comm_r_new),
    commDNew: bytes(m.comm_d_new),
  });
}

/** uint64 milliseconds: a stage that took any time reports at least 1 ms. */
const ms = (x: number): number => (x > 0 ? Math.max(1, Math.round(x)) : 0);

export function resultToWire(r: JobResult): Msg {
  return {
    job_id: r.jobId,
    status: r.status,
    proof: Buffer.from(r.proof),
    error_message: r.errorMessage,
    queue_wait_ms: ms(r.timings.queueWaitMs),
    srs_load_ms: ms(r.timings.srsLoadMs),
    synthesis_ms: ms(r.timings.synthesisMs),
    gpu_compute_ms: ms(r.timings.gpuComputeMs),
    total_ms: ms(r.timings.totalMs),
  };
}

/** A handler's answer with trailing metadata. */
class WithTrailers {
  constructor(
    readonly msg: Msg,
    readonly trailers: grpc.Metadata,
  ) {}
}

/** The answer carrying a result, with the INSECURE trailer when its proof was made with development parameters. */
function withResult(msg: Msg, r: JobResult): Msg | WithTrailers {
  if (!r.insecureParams) return msg;
  const md = new grpc.Metadata();
  md.set(INSECURE_TRAILER, INSECURE_TRAILER_TEXT);
  return new WithTrailers(msg, md);
}

function fail(cb: grpc.sendUnaryData<Msg>, code: grpc.status, details: string): void {
  cb({ code, details, name: 'Error', message: details } as grpc.ServiceError, null);
}

export function serviceHandlers(engine: Engine, opts: { token?: string } = {}): Record<string, Handler> {
  const token = opts.token ?? '';
  const wrap =
    (fn: (req: Msg, call: grpc.ServerUnaryCall<Msg, Msg>) => Promise<Msg | WithTrailers | [grpc.status, string]>): Handler =>
    (call, cb) => {
      if (!grpcAuthorized(call.metadata, token)) {
        return fail(cb, grpc.status.UNAUTHENTICATED, 'this daemon needs a bearer token: send metadata "authorization: Bearer <token>" ([daemon] auth_token)');
      }
      let p: Promise<Msg | WithTrailers | [grpc.status, string]>;
      try {
        p = fn(call.request, call);
      } catch (e) {
        p = Promise.reject(e);
      }
      p.then(
        (r) => (Array.isArray(r) ? fail(cb, r[0], r[1]) : r instanceof WithTrailers ? cb(null, r.msg, r.trailers) : cb(null, r)),
        (e: unknown) => {
          if (e instanceof InvalidRequestError) return fail(cb, grpc.status.INVALID_ARGUMENT, errorText(e));
          if (e instanceof OverloadError) return fail(cb, grpc.status.RESOURCE_EXHAUSTED, errorText(e));
          if (e instanceof RequestIdConflictError) return fail(cb, grpc.status.ALREADY_EXISTS, errorText(e));
          if (e instanceof UnavailableError) return fail(cb, grpc.status.UNAVAILABLE, errorText(e));
          engine.log.error({ err: errorText(e) }, 'gRPC handler failed');
          fail(cb, grpc.status.INTERNAL, errorText(e));
        },
      );
    };
  const submit = async (m: Msg) => {
    const { job, queuePosition } = await engine.submit(requestFromWire(m));
    // the GPUs its partitions were handed to (a resubmitted running or finished job); '' while queued
    return { job_id: job.id, queue_position: queuePosition, assigned_gpu: job.gpus.join(',') };
  };
  return {
    SubmitProof: wrap(async (m) => submit(m)),
    AwaitProof: wrap(async (m) => {
      const id = boundText(String(m.job_id ?? ''), 128);
      const r = await engine.await(id, num(m.timeout_ms));
      return r === undefined ? [grpc.status.NOT_FOUND, `job not found: ${id}`] : withResult(resultToWire(r), r);
    }),
    Prove: wrap(async (m) => {
      if (m.submit === null || m.submit === undefined) return [grpc.status.INVALID_ARGUMENT, 'missing submit field'];
      const { job } = await engine.submit(requestFromWire(m.submit as Msg));
      const r = (await engine.await(job.id, 0)) ?? engine.resultOf(job);
      return withResult({ result: resultToWire(r) }, r);
    }),
    CancelProof: wrap(async (m) => {
      const id = boundText(String(m.job_id ?? ''), 128);
      const r = engine.cancel(id);
      if (r === undefined) return [grpc.status.NOT_FOUND, `job not found: ${id}`];
      await r.recorded; // in the journal before the answer: a kill -9 after it keeps the job cancelled
      return { was_running: r.wasRunning };
    }),
    GetStatus: wrap(async () => ({
      // one entry per GPU (the proto has no health field: a GPU out of service says so in its name)
      gpus: engine.devicesStatus().map((d) => ({
        ordinal: d.ordinal,
        name: d.healthy ? d.name : `${d.name} [unhealthy: ${boundText(d.lastFault?.message ?? 'failed', 200)}]`,
        vram_total_bytes: d.vramTotal,
        vram_free_bytes: d.vramFree,
        current_job_id: d.currentJobId,
        current_proof_kind: d.currentProofKind,
        ...memoryPlanToWire(d.memoryPlan),
      })),
      loaded_srs: engine.srs.status().map((s) => ({ circuit_id: s.circuitId, tier: s.tier, size_bytes: s.sizeBytes, ref_count: s.refCount })),
      queues: engine.queueStats().map((q) => ({ proof_kind: q.kind, pending: q.pending, in_progress: q.inProgress })),
      total_proofs_completed: engine.totals.completed,
      total_proofs_failed: engine.totals.failed,
      uptime_seconds: engine.uptimeSeconds,
      pinned_memory_bytes: engine.budget.reserved,
      pinned_memory_limit_bytes: engine.budget.limit,
    })),
    GetMetrics: wrap(async () => ({ prometheus_text: await engine.metrics.text() })),
    PreloadSRS: wrap(async (m) => {
      const id = String(m.circuit_id ?? '');
      if (engine.closing) throw new UnavailableError('the daemon is shutting down');
      if (id.length > 64) return [grpc.status.INVALID_ARGUMENT, `circuit_id is ${id.length} characters: not a circuit id`];
      try {
        const r = await engine.preloadSrs(id);
        return { already_loaded: r.alreadyLoaded, load_time_ms: Math.round(r.loadTimeMs) };
      } catch (e) {
        if (e instanceof UnknownCircuitError) return [grpc.status.NOT_FOUND, e.message];
        return [grpc.status.FAILED_PRECONDITION, `loading SRS ${id}: ${errorText(e)}`];
      }
    }),
    EvictSRS: wrap(async (m) => {
      const r = engine.evictSrs(String(m.circuit_id ?? ''));
      return { was_loaded: r.wasLoaded, freed_bytes: r.freedBytes };
    }),
  };
}

export interface GrpcServerHandle {
  server: grpc.Server;
  /** The bound address: host:port (the real port when 0 was asked) or unix:///path. */
  address: string;
  close(): Promise<void>;
}

/** Removes a stale unix socket (one nobody listens on); refuses a live one. */
async function clearStaleSocket(path: string): Promise<void> {
  let st;
  try {
    st = await lstat(path);
  } catch {
    return;
  }
  if (!st.isSocket()) throw new Error(`listen unix://${path}: the path exists and is not a socket`);
  const live = await new Promise<boolean>((resolve) => {
    const s = connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
  if (live) throw new Error(`listen unix://${path}: another process is listening on this socket`);
  await unlink(path);
}

export interface GrpcServerOptions {
  /** Bearer token every call must carry ('' or absent: none). */
  token?: string;
  /** Server credentials (default insecure); `tls` says whether they are TLS. */
  credentials?: { creds: grpc.ServerCredentials; tls: boolean };
  /** Told about a listener other machines can reach without credentials. */
  warn?: (msg: string) => void;
}

export async function startGrpcServer(engine: Engine, listen: string, opts: GrpcServerOptions = {}): Promise<GrpcServerHandle> {
  // large requests arrive without a copy of the whole message on the event loop, in shared memory
  if (!installStreamDecoder()) opts.warn?.('this @grpc/grpc-js has no StreamDecoder as kiln expects: large requests are joined on the event loop (stalls of ~0.1 s per 10 MB)');
  const { service } = loadProvingEngine(protoPath(), SERVER_LOADER_OPTIONS);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  server.addService(service, serviceHandlers(engine, { token: opts.token }) as unknown as grpc.UntypedServiceImplementation);
  const creds = opts.credentials ?? { creds: grpc.ServerCredentials.createInsecure(), tls: false };
  const where = parseListen(listen);
  let bindAddr: string;
  if ('socket' in where) {
    await mkdir(dirname(where.socket), { recursive: true, mode: 0o755 }).catch((e: Error) => {
      throw new Error(`listen unix://${where.socket}: cannot create ${dirname(where.socket)}: ${e.message}`);
    });
    await clearStaleSocket(where.socket);
    bindAddr = `unix://${where.socket}`;
  } else bindAddr = `${where.host.includes(':') ? `[${where.host}]` : where.host}:${where.port}`;
  // The socket is created 0600 from the start (umask during the bind), then chmod'ed to be sure.
  const oldUmask = 'socket' in where ? process.umask(0o177) : undefined;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(bindAddr, creds.creds, (err, p) =>
      err ? reject(new Error(`listen ${listen}: ${err.message}`)) : resolve(p),
    ),
  ).finally(() => {
    if (oldUmask !== undefined) process.umask(oldUmask);
  });
  let address: string;
  if ('socket' in where) {
    await chmod(where.socket, 0o600);
    address = `unix://${where.socket}`;
  } else {
    address = `${where.host.includes(':') ? `[${where.host}]` : where.host}:${port}`;
    if (!isLoopback(where.host) && !creds.tls && !opts.token) {
      opts.warn?.(
        `gRPC listens on ${address}, reachable from other machines, WITHOUT TLS OR A TOKEN: anyone who can reach it can submit, ` +
          'await and cancel jobs. Set [daemon] auth_token (and tls_cert/tls_key), or listen on a unix socket or 127.0.0.1',
      );
    } else if (!isLoopback(where.host) && !creds.tls) {
      opts.warn?.(`gRPC listens on ${address} without TLS: the bearer token crosses the network in clear text (set [daemon] tls_cert and tls_key)`);
    }
  }
  return {
    server,
    address,
    close: () =>
      new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 5000);
        server.tryShutdown(() => {
          clearTimeout(t);
          resolve();
        });
      }).then(async () => {
        if ('socket' in where) await unlink(where.socket).catch(() => {});
      }),
  };
}
