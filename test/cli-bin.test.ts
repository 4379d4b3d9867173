/** The `kiln` command as the README's quick start runs it (`npx kiln …` execs package.json's bin
 *  directly): the compiled file must carry the execute bit (scripts/chmod-bin.cjs after tsc) and a
 *  node shebang, and answer --help. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './support.js';

const root = repoRoot;

test('the kiln bin is executable and runs without `node` in front', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  const file = path.join(root, pkg.bin.kiln);
  assert.ok(statSync(file).mode & 0o100, `${pkg.bin.kiln} is not executable (run node scripts/chmod-bin.cjs)`);
  assert.match(readFileSync(file, 'utf8').split('\n')[0], /^#!\/usr\/bin\/env node/);
  const out = execFileSync(file, ['--help'], { encoding: 'utf8' });
  assert.match(out, /Usage: kiln/);
  assert.match(out, /demo/);
});
