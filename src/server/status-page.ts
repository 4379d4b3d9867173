/**
 * The status page of the HTTP status server (GET /): one HTML page, its stylesheet and script
 * (status-page-assets.ts: plain HTML/CSS/JS kept as strings, no build step, no library), which
 * polls GET /status and GET /status/timeline once a second and draws
 *   queues by kind and priority, running jobs with a live timeline of their partitions (synthesis
 *   and proving spans as bars, growing while they run), the last proofs with their timings, the
 *   lanes (GPU memory, current job, busy fraction over the last minute), each GPU's device-memory
 *   plan (budget, limit, resident bytes, per circuit what streams), the SRS cache with sizes,
 *   the memory budget and the errors of failed jobs; over it all, a red banner while INSECURE development
 *   parameters are allowed or in use (/status `insecure.warning`), and each proof made with them marked.
 * Every string from the server reaches the DOM through textContent (never innerHTML), and the page
 * is served with a Content-Security-Policy that allows only its own script and stylesheet.
 *
 * GET /status/timeline is JSON: per job (running, then planning and queued ones up to
 * TIMELINE_LIVE_JOBS, and the last finished ones) its job-level stages and per partition its spans, in
 * milliseconds since the epoch (open spans have `endMs: null`); per lane its busy time over the last
 * 60 s. It reads indexes the engine keeps as jobs come and finish: 20,000 kept jobs cost what 20 do.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Engine } from '../engine/engine.js';
import type { Job } from '../engine/jobs.js';
import type { Span } from '../util/timing.js';
import { TIMELINE_LIVE_JOBS } from '../util/limits.js';
import { STATUS_PAGE_CSS, STATUS_PAGE_HTML, STATUS_PAGE_JS } from './status-page-assets.js';

export interface TimelineSpan {
  name: string;
  startMs: number;
  /** null while the span is open. */
  endMs: number | null;
}

export interface TimelinePartition {
  index: number;
  startMs: number;
  endMs: number | null;
  /** synth, lane_wait, prove, verify … (the partition span's children). */
  spans: TimelineSpan[];
}

export interface TimelineJob {
  id: string;
  requestId: string;
  kind: string;
  priority: string;
  state: string;
  circuitId: string | undefined;
  partitionsTotal: number;
  partitionsDone: number;
  startMs: number;
  endMs: number | null;
  /** Job-level spans (validate, queue, srs, assemble …), not the partitions. */
  stages: TimelineSpan[];
  partitions: TimelinePartition[];
}

export interface Timeline {
  nowMs: number;
  /** The running jobs, then the planning and queued ones (at most TIMELINE_LIVE_JOBS in all), then the
   *  last finished ones (jobs.ts RECENT_FINISHED_JOBS). */
  jobs: TimelineJob[];
  /** How many jobs are planning, queued or running (more than `jobs` shows when over TIMELINE_LIVE_JOBS). */
  liveJobs: number;
  /** Busy time of each prover lane (its `prove` spans) over the last `windowMs` (a minute, or the uptime when shorter). */
  lanes: { lane: string; busyMs: number; windowMs: number }[];
}

const epoch = (ms: number): number => Math.round((performance.timeOrigin + ms) * 10) / 10;
const spanOf = (s: Span): TimelineSpan => ({ name: s.name, startMs: epoch(s.startMs), endMs: s.endMs === undefined ? null : epoch(s.endMs) });

const LANE_WINDOW_MS = 60_000;

function jobTimeline(job: Job): TimelineJob {
  const s = job.summary() as { kind: string; priority: string; requestId: string; circuitId?: string; partitions: { total: number; done: number } };
  const stages: TimelineSpan[] = [];
  const partitions: TimelinePartition[] = [];
  for (const c of job.span.children) {
    const m = /^partition\[(\d+)\]$/.exec(c.name);
    if (m) partitions.push({ index: Number(m[1]), startMs: epoch(c.startMs), endMs: c.endMs === undefined ? null : epoch(c.endMs), spans: c.children.map(spanOf) });
    else stages.push(spanOf(c));
  }
  partitions.sort((a, b) => a.index - b.index);
  return {
    id: job.id,
    requestId: s.requestId,
    kind: s.kind,
    priority: s.priority,
    state: job.state,
    circuitId: s.circuitId,
    partitionsTotal: s.partitions.total,
    partitionsDone: s.partitions.done,
    startMs: epoch(job.span.startMs),
    endMs: job.span.endMs === undefined ? null : epoch(job.span.endMs),
    stages,
    partitions,
  };
}

/**
 * The timeline JSON (GET /status/timeline). Its cost does not grow with the jobs kept for AwaitProof:
 * the jobs come from the engine's indexes (the unfinished ones, at most TIMELINE_LIVE_JOBS, and the
 * last finished ones), the lanes' busy time from the prove spans of the last minute.
 */
export function statusTimeline(engine: Engine): Timeline {
  const { live, liveTotal, finished } = engine.timelineJobs(TIMELINE_LIVE_JOBS);
  const windowMs = Math.max(1, Math.min(LANE_WINDOW_MS, engine.uptimeSeconds * 1000 || LANE_WINDOW_MS));
  return {
    nowMs: epoch(performance.now()),
    jobs: [...live, ...finished].map(jobTimeline),
    liveJobs: liveTotal,
    lanes: engine.laneBusy(windowMs).map(({ lane, busyMs }) => ({ lane, busyMs: Math.round(busyMs), windowMs })),
  };
}

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** Serves the page's routes (`/`, `/status-page.js`, `/status-page.css`, `/status/timeline`); false for other paths. */
export function statusPageRoute(engine: Engine, path: string, res: ServerResponse): boolean {
  const send = (type: string, body: string): true => {
    res.writeHead(200, { 'content-type': type, ...PAGE_HEADERS });
    res.end(body);
    return true;
  };
  if (path === '/') return send('text/html; charset=utf-8', STATUS_PAGE_HTML);
  if (path === '/status-page.js') return send('text/javascript; charset=utf-8', STATUS_PAGE_JS);
  if (path === '/status-page.css') return send('text/css; charset=utf-8', STATUS_PAGE_CSS);
  if (path === '/status/timeline') return send('application/json; charset=utf-8', JSON.stringify(statusTimeline(engine)));
  return false;
}
