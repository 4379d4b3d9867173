/**
 * A large WindowPoSt partition planned in pieces (planner.ts planPoStInWorkers: tasks.ts postPlanPiece on several
 * synthesis workers, joinPoStPieces) gives exactly what the whole plan gives (postPlanTask): the same public inputs
 * and the same witness tape, byte for byte, for 32 GiB V1_1 partitions 0 and 1 (sector indices count on from each
 * piece's first) and 64 GiB; with a fault anywhere, the same refusal as the whole plan (its first fault in the whole's
 * order), through a real pool of two workers; V1's sector indices (partition · sector_count + position) count on
 * across pieces. Synthetic vanilla proofs of a few sectors (padded to the circuit's
 * 2,349 / 2,300 like any partition).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { SynthesisPool } from '../src/engine/synth-pool.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import type { PoStProofInfo } from '../src/filecoin/post/types.js';
import { planPoStInWorkers, postPieces, POST_PIECE_MIN_SECTORS } from '../src/kinds/post/planner.js';
import { joinPoStPieces, postPlanPiece, postPlanTask, type PoStPieceResult, type PoStPlanArg } from '../src/kinds/post/tasks.js';

const WINDOW_32G = postProofById(13)!; // StackedDrgWindow32GiBV1_1
const WINDOW_64G = postProofById(14)!; // StackedDrgWindow64GiBV1_1
const WINDOW_32G_V1 = postProofById(8)!; // StackedDrgWindow32GiBV1: the sector's index in the partition in its challenges
const randomness = createHash('sha256').update('kiln post-split').digest();
randomness[31]! &= 0x3f;

function argOf(info: PoStProofInfo, sectors: number, partitionIndex: number, tape = true): PoStPlanArg {
  const { elements } = synthPoSt({ info, randomness, sectors, partitionIndex, firstSectorId: 500n, rngSeed: 'post-split', threads: 1 });
  return { registeredProof: info.id, elements, randomness, partitionIndex, tape };
}

/** The pieces planned in this thread, `bounds` their first positions. */
function inPieces(arg: PoStPlanArg, bounds: number[]): PoStPieceResult[] {
  const ends = [...bounds.slice(1), arg.elements.length];
  return bounds.map((first, k) => postPlanPiece({ ...arg, elements: arg.elements.slice(first, ends[k]), first }));
}

function sameAsWhole(arg: PoStPlanArg, ...splits: number[][]): void {
  const whole = postPlanTask(arg);
  assert.ok(whole.ok, whole.ok ? '' : whole.error);
  for (const bounds of splits) {
    const pieces = inPieces(arg, bounds);
    const ok = pieces.filter((p): p is PoStPieceResult & { ok: true } => p.ok);
    assert.equal(ok.length, pieces.length);
    const joined = joinPoStPieces(arg.registeredProof, ok);
    assert.deepEqual(joined.inputs, whole.inputs);
    assert.equal(joined.sectors, whole.sectors);
    assert.equal(joined.firstSectorId, whole.firstSectorId);
    assert.equal(joined.tape === undefined, whole.tape === undefined);
    if (whole.tape) assert.ok(Buffer.from(joined.tape!).equals(Buffer.from(whole.tape)), 'the joined tape differs from the whole plan\'s');
  }
}

test('32 GiB WindowPoSt, partitions 0 and 1: the pieces joined = the whole plan (inputs and tape, byte for byte)', () => {
  for (const partition of [0, 1]) {
    sameAsWhole(argOf(WINDOW_32G, 7, partition), [0, 3, 5], [0, 1, 2, 3, 4, 5, 6]); // and a sector a piece
  }
  // without a tape (the TypeScript witness path): the inputs alone
  sameAsWhole(argOf(WINDOW_32G, 4, 0, false), [0, 2]);
});

test('64 GiB WindowPoSt (top-level trees): the pieces joined = the whole plan', () => {
  sameAsWhole(argOf(WINDOW_64G, 5, 0), [0, 2, 4]);
});

test('a fault in any piece: the pool-planned request is refused with the whole plan\'s message', async () => {
  const pool = new SynthesisPool(2);
  try {
    const base = argOf(WINDOW_32G, 6, 0);
    const run = (arg: PoStPlanArg): Promise<unknown> => planPoStInWorkers({ synthPool: pool, span: undefined }, arg, performance.now(), 3);
    // no fault: the same as the whole
    const whole = postPlanTask(base);
    assert.ok(whole.ok);
    const joined = await planPoStInWorkers({ synthPool: pool, span: undefined }, base, performance.now(), 3);
    assert.deepEqual(joined.inputs, whole.inputs);
    assert.ok(Buffer.from(joined.tape!).equals(Buffer.from(whole.tape!)));
    const faults: [string, (a: PoStPlanArg) => PoStPlanArg][] = [
      // piece 2 truncated and piece 0 with a wrong leaf: the whole plan parses everything first, so the parse error
      ['a truncated element after a bad leaf', (a) => ({ ...a, elements: a.elements.map((e, i) => (i === 4 ? e.subarray(0, e.length - 9) : i === 1 ? flip(e, 200) : e)) })],
      ['the last piece truncated alone', (a) => ({ ...a, elements: a.elements.map((e, i) => (i === 5 ? e.subarray(0, 100) : e)) })],
      ['other randomness', (a) => ({ ...a, randomness: createHash('sha256').update('other').digest().map((b, i) => (i === 31 ? b & 0x3f : b)) })],
    ];
    for (const [what, mutate] of faults) {
      const arg = mutate(base);
      const w = postPlanTask(arg);
      assert.ok(!w.ok, `${what}: the whole plan accepted it`);
      // some piece refuses it too (else the join would stand in for a refusal)
      assert.ok(inPieces(arg, [0, 2, 4]).some((p) => !p.ok), `${what}: no piece refused`);
      await assert.rejects(run(arg), (e: Error) => e.message === w.error, `${what}: not the whole plan's message`);
    }
    // V1 (sector index in the challenges): two sectors of the last piece swapped, each then opens the other's leaves
    const v1 = argOf(WINDOW_32G_V1, 6, 1);
    const swapped = { ...v1, elements: [...v1.elements.slice(0, 4), v1.elements[5]!, v1.elements[4]!] };
    const w = postPlanTask(swapped);
    assert.ok(!w.ok && /sector 505 \(proof 4\) challenge 0: the proof opens leaf \d+, but the randomness challenges leaf \d+/.test(w.error), w.ok ? 'accepted' : w.error);
    await assert.rejects(run(swapped), (e: Error) => e.message === w.error);
    const ok = await run(v1);
    const v1whole = postPlanTask(v1);
    assert.ok(v1whole.ok);
    assert.deepEqual((ok as { inputs: bigint[] }).inputs, v1whole.inputs);
  } finally {
    await pool.close();
  }
});

test('postPieces: a 2,349-sector partition in one piece per worker; small ones, WinningPoSt and few workers whole', () => {
  assert.equal(postPieces('window', 2349, 8), 8);
  assert.equal(postPieces('window', 2349, 1), 1);
  assert.equal(postPieces('window', POST_PIECE_MIN_SECTORS - 1, 8), 1);
  assert.equal(postPieces('window', POST_PIECE_MIN_SECTORS, 8), 2); // at least 128 sectors a piece
  assert.equal(postPieces('window', 2, 8), 1);
  assert.equal(postPieces('winning', 1, 8), 1);
});

function flip(e: Uint8Array, at: number): Uint8Array {
  const c = e.slice();
  c[at]! ^= 1;
  return c;
}
