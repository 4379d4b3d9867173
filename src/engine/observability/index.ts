/**
 * The engine's one observability module: spans (spans.ts: gaps, sums), Prometheus metrics
 * (metrics.ts), the job's log line and gap warnings, AwaitProof timings, and Chrome traces
 * (trace.ts). The engine calls `jobTimings` and `reportFinishedJob` when a job ends and
 * `jobsTrace` for GET /trace.
 */
import type { Logger } from 'pino';
import type { Span } from '../../util/timing.js';
import { round, type Job, type JobTimings } from '../jobs.js';
import { PRIORITY_NAMES } from '../types.js';
import type { EngineMetrics } from './metrics.js';
import { gapWarnings, sumSpans } from './spans.js';
import { chromeTrace, type TraceEvent } from './trace.js';

export { EngineMetrics, type GaugeSource } from './metrics.js';
export { findSpans, gapWarnings, sumSpans, uncoveredMs, type GapWarning } from './spans.js';
export { chromeTrace, type TraceEvent, type TraceJob } from './trace.js';

/** The AwaitProof timings of a job, from its spans. */
export function jobTimings(job: Job): JobTimings {
  const byName = (n: string): number => job.span.children.filter((c) => c.name === n).reduce((t, c) => t + c.durationMs, 0);
  return {
    queueWaitMs: round(job.queueSpan?.durationMs ?? 0),
    srsLoadMs: round(byName('srs')),
    synthesisMs: round(sumSpans(job.span, 'synth')),
    gpuComputeMs: round(sumSpans(job.span, 'prove')),
    totalMs: round(job.span.durationMs),
  };
}

/** Counters, stage and phase histograms, gap warnings (metric and log) and the job's log line. */
export function reportFinishedJob(
  job: Job,
  state: 'completed' | 'failed' | 'cancelled',
  error: string | undefined,
  metrics: EngineMetrics,
  log: Logger,
): void {
  const t = job.timings;
  const kind = job.kindName;
  if (state === 'completed') metrics.completed.inc({ proof_kind: kind });
  else if (state === 'failed') metrics.failed.inc({ proof_kind: kind });
  else metrics.cancelled.inc({ proof_kind: kind });
  if (job.queueSpan) metrics.stage.observe({ proof_kind: kind, stage: 'queue' }, t.queueWaitMs / 1000);
  metrics.stage.observe({ proof_kind: kind, stage: 'total' }, t.totalMs / 1000);
  const srsSpan = job.span.children.find((c) => c.name === 'srs');
  if (srsSpan) metrics.stage.observe({ proof_kind: kind, stage: 'srs' }, srsSpan.durationMs / 1000);
  for (const p of job.span.children.filter((c) => c.name.startsWith('partition['))) {
    for (const c of p.children) {
      if (c.name === 'synth' || c.name === 'prove' || c.name === 'verify' || c.name === 'mem_wait' || c.name === 'lane_wait') {
        metrics.stage.observe({ proof_kind: kind, stage: c.name }, c.durationMs / 1000);
      }
      if (c.name === 'prove') for (const ph of c.children) metrics.phase.observe({ phase: ph.name }, ph.durationMs / 1000);
    }
  }
  for (const g of gapWarnings(job.span)) {
    metrics.gapWarnings.inc({ stage: g.stage });
    log.warn({ job: job.id, span: g.path, gapMs: g.gapMs, gapPct: round(100 * g.fraction) }, 'span gap over 2 %');
  }
  const line = {
    job: job.id,
    requestId: job.requestId || undefined,
    kind,
    priority: PRIORITY_NAMES[job.priority],
    circuit: job.work?.circuitId,
    partitions: job.work?.partitions,
    status: state,
    error,
    timings: t,
    insecureParams: job.insecureParams || undefined,
    spans: job.span.toJSON(),
  };
  if (state === 'failed') log.error(line, 'proof job failed');
  else if (job.insecureParams) log.warn(line, `proof job ${state} with INSECURE development parameters: the proof is never accepted on chain`);
  else log.info(line, `proof job ${state}`);
}

/** Chrome trace-event JSON of `jobs`; `laneOf` names the trace lane of a span. */
export function jobsTrace(jobs: readonly Job[], laneOf: (s: Span) => string | undefined): { traceEvents: TraceEvent[]; displayTimeUnit: 'ms' } {
  return chromeTrace(jobs.map((j) => ({ label: `job ${j.id} (${j.kindName})`, root: j.span, laneOf })));
}
