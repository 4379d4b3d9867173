/**
 * Prover lanes and batching: devices × gpu_workers_per_device lanes (one device on the CPU) take
 * synthesised partitions from one priority queue (job priority, then submission order, then
 * partition). Lane i proves on device ⌊i / gpu_workers_per_device⌋, with that device's backend and
 * SRS copy (SrsCache.paramsOn loads the copy when the device has none). A partition goes to a free
 * lane of a healthy device, preferring a device that holds the circuit's SRS, then the one with the
 * fewest busy lanes, then the one handed work longest ago: one proof's partitions spread over the
 * GPUs while no GPU loads a copy it does not need yet. With [scheduler] max_batch_size > 1 a free
 * lane waits (at most max_batch_wait_ms) for more partitions of the same circuit while another job
 * of it may still hand some over, then proves the batch one partition after the other.
 *
 * A failing device (with more than one device; devices.ts): a partition proof that fails with an
 * error from the backend — not a cancellation, and not a RangeError/TypeError, which by the Backend
 * contract are the request's (a wrong length), not the device's — marks its device unhealthy, and the
 * partition goes back to the queue for another device, each device at most once; when it has failed
 * on every device its job fails (DevicesExhaustedError). A partition with no healthy device left to
 * try waits at most [gpus] device_wait, then its job fails (NoHealthyDeviceError). With one device a
 * failure fails the job, as it always did.
 *
 * Latency-critical partitions (priority CRITICAL: a WinningPoSt's) also have one urgent lane per device
 * beside those, which takes nothing else: such a partition never waits for a lane while PoRep partitions
 * occupy them all, and it asks the backend to go first (PartitionInput.urgent: on a GPU the device lock
 * lets it before the other lanes' calls waiting there), so it waits at most for the proof running now.
 * On the CPU backend (proofs step by step, sharing the machine's threads) the other lanes' proofs pause at
 * their next step boundary while it proves, so it has the threads after at most the step running now.
 */
import { performance } from 'node:perf_hooks';
import type { Proof } from '../groth16/proof.js';
import type { AnyParameters as Parameters } from '../groth16/keys.js';
import { prove } from '../groth16/prover.js';
import { Span } from '../util/timing.js';
import type { EngineConfig } from './config.js';
import type { DeviceSet } from './devices.js';
import { CancelledError, errorText, type Job } from './jobs.js';
import { Priority } from './types.js';
import { PriorityQueue, type Queued } from './queue.js';
import type { SrsEntry } from './srs-cache.js';
import type { PartitionWitness } from './types.js';

/** A partition failed on every device it may run on. */
export class DevicesExhaustedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DevicesExhaustedError';
  }
}

/** A partition found no healthy device to run on within [gpus] device_wait. */
export class NoHealthyDeviceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoHealthyDeviceError';
  }
}

/** Whether an error of a partition proof is the device's (the partition may succeed elsewhere). */
export function isDeviceFault(e: unknown): boolean {
  return !(e instanceof CancelledError) && !(e instanceof RangeError) && !(e instanceof TypeError);
}

interface LaneItem extends Queued {
  job: Job;
  partition: number;
  circuitId: string;
  entry: SrsEntry;
  witness: PartitionWitness;
  span: Span;
  submittedMs: number;
  /** Devices (indices) it failed on, and how. */
  tried: Set<number>;
  failures: string[];
  /** Since when no healthy device it may run on exists (performance.now()). */
  stalledSinceMs: number | undefined;
  resolve: (v: { proof: Proof }) => void;
  reject: (e: Error) => void;
}

export interface Lane {
  readonly index: number;
  /** The device (index in the engine's DeviceSet) it proves on. */
  readonly device: number;
  /** Takes only latency-critical partitions (priority CRITICAL): one per device, beside the others. */
  readonly urgent: boolean;
  items: LaneItem[];
}

/** A partition that may use an urgent lane and go first on its device (a WinningPoSt's). */
const isUrgent = (it: { priority: number }): boolean => it.priority >= Priority.CRITICAL;

/** What the lanes need of the SRS cache. */
export interface LaneSrs {
  paramsOn(entry: SrsEntry, device: number, span?: Span): Promise<Parameters>;
  residentOn(circuitId: string, device: number): boolean;
}

export interface ProverLanesOptions {
  config: EngineConfig;
  devices: DeviceSet;
  srs: LaneSrs;
  /** Names the trace lane of a span (the observability module reads it). */
  laneOf: WeakMap<Span, string>;
  /** Whether a job of `circuitId` not in `inBatch` may still hand partitions to the lanes. */
  moreExpected: (circuitId: string, inBatch: ReadonlySet<Job>) => boolean;
  /** Told when a partition goes back to the queue after a device failed it. */
  onRetry?: (info: { jobId: string; partition: number; failedOn: number; error: string }) => void;
}

/** How far back ProverLanes.busyMs can look (the status page shows the last minute). */
export const BUSY_WINDOW_MS = 60_000;

export class ProverLanes {
  /** devices × gpu_workers_per_device lanes (lane i on device ⌊i / gpu_workers_per_device⌋). */
  readonly lanes: readonly Lane[];
  /** One urgent lane per device, after those (index lanes.length + device). */
  readonly urgentLanes: readonly Lane[];
  private readonly all: readonly Lane[];
  private readonly queue = new PriorityQueue<LaneItem>();
  private batchTimer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  /** Per device, the sequence number of the last hand-over (the round-robin tie-break). */
  private readonly handed: number[];
  private handSeq = 0;
  private closed = false;
  /** The `prove` spans of the last BUSY_WINDOW_MS (and the open ones), per lane: busyMs() reads them
   *  without walking any job. */
  private readonly proving: { lane: number; span: Span; jobId: string; partition: number }[] = [];
  /** Per device, the step-by-step proofs paused while its urgent lane proves (urgentProving). */
  private readonly pausedFor = new Map<number, (() => void)[]>();

  constructor(private readonly opts: ProverLanesOptions) {
    const per = opts.config.gpus.gpu_workers_per_device;
    this.lanes = Array.from({ length: opts.devices.count * per }, (_, index) => ({ index, device: Math.floor(index / per), urgent: false, items: [] }));
    this.urgentLanes = opts.devices.list.map((_, device) => ({ index: this.lanes.length + device, device, urgent: true, items: [] }));
    this.all = [...this.lanes, ...this.urgentLanes];
    this.handed = opts.devices.list.map(() => 0);
  }

  /** Proves partition `partition` of `job` on the next free lane. */
  prove(job: Job, partition: number, circuitId: string, entry: SrsEntry, witness: PartitionWitness, span: Span): Promise<{ proof: Proof }> {
    return new Promise<{ proof: Proof }>((resolve, reject) => {
      this.queue.push({
        job,
        partition,
        circuitId,
        entry,
        witness,
        span,
        submittedMs: performance.now(),
        priority: job.priority,
        seq: job.seq * 65536 + partition,
        tried: new Set(),
        failures: [],
        stalledSinceMs: undefined,
        resolve,
        reject,
      });
      this.dispatch();
    });
  }

  /** The device a new partition of `circuitId` would go to now (where a job loads its first SRS copy). */
  preferredDevice(circuitId: string): number {
    let best = 0;
    let bestKey: number[] | undefined;
    for (const d of this.opts.devices.list) {
      if (!d.healthy) continue;
      const key = this.deviceKey(circuitId, d.index);
      if (bestKey === undefined || compareKeys(key, bestKey) < 0) {
        best = d.index;
        bestKey = key;
      }
    }
    return best;
  }

  /** Drops the job's partitions still waiting for a lane (their proofs reject as cancelled). */
  dropJob(job: Job): void {
    for (const it of [...this.queue.toArray()]) {
      if (it.job === job) {
        this.queue.remove(it);
        it.witness.release?.();
        it.reject(new CancelledError());
      }
    }
  }

  /** Per lane, the milliseconds its `prove` spans (not `prove_failed`) cover in [fromMs, toMs]
   *  (performance.now() times, toMs the present; fromMs at most BUSY_WINDOW_MS before it). */
  busyMs(fromMs: number, toMs: number): number[] {
    this.forgetProving(toMs);
    const busy = this.all.map(() => 0);
    for (const { lane, span } of this.proving) {
      if (span.name !== 'prove') continue;
      busy[lane] += Math.max(0, Math.min(span.endMs ?? toMs, toMs) - Math.max(span.startMs, fromMs));
    }
    return busy;
  }

  /** The partition proofs in progress now: on which lane, of which job, since when (performance.now()). */
  provingNow(): { lane: number; jobId: string; partition: number; sinceMs: number }[] {
    return this.proving.filter((p) => p.span.endMs === undefined).map((p) => ({ lane: p.lane, jobId: p.jobId, partition: p.partition, sinceMs: p.span.startMs }));
  }

  /** Drops the `prove` spans that ended more than BUSY_WINDOW_MS before `nowMs`. */
  private forgetProving(nowMs: number): void {
    const keep = this.proving.filter((p) => p.span.endMs === undefined || p.span.endMs >= nowMs - BUSY_WINDOW_MS);
    if (keep.length !== this.proving.length) this.proving.splice(0, this.proving.length, ...keep);
  }

  /** Looks for work for free lanes (e.g. when a device is back in service). */
  wake(): void {
    this.dispatch();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.batchTimer);
    clearTimeout(this.stallTimer);
  }

  private busy(device: number): number {
    let n = 0;
    for (const l of this.lanes) if (l.device === device && l.items.length > 0) n++;
    return n;
  }

  /** Lower is better: holds the SRS, fewest busy lanes, handed work longest ago. */
  private deviceKey(circuitId: string, device: number): number[] {
    return [this.opts.srs.residentOn(circuitId, device) ? 0 : 1, this.busy(device), this.handed[device], device];
  }

  /** The best free lane for `it`: on a healthy device it has not failed on; an urgent lane only for a
   *  latency-critical partition, and after the other free lanes of its device. */
  private laneFor(it: LaneItem): Lane | undefined {
    let best: Lane | undefined;
    let bestKey: number[] | undefined;
    for (const lane of this.all) {
      if (lane.items.length > 0 || (lane.urgent && !isUrgent(it)) || it.tried.has(lane.device) || !this.opts.devices.get(lane.device).healthy) continue;
      const key = [...this.deviceKey(it.circuitId, lane.device), lane.urgent ? 1 : 0, lane.index];
      if (bestKey === undefined || compareKeys(key, bestKey) < 0) {
        best = lane;
        bestKey = key;
      }
    }
    return best;
  }

  private dispatch(): void {
    if (this.closed) return;
    this.expireStalled();
    const { config } = this.opts;
    const maxBatch = config.scheduler.max_batch_size;
    for (let assigned = true; assigned && this.queue.length > 0; ) {
      assigned = false;
      for (const first of this.queue.toArray()) {
        const lane = this.laneFor(first);
        if (lane === undefined) continue;
        const same = this.queue
          .toArray()
          .filter((it) => it.circuitId === first.circuitId && !it.tried.has(lane.device) && (!lane.urgent || isUrgent(it)))
          .slice(0, maxBatch);
        if (maxBatch > 1 && same.length < maxBatch && config.scheduler.max_batch_wait_ms > 0 && this.opts.moreExpected(first.circuitId, new Set(same.map((b) => b.job)))) {
          // cross-sector batching: wait (bounded) for more partitions of the same circuit
          const waited = performance.now() - first.submittedMs;
          if (waited < config.scheduler.max_batch_wait_ms) {
            if (this.batchTimer === undefined) {
              this.batchTimer = setTimeout(() => {
                this.batchTimer = undefined;
                this.dispatch();
              }, Math.max(1, config.scheduler.max_batch_wait_ms - waited));
            }
            return;
          }
        }
        for (const it of same) this.queue.remove(it);
        lane.items = same;
        this.handed[lane.device] = ++this.handSeq;
        void this.run(lane);
        assigned = true;
        break; // the queue changed: look again from its head
      }
    }
  }

  /** Fails the partitions that found no healthy device to try for [gpus] device_wait, and wakes
   *  the dispatcher when the next one would. */
  private expireStalled(): void {
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    const devices = this.opts.devices;
    if (!devices.tracksHealth) return;
    const now = performance.now();
    const waitMs = this.opts.config.gpus.device_wait_ms;
    let next = Infinity;
    for (const it of [...this.queue.toArray()]) {
      if (devices.list.some((d) => d.healthy && !it.tried.has(d.index))) {
        it.stalledSinceMs = undefined;
        continue;
      }
      it.stalledSinceMs ??= now;
      const deadline = it.stalledSinceMs + waitMs;
      if (now < deadline) {
        next = Math.min(next, deadline);
        continue;
      }
      this.queue.remove(it);
      it.witness.release?.();
      const out = devices.list
        .filter((d) => !d.healthy && !it.tried.has(d.index))
        .map((d) => `GPU ${d.ordinal} out of service${d.lastFault ? ` since ${new Date(d.lastFault.at).toISOString()} (${d.lastFault.message})` : ''}`);
      it.reject(
        new NoHealthyDeviceError(
          `partition ${it.partition}: no healthy GPU to prove it on for ${(waitMs / 1000).toFixed(waitMs < 10_000 ? 1 : 0)} s ([gpus] device_wait)` +
            [...out, ...it.failures.map((f) => `failed on ${f}`)].map((x) => `; ${x}`).join(''),
        ),
      );
    }
    if (next < Infinity) {
      this.stallTimer = setTimeout(() => {
        this.stallTimer = undefined;
        this.dispatch();
      }, Math.max(1, next - now));
    }
  }

  /** A lane's name in traces and the status page: `prover N`, or `urgent D` for device D's urgent lane. */
  laneName(lane: Lane): string {
    return lane.urgent ? `urgent ${lane.device}` : `prover ${lane.index}`;
  }

  /** Every lane, the urgent ones last (the order of busyMs). */
  get allLanes(): readonly Lane[] {
    return this.all;
  }

  private async run(lane: Lane): Promise<void> {
    const devices = this.opts.devices;
    const device = devices.get(lane.device);
    const batch = lane.items;
    for (const it of batch) {
      if (it.job.cancelRequested) {
        it.witness.release?.();
        it.reject(new CancelledError());
        continue;
      }
      if (!device.healthy) {
        // an earlier partition of this batch took the device out of service: the rest go elsewhere
        this.requeue(it);
        continue;
      }
      const wait = new Span('lane_wait', it.span, it.submittedMs);
      wait.end();
      it.job.lanes.add(lane.index);
      if (!it.job.gpus.includes(device.ordinal)) it.job.gpus.push(device.ordinal);
      let proving: Span | undefined;
      let requeued = false;
      try {
        const params = this.opts.srs.residentOn(it.circuitId, lane.device)
          ? await this.opts.srs.paramsOn(it.entry, lane.device)
          : await it.span.time('srs_device', (s) => {
              this.opts.laneOf.set(s, this.laneName(lane));
              return this.opts.srs.paramsOn(it.entry, lane.device, s);
            });
        proving = it.span.child('prove');
        this.opts.laneOf.set(proving, this.laneName(lane));
        this.forgetProving(proving.startMs);
        this.proving.push({ lane: lane.index, span: proving, jobId: it.job.id, partition: it.partition });
        const urgent = isUrgent(it);
        const r = await prove(params, it.entry.circuit, it.witness.assignment, device.backend, proving, it.job.abort.signal, {
          urgent,
          pause: urgent ? undefined : () => this.urgentProving(lane.device),
        });
        proving.end();
        it.resolve({ proof: r.proof });
      } catch (e) {
        proving?.end();
        if (e instanceof CancelledError || it.job.cancelRequested) it.reject(new CancelledError());
        else if (devices.tracksHealth && isDeviceFault(e)) {
          if (proving !== undefined) proving.name = 'prove_failed'; // not proving time (AwaitProof's gpu_compute_ms)
          requeued = this.deviceFailed(it, lane, e);
        } else it.reject(new Error(`prover: ${errorText(e)}`));
      } finally {
        if (!requeued) it.witness.release?.();
        it.job.lanes.delete(lane.index);
      }
    }
    lane.items = [];
    if (lane.urgent) {
      const waiting = this.pausedFor.get(lane.device) ?? [];
      this.pausedFor.delete(lane.device);
      for (const wake of waiting) wake();
    }
    this.dispatch();
  }

  /** While device `device`'s urgent lane proves, a promise of its end (the other lanes' step-by-step proofs
   *  wait for it between steps: on the CPU the urgent proof then has every thread), else undefined. */
  private urgentProving(device: number): Promise<void> | undefined {
    if (this.urgentLanes[device]!.items.length === 0) return undefined;
    return new Promise<void>((resolve) => {
      const waiting = this.pausedFor.get(device) ?? [];
      waiting.push(resolve);
      this.pausedFor.set(device, waiting);
    });
  }

  /** After `e` from the device of `lane` failed `it`: takes the device out of service and puts the
   *  partition back for another device (true), or fails it when none is left to try. */
  private deviceFailed(it: LaneItem, lane: Lane, e: unknown): boolean {
    const devices = this.opts.devices;
    const device = devices.get(lane.device);
    devices.markUnhealthy(lane.device, e, { jobId: it.job.id, partition: it.partition });
    it.tried.add(lane.device);
    it.failures.push(`GPU ${device.ordinal}: ${errorText(e)}`);
    if (it.tried.size >= devices.count) {
      it.reject(new DevicesExhaustedError(`partition ${it.partition} failed on every GPU (${it.failures.join('; ')})`));
      return false;
    }
    this.opts.onRetry?.({ jobId: it.job.id, partition: it.partition, failedOn: device.ordinal, error: errorText(e) });
    this.requeue(it);
    return true;
  }

  private requeue(it: LaneItem): void {
    it.submittedMs = performance.now();
    it.stalledSinceMs = undefined;
    this.queue.push(it);
  }
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
