/** jsonDepthExceeds (util/limits.ts): the string and byte scans agree with a plain character-by-character twin on
 *  random JSON-like text (strings holding brackets, escaped quotes and runs of backslashes) and on edges. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonDepthExceeds } from '../src/util/limits.js';
import { rng } from './support.js';

/** The slow twin: one character at a time. */
function naiveDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      if (++depth > max) return true;
    } else if (c === ']' || c === '}') depth--;
  }
  return false;
}

test('jsonDepthExceeds: string and bytes equal the character-by-character twin on random text and edges', () => {
  const r = rng(2026_12_06);
  const atoms = ['[', ']', '{', '}', '"', '\\', '\\"', '\\\\', '"a[b"', '"\\\\"', '"x\\"[["', '1,', ' ', 'é', '"{{{{"'];
  const edges = ['', '[', ']', '"', '"[[[', '[[[', '"\\"[[[[', '["\\\\"[[[', '[[["]]]"', '[[["\\\\\\"[[["]]]', '{"a":[[[[1]]]]}'];
  const cases: string[] = [...edges];
  for (let n = 0; n < 3000; n++) {
    let s = '';
    const len = r.int(40);
    for (let i = 0; i < len; i++) s += atoms[r.int(atoms.length)];
    cases.push(s);
  }
  for (const s of cases) {
    for (const max of [0, 1, 2, 3, 5]) {
      const want = naiveDepthExceeds(s, max);
      assert.equal(jsonDepthExceeds(s, max), want, `string ${JSON.stringify(s)} max ${max}`);
      assert.equal(jsonDepthExceeds(new TextEncoder().encode(s), max), want, `bytes ${JSON.stringify(s)} max ${max}`);
    }
  }
  const deep = '['.repeat(200) + ']'.repeat(200);
  assert.equal(jsonDepthExceeds(deep, 199), true);
  assert.equal(jsonDepthExceeds(deep, 200), false);
  assert.equal(jsonDepthExceeds(`"${'['.repeat(200)}"`, 1), false, 'brackets inside a string do not count');
});
