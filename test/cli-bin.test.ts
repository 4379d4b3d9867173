/** The `kiln` command as the README's quick start runs it: `node dist/src/cli/main.js` in the checkout (the
 *  file package.json's bin names), and `kiln` on the PATH after `npm link --ignore-scripts`, which execs that
 *  bin directly: the compiled file must carry the execute bit (scripts/chmod-bin.cjs after tsc) and a node
 *  shebang, and answer --help. Never `npx kiln` (issue 25: it installs the repository again into npx's cache). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type SpawnSyncReturns, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadNative, nativeAvailable } from '../src/backend/native.js';
import { repoRoot } from './support.js';

const root = repoRoot;
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

/** The command lines of the README's first ```sh block after `heading` (comments and blank lines cut). */
function shellBlock(heading: string): string[] {
  const at = readme.indexOf(heading);
  assert.ok(at >= 0, `README has no ${heading}`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `no sh block after ${heading}`);
  return block[1]!
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l !== '');
}

test('the kiln bin is executable and runs without `node` in front', () => {
  const file = path.join(root, pkg.bin.kiln);
  assert.ok(statSync(file).mode & 0o100, `${pkg.bin.kiln} is not executable (run node scripts/chmod-bin.cjs)`);
  assert.match(readFileSync(file, 'utf8').split('\n')[0], /^#!\/usr\/bin\/env node/);
  const out = execFileSync(file, ['--help'], { encoding: 'utf8' });
  assert.match(out, /Usage: kiln/);
  assert.match(out, /demo/);
});

test("the README's quick start runs the checkout's own CLI (package.json's bin) after one build, and no line of the README runs npx kiln", () => {
  // exactly two commands: the main job after `npm ci` (which builds dist/ through the prepare script), and the tests
  assert.deepEqual(shellBlock('## Quick start'), [`npm ci && node ${pkg.bin.kiln} demo`, 'npm test']);
  // the PATH line: `npm link` of the checkout, without running the install/prepare scripts a second time
  assert.deepEqual(shellBlock('To type `kiln`'), ['npm link --ignore-scripts']);
  const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));
  assert.deepEqual(
    commands.filter((l) => /^\s*npx\s+kiln\b/.test(l)),
    [],
    'npx kiln installs the repository again (checkout) or runs an unrelated package (elsewhere)',
  );
});

test("`npm link --ignore-scripts` (the README's line) puts this checkout's dist/src/cli/main.js on the PATH as kiln", () => {
  const prefix = mkdtempSync(path.join(tmpdir(), 'kiln-npm-link-'));
  try {
    // a private global prefix: the machine's own global bin is left alone; --offline: nothing is fetched
    execFileSync('npm', ['link', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], {
      cwd: root,
      env: { ...process.env, NPM_CONFIG_PREFIX: prefix },
      stdio: 'pipe',
    });
    const linked = path.join(prefix, 'bin', 'kiln');
    assert.equal(realpathSync(linked), realpathSync(path.join(root, pkg.bin.kiln)));
    assert.match(execFileSync(linked, ['--help'], { encoding: 'utf8' }), /Usage: kiln/);
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
});

test('node dist/src/cli/main.js --help answers in under a second (npx kiln took 2.5–6 s)', () => {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [path.join(root, pkg.bin.kiln), '--help'], { encoding: 'utf8' });
    times.push(performance.now() - t0);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Usage: kiln/);
  }
  const best = Math.min(...times);
  console.log(`# node ${pkg.bin.kiln} --help: ${times.map((t) => t.toFixed(0)).join(', ')} ms`);
  assert.ok(best < 1000, `best of 3: ${best.toFixed(0)} ms`);
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

test('the tuning variables are read once before a command runs: a bad one stops it, naming it; KILN_NO_IFMA reaches the CPU addon', () => {
  const kiln = (env: Record<string, string>, ...args: string[]): SpawnSyncReturns<string> =>
    spawnSync(process.execPath, [path.join(root, pkg.bin.kiln), ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  for (const [env, message] of [
    [{ KILN_GPU_MEMORY_LIMIT: '5' }, 'kiln: KILN_GPU_MEMORY_LIMIT: memory limit 5: at least 1 GiB'],
    [{ KILN_WITNESS: 'wasm' }, 'kiln: KILN_WITNESS must be native or ts, got wasm'],
    [{ KILN_MSM_ACC: '7' }, 'kiln: KILN_MSM_ACC=7: expected the MSM accumulation kernel: 0, 1, 2, 3, 4 or 5 (the default)'],
  ] as const) {
    const r = kiln(env, 'info');
    assert.equal(r.status, 1, `${JSON.stringify(env)}: ${r.stdout}`);
    assert.equal(r.stderr.trim(), message);
  }
  const features = (env: Record<string, string>): string[] => {
    const r = kiln({ KILN_GPU_MEMORY_LIMIT: '24GiB', KILN_WITNESS: 'ts', ...env }, 'info');
    assert.equal(r.status, 0, r.stderr);
    return (JSON.parse(r.stdout) as { cpu: { features: string[] } }).cpu.features;
  };
  assert.ok(!features({ KILN_NO_IFMA: '1' }).includes('avx512-ifma'), 'KILN_NO_IFMA=1: the scalar kernels');
  // without it, IFMA where this build and CPU have it (what this process's addon, told nothing, reports)
  const ifma = nativeAvailable() && loadNative().capabilities().ifma;
  assert.equal(features({ KILN_NO_IFMA: '' }).includes('avx512-ifma'), ifma);
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

test('--help speaks one vocabulary: old spellings hidden (still accepted), required options marked, defaults and environment shown', async () => {
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, readFileSync: read, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const kiln = (...args: string[]): { status: number | null; stdout: string; stderr: string } =>
    spawnSync(process.execPath, [path.join(root, 'dist/src/cli/main.js'), ...args], { encoding: 'utf8', env: { ...process.env, KILN_PROGRESS: '0' } });
  const top = kiln('--help').stdout;
  for (const v of ['FIL_PROOFS_PARAMETER_CACHE', 'KILN_CACHE_DIR', 'KILN_PROGRESS', 'KILN_PROGRESS_INTERVAL', 'KILN_GPU_MEMORY_LIMIT', 'KILN_SPAN_GAPS']) assert.match(top, new RegExp(`^  ${v}`, 'm'), v);
  const commands = ['demo', 'demo-circuit', 'seal', 'synth-c1', 'prove', 'verify', 'circuit-info', 'setup', 'prove-post', 'verify-post', 'update', 'synth-snap',
    'prove-snap', 'verify-snap', 'daemon', 'params', 'gen-vanilla', 'synth-post'];
  const help = new Map(commands.map((c) => [c, kiln(c, '--help').stdout]));
  for (const c of ['single', 'batch']) help.set(`bench ${c}`, kiln('bench', c, '--help').stdout);
  for (const [c, h] of help) {
    assert.match(h, /^Usage: kiln /m, c);
    // one name per thing: a sector directory is --sector-dir, a sector number --sector-number, a partition --partition-index,
    // the parameter cache --params-dir, the miner --miner-id; --seed is only the PoRep interactive seed
    assert.doesNotMatch(h, /--sector <|--partition <|--dir <|--miner <|--first-sector <|--seed <n>/, c);
  }
  assert.match(help.get('seal')!, /--out <file> +where to write the Commit2In JSON \(required\)/);
  assert.match(help.get('seal')!, /--seed <hex> +the PoRep interactive\s+seed/);
  assert.match(help.get('gen-vanilla')!, /--sector-dir <dir>[\s\S]*\(required\)/);
  assert.match(help.get('bench single')!, /--priority <p>[\s\S]*default:\s+the\s+kind's/);
  assert.match(help.get('bench single')!, /--type <kind> +porep \| snap \| wpost \| winning \(required\)/);
  // prove-post takes the registered proof from the vanilla file when it is not given
  assert.doesNotMatch(help.get('prove-post')!, /--registered-proof[^\n]*\n?[^\n]*\(required\)/);
  assert.match(help.get('prove-post')!, /--partition-index <k>/);
  assert.match(help.get('demo')!, /about\s+5\s+minutes\s+on\s+2\s+cores/);
  // old spellings still work: synth-snap --seed is --rng-seed
  const dir = mkdtempSync(path.join(tmpdir(), 'kiln-aliases-'));
  try {
    assert.equal(kiln('synth-snap', '--sector-size', '2KiB', '--out', path.join(dir, 'a'), '--rng-seed', '5').status, 0);
    assert.equal(kiln('synth-snap', '--sector-size', '2KiB', '--out', path.join(dir, 'b'), '--seed', '5').status, 0);
    assert.equal(kiln('synth-snap', '--sector-size', '2KiB', '--out', path.join(dir, 'c'), '--seed', '6').status, 0);
    const v = (d: string): string => read(path.join(dir, d, 'vanilla.json'), 'utf8');
    assert.equal(v('a'), v('b'));
    assert.notEqual(v('a'), v('c'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('verify-post / prove-post take the registered proof from the vanilla file when --registered-proof is not given', async () => {
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const kiln = (...args: string[]): { status: number | null; stderr: string } =>
    spawnSync(process.execPath, [path.join(root, 'dist/src/cli/main.js'), ...args], { encoding: 'utf8', env: { ...process.env, KILN_PROGRESS: '0' } });
  const dir = mkdtempSync(path.join(tmpdir(), 'kiln-post-proof-'));
  const r = '0'.repeat(64);
  try {
    const v = path.join(dir, 'v.json');
    assert.equal(kiln('synth-post', '--type', 'window', '--sector-size', '2KiB', '--randomness', r, '--sectors', '2', '--out', v, '--partition-index', '0').status, 0);
    const dirs = ['--params-dir', path.join(dir, 'p'), '--cache-dir', path.join(dir, 'c')];
    // no parameters here: the refusal names the proof the file determined (it stopped at --registered-proof before)
    const w = kiln('verify-post', '--type', 'window', '--vanilla', v, '--randomness', r, '--proof', v, ...dirs);
    assert.equal(w.status, 1);
    assert.match(w.stderr, /^kiln: no verifying key for StackedDrgWindow2KiBV1_1: /m);
    const wrong = kiln('verify-post', '--type', 'winning', '--vanilla', v, '--randomness', r, '--proof', v, ...dirs);
    assert.match(wrong.stderr, /--vanilla \S+v\.json: \d+-byte sector proofs match no winning PoSt proof; give --registered-proof/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an in-process engine\'s error names the user\'s input instead of the gRPC field', async () => {
  const { userInputError } = await import('../src/cli/local-engine.js');
  assert.equal(userInputError('vanilla_proof (Commit2In): (root): not valid JSON', '--c1 c1.json'), '--c1 c1.json: (root): not valid JSON');
  assert.equal(userInputError('vanilla_proofs[3]: sector 7: truncated', '--vanilla v.json'), '--vanilla v.json element 3: sector 7: truncated');
  assert.equal(userInputError('StackedDrg2KiBV1 vanilla_proofs[0]: partition 0: x', '--vanilla v.json'), '--vanilla v.json element 0 (StackedDrg2KiBV1): partition 0: x');
  assert.equal(userInputError('vanilla_proofs is empty: …', '--vanilla v.json'), '--vanilla v.json is empty: …');
  assert.equal(userInputError('vanilla_proofs[3]: x', undefined), 'vanilla_proofs[3]: x');
});
