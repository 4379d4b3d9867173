/**
 * The SRS cache: Groth16 parameters per circuit id, loaded on demand (or by PreloadSRS), kept
 * while memory allows, reference-counted while proofs use them, evicted least-recently-used when
 * the memory budget is under pressure (only entries idle for eviction_min_idle, as cuzk) or on
 * EvictSRS. Entries hold their bytes as a MemoryBudget reservation.
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
import { domainSize, queryIndices } from '../groth16/queries.js';
import { prepareVerifyingKey, type PreparedVerifyingKey } from '../groth16/verifier.js';
import type { CircuitShape } from '../r1cs/cs.js';
import { Span } from '../util/timing.js';
import { fmtBytes, type MemoryBudget, type Reservation } from './memory.js';
import type { CircuitProvider } from './types.js';

export const SrsTier = { HOT: 0, WARM: 1, COLD: 2 } as const;

export interface SrsEntry {
  readonly circuitId: string;
  shape: CircuitShape;
  params: Parameters;
  pvk: PreparedVerifyingKey;
  /** The five query sections' bytes (native layout), wherever they live. */
  sizeBytes: number;
  /** Host bytes reserved in the memory budget for them (Backend.srsHostBytes). */
  hostBytes: number;
  refCount: number;
  lastUsedMs: number;
  loadMs: number;
  /** The load's span tree (check, shape, mem_wait, load → the provider's steps, prepare_vk). */
  loadSpan: Span;
}

interface Slot {
  circuitId: string;
  loading: Promise<SrsEntry>;
  entry: SrsEntry | undefined;
  refCount: number;
  reservation: Reservation | undefined;
  evictWhenIdle: boolean;
}

/** Bytes of the parameters of `shape` in backend memory (the five query buffers). */
export function estimateSrsBytes(shape: CircuitShape): number {
  const n = domainSize(shape);
  const q = queryIndices(shape);
  return ((n - 1) + shape.numAux + q.a.length + q.b.length) * G1_BYTES + q.b.length * G2_BYTES;
}

export class UnknownCircuitError extends Error {
  constructor(circuitId: string) {
    super(`unknown circuit id '${circuitId}'`);
    this.name = 'UnknownCircuitError';
  }
}

export class SrsCache {
  private readonly slots = new Map<string, Slot>();

  constructor(
    private readonly providers: () => readonly CircuitProvider[],
    private readonly budget: MemoryBudget,
    private readonly backend: Backend,
    private readonly evictionMinIdleMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    budget.onPressure((needed) => this.evictIdle(needed));
  }

  provider(circuitId: string): CircuitProvider | undefined {
    return this.providers().find((p) => p.knows(circuitId));
  }

  /** Takes a reference to the loaded entry, loading it first when needed (timed under `span`). */
  async acquire(circuitId: string, span: Span): Promise<SrsEntry> {
    let slot = this.slots.get(circuitId);
    if (slot === undefined) slot = this.startLoad(circuitId, span);
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
    if (slot.refCount === 0 && slot.evictWhenIdle) this.free(slot);
  }

  /** PreloadSRS: loads without taking a reference. */
  async preload(circuitId: string): Promise<{ alreadyLoaded: boolean; loadTimeMs: number }> {
    const existing = this.slots.get(circuitId);
    if (existing?.entry) return { alreadyLoaded: true, loadTimeMs: 0 };
    const t0 = this.now();
    const span = new Span('preload');
    const slot = existing ?? this.startLoad(circuitId, span);
    slot.evictWhenIdle = false;
    await slot.loading.finally(() => span.end());
    return { alreadyLoaded: false, loadTimeMs: this.now() - t0 };
  }

  /** EvictSRS: frees an idle entry now; one in use is freed when its last proof releases it. */
  evict(circuitId: string): { wasLoaded: boolean; freedBytes: number } {
    const slot = this.slots.get(circuitId);
    if (slot?.entry === undefined) return { wasLoaded: false, freedBytes: 0 };
    if (slot.refCount > 0) {
      slot.evictWhenIdle = true;
      return { wasLoaded: true, freedBytes: 0 };
    }
    return { wasLoaded: true, freedBytes: this.free(slot) };
  }

  /** Pressure handler: evicts idle entries, least recently used first; returns the host bytes freed. */
  evictIdle(bytesNeeded: number): number {
    const t = this.now();
    const idle = [...this.slots.values()]
      .filter((s) => s.entry !== undefined && s.refCount === 0 && t - s.entry.lastUsedMs >= this.evictionMinIdleMs)
      .sort((a, b) => a.entry!.lastUsedMs - b.entry!.lastUsedMs);
    let freed = 0;
    for (const s of idle) {
      if (freed >= bytesNeeded) break;
      freed += s.entry!.hostBytes;
      this.free(s);
    }
    return freed;
  }

  status(): { circuitId: string; tier: number; sizeBytes: number; refCount: number; loadMs: number; idleMs: number }[] {
    const t = this.now();
    return [...this.slots.values()]
      .filter((s) => s.entry !== undefined)
      .map((s) => ({
        circuitId: s.circuitId,
        tier: SrsTier.HOT,
        sizeBytes: s.entry!.sizeBytes,
        refCount: s.refCount,
        loadMs: s.entry!.loadMs,
        idleMs: s.refCount > 0 ? 0 : t - s.entry!.lastUsedMs,
      }));
  }

  /** The span tree of a loaded circuit's load (undefined when not loaded). */
  loadSpan(circuitId: string): Span | undefined {
    return this.slots.get(circuitId)?.entry?.loadSpan;
  }

  get loadedBytes(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.entry) n += s.entry.sizeBytes;
    return n;
  }

  /** Frees every idle entry (shutdown). */
  clear(): void {
    for (const s of [...this.slots.values()]) if (s.entry && s.refCount === 0) this.free(s);
  }

  private startLoad(circuitId: string, span: Span): Slot {
    const slot: Slot = { circuitId, loading: undefined as never, entry: undefined, refCount: 0, reservation: undefined, evictWhenIdle: false };
    slot.loading = this.load(slot, span).catch((e: unknown) => {
      if (this.slots.get(circuitId) === slot) this.slots.delete(circuitId);
      if (slot.reservation) this.budget.release(slot.reservation);
      throw e;
    });
    slot.loading.catch(() => {}); // observed by acquire/preload
    this.slots.set(circuitId, slot);
    return slot;
  }

  private async load(slot: Slot, span: Span): Promise<SrsEntry> {
    const provider = this.provider(slot.circuitId);
    if (provider === undefined) throw new UnknownCircuitError(slot.circuitId);
    const t0 = this.now();
    if (provider.available) await span.time('check', () => provider.available!(slot.circuitId));
    const shape = await span.time('shape', () => provider.shape(slot.circuitId));
    // the A/B query indices (one pass over the densities: seconds at 32 GiB, cached per shape)
    const bytes = await span.time('query_indices', () => estimateSrsBytes(shape));
    const hostBytes = this.backend.srsHostBytes?.(bytes) ?? bytes;
    slot.reservation = await span.time('mem_wait', () => this.budget.reserve(hostBytes, `srs ${slot.circuitId}`));
    const params = await span.time('load', (s) => provider.params(slot.circuitId, s));
    const pvk = span.time('prepare_vk', () => prepareVerifyingKey(params.vk));
    const entry: SrsEntry = {
      circuitId: slot.circuitId,
      shape,
      params,
      pvk: await pvk,
      sizeBytes: bytes,
      hostBytes,
      refCount: slot.refCount,
      lastUsedMs: this.now(),
      loadMs: this.now() - t0,
      loadSpan: span,
    };
    slot.entry = entry;
    return entry;
  }

  private free(slot: Slot): number {
    const e = slot.entry;
    if (e === undefined) return 0;
    this.slots.delete(slot.circuitId);
    slot.entry = undefined;
    for (const sec of [e.params.h, e.params.l, e.params.a, e.params.bG1, e.params.bG2]) {
      try {
        releaseSection(sec, this.backend); // a PointSection frees its own chunks or device copy
      } catch {
        // not a backend buffer (e.g. a plain array from a test provider): the GC frees it
      }
    }
    if (slot.reservation) this.budget.release(slot.reservation);
    return e.sizeBytes;
  }
}

export { fmtBytes };
