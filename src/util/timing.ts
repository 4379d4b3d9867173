/**
 * Timing spans: every stage of a proof is a span with a parent (job → partition → synth / prove →
 * kernel phases). A parent's "gap" is its wall time minus the sum of its children's: time that no
 * child accounts for. Gaps over 2 % are flagged, because that is how unexplained work (such as a
 * synchronous free of large buffers) is found.
 */
import { performance } from 'node:perf_hooks';

export const GAP_WARN_FRACTION = 0.02;

export class Span {
  readonly children: Span[] = [];
  readonly startMs: number;
  endMs: number | undefined;
  /** What the time went to, in a few words, where the one measuring it knows (e.g. an MSM's window, passes and
   *  batch-affine levels); shown beside the span in the tree and in its JSON. */
  note: string | undefined;

  constructor(
    /** Mutable for one case: a prover lane renames a failed proof attempt (lanes.ts), which then
     *  counts as no proving time. */
    public name: string,
    readonly parent?: Span,
    startMs = performance.now(),
  ) {
    this.startMs = startMs;
    parent?.children.push(this);
  }

  /** Starts a child span now. */
  child(name: string): Span {
    return new Span(name, this);
  }

  /** Records an already measured child (e.g. a phase timed inside the native addon), laid end to
   *  end after the previous child, with its note if one is given. */
  record(name: string, durationMs: number, note?: string): Span {
    const prev = this.children[this.children.length - 1];
    const start = prev?.endMs ?? this.startMs;
    const s = new Span(name, this, start);
    s.endMs = start + durationMs;
    if (note !== undefined && note !== '') s.note = note;
    return s;
  }

  /** Shows a span timed elsewhere (e.g. an engine job's) as a child of this one. */
  adopt(span: Span): Span {
    this.children.push(span);
    return span;
  }

  end(): this {
    if (this.endMs === undefined) this.endMs = performance.now();
    return this;
  }

  get durationMs(): number {
    return (this.endMs ?? performance.now()) - this.startMs;
  }

  /** Runs fn inside a child span that ends when fn settles. */
  async time<T>(name: string, fn: (span: Span) => Promise<T> | T): Promise<T> {
    const s = this.child(name);
    try {
      return await fn(s);
    } finally {
      s.end();
    }
  }

  /** Wall time that no child covers (0 for a leaf): the duration minus the union of the children's
   *  intervals, so children that run in parallel (a job's partitions) are not counted twice. */
  get gapMs(): number {
    if (this.children.length === 0) return 0;
    const end = this.endMs ?? performance.now();
    const iv = this.children
      .map((c) => [Math.max(this.startMs, c.startMs), Math.min(end, c.endMs ?? end)] as [number, number])
      .filter(([a, b]) => b > a)
      .sort((x, y) => x[0] - y[0]);
    let covered = 0;
    let curA = -Infinity;
    let curB = -Infinity;
    for (const [a, b] of iv) {
      if (a > curB) {
        if (curB > curA) covered += curB - curA;
        curA = a;
        curB = b;
      } else curB = Math.max(curB, b);
    }
    if (curB > curA) covered += curB - curA;
    return Math.max(0, end - this.startMs - covered);
  }

  toJSON(): SpanJson {
    return {
      name: this.name,
      ms: round(this.durationMs),
      gapMs: this.children.length ? round(this.gapMs) : undefined,
      note: this.note,
      children: this.children.length ? this.children.map((c) => c.toJSON()) : undefined,
    };
  }
}

export interface SpanJson {
  name: string;
  ms: number;
  gapMs?: number;
  note?: string;
  children?: SpanJson[];
}

const round = (x: number): number => Math.round(x * 100) / 100;

/** A span's time in the tree: ms below 10 s, s above (`  1327.4 ms`, `    57.3 s `). */
function spanTime(ms: number): string {
  return ms < 10_000 ? `${ms.toFixed(1).padStart(10)} ms` : `${(ms / 1000).toFixed(1).padStart(10)} s `;
}

/**
 * An indented, human readable breakdown with percentages of the parent. With `gaps` (a debug detail: the CLI
 * shows them with KILN_SPAN_GAPS=1) each parent's uncovered time is listed too, flagged over 2 %.
 */
export function formatSpanTree(root: Span, opts: { gaps?: boolean } = {}): string {
  const lines: string[] = [];
  const walk = (s: Span, depth: number, parentMs: number): void => {
    const pct = parentMs > 0 ? ` ${((100 * s.durationMs) / parentMs).toFixed(1).padStart(5)}%` : '';
    lines.push(`${'  '.repeat(depth)}${s.name.padEnd(Math.max(1, 28 - 2 * depth))}${spanTime(s.durationMs)}${pct}${s.note ? `  ${s.note}` : ''}`);
    for (const c of s.children) walk(c, depth + 1, s.durationMs);
    if (opts.gaps && s.children.length) {
      const gap = s.gapMs;
      const flag = gap > GAP_WARN_FRACTION * s.durationMs ? '  <-- over 2 %' : '';
      lines.push(`${'  '.repeat(depth + 1)}${'(gap)'.padEnd(Math.max(1, 26 - 2 * depth))}${spanTime(gap)}${flag}`);
    }
  };
  walk(root, 0, 0);
  return lines.join('\n');
}

/** A duration for a person: "850 ms" under a second, "4.2 s" under 10 s, "42 s" under a minute, then
 *  "3 min 05 s" and "1 h 02 min". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
