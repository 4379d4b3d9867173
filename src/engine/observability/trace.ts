/**
 * Chrome trace-event JSON (the format chrome://tracing and Perfetto open) from span trees.
 * Every span becomes a complete event ("ph": "X") with ts/dur in microseconds on the epoch clock
 * (performance.timeOrigin + span start), so traces of several jobs line up. Each job is a process
 * (pid) and inside it each lane is a thread (tid): 'job' (queue, srs, assembly), 'synthesis',
 * 'prover N' (prove + its kernel phases + verify) and one 'partition i' lane for the partition
 * spans, which overlap each other when the pipeline runs ahead. Lane names are sent as metadata
 * events ("ph": "M", thread_name / process_name).
 */
import { performance } from 'node:perf_hooks';
import type { Span } from '../../util/timing.js';

export interface TraceEvent {
  name: string;
  ph: 'X' | 'M';
  ts?: number;
  dur?: number;
  pid: number;
  tid: number;
  cat?: string;
  args?: Record<string, unknown>;
}

export interface TraceJob {
  /** Process label (e.g. the job id and kind). */
  label: string;
  root: Span;
  /** Lane of a span, when it starts a lane (children inherit their parent's lane). */
  laneOf: (span: Span) => string | undefined;
}

const us = (ms: number): number => Math.round((performance.timeOrigin + ms) * 1000);

/** Trace events of several jobs (pid = 1, 2, … in order). */
export function chromeTrace(jobs: readonly TraceJob[]): { traceEvents: TraceEvent[]; displayTimeUnit: 'ms' } {
  const events: TraceEvent[] = [];
  jobs.forEach((job, j) => {
    const pid = j + 1;
    const lanes = new Map<string, number>();
    const tidOf = (lane: string): number => {
      let tid = lanes.get(lane);
      if (tid === undefined) {
        tid = lanes.size + 1;
        lanes.set(lane, tid);
        events.push({ name: 'thread_name', ph: 'M', pid, tid, args: { name: lane } });
        events.push({ name: 'thread_sort_index', ph: 'M', pid, tid, args: { sort_index: tid } });
      }
      return tid;
    };
    events.push({ name: 'process_name', ph: 'M', pid, tid: 0, args: { name: job.label } });
    tidOf('job');
    const walk = (s: Span, lane: string): void => {
      const own = job.laneOf(s) ?? lane;
      const start = us(s.startMs);
      const end = us(s.endMs ?? performance.now());
      events.push({
        name: s.name,
        ph: 'X',
        ts: start,
        dur: Math.max(0, end - start),
        pid,
        tid: tidOf(own),
        cat: own,
        args: s.children.length ? { gap_ms: Math.round(s.gapMs * 100) / 100 } : undefined,
      });
      for (const c of s.children) walk(c, own);
    };
    walk(job.root, 'job');
  });
  return { traceEvents: events, displayTimeUnit: 'ms' };
}
