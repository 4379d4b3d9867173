/**
 * A large C1 parsed in parallel (filecoin/c1.ts splitCommit2In + parseSplitPartition; the PoRep planner's
 * porepPlanTask + porepParsePartition tasks): the split parse must give exactly what the whole parse gives, and
 * must never accept what the whole parse refuses. Inputs: a really sealed 2 KiB NI-PoRep sector (13 partitions,
 * 1.7 MB wrapper), as is and mutated at random, and hand-made structures that a scan of the bytes could misread.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { unpackC1Partition } from '../src/filecoin/c1-packed.js';
import { parseC1Input, parseSplitPartition, splitCommit2In, type Commit2In } from '../src/filecoin/c1.js';
import { sealSector } from '../src/filecoin/seal/index.js';
import { porepParsePartition, porepPlanTask } from '../src/kinds/porep/tasks.js';
import { fixture, rng } from './support.js';
import { readFileSync } from 'node:fs';

const sealed = sealSector({ sectorSize: '2KiB', version: 'V1_2_Feat_NonInteractivePoRep', rngSeed: 'c1-split', miner: 'f01234', sectorNumber: 3 });
const wrapper = JSON.parse(sealed.commit2In) as Record<string, unknown>;
/** The wrapper around C1 JSON text `c1` (as Curio sends it: Phase1Out in base64). */
const wrap = (c1: Uint8Array | string, extra: Record<string, unknown> = {}): Uint8Array =>
  Buffer.from(JSON.stringify({ ...wrapper, ...extra, Phase1Out: Buffer.from(c1).toString('base64') }));

type Outcome = { ok: true; c2: Commit2In } | { ok: false; error: string };
const outcome = (f: () => Commit2In): Outcome => {
  try {
    return { ok: true, c2: f() };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
};
const whole = (b: Uint8Array): Outcome => outcome(() => parseC1Input(b));
/** The split parse, whole or refused (undefined: not split at all). */
const split = (b: Uint8Array): Outcome | undefined => {
  const s = splitCommit2In(b, 0);
  if (s === undefined) return undefined;
  return outcome(() => {
    const info = s.c2.phase1Out.registeredProof;
    const partitions = s.ranges.map((r, k) => parseSplitPartition(s.json, r, s.path, k, info));
    return { ...s.c2, phase1Out: { ...s.c2.phase1Out, partitions } };
  });
};

describe('splitCommit2In', () => {
  test('a sealed NI-PoRep C1: 13 partitions, parsed apart, the same Commit2In as the whole parse', () => {
    const b = Buffer.from(sealed.commit2In);
    const s = splitCommit2In(b);
    assert.ok(s !== undefined, 'split at the default size (1.7 MB ≥ 1 MiB)');
    assert.equal(s.ranges.length, 13);
    assert.equal(s.path, 'vanilla_proofs.StackedDrg2KiBV1');
    assert.ok(s.json.buffer instanceof SharedArrayBuffer, 'the JSON in shared memory: the partition tasks read it without a copy');
    const w = whole(b);
    assert.ok(w.ok);
    assert.equal(w.c2.phase1Out.partitions.length, 13);
    assert.deepEqual(split(b), w);
  });

  test('not split: one partition, a small wrapper, a raw C1, no wrapper at all', () => {
    const interactive = readFileSync(fixture('2KiB.commit2in.json'));
    assert.equal(splitCommit2In(interactive, 0), undefined, 'one partition: nothing to do in parallel');
    assert.equal(splitCommit2In(Buffer.from(sealed.commit2In), 2 ** 21), undefined, 'under minBytes');
    assert.equal(splitCommit2In(Buffer.from(sealed.c1Text), 0), undefined, 'a raw C1 has no Phase1Out');
    assert.equal(splitCommit2In(Buffer.from('[1,2]'), 0), undefined);
  });

  test('structures a byte scan could misread: split as the whole parse reads them, or not split', () => {
    const c1 = JSON.parse(sealed.c1Text) as Record<string, unknown>;
    const vp = c1.vanilla_proofs as Record<string, unknown[]>;
    const key = Object.keys(vp)[0]!;
    const text = (o: unknown, space?: number): string => JSON.stringify(o, null, space);
    const compact = text(c1);
    const p5 = splitCommit2In(wrap(compact), 0)!.ranges[5]!;
    const cases: [string, string, 'same' | 'refused-both' | 'not-split'][] = [
      ['indented, CRLF line ends', text(c1, 2).replace(/\n/g, '\r\n'), 'same'],
      ['a key before with brackets, quotes and escapes in its string', `{"x":"]}[{\\"\\\\",${text(c1).slice(1)}`, 'same'],
      ['vanilla_proofs first', text({ vanilla_proofs: vp, ...c1 }), 'same'],
      ['12 partitions', text({ ...c1, vanilla_proofs: { [key]: vp[key]!.slice(0, 12) } }), 'refused-both'],
      ['a partition of 17 challenges', text({ ...c1, vanilla_proofs: { [key]: [(vp[key]![0] as unknown[]).slice(1), ...vp[key]!.slice(1)] } }), 'refused-both'],
      ['a second key beside the partitions', text({ ...c1, vanilla_proofs: { ...vp, other: [] } }), 'not-split'],
      ['vanilla_proofs twice (JSON.parse keeps the last)', `{"vanilla_proofs":{"${key}":[[],[]]},${text(c1).slice(1)}`, 'not-split'],
      ['partitions an object', text({ ...c1, vanilla_proofs: { [key]: { 0: vp[key]![0] } } }), 'not-split'],
      ['trailing garbage', `${text(c1)}]`, 'not-split'],
      ['partition 5 without its closing bracket', compact.slice(0, p5[1] - 1) + compact.slice(p5[1]), 'refused-both'],
      ['partition 5 without its opening bracket', compact.slice(0, p5[0]) + compact.slice(p5[0] + 1), 'refused-both'],
    ];
    for (const [what, c1Text, expect] of cases) {
      const b = wrap(c1Text);
      const w = whole(b);
      const s = split(b);
      if (expect === 'same') {
        assert.ok(w.ok, `${what}: whole`);
        assert.deepEqual(s, w, what);
      } else if (expect === 'not-split') {
        assert.equal(s, undefined, what);
      } else {
        assert.ok(!w.ok, `${what}: whole refuses it`);
        assert.ok(s === undefined || !s.ok, `${what}: the split parse refuses it too`);
      }
    }
  });

  test('random mutations of the C1 JSON: the split parse accepts exactly what the whole parse accepts, with the same result', () => {
    const c1 = Buffer.from(sealed.c1Text);
    const r = rng(28);
    // structural bytes and digits, where a mutation changes what the bytes mean
    const alphabet = Buffer.from('[]{},:" 0123456789a-\\');
    let splitOk = 0;
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      const m = Buffer.from(c1);
      for (let j = 0, n = 1 + r.int(3); j < n; j++) {
        // half of the mutations near the partitions' boundaries (where the scan decides), half anywhere
        const near = r.bool() ? m.indexOf(']],[[', r.int(m.length)) : -1;
        const at = near >= 0 ? near + r.int(5) : r.int(m.length);
        m[at] = alphabet[r.int(alphabet.length)]!;
      }
      const b = wrap(m);
      const w = whole(b);
      const s = split(b);
      if (s !== undefined && s.ok) {
        assert.ok(w.ok, `mutation ${i}: the split parse accepted what the whole parse refuses (${w.ok ? '' : w.error})`);
        assert.deepEqual(s, w, `mutation ${i}`);
        splitOk++;
      } else {
        assert.ok(!w.ok || s === undefined, `mutation ${i}: split and refused, whole accepted`);
        if (!w.ok) refused++;
      }
    }
    assert.ok(splitOk > 0 && refused > 0, `both outcomes seen (${splitOk} accepted, ${refused} refused)`);
  });
});

describe("the PoRep planner's tasks", () => {
  test('porepPlanTask splits a large C1; porepParsePartition gives each partition packed, with the public inputs of the whole plan', () => {
    const bytes = Buffer.from(sealed.commit2In);
    const planned = porepPlanTask({ bytes });
    assert.ok(planned.ok && planned.split !== undefined);
    assert.equal(planned.count, 0, 'replica_id checked against the wrapper\'s Miner');
    const all = porepPlanTask({ bytes, whole: true });
    assert.ok(all.ok && all.split === undefined);
    assert.ok(all.inputs !== undefined);
    const { c2, json, ranges, path } = planned.split;
    const { partitions: _none, ...head } = c2.phase1Out;
    ranges.forEach((range, k) => {
      const p = porepParsePartition({ json, range, path, partition: k, head, partitions: ranges.length });
      assert.ok(p.ok, `partition ${k}`);
      assert.equal(p.count, c2.phase1Out.registeredProof.challengesPerPartition);
      assert.ok(p.packed.buffer instanceof SharedArrayBuffer);
      assert.deepEqual(p.inputs, all.inputs![k], `partition ${k}: public inputs`);
      assert.deepEqual(unpackC1Partition({ ...head, partitions: ranges.map((_, i) => (i === k ? p.packed : all.c2.phase1Out.partitions[i]!)), challengeCounts: [] }, k).partitions[k], unpackC1Partition(all.c2.phase1Out, k).partitions[k]);
    });
    // a broken partition: refused (the planner then parses whole, for the whole parse's message)
    assert.deepEqual(porepParsePartition({ json, range: [ranges[4]![0], ranges[4]![1] - 1], path, partition: 4, head, partitions: ranges.length }), { ok: false });
    // stated challenges are a property of every partition: never split
    const stated = porepPlanTask({ bytes, statedNiChallenges: true });
    assert.ok(stated.ok && stated.split === undefined);
  });
});
