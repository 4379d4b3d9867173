/**
 * Span notes: a few words beside a span on what its time went to (the CUDA backend's MSM phases: window,
 * full-width scalars, Pippenger passes, batch-affine levels), in the printed tree and the JSON; and msmNote,
 * which writes them from an MSM's device timings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { msmNote, type PartitionMsmTimings } from '../src/backend/cuda.js';
import { Span, formatSpanTree } from '../src/util/timing.js';

type Pip = PartitionMsmTimings['pippenger'];
function msm(over: { window?: number; ones?: number; others?: number; pippenger?: Partial<Pip> }): PartitionMsmTimings {
  const pippenger: Pip = { sort: 1, accumulate: 2, buckets: 0, windows: 0, affineLevels: 0, affinePasses: 0, affineSlices: 0, ...over.pippenger };
  return { classify: 0, batchAdd: 0, msm: 3, window: over.window ?? 18, ones: over.ones ?? 0, others: over.others ?? 0, pippenger } as PartitionMsmTimings;
}

test('msmNote: window, full-width scalars, passes, and whether the batch-affine levels took them', () => {
  assert.equal(msmNote(msm({ window: 0, ones: 1_234_567 })), '0/1 scalars only (1.2 M ones)');
  assert.equal(
    msmNote(msm({ window: 18, others: 41_900_000, pippenger: { passes: 2, affineLevels: 5, affinePasses: 2, affineSlices: 6 } })),
    'c = 18, 41.9 M others, 2 passes, batch-affine 5 levels in 2 passes (6 slices)',
  );
  // one slice per pass: no slice count; one pass: singular
  assert.equal(msmNote(msm({ window: 16, others: 3_000, pippenger: { passes: 1, affineLevels: 6, affinePasses: 1, affineSlices: 1 } })), 'c = 16, 3.0 k others, 1 pass, batch-affine 6 levels in 1 pass');
  assert.equal(msmNote(msm({ window: 12, others: 999, pippenger: { passes: 3 } })), 'c = 12, 999 others, 3 passes, XYZZ buckets');
  // an addon built before the pass count: no pass count
  assert.equal(msmNote(msm({ window: 12, others: 5_000_000 })), 'c = 12, 5.0 M others, XYZZ buckets');
});

test('a recorded span keeps its note: beside it in the tree, in its JSON; none when empty or absent', () => {
  const root = new Span('prove', undefined, 0);
  root.record('msm_h', 12.5, 'c = 16, 2.0 M others, 1 pass, XYZZ buckets');
  root.record('msm_l', 3, '');
  root.record('msm_a', 4);
  root.end();
  const lines = formatSpanTree(root).split('\n');
  assert.match(lines[1], /^ {2}msm_h +12\.5 ms +\d+\.\d%  c = 16, 2\.0 M others, 1 pass, XYZZ buckets$/);
  assert.match(lines[2], /^ {2}msm_l +3\.0 ms +\d+\.\d%$/);
  assert.match(lines[3], /^ {2}msm_a +4\.0 ms +\d+\.\d%$/);
  const json = JSON.parse(JSON.stringify(root.toJSON())) as { children: { name: string; note?: string }[] };
  assert.equal(json.children[0].note, 'c = 16, 2.0 M others, 1 pass, XYZZ buckets');
  assert.ok(!('note' in json.children[1]) && !('note' in json.children[2]));
});
