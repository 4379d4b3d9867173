/**
 * The job queue: highest priority first (CRITICAL > HIGH > NORMAL > LOW), FIFO within a priority
 * (by submission sequence). Small (hundreds of jobs at most), so a sorted array is enough.
 * Also the one rank order of the engine's other queues (partition slots, synthesis and verification
 * tasks): a rank is a tuple compared element by element, lower first, e.g. [-priority, job seq, partition].
 */
export interface Queued {
  readonly priority: number;
  readonly seq: number;
}

export class PriorityQueue<T extends Queued> {
  private items: T[] = [];

  get length(): number {
    return this.items.length;
  }

  push(item: T): void {
    // insert after every item of higher or equal priority (FIFO within a priority)
    let i = this.items.length;
    while (i > 0 && before(item, this.items[i - 1])) i--;
    this.items.splice(i, 0, item);
  }

  peek(): T | undefined {
    return this.items[0];
  }

  shift(): T | undefined {
    return this.items.shift();
  }

  remove(item: T): boolean {
    const i = this.items.indexOf(item);
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }

  /** 0-based position of an item (its queue position), -1 when absent. */
  position(item: T): number {
    return this.items.indexOf(item);
  }

  toArray(): readonly T[] {
    return this.items;
  }
}

function before(a: Queued, b: Queued): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);
}

/** A rank: compared element by element, lower first; a prefix ranks before its extensions. */
export type Rank = readonly number[];

export function compareRank(a: Rank, b: Rank): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** Inserts `item` into `list` (sorted by rank) after every item of equal or lower rank: FIFO among equals. */
export function insertByRank<T extends { rank: Rank }>(list: T[], item: T): void {
  const i = list.findIndex((w) => compareRank(item.rank, w.rank) < 0);
  list.splice(i < 0 ? list.length : i, 0, item);
}
