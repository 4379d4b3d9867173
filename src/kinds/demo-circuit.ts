/**
 * The demo proof kind (hidden proof_kind 1000, ProofKind.KILN_DEMO): proves partitions of the
 * built-in DemoCircuit (src/r1cs/demo-circuit.ts) with INSECURE development parameters. It exercises the
 * whole daemon (queue, pipeline, SRS cache, prover, verification, timing) without the PoRep circuit;
 * tests and smoke benches use it. Registered only on request (runDaemon's `demo` option or
 * Engine.registerPlanner).
 *
 * Request: proof_kind = 1000; vanilla_proof = optional JSON
 *   { "seed": n, "partitions": p, "constraints": c }
 * (defaults: seed = sector_number + 1, partitions and constraints from the registration). Partition
 * k uses seed + k. Circuit id: `demo-<constraints>`.
 */
import { workerTasks } from '../engine/synth-pool.js';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../util/limits.js';
import type { Backend } from '../backend/backend.js';
import { loadOrCreateDevParams } from '../groth16/setup.js';
import { CompiledCircuit } from '../groth16/compiled.js';
import { DemoCircuit } from '../r1cs/demo-circuit.js';
import { recordShape } from '../r1cs/shape.js';
import { PlanError, Priority, ProofKind, type CircuitProvider, type Planner, type ProofWork } from '../engine/types.js';
import type { DemoWitnessArg } from './demo-circuit-tasks.js';

export interface DemoKindOptions {
  /** Constraints per partition circuit (default 2000). */
  constraints?: number;
  /** Partitions per proof (default 2). */
  partitions?: number;
  /** Public inputs besides ONE (default 2). */
  publicInputs?: number;
  /** Where the development parameters are cached. */
  cacheDir: string;
  backend: Backend;
}

const DEMO_MAX_CONSTRAINTS = 1 << 20;
const DEMO_MAX_PARTITIONS = 16;
const task = workerTasks<typeof import('./demo-circuit-tasks.js')>(new URL('./demo-circuit-tasks.js', import.meta.url).href);

export const demoCircuitId = (constraints: number): string => `demo-${constraints}`;

export function createDemoKind(opts: DemoKindOptions): { planner: Planner; circuits: CircuitProvider } {
  const defaults = { constraints: opts.constraints ?? 2000, partitions: opts.partitions ?? 2, publicInputs: opts.publicInputs ?? 2 };
  const compiled = new Map<string, Promise<CompiledCircuit>>();
  const parseId = (id: string): number | undefined => {
    const m = /^demo-(\d+)$/.exec(id);
    const n = m ? Number(m[1]) : NaN;
    return Number.isSafeInteger(n) && n >= defaults.publicInputs && n <= DEMO_MAX_CONSTRAINTS ? n : undefined;
  };

  const circuits: CircuitProvider = {
    knows: (id) => parseId(id) !== undefined,
    insecure: () => true, // development parameters only
    compiled(id) {
      let s = compiled.get(id);
      if (s === undefined) {
        const constraints = parseId(id);
        if (constraints === undefined) return Promise.reject(new Error(`unknown demo circuit ${id}`));
        s = Promise.resolve().then(() => {
          const c = new DemoCircuit({ constraints, publicInputs: defaults.publicInputs });
          return new CompiledCircuit(recordShape((cs) => c.synthesize(cs)));
        });
        compiled.set(id, s);
        s.catch(() => compiled.delete(id));
      }
      return s;
    },
    async params(id, _span, device = opts.backend) {
      return loadOrCreateDevParams(await circuits.compiled(id), device, opts.cacheDir);
    },
  };

  const planner: Planner = {
    kind: ProofKind.KILN_DEMO,
    name: 'demo',
    defaultPriority: Priority.NORMAL,
    async plan(req, ctx): Promise<ProofWork> {
      let o: Record<string, unknown> = {};
      if (req.vanillaProof.length > 0) {
        if (jsonDepthExceeds(req.vanillaProof)) throw new PlanError(`vanilla_proof: JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
        try {
          o = JSON.parse(Buffer.from(req.vanillaProof).toString('utf8')) as Record<string, unknown>;
        } catch (e) {
          throw new PlanError(`vanilla_proof: not valid JSON (${(e as Error).message})`);
        }
        if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new PlanError('vanilla_proof: expected a JSON object');
      }
      const num = (key: string, dflt: number, min: number, max: number): number => {
        const v = o[key] ?? dflt;
        if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
          throw new PlanError(`vanilla_proof.${key}: expected an integer in ${min}..${max}, got ${JSON.stringify(v)}`);
        }
        return v;
      };
      const constraints = num('constraints', defaults.constraints, defaults.publicInputs, DEMO_MAX_CONSTRAINTS);
      const partitions = num('partitions', defaults.partitions, 1, DEMO_MAX_PARTITIONS);
      const seed = num('seed', req.sectorNumber + 1, 0, 2 ** 31);
      const circuitId = demoCircuitId(constraints);
      return {
        circuitId,
        partitions,
        describe: `demo ${constraints} constraints × ${partitions}, seed ${seed}`,
        async synthesize(k, span) {
          const arg: DemoWitnessArg = { constraints, publicInputs: defaults.publicInputs, seed: seed + k, numInputs: defaults.publicInputs + 1 };
          const t0 = performance.now();
          const r = await ctx.synthPool.run(task('demoWitness', arg));
          const total = performance.now() - t0;
          span.record('worker_wait', Math.max(0, total - r.ms));
          span.record('witness', r.ms);
          return { assignment: r.assignment, inputs: r.inputs };
        },
      };
    },
  };
  return { planner, circuits };
}
