/**
 * The engine's status views (GetStatus, GET /status, the status page's lane and device tables, the INSECURE
 * banner), read from its state without changing it: written apart from the scheduling in engine.ts, which hands
 * them an EngineState and keeps the methods of its API (Engine.status, lanesStatus, …) as one-line calls.
 */
import type { DeviceMemoryPlanStatus } from '../backend/backend.js';
import type { BufferPool } from './buffers.js';
import type { EngineConfig } from './config.js';
import type { DeviceSet } from './devices.js';
import type { Job, JobRegistry } from './jobs.js';
import type { Journal } from './journal.js';
import type { ProverLanes } from './lanes.js';
import { type MemoryBudget, fmtBytes } from './memory.js';
import type { PriorityQueue } from './queue.js';
import type { SrsCache } from './srs-cache.js';
import type { SynthesisPool } from './synth-pool.js';
import type { Planner } from './types.js';
import { STATUS_JOBS_DEFAULT, STATUS_JOBS_MAX } from '../util/limits.js';

/** What the views read of the engine (engine.ts Engine.state()). */
export interface EngineState {
  readonly config: EngineConfig;
  readonly devices: DeviceSet;
  readonly lanes: ProverLanes;
  readonly planners: ReadonlyMap<number, Planner>;
  readonly queue: PriorityQueue<Job>;
  /** Restored from the journal, not planned again yet. */
  readonly restoring: ReadonlySet<Job>;
  readonly running: ReadonlySet<Job>;
  readonly jobs: JobRegistry;
  readonly srs: SrsCache;
  readonly budget: MemoryBudget;
  readonly synthPool: SynthesisPool;
  readonly buffers: BufferPool;
  readonly totals: { readonly completed: number; readonly failed: number; readonly cancelled: number };
  readonly journal: Journal | undefined;
  readonly maxInFlight: number;
  readonly startedAt: number;
  /** Requests being planned now. */
  readonly planning: number;
  readonly insecureCircuits: ReadonlySet<string>;
  readonly insecureProofs: number;
}

/** A device fault without the id of the job it happened in (its message too: a backend's error may quote it). */
function withoutJobId<F extends { message: string; jobId: string }>(f: F): F {
  return { ...f, jobId: '', message: f.jobId === '' ? f.message : f.message.split(f.jobId).join('<job>') };
}

export function queueStats(e: EngineState): { kind: string; pending: number; inProgress: number }[] {
  const kinds = new Map<string, { kind: string; pending: number; inProgress: number }>();
  for (const p of e.planners.values()) kinds.set(p.name, { kind: p.name, pending: 0, inProgress: 0 });
  // queued, and restored from the journal but not planned again yet
  for (const j of [...e.queue.toArray(), ...e.restoring]) {
    const q = kinds.get(j.kindName) ?? { kind: j.kindName, pending: 0, inProgress: 0 };
    q.pending++;
    kinds.set(j.kindName, q);
  }
  for (const j of e.running) {
    const q = kinds.get(j.kindName) ?? { kind: j.kindName, pending: 0, inProgress: 0 };
    q.inProgress++;
    kinds.set(j.kindName, q);
  }
  return [...kinds.values()];
}

/** Per prover lane: its device and what it proves now (the status page's lane table). */
export function lanesStatus(e: EngineState): {
  ordinal: number;
  device: number;
  healthy: boolean;
  name: string;
  vramTotal: number;
  vramFree: number;
  currentJobId: string;
  currentProofKind: string;
}[] {
  const perDevice = e.config.gpus.gpu_workers_per_device;
  const devices = devicesStatus(e);
  return e.lanes.lanes.map((l) => {
    const d = devices[l.device];
    const cur = l.items.find((it) => it.job.lanes.has(l.index)) ?? l.items[0];
    const worker = l.index % perDevice;
    return {
      ordinal: l.index,
      device: d.ordinal,
      healthy: d.healthy,
      name: d.gpu ? `GPU ${d.ordinal}: ${d.name} (worker ${worker})` : `${d.name.replace(/\)$/, '')}, worker ${worker})`,
      vramTotal: d.vramTotal,
      vramFree: d.vramFree,
      currentJobId: cur?.job.id ?? '',
      currentProofKind: cur?.job.kindName ?? '',
    };
  });
}

/**
 * Per device (GetStatus' gpus): its GPU ordinal and name, memory (total and free, from the driver
 * when the backend can ask it), the jobs its lanes prove now (ids and kinds, comma-separated when
 * its lanes run partitions of several), health and the last failure, and the GPU's device-memory
 * plan (what stays resident, what streams from pinned host memory; null without one: the CPU
 * backend, a GPU backend without plans).
 */
export function devicesStatus(e: EngineState): {
  ordinal: number;
  /** A GPU (else the CPU backend). */
  gpu: boolean;
  name: string;
  vramTotal: number;
  vramFree: number;
  currentJobId: string;
  currentProofKind: string;
  healthy: boolean;
  lanes: number[];
  faults: number;
  lastFault: { message: string; at: string; jobId: string; partition: number } | undefined;
  probes: { passed: number; failed: number; lastError: string | undefined };
  memoryPlan: DeviceMemoryPlanStatus | null;
}[] {
  return e.devices.list.map((d) => {
    const caps = d.backend.capabilities();
    const gpu = caps.gpus.find((g) => g.ordinal === d.ordinal);
    const mem = d.backend.deviceMemory?.();
    const lanes = e.lanes.lanes.filter((l) => l.device === d.index);
    const jobs = new Map<string, string>();
    for (const l of [...lanes, ...e.lanes.urgentLanes.filter((u) => u.device === d.index)]) {
      const cur = l.items.find((it) => it.job.lanes.has(l.index)) ?? l.items[0];
      if (cur !== undefined) jobs.set(cur.job.id, cur.job.kindName);
    }
    return {
      ordinal: d.ordinal,
      gpu: gpu !== undefined,
      name: gpu ? gpu.name : `${caps.backend} (${caps.threads} threads)`,
      vramTotal: mem?.totalBytes ?? gpu?.memoryBytes ?? 0,
      vramFree: mem?.freeBytes ?? 0,
      currentJobId: [...jobs.keys()].join(','),
      currentProofKind: [...new Set(jobs.values())].join(','),
      healthy: d.healthy,
      lanes: lanes.map((l) => l.index),
      faults: d.faults,
      lastFault: d.lastFault === undefined ? undefined : { ...d.lastFault, at: new Date(d.lastFault.at).toISOString() },
      probes: { passed: d.probes.passed, failed: d.probes.failed, lastError: d.probes.lastError },
      memoryPlan: d.backend.memoryPlan?.() ?? null,
    };
  });
}

/** JSON status (GET /status): counts of every job by state, and one page of jobs (live ones
 *  first, then the most recently submitted), `limit` at most STATUS_JOBS_MAX. With `hideJobIds`
 *  (a caller without the token) no job id appears: no job list, the lanes' and devices' current
 *  jobs and the last fault's job are "", memory reservations read "job partition k". */
export function engineStatus(e: EngineState, opts: { offset?: number; limit?: number; hideJobIds?: boolean } = {}): Record<string, unknown> {
  const hide = opts.hideJobIds === true;
  const caps = e.devices.capabilities();
  const all = e.jobs.all();
  const byState: Record<string, number> = {};
  for (const j of all) byState[j.state] = (byState[j.state] ?? 0) + 1;
  const offset = Math.max(0, Math.floor(opts.offset ?? 0) || 0);
  const limit = Math.min(STATUS_JOBS_MAX, Math.max(0, Math.floor(opts.limit ?? STATUS_JOBS_DEFAULT) || 0));
  const ordered = [...all.filter((j) => !j.finished).sort((a, b) => a.seq - b.seq), ...all.filter((j) => j.finished).sort((a, b) => b.seq - a.seq)];
  return {
    uptimeSeconds: Math.floor((Date.now() - e.startedAt) / 1000),
    backend: caps,
    lanes: lanesStatus(e).map((l) => (hide ? { ...l, currentJobId: '' } : l)),
    devices: devicesStatus(e).map((d) => (hide ? { ...d, currentJobId: '', lastFault: d.lastFault && withoutJobId(d.lastFault) } : d)),
    maxJobsInFlight: e.maxInFlight,
    queues: queueStats(e),
    jobCounts: { total: all.length, byState },
    jobsPage: { offset, limit, returned: Math.max(0, Math.min(limit, ordered.length - offset)), total: ordered.length },
    jobs: hide ? undefined : ordered.slice(offset, offset + limit).map((j) => j.summary()),
    limits: { maxQueuedJobs: e.config.daemon.max_queued_jobs, queued: e.queue.length, planning: e.planning },
    srs: e.srs.status(),
    memory: {
      budgetBytes: e.budget.limit,
      budget: fmtBytes(e.budget.limit),
      configured: e.config.memory.total_budget_text,
      reservedBytes: e.budget.reserved,
      waiting: e.budget.waiting,
      // partitions.ts labels them `job <id> partition <k>`
      reservations: e.budget.reservations().map((r) => (hide ? { ...r, label: r.label.replace(/\bjob \S+/g, 'job') } : r)),
    },
    synthesis: { workers: e.synthPool.size, reserved: e.synthPool.reserved, busy: e.synthPool.busy, queued: e.synthPool.queued },
    witnessBuffers: { idleBytes: e.buffers.idleBytes, inUse: e.buffers.outstanding, allocated: e.buffers.allocated, reused: e.buffers.reused },
    pipeline: { ...e.config.pipeline },
    scheduler: { ...e.config.scheduler },
    totals: { ...e.totals },
    insecure: insecureStatus(e),
    // [daemon] state_dir: 'lost' while the journal cannot be written (new jobs refused, records kept in memory)
    durability:
      e.journal === undefined
        ? { journal: null, state: 'memory only' }
        : ((d) => (d === undefined ? { journal: e.journal!.path, state: 'ok' } : { journal: e.journal!.path, state: 'lost', error: d.error, since: new Date(d.since).toISOString(), pendingRecords: d.pending }))(e.journal.degraded),
  };
}

/**
 * INSECURE development parameters in this daemon: allowed (`[srs] dev_params`), the circuits proved or
 * loaded with them, the proofs made with them since the start; `warning` (the status page's banner) is
 * null when none can be made.
 */
export function insecureStatus(e: EngineState): { devParams: boolean; circuits: string[]; proofs: number; warning: string | null } {
  const circuits = new Set(e.insecureCircuits);
  for (const s of e.srs.status()) if (e.srs.provider(s.circuitId)?.insecure?.(s.circuitId)) circuits.add(s.circuitId);
  const devParams = e.config.srs.dev_params;
  const list = [...circuits].sort();
  const warning =
    list.length > 0
      ? `INSECURE development parameters in use (${list.join(', ')}): ${e.insecureProofs} proof(s) made with them; such proofs are never accepted on chain`
      : devParams
        ? 'INSECURE development parameters allowed ([srs] dev_params = true): a circuit without official parameters gets them, and its proofs are never accepted on chain'
        : null;
  return { devParams, circuits: list, proofs: e.insecureProofs, warning };
}
