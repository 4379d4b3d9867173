/**
 * Prometheus metrics (prom-client, one registry per engine): per-stage duration histograms,
 * prover phase histograms, completed/failed/cancelled counters, queue and memory gauges (read at
 * scrape time). Served by GetMetrics and GET /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const STAGE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export interface GaugeSource {
  queues(): { kind: string; pending: number; inProgress: number }[];
  memory(): { budget: number; reserved: number; srs: number };
}

export class EngineMetrics {
  readonly registry = new Registry();
  readonly stage: Histogram<'proof_kind' | 'stage'>;
  readonly phase: Histogram<'phase'>;
  readonly completed: Counter<'proof_kind'>;
  readonly failed: Counter<'proof_kind'>;
  readonly cancelled: Counter<'proof_kind'>;
  readonly gapWarnings: Counter<'stage'>;

  constructor(src: GaugeSource, opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'kiln_' });
    this.stage = new Histogram({
      name: 'kiln_stage_duration_seconds',
      help: 'Duration of each stage of a proof job (queue, srs, synth, prove, verify per partition; total per job)',
      labelNames: ['proof_kind', 'stage'],
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.phase = new Histogram({
      name: 'kiln_prover_phase_seconds',
      help: 'Duration of each prover phase (matvec, ntt_h, msm_*, batch_add, assemble, release) per partition',
      labelNames: ['phase'],
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.completed = new Counter({ name: 'kiln_proofs_completed_total', help: 'Proof jobs completed', labelNames: ['proof_kind'], registers });
    this.failed = new Counter({ name: 'kiln_proofs_failed_total', help: 'Proof jobs failed', labelNames: ['proof_kind'], registers });
    this.cancelled = new Counter({ name: 'kiln_proofs_cancelled_total', help: 'Proof jobs cancelled', labelNames: ['proof_kind'], registers });
    this.gapWarnings = new Counter({
      name: 'kiln_span_gap_warnings_total',
      help: 'Spans whose children left more than 2 % of their time unaccounted',
      labelNames: ['stage'],
      registers,
    });
    new Gauge({
      name: 'kiln_queue_pending',
      help: 'Jobs waiting in the queue, per proof kind',
      labelNames: ['proof_kind'],
      registers,
      collect() {
        this.reset();
        for (const q of src.queues()) this.set({ proof_kind: q.kind }, q.pending);
      },
    });
    new Gauge({
      name: 'kiln_queue_in_progress',
      help: 'Jobs running, per proof kind',
      labelNames: ['proof_kind'],
      registers,
      collect() {
        this.reset();
        for (const q of src.queues()) this.set({ proof_kind: q.kind }, q.inProgress);
      },
    });
    new Gauge({
      name: 'kiln_memory_budget_bytes',
      help: 'Configured memory budget',
      registers,
      collect() {
        this.set(src.memory().budget);
      },
    });
    new Gauge({
      name: 'kiln_memory_reserved_bytes',
      help: 'Bytes reserved in the memory budget (SRS + working sets)',
      registers,
      collect() {
        this.set(src.memory().reserved);
      },
    });
    new Gauge({
      name: 'kiln_srs_loaded_bytes',
      help: 'Bytes of loaded SRS (parameters)',
      registers,
      collect() {
        this.set(src.memory().srs);
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
