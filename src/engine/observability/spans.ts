/**
 * Helpers over util/timing.ts spans: time not covered by any child (Span.gapMs, overlap-aware),
 * gap warnings over 2 %, and the sums the AwaitProof timings are made of.
 */
import { GAP_WARN_FRACTION, type Span } from '../../util/timing.js';

/** Wall time of `s` during which none of its children ran. 0 for a leaf. */
export function uncoveredMs(s: Span): number {
  return s.gapMs;
}

export interface GapWarning {
  stage: string;
  path: string;
  gapMs: number;
  fraction: number;
}

/** Spans (with children) whose uncovered time is over 2 % of their duration and over `minMs`. */
export function gapWarnings(root: Span, minMs = 1): GapWarning[] {
  const out: GapWarning[] = [];
  const walk = (s: Span, path: string): void => {
    if (s.children.length > 0) {
      const gap = uncoveredMs(s);
      const d = s.durationMs;
      if (d > 0 && gap > minMs && gap > GAP_WARN_FRACTION * d) out.push({ stage: s.name.replace(/\[\d+\]$/, ''), path, gapMs: round(gap), fraction: round(gap / d) });
      for (const c of s.children) walk(c, `${path}/${c.name}`);
    }
  };
  walk(root, root.name);
  return out;
}

/** Sum of the durations of every descendant span named `name` (not descending into matches). */
export function sumSpans(root: Span, name: string): number {
  let t = 0;
  const walk = (s: Span): void => {
    for (const c of s.children) {
      if (c.name === name) t += c.durationMs;
      else walk(c);
    }
  };
  walk(root);
  return t;
}

/** Every descendant span named `name`. */
export function findSpans(root: Span, name: string): Span[] {
  const out: Span[] = [];
  const walk = (s: Span): void => {
    for (const c of s.children) {
      if (c.name === name) out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
