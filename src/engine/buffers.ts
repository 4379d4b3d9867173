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
 * when the budget is under pressure (before SRS entries are evicted), when more than `maxIdle` of one
 * size are kept, and on close. `maxIdle` counts per size: a daemon serving WinningPoSt (a few MB per
 * partition) and PoRep (4.2 GB) keeps both kinds' buffers; counted in all, the WinningPoSt buffers
 * PreloadSRS warmed first filled the pool, every 32 GiB PoRep partition then pinned a fresh 4.2 GB
 * buffer and freed it (bench:mixed, three PoReps submitted together: 32.7 s/proof where 16 is the
 * GPU's rate). The budget bounds what all sizes hold together.
 *
 * Frees happen off the caller's path (setImmediate), never while a request waits
 * on them; allocations too where the backend can (Backend.allocAsync: the CUDA backend's cudaHostAlloc
 * runs on a thread of the pool, so a partition pinning its 4.2 GB witness no longer holds the event loop,
 * and with it every other partition and request, for 1.6 s).
 *
 * PreloadSRS warms the pool (`warm`): the buffers a circuit's first proof would allocate are made then,
 * while no request waits.
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
    /** Idle buffers kept at most per size (the partitions the pipeline keeps in flight). */
    private readonly maxIdle: number,
  ) {
    budget.onPressure((needed) => this.trim(needed));
  }

  /** A buffer of exactly `bytes` (contents undefined: the caller overwrites it), from the pool when
   *  one of that size is idle, else allocated (off the event loop where the backend can). The caller's
   *  reservation covers it. */
  async take(bytes: number): Promise<Uint8Array> {
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
      return await this.allocate(bytes);
    } catch (e) {
      this.outstanding--;
      throw e;
    }
  }

  /**
   * Makes idle buffers of `bytes` until `count` of that size are idle, as far as the pool has room (`maxIdle`
   * of that size) and the budget grants each its idle reservation; returns how many it made. For PreloadSRS:
   * the first proof of a circuit then finds its witness buffers made.
   */
  async warm(bytes: number, count = this.maxIdle): Promise<number> {
    let made = 0;
    while (!this.closed && this.idleOf(bytes) < Math.min(count, this.maxIdle)) {
      // only memory that is free now: warming never trims this pool nor evicts an SRS (tryReserve's relief)
      if (bytes > this.budget.available) break;
      const reservation = this.budget.tryReserve(bytes, 'witness pool (idle)');
      if (reservation === undefined) break;
      let buf: Uint8Array;
      try {
        buf = await this.allocate(bytes);
      } catch {
        this.budget.release(reservation);
        break;
      }
      if (this.closed) {
        this.budget.release(reservation);
        this.free(buf);
        break;
      }
      this.allocated++;
      this.idle.push({ buf, reservation });
      made++;
    }
    return made;
  }

  /** Gives a buffer from take() back: kept idle when the pool has room for its size and the budget
   *  allows, else freed (off this call's path). */
  give(buf: Uint8Array): void {
    this.outstanding--;
    if (!this.closed && this.idleOf(buf.length) < this.maxIdle) {
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

  /** Idle buffers of `bytes`. */
  private idleOf(bytes: number): number {
    let n = 0;
    for (const e of this.idle) if (e.buf.length === bytes) n++;
    return n;
  }

  get idleBytes(): number {
    return this.idle.reduce((t, e) => t + e.buf.length, 0);
  }

  /** Frees every idle buffer; buffers given back later are freed at once. */
  close(): void {
    this.closed = true;
    this.trim();
  }

  private allocate(bytes: number): Promise<Uint8Array> | Uint8Array {
    return this.backend.allocAsync !== undefined ? this.backend.allocAsync(bytes) : this.backend.alloc(bytes);
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
