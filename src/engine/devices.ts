/**
 * The engine's compute devices: one backend per GPU (src/backend/select.ts selectDevices), or the one
 * CPU backend. Prover lanes are bound to them (lanes.ts: lane i → device ⌊i / gpu_workers_per_device⌋)
 * and each holds its own SRS copy (srs-cache.ts).
 *
 * Health (with more than one device): a partition proof that fails with an error from the backend
 * marks its device unhealthy; its lanes take no work until a probe passes (src/backend/probe.ts: a tiny
 * NTT and MSM through the device's backend, every [gpus] probe_interval). With one device there is
 * nowhere else to go: a failure fails its job as it always did, and the device stays in service.
 */
import type { Logger } from 'pino';
import type { Backend, Capabilities } from '../backend/backend.js';
import { probeBackend } from '../backend/probe.js';
import { errorText } from './jobs.js';

export interface DeviceFault {
  message: string;
  /** Date.now() of the failure. */
  at: number;
  jobId: string;
  partition: number;
}

export interface EngineDevice {
  /** Position in the engine's device list (lanes are bound by it). */
  readonly index: number;
  /** The GPU ordinal (Backend.device), or the index for a backend bound to no GPU (the CPU). */
  readonly ordinal: number;
  readonly backend: Backend;
  healthy: boolean;
  /** The failure that took it out of service (kept after it recovers). */
  lastFault: DeviceFault | undefined;
  /** Failures seen, and probes run since. */
  faults: number;
  probes: { passed: number; failed: number; lastError: string | undefined; lastAt: number | undefined };
}

export interface DeviceSetOptions {
  /** [gpus] probe_interval: ms between probes of an unhealthy device. */
  probeIntervalMs: number;
  log: Logger;
  /** Called when a device is back in service (the lanes then look for work for it). */
  onHealthy: (device: EngineDevice) => void;
  /** The probe (default probeBackend). */
  probe?: (backend: Backend) => Promise<void>;
}

export class DeviceSet {
  readonly list: readonly EngineDevice[];
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private closed = false;

  constructor(
    backends: readonly Backend[],
    private readonly opts: DeviceSetOptions,
  ) {
    if (backends.length === 0) throw new RangeError('the engine needs at least one compute device');
    this.list = backends.map((backend, index) => ({
      index,
      ordinal: backend.device ?? index,
      backend,
      healthy: true,
      lastFault: undefined,
      faults: 0,
      probes: { passed: 0, failed: 0, lastError: undefined, lastAt: undefined },
    }));
    const ordinals = this.list.map((d) => d.ordinal);
    const dup = ordinals.find((o, i) => ordinals.indexOf(o) !== i);
    if (dup !== undefined) throw new RangeError(`two compute devices drive GPU ${dup}`);
  }

  get count(): number {
    return this.list.length;
  }

  /** Whether failures take devices out of service (more than one device: another can take over). */
  get tracksHealth(): boolean {
    return this.list.length > 1;
  }

  get(index: number): EngineDevice {
    const d = this.list[index];
    if (d === undefined) throw new RangeError(`no compute device ${index}`);
    return d;
  }

  /** The capabilities of every device together (status, logs): the primary's, with every GPU. */
  capabilities(): Capabilities {
    const caps = this.list[0].backend.capabilities();
    if (this.list.length === 1) return caps;
    return { ...caps, gpus: this.list.flatMap((d) => d.backend.capabilities().gpus) };
  }

  /** Takes a device out of service after `error` (from its backend) failed a partition proof, and
   *  starts probing it. */
  markUnhealthy(index: number, error: unknown, where: { jobId: string; partition: number }): void {
    const d = this.get(index);
    d.faults++;
    d.lastFault = { message: errorText(error), at: Date.now(), jobId: where.jobId, partition: where.partition };
    if (!d.healthy) return;
    d.healthy = false;
    this.opts.log.error(
      { gpu: d.ordinal, job: where.jobId, partition: where.partition, err: d.lastFault.message, probeIntervalMs: this.opts.probeIntervalMs },
      `GPU ${d.ordinal} failed a partition proof: out of service until a probe passes`,
    );
    this.schedule(d);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private schedule(d: EngineDevice): void {
    if (this.closed || this.timers.has(d.index)) return;
    const t = setTimeout(() => {
      this.timers.delete(d.index);
      void this.probe(d);
    }, this.opts.probeIntervalMs);
    t.unref();
    this.timers.set(d.index, t);
  }

  private async probe(d: EngineDevice): Promise<void> {
    if (this.closed || d.healthy) return;
    try {
      await (this.opts.probe ?? probeBackend)(d.backend);
    } catch (e) {
      d.probes.failed++;
      d.probes.lastError = errorText(e);
      d.probes.lastAt = Date.now();
      this.opts.log.warn({ gpu: d.ordinal, err: d.probes.lastError }, `GPU ${d.ordinal}: probe failed, still out of service`);
      this.schedule(d);
      return;
    }
    d.probes.passed++;
    d.probes.lastError = undefined;
    d.probes.lastAt = Date.now();
    if (this.closed) return;
    d.healthy = true;
    this.opts.log.info({ gpu: d.ordinal, faults: d.faults }, `GPU ${d.ordinal}: probe passed, back in service`);
    this.opts.onHealthy(d);
  }
}
