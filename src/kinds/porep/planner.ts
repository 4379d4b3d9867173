/**
 * POREP_SEAL_COMMIT (C2): the request's `vanilla_proof` is Curio's Commit2In wrapper
 * `{"SectorNum", "Phase1Out": base64(C1 JSON), "SectorSize"}` (docs/filecoin.md §3, §5), or the raw C1 JSON
 * (what `kiln prove --c1` may be given; SectorNum 0). It is parsed and
 * validated here (errors name the field), cross-checked with the request's sector_size,
 * registered_proof and sector_number, and turned into one ProofWork of `partitions` partition
 * circuits of circuit id `porep-<size>` (porep-2k, porep-8m, porep-512m, porep-32g, porep-64g).
 *
 * Synthesis runs in the worker pool (tasks.ts), the public inputs come from
 * partitionPublicInputs (what a chain verifier uses) and must equal the circuit's.
 *
 * The C1's consistency checks (porepCheckPartition, synthesis tasks of at most 16 challenges of a partition)
 * are queued when the job is planned, in partition order and at the job's rank, and each partition's synthesis waits only for
 * the checks up to its own (span `checks`): a 32 GiB job's first partition starts once its own partition is
 * checked, not all ten (9.6–34.3 s of `validate` per job on the H200 under load). A mismatch fails
 * the job at the first partition synthesised after it is found, naming it as before.
 *
 * Parameters (SRS): `<param_cache>/<circuit id>.params` when present (place or link the official
 * v28 file under that name); otherwise, only with `[srs] dev_params = true`, INSECURE development
 * parameters generated and cached in `<[kiln] cache_dir>/dev-params/` ($KILN_CACHE_DIR, else
 * ~/.cache/kiln: the CLI's --cache-dir default, so what `kiln setup` or `kiln prove` made is used here).
 */
import { taskName, workerTasks } from '../../engine/synth-pool.js';
import { unpackC1Partition, type PackedC1 } from '../../filecoin/c1-packed.js';
import { sealProofById, sealProofInfo, sectorSizeByBytes } from '../../filecoin/registry.js';
import {
  findRenamedParams,
  POREP_PARAMS_OTHERWISE,
  porepParamsNames,
  porepCircuitId,
  porepInfoForCircuit as infoForCircuit,
  porepWitnessNative,
} from './porep-c2.js';
import { checkInputs, createKindCircuits, type KindOptions, nativeWitness, workerWitness } from '../kind.js';
import type { ParamsSource } from '../params.js';
import { witnessRunner } from '../witness.js';
import { PlanError, Priority, ProofKind, type CircuitProvider, type PlanContext, type Planner, type ProofRequest, type ProofWork } from '../../engine/types.js';
import type { PorepPlanTaskResult, PorepWitnessArg, porepCheckPartition } from './tasks.js';
import { crossPartitionFailures } from '../../filecoin/c1-checks.js';

type PorepPartitionCheck = ReturnType<typeof porepCheckPartition>;

type ShapeModule = typeof import('./porep-c2.js');
const task = workerTasks<typeof import('./tasks.js')>(new URL('./tasks.js', import.meta.url).href);
/** The most challenges of one check task (the C1 checks run in pieces of a partition, in parallel). */
const CHECK_PIECE = 16;
const SHAPE_MODULE = new URL('./porep-c2.js', import.meta.url).href;

export { porepCircuitId };

/** The circuit a request names before its C1 is read: by registered_proof, else by sector_size
 *  (both 0 when unset, as proto3 sends them); undefined when it names none kiln knows. */
function namedCircuit(req: ProofRequest): string | undefined {
  const size = req.registeredProof !== 0 ? sealProofById(req.registeredProof)?.sectorSize : req.sectorSize;
  return size !== undefined && sectorSizeByBytes(size) !== undefined ? porepCircuitId(size) : undefined;
}

export type PorepKindOptions = KindOptions;

export interface PorepKind {
  planner: Planner;
  circuits: CircuitProvider;
  /** Where the parameters of a circuit id were loaded from (once loaded). */
  paramsSource(circuitId: string): ParamsSource | undefined;
}

export function createPorepKind(opts: PorepKindOptions): PorepKind {
  const { circuits, paramsSource } = createKindCircuits(
    {
      name: 'PoRep',
      infoOf: infoForCircuit,
      tasks: { module: SHAPE_MODULE, shape: taskName<ShapeModule>('porepShapeTask'), devParams: taskName<ShapeModule>('porepDevParamsTask') },
      paramsNames: (_id, info) => porepParamsNames(info),
      // an official v28 file renamed: told apart by its sizes (the shape compiled, off the event loop, only when v28
      // files of the circuit's tree tag are there)
      otherParams: { find: (_id, info, dir, shape) => findRenamedParams(info, shape, dir), words: POREP_PARAMS_OTHERWISE },
    },
    opts,
  );

  const runner = witnessRunner(opts.tuning?.witness);
  const planner: Planner = {
    kind: ProofKind.POREP_SEAL_COMMIT,
    name: 'porep-c2',
    defaultPriority: Priority.NORMAL,
    async plan(req, ctx): Promise<ProofWork> {
      if (req.vanillaProof.length === 0) throw new PlanError('vanilla_proof is empty: expected the Commit2In JSON wrapper {SectorNum, Phase1Out, SectorSize}');
      // parameters first (as PreloadSRS): a circuit without them fails now, not after reading and checking its C1
      const requested = namedCircuit(req);
      if (requested !== undefined) await circuits.available!(requested);
      // parsing, the public inputs and the replica_id check run in a synthesis worker
      const t0 = performance.now();
      const statedNiChallenges = opts.config.kiln.insecure_stated_ni_challenges;
      const planned = await parseInWorkers(ctx, req.vanillaProof, statedNiChallenges, t0);
      const c2 = planned.c2;
      // the registry's own object again (the worker sent a copy); the partitions stay packed (c1-packed.ts)
      const c1: PackedC1 = { ...c2.phase1Out, registeredProof: sealProofInfo(c2.phase1Out.registeredProof.name) ?? c2.phase1Out.registeredProof };
      const info = c1.registeredProof;
      if (req.sectorSize !== 0 && req.sectorSize !== c2.sectorSize) {
        throw new PlanError(`sector_size ${req.sectorSize} does not match the Commit2In SectorSize ${c2.sectorSize} (${info.name})`);
      }
      if (req.registeredProof !== 0 && req.registeredProof !== info.id) {
        const named = sealProofById(req.registeredProof)?.name ?? 'unknown';
        throw new PlanError(`registered_proof ${req.registeredProof} (${named}) does not match the C1's ${info.name} (id ${info.id})`);
      }
      if (req.sectorNumber !== 0 && req.sectorNumber !== c2.sectorNum) {
        throw new PlanError(`sector_number ${req.sectorNumber} does not match the Commit2In SectorNum ${c2.sectorNum}`);
      }
      const circuitId = porepCircuitId(info.sectorSize);
      // a request that named no size: before the checks (29–148 s for a 32 GiB C1)
      if (circuitId !== requested) await circuits.available!(circuitId);
      if (planned.count > 0) throw new PlanError(inconsistent(planned.failures, planned.count));
      if (planned.inputs === undefined) throw new PlanError(planned.inputsError ?? 'no public inputs');
      const inputs = planned.inputs;
      // fail fast: an inconsistent C1 (a replaced comm_r, a broken path, a wrong parent or column index) is
      // named before the partition it concerns is synthesised; each partition is checked in a synthesis
      // worker with only its own proofs, queued now in partition order (after this job's earlier partitions,
      // before later jobs'), so the first partition waits for its own check only
      // A partition is checked in pieces of at most CHECK_PIECE challenges, each its own task (a 32 GiB
      // partition's 18 challenges took 10.7 s on a loaded core of the H100 machine with Poseidon in TypeScript,
      // and the first partition waited that long; its pieces run on several workers at once)
      const stopChecks = new AbortController();
      const pieces = checkPieces(c1.challengeCounts, CHECK_PIECE);
      const done: (PorepPartitionCheck | undefined)[][] = pieces.map((ps) => ps.map(() => undefined));
      const checks = pieces.map((ps, k) =>
        ps.map((piece, j) => {
          const check = ctx.synthPool.run(
            task('porepCheckPartition', { c1, ...piece }), // the packed partitions are shared, not copied
            { rank: [k, j], signal: stopChecks.signal },
          );
          check.then((c) => void (done[k]![j] = c)).catch(() => undefined); // observed by the partitions' synthesis
          return check;
        }),
      );
      /** Partition k's checks and the earlier ones' (and any later one found already): throws naming the first mismatch. */
      const checked = async (k: number): Promise<void> => {
        await Promise.all(checks.slice(0, k + 1).flat());
        const found = done.flat().filter((c): c is PorepPartitionCheck => c !== undefined);
        const cross = crossPartitionFailures(found);
        const failures = [...found.flatMap((c) => c.failures), ...cross];
        const count = found.reduce((n, c) => n + c.count, 0) + cross.length;
        if (count > 0) throw new PlanError(inconsistent(failures, count));
      };
      let c1Ref: PackedC1 | undefined = c1;
      return {
        circuitId,
        partitions: c1.partitions.length,
        describe: `${info.name} sector ${c2.sectorNum}${c2.miner ? ` miner ${c2.miner}` : ''}${c1.statedChallenges ? ' (INSECURE: stated challenges)' : ''}`,
        async synthesize(k, span) {
          if (c1Ref === undefined) throw new Error('job disposed');
          await span.time('checks', () => checked(k));
          const packed = c1Ref;
          if (runner !== undefined) {
            // native witness: the partition's witness program on the CPU pool (same bytes as the worker's; its
            // public inputs checked against the C1's by porepWitnessNative)
            const { shape, program } = await circuits.compiled(circuitId);
            return nativeWitness(ctx, span, shape, inputs[k], async (out) => {
              const w = await porepWitnessNative(runner, program, unpackC1Partition(packed, k), k, shape, out);
              span.record('tape', w.tapeMs);
              span.record('witness', w.runMs);
              return w;
            }, undefined, [k]);
          }
          const arg: PorepWitnessArg = { c1: packed, partition: k, numInputs: inputs[k].length + 1 };
          const check = (got: bigint[]): void => checkInputs(inputs[k], got, "the circuit's public inputs differ from partitionPublicInputs");
          return workerWitness(ctx, span, task('porepWitness', arg), inputs[k], check, { rank: [k] });
        },
        dispose() {
          c1Ref = undefined;
          stopChecks.abort(); // the checks still waiting for a worker are dropped
        },
      };
    },
  };
  return { planner, circuits, paramsSource };
}

type WholePlan = Extract<PorepPlanTaskResult, { ok: true; split?: undefined }>;

/**
 * The request's C1 parsed in synthesis workers (porepPlanTask): a large one split (validate's span `split`), its
 * partitions parsed in parallel (`partitions`: a 32 GiB C1's ten, each ~1/10 of the whole parse); on any fault in
 * a partition the C1 is parsed again whole, so that the refusal names the first fault as the whole parse does.
 */
async function parseInWorkers(ctx: PlanContext, bytes: Uint8Array, statedNiChallenges: boolean, t0: number): Promise<WholePlan> {
  const whole = async (first: PorepPlanTaskResult): Promise<WholePlan> => {
    if (!first.ok) throw new PlanError(first.error);
    if (first.split !== undefined) throw new Error('internal: a whole parse came back split');
    return first;
  };
  const planned = await ctx.synthPool.run(task('porepPlanTask', { bytes, statedNiChallenges }));
  ctx.span?.record('worker_wait', Math.max(0, performance.now() - t0 - (planned.ok ? planned.ms : 0)));
  if (!planned.ok || planned.split === undefined) {
    if (planned.ok) ctx.span?.record('parse', planned.ms);
    return whole(planned);
  }
  ctx.span?.record('split', planned.ms);
  const t1 = performance.now();
  const { c2, json, ranges, path } = planned.split;
  const { partitions: _none, ...head } = c2.phase1Out;
  const parts = await Promise.all(
    ranges.map((range, k) => ctx.synthPool.run(task('porepParsePartition', { json, range, path, partition: k, head, partitions: ranges.length }), { rank: [k] })),
  );
  ctx.span?.record('partitions', performance.now() - t1);
  const ok = parts.filter((p): p is Extract<(typeof parts)[number], { ok: true }> => p.ok);
  if (ok.length < parts.length) return whole(await ctx.synthPool.run(task('porepPlanTask', { bytes, statedNiChallenges, whole: true })));
  const phase1Out: PackedC1 = { ...head, partitions: ok.map((p) => p.packed), challengeCounts: ok.map((p) => p.count) };
  return { ok: true, c2: { ...c2, phase1Out }, inputs: ok.map((p) => p.inputs), inputsError: undefined, failures: planned.failures, count: planned.count, ms: planned.ms };
}

/** The check tasks of partitions of `counts[k]` challenges: each partition in the fewest pieces of at most
 *  `most` challenges, of near-equal sizes, in order (18 → 2 × 9 at 32 GiB; 2 → 1 × 2; 176 → 11 × 16). */
export function checkPieces(counts: readonly number[], most: number): { partition: number; from: number; to: number }[][] {
  return counts.map((count, k) => {
    const n = Math.max(1, Math.ceil(count / most));
    const size = Math.ceil(count / n);
    return Array.from({ length: n }, (_, j) => ({ partition: k, from: j * size, to: Math.min(count, (j + 1) * size) }));
  });
}

/** The refusal of an inconsistent C1: its first failure, and how many more. */
function inconsistent(failures: readonly string[], count: number): string {
  const more = count > 1 ? ` (and ${count - 1} more inconsistenc${count === 2 ? 'y' : 'ies'})` : '';
  return `the C1's vanilla proofs are inconsistent: ${failures[0]}${more}`;
}
