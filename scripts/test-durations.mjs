#!/usr/bin/env node
// The slowest test files and tests of a `node --test` run, from its TAP output (what `npm test` prints):
//   node scripts/test-durations.mjs ci.log [--top 25]
// Node 20's TAP does not name the file of a test, so each top-level test is given to the first file with a
// test(…)/describe(…) of that name (a template's ${…} matching anything), searching test/*.test.ts in the
// runner's order (alphabetically) from the file of the test before, then from the first; a name built some
// other way stays with that file. A file's figure is the sum of its top-level tests: process start, module
// loading and work at import time are not in it (the run's own total is, and the gap is printed).
// With files two at a time (scripts/test.mjs) the tests add up to more than the wall time: the gap is negative.
import { readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
if (args.length !== 1) {
  console.error('usage: node scripts/test-durations.mjs <tap output> [--top N]');
  process.exit(2);
}
const lines = readFileSync(args[0], 'utf8').split('\n');

const testDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test');
const files = readdirSync(testDir, { recursive: true }).map(String).filter((f) => f.endsWith('.test.ts')).sort();

/** A file's test and suite names as patterns: `${…}` in a template stands for anything. */
function namePatterns(source) {
  const out = [];
  for (const m of source.matchAll(/\b(?:test|describe|it|suite)\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/gs)) {
    const parts = m[2]
      .split(/\$\{(?:[^{}]|\{[^{}]*\})*\}/)
      .map((t) => t.replace(/\\(.)/g, '$1').replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    out.push(new RegExp(`^${parts.join('.*')}$`, 's'));
  }
  return out;
}
const patterns = files.map((f) => namePatterns(readFileSync(join(testDir, f), 'utf8')));

const tests = []; // { name, depth, ms, ok, file }
let total;
let fileAt = 0;
let pending; // the last ok/not ok line, waiting for its duration_ms
for (const line of lines) {
  const m = /^( *)(not ok|ok) \d+ - (.*?)(?: # (?:SKIP|TODO).*)?$/.exec(line);
  if (m) {
    const depth = m[1].length / 4;
    const name = m[3];
    if (depth === 0) {
      const has = (i) => patterns[i].some((re) => re.test(name));
      let i = patterns.findIndex((_, i) => i >= fileAt && has(i));
      if (i < 0) i = patterns.findIndex((_, i) => has(i)); // a second `node --test` run (npm test runs two)
      if (i >= 0) fileAt = i;
    }
    pending = { name, depth, ms: 0, ok: m[2] === 'ok', file: files[fileAt] };
    tests.push(pending);
    continue;
  }
  const d = /^ *duration_ms: ([\d.]+)/.exec(line);
  if (d && pending) {
    pending.ms = Number(d[1]);
    pending = undefined;
    continue;
  }
  const t = /^# duration_ms ([\d.]+)/.exec(line);
  if (t) total = (total ?? 0) + Number(t[1]); // one per `node --test` run
}

const s = (ms) => (ms / 1000).toFixed(1).padStart(7) + ' s';
const topLevel = tests.filter((t) => t.depth === 0);
const perFile = new Map();
for (const t of topLevel) perFile.set(t.file, (perFile.get(t.file) ?? 0) + t.ms);
const sum = [...perFile.values()].reduce((a, b) => a + b, 0);

console.log(
  `${topLevel.length} top-level tests in ${perFile.size} files: ${s(sum)} in tests` +
    (total === undefined ? ' (the run has not finished: no total)' : `, run total ${s(total)} (process starts, loading, gaps: ${s(total - sum)})`),
);
console.log('\nslowest files (sum of top-level tests):');
for (const [f, ms] of [...perFile].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${s(ms)}  ${((100 * ms) / sum).toFixed(1).padStart(5)} %  ${f}`);
}
console.log('\nslowest tests (any depth; a suite includes its tests):');
for (const t of [...tests].sort((a, b) => b.ms - a.ms).slice(0, top)) {
  const name = t.name.length > 110 ? t.name.slice(0, 107) + '...' : t.name;
  console.log(`${s(t.ms)}  ${t.ok ? '  ' : '✗ '}${t.file}: ${'  '.repeat(t.depth)}${name}`);
}
