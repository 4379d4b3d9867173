/**
 * The SRS cache: Groth16 parameters per circuit id, loaded on demand (or by PreloadSRS), kept
 * while memory allows, reference-counted while proofs use them, evicted least-recently-used when
 * the memory budget is under pressure (only entries idle for eviction_min_idle, as cuzk, and never a
 * circuit its provider keeps resident: WinningPoSt's) or on EvictSRS. Entries hold their bytes as a
 * MemoryBudget reservation.
 *
 * One copy per device: an entry (shape, verifying key) is loaded with its first copy on the device
 * a job asks for (`acquire`); a prover lane of another device loads that device's copy when it first
 * proves a partition of the circuit (`paramsOn`), through the provider again with the device's
 * backend (on a GPU, streamed from the file onto that device). Copies are evicted one by one (the
 * least recently used first under pressure; `evict(id, device)` on request), so an SRS evicted from
 * one device stays on the others; the entry goes with its last copy. With one device there is one
 * copy, as before.
 *
 * Tiers (cuzk's SRSStatus.Tier): a loaded entry is HOT (ready for proving: with the CPU backend in
 * its native memory, in chunks; with the CUDA backend resident on the device, streamed there from
 * the file by the native loader, the host keeping no copy). WARM/COLD are not used yet. The budget
 * reservation is what the backend holds on the host (Backend.srsHostBytes), the status shows the
 * sections' whole size.
 */
import type { Backend } from '../backend/backend.js';
import { releaseSection } from '../backend/section.js';
import { G1_BYTES, G2_BYTES } from '../field/layout.js';
import type { AnyParameters as Parameters } from '../groth16/keys.js';
import { compiledOf, type CircuitLike, type CompiledCircuit } from '../groth16/compiled.js';
import { domainSize } from '../groth16/queries.js';
import { prepareVerifyingKey, type PreparedVerifyingKey } from '../groth16/verifier.js';
import { Span } from '../util/timing.js';
import { fmtBytes, type MemoryBudget, type Reservation } from './memory.js';
import type { CircuitProvider } from './types.js';

export const SrsTier = { HOT: 0, WARM: 1, COLD: 2 } as const;

export interface SrsEntry {
  readonly circuitId: string;
  /** The compiled circuit (shape, query indices, digest, witness program). */
  circuit: CompiledCircuit;
  /** The parameters of a loaded copy (the first loaded that is still there); a prover takes its
   *  device's copy from `SrsCache.paramsOn`. */
  readonly params: Parameters;
  vk: Parameters['vk'];
  pvk: PreparedVerifyingKey;
  /** The five query sections' bytes (native layout) of one copy, wherever it lives. */
  sizeBytes: number;
  /** Host bytes reserved in the memory budget for one copy (Backend.srsHostBytes of its device). */
  hostBytes: number;
  refCount: number;
  lastUsedMs: number;
  /** The first copy's load (check, shape, parameters, verifying key). */
  loadMs: number;
  /** The load's span tree (check, shape, mem_wait, load → the provider's steps, prepare_vk). */
  loadSpan: Span;
}

/** One device's copy of a circuit's parameters. */
interface Copy {
  device: number;
  loading: Promise<Parameters>;
  params: Parameters | undefined;
  reservation: Reservation | undefined;
  hostBytes: number;
  loadMs: number;
  lastUsedMs: number;
  /** Evict when the circuit is next idle (EvictSRS for this device while a job used it). */
  evictWhenIdle: boolean;
}

interface Slot {
  circuitId: string;
  loading: Promise<SrsEntry>;
  entry: SrsEntry | undefined;
  refCount: number;
  evictWhenIdle: boolean;
  copies: Map<number, Copy>;
}

/** Bytes of the parameters of a circuit in backend memory (the five query buffers). */
export function estimateSrsBytes(circuit: CircuitLike): number {
  const { shape, queries: q } = compiledOf(circuit);
  const n = domainSize(shape);
  return ((n - 1) + shape.numAux + q.a.length + q.b.length) * G1_BYTES + q.b.length * G2_BYTES;
}

/**
 * Host bytes one copy of a circuit's parameters takes on `backend`: what the backend keeps of the
 * sections (Backend.srsHostBytes: the loader's staging on a GPU) plus, on a GPU whose device-memory
 * plan streams sections, their pinned host copy. Plans the circuit on that GPU (Backend.planCircuit),
 * so a GPU too small for it is refused here, before anything is read.
 */
function hostBytesFor(backend: Backend, circuit: CompiledCircuit, bytes: number, circuitId: string): number {
  let streamed = 0;
  if (typeof backend.planCircuit === 'function') streamed = backend.planCircuit(circuit.shape, circuit.footprint(), circuitId).hostBytes;
  return (backend.srsHostBytes?.(bytes) ?? bytes) + streamed;
}

export class UnknownCircuitError extends Error {
  constructor(circuitId: string) {
    super(`unknown circuit id '${circuitId}'`);
    this.name = 'UnknownCircuitError';
  }
}

export class SrsCache {
  private readonly slots = new Map<string, Slot>();
  private readonly devices: readonly Backend[];

  /** `backend`: the backend of each device (index = the device's position, as the engine's
   *  DeviceSet), or the one backend of a single device. */
  constructor(
    private readonly providers: () => readonly CircuitProvider[],
    private readonly budget: MemoryBudget,
    backend: Backend | readonly Backend[],
    private readonly evictionMinIdleMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.devices = Array.isArray(backend) ? [...(backend as readonly Backend[])] : [backend as Backend];
    if (this.devices.length === 0) throw new RangeError('SrsCache: no device');
    budget.onPressure((needed) => this.evictIdle(needed));
  }

  provider(circuitId: string): CircuitProvider | undefined {
    return this.providers().find((p) => p.knows(circuitId));
  }

  /** Takes a reference to the loaded entry, loading it first when needed (timed under `span`), with
   *  its first copy on `device` (default 0). */
  async acquire(circuitId: string, span: Span, device = 0): Promise<SrsEntry> {
    let slot = this.slots.get(circuitId);
    if (slot === undefined) slot = this.startLoad(circuitId, span, this.checkDevice(device));
    slot.refCount++;
    try {
      const e = await slot.loading;
      e.refCount = slot.refCount;
      e.lastUsedMs = this.now();
      return e;
    } catch (err) {
      slot.refCount--;
      throw err;
    }
  }

  release(circuitId: string): void {
    const slot = this.slots.get(circuitId);
    if (slot === undefined) return;
    slot.refCount = Math.max(0, slot.refCount - 1);
    if (slot.entry) {
      slot.entry.refCount = slot.refCount;
      slot.entry.lastUsedMs = this.now();
    }
    if (slot.refCount > 0) return;
    if (slot.evictWhenIdle) this.free(slot);
    else for (const c of [...slot.copies.values()]) if (c.evictWhenIdle && c.params !== undefined) this.freeCopy(slot, c);
  }

  /**
   * The parameters of an acquired entry on `device`, loading that device's copy first when it has
   * none (under `span`: mem_wait, then the provider's load). The caller holds a reference to the
   * entry (acquire), which keeps every copy from eviction until it is released.
   */
  async paramsOn(entry: SrsEntry, device: number, span?: Span): Promise<Parameters> {
    const slot = this.slots.get(entry.circuitId);
    if (slot === undefined || slot.entry !== entry) throw new Error(`SRS ${entry.circuitId} was evicted while a proof used it`);
    let c = slot.copies.get(this.checkDevice(device));
    if (c === undefined) c = this.startCopy(slot, device, span ?? new Span('srs_device'));
    const params = await c.loading;
    c.lastUsedMs = this.now();
    return params;
  }

  /** Whether `device` holds a loaded copy of `circuitId`. */
  residentOn(circuitId: string, device: number): boolean {
    return this.slots.get(circuitId)?.copies.get(device)?.params !== undefined;
  }

  /** PreloadSRS: loads without taking a reference, a copy on each of `devices` (default: every
   *  device). `alreadyLoaded` when each had one. */
  async preload(circuitId: string, devices?: readonly number[]): Promise<{ alreadyLoaded: boolean; loadTimeMs: number }> {
    const want = [...new Set(devices ?? this.devices.map((_, i) => i))].map((d) => this.checkDevice(d));
    const existing = this.slots.get(circuitId);
    if (existing?.entry && want.every((d) => existing.copies.get(d)?.params !== undefined)) return { alreadyLoaded: true, loadTimeMs: 0 };
    const t0 = this.now();
    const span = new Span('preload');
    try {
      const slot = existing ?? this.startLoad(circuitId, span, want[0] ?? 0);
      slot.evictWhenIdle = false;
      // the reference keeps the entry (and the copies loaded so far) while the others load
      slot.refCount++;
      try {
        const entry = await slot.loading;
        await Promise.all(want.map((d) => this.paramsOn(entry, d, span).then(() => void (slot.copies.get(d)!.evictWhenIdle = false))));
      } finally {
        this.release(circuitId);
      }
    } finally {
      span.end();
    }
    return { alreadyLoaded: false, loadTimeMs: this.now() - t0 };
  }

  /**
   * EvictSRS: frees the circuit's copies now when no job uses it, else when its last job releases
   * it. With `device`, only that device's copy (the others stay; the entry goes with its last copy).
   * `freedBytes` counts the copies freed now.
   */
  evict(circuitId: string, device?: number): { wasLoaded: boolean; freedBytes: number } {
    const slot = this.slots.get(circuitId);
    if (slot?.entry === undefined) return { wasLoaded: false, freedBytes: 0 };
    if (device === undefined) {
      if (slot.refCount > 0) {
        slot.evictWhenIdle = true;
        return { wasLoaded: true, freedBytes: 0 };
      }
      return { wasLoaded: true, freedBytes: this.free(slot) };
    }
    const c = slot.copies.get(this.checkDevice(device));
    if (c?.params === undefined) return { wasLoaded: false, freedBytes: 0 };
    if (slot.refCount > 0) {
      c.evictWhenIdle = true;
      return { wasLoaded: true, freedBytes: 0 };
    }
    return { wasLoaded: true, freedBytes: this.freeCopy(slot, c) };
  }

  /** Pressure handler: evicts idle copies, least recently used first (never those of a circuit its provider
   *  keeps resident: CircuitProvider.keepResident); returns the host bytes freed. */
  evictIdle(bytesNeeded: number): number {
    const t = this.now();
    const idle = [...this.slots.values()]
      .filter((s) => s.entry !== undefined && s.refCount === 0 && this.provider(s.circuitId)?.keepResident?.(s.circuitId) !== true)
      .flatMap((s) => [...s.copies.values()].filter((c) => c.params !== undefined && t - c.lastUsedMs >= this.evictionMinIdleMs).map((c) => ({ s, c })))
      .sort((a, b) => a.c.lastUsedMs - b.c.lastUsedMs);
    let freed = 0;
    for (const { s, c } of idle) {
      if (freed >= bytesNeeded) break;
      freed += c.hostBytes;
      this.freeCopy(s, c);
    }
    return freed;
  }

  /** Per circuit: `sizeBytes` and `loadMs` of every copy together, `devices` the ordinals holding one. */
  status(): { circuitId: string; tier: number; sizeBytes: number; refCount: number; loadMs: number; idleMs: number; devices: number[] }[] {
    const t = this.now();
    return [...this.slots.values()]
      .filter((s) => s.entry !== undefined)
      .map((s) => {
        const copies = [...s.copies.values()].filter((c) => c.params !== undefined).sort((a, b) => a.device - b.device);
        return {
          circuitId: s.circuitId,
          tier: SrsTier.HOT,
          sizeBytes: s.entry!.sizeBytes * copies.length,
          refCount: s.refCount,
          loadMs: copies.reduce((n, c) => n + c.loadMs, 0),
          idleMs: s.refCount > 0 ? 0 : t - Math.max(s.entry!.lastUsedMs, ...copies.map((c) => c.lastUsedMs)),
          devices: copies.map((c) => this.ordinal(c.device)),
        };
      });
  }

  /** The loaded entry of a circuit (no reference taken), undefined when not loaded. */
  loaded(circuitId: string): SrsEntry | undefined {
    return this.slots.get(circuitId)?.entry;
  }

  /** The span tree of a loaded circuit's load (undefined when not loaded). */
  loadSpan(circuitId: string): Span | undefined {
    return this.slots.get(circuitId)?.entry?.loadSpan;
  }

  /** Bytes of every loaded copy. */
  get loadedBytes(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.entry) for (const c of s.copies.values()) if (c.params !== undefined) n += s.entry.sizeBytes;
    return n;
  }

  /** Frees every idle entry (shutdown). */
  clear(): void {
    for (const s of [...this.slots.values()]) if (s.entry && s.refCount === 0) this.free(s);
  }

  private ordinal(device: number): number {
    return this.devices[device]?.device ?? device;
  }

  private checkDevice(device: number): number {
    if (!Number.isInteger(device) || device < 0 || device >= this.devices.length) {
      throw new RangeError(`SRS cache: no device ${device} (${this.devices.length} device${this.devices.length === 1 ? '' : 's'})`);
    }
    return device;
  }

  private startLoad(circuitId: string, span: Span, device: number): Slot {
    const slot: Slot = { circuitId, loading: undefined as never, entry: undefined, refCount: 0, evictWhenIdle: false, copies: new Map() };
    const copy = this.newCopy(device);
    slot.copies.set(device, copy);
    let resolveParams!: (p: Parameters) => void;
    let rejectParams!: (e: unknown) => void;
    copy.loading = new Promise<Parameters>((res, rej) => {
      resolveParams = res;
      rejectParams = rej;
    });
    copy.loading.catch(() => {}); // observed through slot.loading
    slot.loading = this.load(slot, copy, span).then(
      (entry) => {
        resolveParams(copy.params!);
        return entry;
      },
      (e: unknown) => {
        if (this.slots.get(circuitId) === slot) this.slots.delete(circuitId);
        if (copy.reservation) this.budget.release(copy.reservation);
        rejectParams(e);
        throw e;
      },
    );
    slot.loading.catch(() => {}); // observed by acquire/preload
    this.slots.set(circuitId, slot);
    return slot;
  }

  private newCopy(device: number): Copy {
    return { device, loading: undefined as never, params: undefined, reservation: undefined, hostBytes: 0, loadMs: 0, lastUsedMs: this.now(), evictWhenIdle: false };
  }

  private async load(slot: Slot, copy: Copy, span: Span): Promise<SrsEntry> {
    const provider = this.provider(slot.circuitId);
    if (provider === undefined) throw new UnknownCircuitError(slot.circuitId);
    const backend = this.devices[copy.device];
    const t0 = this.now();
    if (provider.available) await span.time('check', () => provider.available!(slot.circuitId));
    const circuit = await span.time('shape', () => provider.compiled(slot.circuitId));
    // the A/B query indices (one pass over the densities, made with the shape: seconds at 32 GiB)
    const bytes = await span.time('query_indices', () => estimateSrsBytes(circuit));
    copy.hostBytes = hostBytesFor(backend, circuit, bytes, slot.circuitId);
    copy.reservation = await span.time('mem_wait', () => this.budget.reserve(copy.hostBytes, this.label(slot.circuitId, copy.device)));
    const params = await span.time('load', (s) => provider.params(slot.circuitId, s, backend));
    await this.prepareCircuit(backend, circuit, span);
    const pvk = await span.time('prepare_vk', () => prepareVerifyingKey(params.vk));
    copy.params = params;
    copy.loadMs = this.now() - t0;
    copy.lastUsedMs = this.now();
    const copies = slot.copies;
    const entry: SrsEntry = {
      circuitId: slot.circuitId,
      circuit,
      get params(): Parameters {
        for (const c of copies.values()) if (c.params !== undefined) return c.params;
        throw new Error(`SRS ${slot.circuitId}: no copy is loaded`);
      },
      vk: params.vk,
      pvk,
      sizeBytes: bytes,
      hostBytes: copy.hostBytes,
      refCount: slot.refCount,
      lastUsedMs: this.now(),
      loadMs: copy.loadMs,
      loadSpan: span,
    };
    slot.entry = entry;
    return entry;
  }

  /** Loads `device`'s copy of a loaded entry: the same provider, the device's backend. */
  private startCopy(slot: Slot, device: number, span: Span): Copy {
    const copy = this.newCopy(device);
    slot.copies.set(device, copy);
    copy.loading = (async () => {
      const entry = await slot.loading;
      const provider = this.provider(slot.circuitId);
      if (provider === undefined) throw new UnknownCircuitError(slot.circuitId);
      const backend = this.devices[device];
      const t0 = this.now();
      copy.hostBytes = hostBytesFor(backend, entry.circuit, entry.sizeBytes, slot.circuitId);
      copy.reservation = await span.time('mem_wait', () => this.budget.reserve(copy.hostBytes, this.label(slot.circuitId, device)));
      const params = await span.time('load', (s) => provider.params(slot.circuitId, s, backend));
      await this.prepareCircuit(backend, entry.circuit, span);
      if (this.slots.get(slot.circuitId) !== slot || slot.copies.get(device) !== copy) {
        // the entry was freed while this copy loaded (it held no reference): drop it
        this.releaseParams(params, device);
        this.budget.release(copy.reservation);
        throw new Error(`SRS ${slot.circuitId} was evicted while its copy on GPU ${this.ordinal(device)} loaded`);
      }
      copy.params = params;
      copy.loadMs = this.now() - t0;
      copy.lastUsedMs = this.now();
      return params;
    })();
    copy.loading.catch(() => {
      if (slot.copies.get(device) === copy && copy.params === undefined) {
        slot.copies.delete(device);
        if (copy.reservation) this.budget.release(copy.reservation);
      }
    });
    return copy;
  }

  /** The circuit on the device with its parameters (Backend.prepareCircuit: the CUDA backend's matrices),
   *  so that its first proof does not upload it. A failure here is left to that proof (which tries again,
   *  and may re-plan after running out of device memory). */
  private async prepareCircuit(backend: Backend, circuit: CompiledCircuit, span: Span): Promise<void> {
    if (typeof backend.prepareCircuit !== 'function') return;
    const { shape, logN, queries: q } = circuit;
    await span.time('circuit_upload', () => backend.prepareCircuit!({ shape, logN, aIdx: q.a, bIdx: q.b })).catch(() => undefined);
  }

  private label(circuitId: string, device: number): string {
    return this.devices.length === 1 ? `srs ${circuitId}` : `srs ${circuitId} gpu ${this.ordinal(device)}`;
  }

  private releaseParams(p: Parameters, device: number): void {
    for (const sec of [p.h, p.l, p.a, p.bG1, p.bG2]) {
      try {
        releaseSection(sec, this.devices[device]); // a PointSection frees its own chunks or device copy
      } catch {
        // not a backend buffer (e.g. a plain array from a test provider): the GC frees it
      }
    }
  }

  /** Frees one device's copy; the entry goes with its last copy. Returns the copy's bytes. */
  private freeCopy(slot: Slot, c: Copy): number {
    if (c.params === undefined || slot.entry === undefined) return 0;
    slot.copies.delete(c.device);
    this.releaseParams(c.params, c.device);
    c.params = undefined;
    if (c.reservation) this.budget.release(c.reservation);
    const bytes = slot.entry.sizeBytes;
    if (![...slot.copies.values()].some((x) => x.params !== undefined)) {
      this.slots.delete(slot.circuitId);
      slot.entry = undefined;
      // a copy still loading sees the slot gone and drops what it loaded
      slot.copies.clear();
    }
    return bytes;
  }

  /** Frees every copy (and the entry). Returns their bytes. */
  private free(slot: Slot): number {
    if (slot.entry === undefined) return 0;
    const size = slot.entry.sizeBytes;
    let n = 0;
    for (const c of [...slot.copies.values()]) {
      if (c.params === undefined) continue;
      slot.copies.delete(c.device);
      this.releaseParams(c.params, c.device);
      c.params = undefined;
      if (c.reservation) this.budget.release(c.reservation);
      n += size;
    }
    this.slots.delete(slot.circuitId);
    slot.entry = undefined;
    slot.copies.clear();
    return n;
  }
}

export { fmtBytes };
