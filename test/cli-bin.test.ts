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

test('errors name the user\'s option and file, not a gRPC field, with no JSON log line before them', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { spawnSync } = await import('node:child_process');
  const dir = mkdtempSync(path.join(tmpdir(), 'kiln-cli-errors-'));
  const kiln = (...args: string[]): { status: number | null; stderr: string } => {
    const r = spawnSync(process.execPath, [path.join(root, 'dist/src/cli/main.js'), ...args], { encoding: 'utf8', env: { ...process.env, KILN_PROGRESS: '0' } });
    return { status: r.status, stderr: r.stderr };
  };
  try {
    const c1 = path.join(dir, 'c1.json');
    writeFileSync(c1, 'garbage');
    const common = ['--params-dir', path.join(dir, 'params'), '--cache-dir', path.join(dir, 'cache'), '--backend', 'reference'];
    const prove = kiln('prove', '--c1', c1, ...common);
    assert.equal(prove.status, 1);
    const lines = prove.stderr.trim().split('\n');
    assert.ok(!lines.some((l) => l.startsWith('{')), `a JSON line on stderr:\n${prove.stderr}`);
    assert.match(lines.at(-1)!, new RegExp(`^kiln: --c1 ${c1.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: \\(root\\): not valid JSON`));
    assert.doesNotMatch(prove.stderr, /vanilla_proof/);
    assert.match(kiln('verify', '--c1', path.join(dir, 'nope.json'), '--proof', c1).stderr, /^kiln: --c1 \S+nope\.json: cannot read it \(ENOENT\)$/m);
    const toml = path.join(dir, 'kiln.toml');
    writeFileSync(toml, '[srs]\ndev_param = true\n');
    const daemon = kiln('daemon', '-c', toml);
    assert.equal(daemon.status, 1);
    assert.equal(daemon.stderr.trim(), `kiln: ${toml}:2:1: config srs.dev_param: unknown key; did you mean srs.dev_params?`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('long commands show progress without a terminal: a line now and then on stderr (circuit-info)', async () => {
  const { spawnSync } = await import('node:child_process');
  const r = spawnSync(process.execPath, [path.join(root, 'dist/src/cli/main.js'), 'circuit-info', '--sector-size', '2KB'], {
    encoding: 'utf8',
    env: { ...process.env, KILN_PROGRESS: '', KILN_PROGRESS_INTERVAL: '0.2' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).registeredProof, 'StackedDrg2KiBV1_1'); // '2KB' is 2 KiB
  assert.match(r.stderr, /^kiln: counting constraints: \d+ so far, [\d.]+ (ms|s)$/m);
  assert.doesNotMatch(r.stderr, /\x1b/, 'no control characters in a pipe');
});
