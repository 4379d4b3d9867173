/**
 * The CLI's in-process engine: `kiln prove` and `kiln demo` prove through the same Engine, planner,
 * circuit provider, parameter loader and partition pipeline as the daemon (synthesis of partition
 * k + 1 overlapping the proof of partition k, every partition verified), without a socket.
 */
import pino from 'pino';
import type { Backend } from '../backend/backend.js';
import { cliLanesPerDevice, defaultConfig } from '../engine/config.js';
import { Engine } from '../engine/engine.js';
import { AwaitStatus, ProofKind, proofRequest } from '../engine/types.js';
import { createPorepKind } from '../kinds/porep-c2-planner.js';
import type { ParamsSource } from '../kinds/porep-c2.js';
import type { Span } from '../util/timing.js';

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

  constructor(o: LocalProveOptions) {
    const config = defaultConfig();
    config.srs.param_cache = o.paramsDir;
    config.srs.dev_params = true;
    config.kiln.insecure_stated_ni_challenges = o.statedNiChallenges === true;
    // The CPU prover already uses every core: one lane there; on a GPU as the daemon picks (config.ts lanesForDevices).
    config.gpus.gpu_workers_per_device = cliLanesPerDevice(o.backend);
    this.porep = createPorepKind({ config, backend: o.backend, cacheDir: o.cacheDir, notice: (m) => o.say(`  ${m}`) });
    this.engine = new Engine({
      config,
      backend: o.backend,
      logger: pino({ level: 'error', base: undefined }, pino.destination(2)), // the span tree shows the gaps
      planners: [this.porep.planner],
      providers: [this.porep.circuits],
      defaultMetrics: false,
    });
  }

  /** Proves one C1 (the Commit2In wrapper or the raw C1 JSON, as bytes). Throws with the engine's
   *  message when the job fails. */
  async prove(input: Uint8Array): Promise<LocalProof> {
    const { job } = await this.engine.submit(proofRequest({ proofKind: ProofKind.POREP_SEAL_COMMIT, vanillaProof: input }));
    const r = await this.engine.await(job.id);
    if (r === undefined || r.status !== AwaitStatus.COMPLETED) throw new Error(r?.errorMessage || `job ${job.id} did not complete`);
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
    return await prover.prove(input);
  } finally {
    await prover.close();
  }
}
