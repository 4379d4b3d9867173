/**
 * Large circuits' native witnesses take turns (PlanContext.witnessTurn, kinds/kind.ts nativeWitness): one at a
 * time in the jobs' order, so the witness whose partition the device takes next is not slowed by the others';
 * small circuits' run at once. Checked with the engine's own turn (a job's witnesses after an earlier job's) and
 * with a stand-in circuit of each size.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WITNESS_TURN_CONSTRAINTS, nativeWitness } from '../src/kinds/kind.js';
import { RankedSemaphore } from '../src/engine/partitions.js';
import type { PlanContext } from '../src/engine/types.js';
import type { CircuitShape } from '../src/r1cs/cs.js';
import { Span } from '../src/util/timing.js';

/** A context whose turns are one engine-wide slot ranked by [job, …rank] (as engine.ts gives each job). */
function contexts(jobs: number): PlanContext[] {
  const slots = new RankedSemaphore(1);
  const buffers = { take: async (n: number) => new Uint8Array(n), give: () => undefined } as unknown as PlanContext['buffers'];
  return Array.from({ length: jobs }, (_, j) => ({
    synthPool: { size: 1, idle: 1, run: () => Promise.reject(new Error('unused')) },
    buffers,
    witnessTurn: async (rank: readonly number[] = []) => {
      await slots.acquire([j, ...rank]);
      return () => slots.release();
    },
  }));
}

const shapeOf = (numConstraints: number): CircuitShape => ({ numConstraints, numInputs: 1, numAux: 1 }) as unknown as CircuitShape;

/** Runs a witness that takes `ms`, recording when it ran. */
function witness(log: { name: string; start: number; end: number }[], name: string, ms: number) {
  return async (out: Uint8Array): Promise<{ assignment: Uint8Array; inputs: bigint[] }> => {
    const start = performance.now();
    await new Promise((r) => setTimeout(r, ms));
    log.push({ name, start, end: performance.now() });
    return { assignment: out, inputs: [] };
  };
}

test('large witnesses run one at a time (waiting in span witness_wait), in the jobs\' order; small ones at once', async () => {
  const [a, b, c] = contexts(3);
  const big = shapeOf(WITNESS_TURN_CONSTRAINTS);
  const log: { name: string; start: number; end: number }[] = [];
  const spans = [new Span('synth'), new Span('synth'), new Span('synth')];
  // job 2 asks first, then job 0, then job 1: job 2 runs at once (nothing waits), then 0 and 1 in order
  const p2 = nativeWitness(c!, spans[2]!, big, [], witness(log, 'job2', 60));
  await new Promise((r) => setTimeout(r, 5));
  const p1 = nativeWitness(b!, spans[1]!, big, [], witness(log, 'job1', 30));
  const p0 = nativeWitness(a!, spans[0]!, big, [], witness(log, 'job0', 30));
  await Promise.all([p0, p1, p2]);
  assert.deepEqual(log.map((l) => l.name), ['job2', 'job0', 'job1']);
  for (let i = 1; i < log.length; i++) assert.ok(log[i]!.start >= log[i - 1]!.end - 1, `${log[i]!.name} started before ${log[i - 1]!.name} ended`);
  const waited = spans[1]!.children.find((s) => s.name === 'witness_wait');
  assert.ok(waited !== undefined && waited.durationMs >= 50, `job 1 waited ${waited?.durationMs} ms in witness_wait`);

  // small circuits: no turns
  const small = shapeOf(WITNESS_TURN_CONSTRAINTS - 1);
  const log2: typeof log = [];
  const spans2 = [new Span('synth'), new Span('synth')];
  await Promise.all([nativeWitness(a!, spans2[0]!, small, [], witness(log2, 'x', 40)), nativeWitness(b!, spans2[1]!, small, [], witness(log2, 'y', 40))]);
  assert.ok(Math.abs(log2[0]!.start - log2[1]!.start) < 20, 'both ran at once');
  assert.equal(spans2[0]!.children.some((s) => s.name === 'witness_wait'), false);
});

test('a failed witness gives its turn back', async () => {
  const [a, b] = contexts(2);
  const big = shapeOf(WITNESS_TURN_CONSTRAINTS);
  await assert.rejects(nativeWitness(a!, new Span('synth'), big, [], async () => { throw new Error('boom'); }), /boom/);
  const log: { name: string; start: number; end: number }[] = [];
  await nativeWitness(b!, new Span('synth'), big, [], witness(log, 'after', 5));
  assert.equal(log.length, 1);
});
