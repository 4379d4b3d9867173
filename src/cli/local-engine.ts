/**
 * The CLI's in-process engine: `kiln prove` and `kiln demo` prove through the same Engine, planner,
 * circuit provider, parameter loader and partition pipeline as the daemon (synthesis of partition
 * k + 1 overlapping the proof of partition k, every partition verified), without a socket.
 */
import { cliEngineLogger } from '../util/log.js';
import type { Backend } from '../backend/backend.js';
import { cliLanesPerDevice, defaultConfig } from '../engine/config.js';
import { Engine } from '../engine/engine.js';
import { AwaitStatus, ProofKind, proofRequest } from '../engine/types.js';
import { createPorepKind } from '../kinds/porep/planner.js';
import type { ParamsSource } from '../kinds/params.js';
import type { Span } from '../util/timing.js';
import type { Job } from '../engine/jobs.js';
import type { ProgressFn } from '../util/progress.js';
import { VANILLA_PROOF_PREFIX } from '../filecoin/c1.js';
import type { Tuning } from '../util/tuning.js';
import { cliTuning } from './options.js';

/**
 * An engine error about the request's proof input with the gRPC field it names (`vanilla_proof (Commit2In): …`,
 * `vanilla_proofs[3]: …`) replaced by what the user gave: `label`, e.g. `--c1 c1.json`.
 */
export function userInputError(message: string, label: string | undefined): string {
  if (label === undefined) return message;
  const m = message.startsWith(VANILLA_PROOF_PREFIX) ? `${label}: ${message.slice(VANILLA_PROOF_PREFIX.length)}` : message;
  return m
    .replace(/^(\S+) vanilla_proofs\[(\d+)\]/, `${label} element $2 ($1)`) // SnapDeals: "<proof name> vanilla_proofs[k]: …"
    .replace(/vanilla_proofs\[(\d+)\]/g, `${label} element $1`)
    .replace(/\bvanilla_proofs\b/g, label);
}

/**
 * Shows a job of an in-process engine while it runs (every half second): checking the input, the circuit and
 * its parameters (compiled or read), then `<what>: partitions done/total` (a bar with its ETA on a terminal, a line now and then
 * otherwise). While a development setup runs, the kind reports its steps itself (kinds/params.ts
 * DEV_SETUP_STAGE). Returns the function that stops watching.
 */
export function watchJob(job: Job, progress: ProgressFn | undefined, what: string): () => void {
  if (progress === undefined) return () => {};
  const open = (s: Span, name: string): boolean => s.children.some((c) => c.endMs === undefined && (c.name === name || open(c, name)));
  const tick = (): void => {
    if (open(job.span, 'dev_setup')) return; // the kind reports the setup's steps
    if (job.work === undefined) progress('checking the input', 0, 0);
    else if (job.span.children.some((c) => c.name === 'srs' && c.endMs === undefined)) progress('circuit and parameters', 0, 0);
    else progress(`${what} partitions`, job.partitionsDone, job.work.partitions);
  };
  tick();
  const timer = setInterval(tick, 500);
  timer.unref();
  return () => clearInterval(timer);
}

export interface LocalProveOptions {
  /** Official parameter files (`--params-dir`). */
  paramsDir: string;
  /** Shapes and INSECURE development parameters (`--cache-dir`). */
  cacheDir: string;
  backend: Backend;
  /** Progress lines for a person (stderr). */
  say: (msg: string) => void;
  /** INSECURE, benchmarks only: prove NI-PoRep C1s with the challenges they state
   *  ([kiln] insecure_stated_ni_challenges; `kiln synth-c1 --ni` C1s). */
  statedNiChallenges?: boolean;
  /** What the user called the input, for errors (`--c1 c1.json`). */
  label?: string;
  /** Progress for a bar or periodic lines (watchJob, and the kind's development setup). */
  progress?: ProgressFn;
  /** The tuning variables for the kind (the witness path); default the CLI's (cliTuning). */
  tuning?: Tuning;
}

export interface LocalProof {
  bytes: Uint8Array;
  /** The parameters the proof was made with. */
  source: ParamsSource;
  /** The job's span tree (validate, queue, srs, partition[k] → synth, prove, verify, assemble). */
  span: Span;
}

/**
 * An in-process engine for PoRep C2 (development parameters allowed: generated once and cached,
 * INSECURE, and said so; every partition verified). Proofs made through one LocalProver share its
 * SRS cache, so parameters are loaded (and, on a GPU, uploaded) once.
 */
export class LocalProver {
  private readonly engine: Engine;
  private readonly porep: ReturnType<typeof createPorepKind>;
  private readonly progress: ProgressFn | undefined;

  constructor(o: LocalProveOptions) {
    const config = defaultConfig();
    config.srs.param_cache = o.paramsDir;
    config.srs.dev_params = true;
    config.kiln.insecure_stated_ni_challenges = o.statedNiChallenges === true;
    // The CPU prover already uses every core: one lane there; on a GPU as the daemon picks (config.ts lanesForDevices).
    config.gpus.gpu_workers_per_device = cliLanesPerDevice(o.backend);
    this.progress = o.progress;
    this.porep = createPorepKind({ config, backend: o.backend, cacheDir: o.cacheDir, notice: (m) => o.say(`  ${m}`), progress: o.progress, tuning: o.tuning ?? cliTuning() });
    this.engine = new Engine({
      config,
      backend: o.backend,
      logger: cliEngineLogger(), // warnings as text; the failed job is the command's error, the gaps are in the span tree
      planners: [this.porep.planner],
      providers: [this.porep.circuits],
      defaultMetrics: false,
    });
  }

  /** Proves one C1 (any of its forms, as bytes). Throws with the engine's message when the job fails, naming
   *  the input as `label` (`--c1 c1.json`) rather than by its gRPC field. */
  async prove(input: Uint8Array, label?: string): Promise<LocalProof> {
    const { job } = await this.engine.submit(proofRequest({ proofKind: ProofKind.POREP_SEAL_COMMIT, vanillaProof: input }));
    const unwatch = watchJob(job, this.progress, 'proving');
    const r = await this.engine.await(job.id).finally(unwatch);
    if (r === undefined || r.status !== AwaitStatus.COMPLETED) throw new Error(userInputError(r?.errorMessage || `job ${job.id} did not complete`, label));
    const source = job.work ? this.porep.paramsSource(job.work.circuitId) : undefined;
    if (source === undefined) throw new Error('internal: the job completed without parameters');
    return { bytes: r.proof, source, span: job.span };
  }

  /** Frees the SRS and the workers. */
  async close(): Promise<void> {
    await this.engine.close(0);
  }
}

/** One proof through a LocalProver of its own. */
export async function proveC1Locally(input: Uint8Array, o: LocalProveOptions): Promise<LocalProof> {
  const prover = new LocalProver(o);
  try {
    return await prover.prove(input, o.label);
  } finally {
    await prover.close();
  }
}
