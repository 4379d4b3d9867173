/** The shared progress helper (off when stdout is not a terminal) and the shape compile's steps. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { porepInfoForSize, porepShape } from '../src/kinds/porep-c2.js';
import { cliProgressRenderer, progressWanted } from '../src/util/progress.js';

test('bars are off when stdout is not a terminal, unless KILN_PROGRESS=1; KILN_PROGRESS=0 turns them off', () => {
  const saved = process.env.KILN_PROGRESS;
  try {
    delete process.env.KILN_PROGRESS;
    const tty = { isTTY: true } as NodeJS.WriteStream;
    assert.equal(progressWanted(tty), Boolean(process.stdout.isTTY));
    process.env.KILN_PROGRESS = '1';
    assert.equal(progressWanted(tty), true);
    process.env.KILN_PROGRESS = '0';
    assert.equal(progressWanted(tty), false);
  } finally {
    if (saved === undefined) delete process.env.KILN_PROGRESS;
    else process.env.KILN_PROGRESS = saved;
  }
  const off = cliProgressRenderer(process.stderr, false);
  assert.equal(off.enabled, false);
  off.progress('x', 1, 2); // no-op
  off.stop();
});

test('an enabled bar draws on its stream, one bar per stage', () => {
  const written: string[] = [];
  const stream = Object.assign(Object.create(process.stderr) as NodeJS.WriteStream, {
    isTTY: true,
    columns: 100,
    write: (s: string): boolean => {
      written.push(String(s));
      return true;
    },
    cursorTo: (): boolean => true,
    clearLine: (): boolean => true,
    moveCursor: (): boolean => true,
  });
  const r = cliProgressRenderer(stream, true);
  r.progress('stage one', 0, 10);
  r.progress('stage one', 10, 10);
  r.progress('stage two', 1, 4);
  r.stop();
  const text = written.join('');
  assert.match(text, /stage one .*100% \| 10\/10/);
  assert.match(text, /stage two .*25% \| 1\/4/);
});

test('a PoRep shape compile reports its steps in order (the bar of kiln setup, the daemon\'s log lines)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-shape-steps-'));
  try {
    const steps: [string, number, number][] = [];
    const { cached } = porepShape(porepInfoForSize(2048), dir, (s, k, n) => void steps.push([s, k, n]));
    assert.equal(cached, false);
    assert.deepEqual(steps.map(([, k, n]) => [k, n]), [[0, 6], [1, 6], [2, 6], [3, 6], [4, 6], [5, 6], [6, 6]]);
    assert.match(steps[1]![0], /replicate the shape × 2 challenges/);
    const again: unknown[] = [];
    assert.equal(porepShape(porepInfoForSize(2048), dir, (...a) => void again.push(a)).cached, true);
    assert.deepEqual(again, []); // a cached shape is read, not compiled
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
