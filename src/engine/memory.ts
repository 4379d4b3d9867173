/**
 * The memory budget (cuzk's unified `total_budget`): SRS entries and per-partition working sets
 * reserve bytes before they are allocated and release them when freed. A reservation that does not
 * fit waits; the first waiter that fits proceeds (so a small reservation of a job that already
 * holds its SRS is never stuck behind a large SRS load). Before waiting, registered pressure
 * handlers (the SRS cache's LRU eviction) are asked to free room. A reservation larger than the
 * whole budget is refused at once.
 */
import { fmtBytes } from '../util/bytes.js';
export class MemoryBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryBudgetError';
  }
}

export interface Reservation {
  readonly bytes: number;
  readonly label: string;
  released: boolean;
}

interface Waiter {
  bytes: number;
  label: string;
  resolve: (r: Reservation) => void;
  reject: (e: Error) => void;
}

export class MemoryBudget {
  private used = 0;
  private readonly live = new Set<Reservation>();
  private readonly waiters: Waiter[] = [];
  private readonly pressure: ((bytesNeeded: number) => number)[] = [];

  constructor(readonly limit: number) {}

  get reserved(): number {
    return this.used;
  }

  get available(): number {
    return this.limit - this.used;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** Registers a handler that frees up to `bytesNeeded` (synchronously) and returns what it freed. */
  onPressure(handler: (bytesNeeded: number) => number): void {
    this.pressure.push(handler);
  }

  tryReserve(bytes: number, label: string): Reservation | undefined {
    if (bytes > this.available) this.relieve(bytes - this.available);
    if (bytes > this.available) return undefined;
    return this.grant(bytes, label);
  }

  /** Waits until `bytes` fit. Rejects at once when they can never fit. */
  reserve(bytes: number, label: string): Promise<Reservation> {
    if (!Number.isFinite(bytes) || bytes < 0) return Promise.reject(new RangeError(`bad reservation size ${bytes}`));
    if (bytes > this.limit) {
      return Promise.reject(
        new MemoryBudgetError(`${label} needs ${fmtBytes(bytes)}, more than the whole memory budget (${fmtBytes(this.limit)})`),
      );
    }
    const r = this.tryReserve(bytes, label);
    if (r) return Promise.resolve(r);
    return new Promise((resolve, reject) => this.waiters.push({ bytes, label, resolve, reject }));
  }

  release(r: Reservation): void {
    if (r.released) return;
    r.released = true;
    this.live.delete(r);
    this.used -= r.bytes;
    this.wake();
  }

  /** Current reservations, for status. */
  reservations(): { label: string; bytes: number }[] {
    return [...this.live].map((r) => ({ label: r.label, bytes: r.bytes }));
  }

  /** Rejects every waiter (shutdown). */
  close(): void {
    for (const w of this.waiters.splice(0)) w.reject(new MemoryBudgetError('engine shutting down'));
  }

  private grant(bytes: number, label: string): Reservation {
    const r: Reservation = { bytes, label, released: false };
    this.live.add(r);
    this.used += bytes;
    return r;
  }

  private relieve(bytesNeeded: number): void {
    for (const h of this.pressure) {
      if (bytesNeeded <= 0) return;
      bytesNeeded -= h(bytesNeeded);
    }
  }

  private wake(): void {
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i];
      if (w.bytes > this.available) this.relieve(w.bytes - this.available);
      if (w.bytes <= this.available) {
        this.waiters.splice(i, 1);
        w.resolve(this.grant(w.bytes, w.label));
      } else i++;
    }
  }
}

export { fmtBytes };
