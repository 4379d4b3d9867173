/**
 * `kiln prove` / `kiln verify` over every kind (cli/kind-family.ts): the kind named or implied by the inputs,
 * refusals that name what is wrong, and a WinningPoSt proved by `prove --kind winning` that `verify --kind
 * winning` and the old `verify-post` both accept (and one from `prove-post` that the family accepts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveKind } from '../src/cli/kind-family.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const kiln = (...args: string[]): { status: number | null; stdout: string; stderr: string } =>
  spawnSync(process.execPath, [path.join(root, 'dist/src/cli/main.js'), ...args], { encoding: 'utf8', env: { ...process.env, KILN_PROGRESS: '0' } });

test('resolveKind: named, implied by the inputs, and the refusals name what is wrong', () => {
  assert.equal(resolveKind({ c1: 'a.json' }), 'porep');
  assert.equal(resolveKind({ update: 'u.json' }), 'snap');
  assert.equal(resolveKind({ update: 'u.json', vanilla: 'v.json' }), 'snap');
  assert.equal(resolveKind({ kind: 'winning', vanilla: 'v', randomness: '00' }), 'winning');
  assert.equal(resolveKind({ kind: 'window', vanilla: 'v', randomness: '00', partitionIndex: '2' }), 'window');
  assert.equal(resolveKind({ kind: 'porep', c1: 'a', insecureStatedChallenges: true }), 'porep');
  assert.throws(() => resolveKind({ kind: 'wpost', c1: 'a' }), /--kind wpost: not a proof kind \(porep, winning, window, snap\)/);
  assert.throws(() => resolveKind({ vanilla: 'v', randomness: '00' }), /--kind winning or --kind window/);
  assert.throws(() => resolveKind({}), /name the proof with --kind/);
  assert.throws(() => resolveKind({ c1: 'a', randomness: '00' }), /--randomness: not an input of --kind porep/);
  assert.throws(() => resolveKind({ kind: 'winning', vanilla: 'v', randomness: '00', partitionIndex: '1' }), /--partition-index: not an input of --kind winning/);
  assert.throws(() => resolveKind({ kind: 'snap', c1: 'a' }), /--c1: not an input of --kind snap/);
  assert.throws(() => resolveKind({ kind: 'window', vanilla: 'v' }), /--kind window needs --randomness/);
  assert.throws(() => resolveKind({ kind: 'porep' }), /--kind porep needs --c1/);
});

test('prove --kind winning / verify --kind winning agree with prove-post / verify-post (2 KiB, INSECURE development parameters)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'kiln-kind-'));
  const r = '0'.repeat(64);
  try {
    const v = path.join(dir, 'v.json');
    assert.equal(kiln('synth-post', '--type', 'winning', '--sector-size', '2KiB', '--randomness', r, '--out', v).status, 0);
    const dirs = ['--params-dir', path.join(dir, 'p'), '--cache-dir', path.join(dir, 'c')];
    const post = ['--vanilla', v, '--randomness', r, ...dirs];
    const a = path.join(dir, 'a.proof');
    const p = kiln('prove', '--kind', 'winning', ...post, '--out', a, '--backend', 'native');
    assert.equal(p.status, 0, p.stderr);
    assert.match(p.stdout, /proof: 192 B/);
    assert.equal(readFileSync(a).length, 192);
    const ok = kiln('verify', '--kind', 'winning', ...post, '--proof', a);
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(kiln('verify-post', '--type', 'winning', ...post, '--proof', a).status, 0);
    // the old command's proof, verified by the family; a proof of other randomness is INVALID
    const b = path.join(dir, 'b.proof');
    assert.equal(kiln('prove-post', '--type', 'winning', ...post, '--out', b, '--backend', 'native').status, 0);
    assert.equal(kiln('verify', '--kind', 'winning', ...post, '--proof', b).status, 0);
    const other = kiln('verify', '--kind', 'winning', '--vanilla', v, '--randomness', `${'0'.repeat(62)}01`, ...dirs, '--proof', a);
    assert.equal(other.status, 1);
    // refusals, before anything is read
    const foreign = kiln('prove', '--kind', 'winning', ...post, '--c1', v);
    assert.equal(foreign.status, 1);
    assert.match(foreign.stderr, /^kiln: --c1: not an input of --kind winning/m);
    assert.match(kiln('verify', '--vanilla', v, '--randomness', r, '--proof', a).stderr, /--kind winning or --kind window/);
    // the kind implied by the input: porep and snap reach their own readers
    assert.match(kiln('prove', '--c1', path.join(dir, 'nope.json'), ...dirs).stderr, /^kiln: --c1 \S+nope\.json: cannot read it \(ENOENT\)$/m);
    assert.match(kiln('verify', '--update', path.join(dir, 'nope.json'), '--proof', a, ...dirs).stderr, /nope\.json/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
