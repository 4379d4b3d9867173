#!/usr/bin/env node
// npm test's runner, after `tsc -p .`: the test files that only compute run two at a time, then every other
// file one at a time on a machine they have to themselves. Most of the computing files are single-threaded
// JavaScript (circuits in TestConstraintSystem, gadget counts, codecs), so on the 2-core CI machine a second
// one uses the core the first leaves idle. The rest stay serial: daemons and servers, child processes of the
// CLI, the journal and its disk, anything that measures wall-clock time or memory, and the end-to-end proofs
// (the native prover already takes every core).
//   node scripts/test.mjs            both groups (exit status 1 if either failed)
//   node scripts/test.mjs --list     the two groups, one file a line
//   node scripts/test.mjs r1cs gpu/cuda ...   only these files (names as in dist/test/, without .test.js, or
//                                             their paths); an unknown name is an error
// A file joins PARALLEL only when it binds no port, starts no process or daemon, asserts no time or memory
// figure, and its peak memory (with any other member's) fits the CI machine's 24 GiB: the largest, the 2 KiB
// partition in TestConstraintSystem (circuit-2kib), peaks near 6 GiB.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { run } from 'node:test';
import { tap } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

// longest first (single runs on the loaded CI machine, 2026-12-05: witness-program 380 s, snap-circuit 220 s,
// circuit-2kib 146 s, snap-vanilla 94 s, circuit-stacked 85 s, shape-replication 72 s, …)
const PARALLEL = new Set([
  'witness-program', 'snap-circuit', 'circuit-2kib', 'snap-vanilla', 'circuit-stacked', 'shape-replication',
  'snap-program', 'seal-synthetic', 'seal-synthetic-circuit', 'post-circuit', 'gadgets-sha256', 'post-program',
  'gadgets-merkle', 'circuit-por', 'seal-parts', 'post-vanilla-synthetic', 'post-vanilla-generate', 'filecoin-graph',
  'filecoin-poseidon', 'demo-circuit', 'reference-backend', 'r1cs', 'post-vanilla-codec', 'encoding',
  'filecoin-tree', 'circuit-poseidon', 'gadgets-num', 'gadgets-uint32', 'params-names', 'gadgets-boolean',
  'device-plan', 'filecoin-registry', 'snap-registry',
  // short ones (a few seconds with the process start, ~2 of them loading): no port, process, timing or memory figure
  'groth16-keys', 'native-curve', 'native-lincomb', 'groth16-partition', 'native-vs-reference', 'native-field',
  'native-csr', 'config-example', 'compiled-circuit', 'tuning', 'import-graph', 'json-limits', 'c1-split', 'post-split', 'groth16-setup-scalars',
]);

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join('dist', 'test');
// test files only (the runner given the folder would also start support.js and the other helpers, which hold no
// tests), test/gpu/ included: there they skip, naming what is missing
const files = readdirSync(join(root, dir), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.test.js'))
  .sort();
const name = (f) => f.slice(0, -'.test.js'.length);
const missing = [...PARALLEL].filter((n) => !files.some((f) => name(f) === n));
if (missing.length > 0) {
  console.error(`scripts/test.mjs: no dist/test/<name>.test.js for ${missing.join(', ')} (renamed? update PARALLEL)`);
  process.exit(2);
}
// names as in dist/test/ without .test.js; a path (dist/test/x.test.js, test/x.test.ts) is taken for its name
const only = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('--'))
  .map((a) => a.replace(/^(\.\/)?(dist\/)?test\//, '').replace(/\.test\.(js|ts)$/, ''));
const unknown = only.filter((n) => !files.some((f) => name(f) === n));
if (unknown.length > 0) {
  console.error(`scripts/test.mjs: no test file ${unknown.map((n) => `dist/test/${n}.test.js`).join(', ')} (names as in dist/test/, e.g. r1cs or gpu/cuda)`);
  process.exit(2);
}
const chosen = (n) => only.length === 0 || only.includes(n);
const parallel = [...PARALLEL].filter(chosen).map((n) => join(dir, `${n}.test.js`));
const serial = files.filter((f) => !PARALLEL.has(name(f)) && chosen(name(f))).map((f) => join(dir, f));

if (process.argv.includes('--list')) {
  for (const [what, group] of [['two at a time', parallel], ['one at a time', serial]]) console.log(`# ${what}\n${group.join('\n')}`);
  process.exit(0);
}

// node:test's run() keeps the order given (`node --test` sorts its files): the parallel group starts with its
// longest files, so that its two lanes end together. One TAP stream per group, as two `node --test` runs print.
let failed = false;
for (const [concurrency, group] of [[2, parallel], [1, serial]]) {
  const stream = run({ files: group.map((f) => join(root, f)), concurrency });
  stream.on('test:fail', () => void (failed = true));
  await pipeline(stream.compose(tap), process.stdout, { end: false });
}
process.exitCode = failed ? 1 : 0;
