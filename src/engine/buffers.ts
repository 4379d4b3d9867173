/**
 * Witness buffers reused across partitions. A 32 GiB partition's witness is 4.17 GB: on the GPU
 * backend it is pinned host memory (uploads at ~55 GB/s instead of ~7), and pinning 4 GB costs
 * seconds (cudaHostAlloc, page locking, and a free that blocks); on the CPU a fresh mapping costs a
 * million page faults on first touch. So a buffer given back is kept for the next partition of the
 * same size instead of being freed.
 *
 * Accounting: a buffer in use is covered by its partition's reservation (the engine reserves the
 * witness bytes per partition in flight); an idle buffer in the pool holds a reservation of its own
 * ("witness pool (idle)"), so the memory budget counts what is really held. Idle buffers are freed
 * when the budget is under pressure (before SRS entries are evicted), when more than `maxIdle` are
 * kept, and on close. Frees happen off the caller's path (setImmediate), never while a request waits
 * on them.
 */
import type { Backend } from '../backend/backend.js';
import type { MemoryBudget, Reservation } from './memory.js';

interface Idle {
  buf: Uint8Array;
  reservation: Reservation;
}

export class BufferPool {
  private readonly idle: Idle[] = [];
  private closed = false;
  /** Buffers handed out and not given back (for status and tests). */
  outstanding = 0;
  /** Allocations (misses) and reuses (hits), for status and tests. */
  allocated = 0;
  reused = 0;

  constructor(
    private readonly backend: Backend,
    private readonly budget: MemoryBudget,
    /** Idle buffers kept at most (the partitions the pipeline keeps in flight). */
    private readonly maxIdle: number,
  ) {
    budget.onPressure((needed) => this.trim(needed));
  }

  /** A buffer of exactly `bytes` (contents undefined: the caller overwrites it), from the pool when
   *  one of that size is idle. The caller's reservation covers it. */
  take(bytes: number): Uint8Array {
    const i = this.idle.findIndex((e) => e.buf.length === bytes);
    this.outstanding++;
    if (i >= 0) {
      const [e] = this.idle.splice(i, 1);
      this.budget.release(e.reservation);
      this.reused++;
      return e.buf;
    }
    this.allocated++;
    try {
      return this.backend.alloc(bytes);
    } catch (e) {
      this.outstanding--;
      throw e;
    }
  }

  /** Gives a buffer from take() back: kept idle when the pool has room and the budget allows,
   *  else freed (off this call's path). */
  give(buf: Uint8Array): void {
    this.outstanding--;
    if (!this.closed && this.idle.length < this.maxIdle) {
      const reservation = this.budget.tryReserve(buf.length, 'witness pool (idle)');
      if (reservation !== undefined) {
        this.idle.push({ buf, reservation });
        return;
      }
    }
    this.free(buf);
  }

  /** Frees idle buffers (oldest first) until `bytesNeeded` are freed; returns the bytes freed. */
  trim(bytesNeeded = Infinity): number {
    let freed = 0;
    while (freed < bytesNeeded && this.idle.length > 0) {
      const e = this.idle.shift()!;
      this.budget.release(e.reservation);
      this.free(e.buf);
      freed += e.buf.length;
    }
    return freed;
  }

  get idleBytes(): number {
    return this.idle.reduce((t, e) => t + e.buf.length, 0);
  }

  /** Frees every idle buffer; buffers given back later are freed at once. */
  close(): void {
    this.closed = true;
    this.trim();
  }

  private free(buf: Uint8Array): void {
    setImmediate(() => {
      try {
        this.backend.release(buf);
      } catch {
        /* not a backend buffer: the GC frees it */
      }
    });
  }
}
