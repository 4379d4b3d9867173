/** `kiln params`: the parameter cache listed by circuit, headers and sizes checked, points with --sample/--deep. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { NativeBackend } from '../src/backend/native.js';
import { formatParamsReport, paramsReport } from '../src/cli/params-command.js';
import { porepParamsFileName } from '../src/filecoin/params-names.js';
import { sectorSizeByBytes } from '../src/filecoin/registry.js';
import { encodeParams, readParamsLayout } from '../src/groth16/keys.js';
import { insecureDevSetup } from '../src/groth16/setup.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { recordShape } from '../src/r1cs/shape.js';
import { repoRoot } from './support.js';

const run = promisify(execFile);
let dir: string;
let good: Uint8Array;
const official2k = porepParamsFileName(sectorSizeByBytes(2048)!);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-params-cmd-'));
  const circuit = new DemoCircuit({ constraints: 60, bitsPerWord: 4, publicInputs: 2 });
  const shape = recordShape((cs) => circuit.synthesize(cs));
  good = encodeParams(await insecureDevSetup(shape, new NativeBackend()));
  await mkdir(join(dir, 'cache', 'dev-params'), { recursive: true });
  await writeFile(join(dir, 'cache', 'dev-params', 'dev-0123456789abcdef0123.params'), good);
  await writeFile(join(dir, 'porep-2k.params'), good);
  await writeFile(join(dir, official2k), good.subarray(0, good.length - 10)); // truncated
  await writeFile(join(dir, 'v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-00.params'), good);
  await writeFile(join(dir, official2k.replace(/\.params$/, '.meta')), JSON.stringify({ cid: 'x', sector_size: 4096 }));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('files by circuit, header/size checks, unknown v28 names and wrong meta flagged', async () => {
  const r = await paramsReport({ dir, cacheDir: join(dir, 'cache') });
  const by = new Map(r.files.map((f) => [f.file, f]));
  assert.equal(r.files.length, 5);
  const dev = by.get(join('dev-params', 'dev-0123456789abcdef0123.params'))!; // the kiln cache's, not the parameter directory's
  assert.match(dev.serves, /INSECURE development parameters/);
  assert.deepEqual(dev.problems, []);
  const layout = await readParamsLayout(join(dir, 'porep-2k.params'));
  const kilnName = by.get('porep-2k.params')!;
  assert.match(kilnName.serves, /^porep-2k \(kiln's name\): StackedDrg2KiBV1/);
  assert.deepEqual(kilnName.problems, []);
  assert.equal(kilnName.counts!.h, layout.sections.h.count);
  assert.equal(kilnName.counts!.ic, layout.icCount);
  const truncated = by.get(official2k)!;
  assert.equal(truncated.official, true);
  assert.match(truncated.serves, /^porep-2k: /);
  assert.equal(truncated.problems.length, 1);
  assert.match(truncated.problems[0]!, /b_g2|end|fit|bytes/);
  assert.match(by.get('v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-00.params')!.problems[0]!, /no official circuit/);
  assert.match(by.get(official2k.replace(/\.params$/, '.meta'))!.problems[0]!, /sector_size 4096 but the circuit's is 2048/);
  assert.equal(r.ok, false);
  assert.equal(r.missing.length, 21); // present by name: the (truncated) official 2 KiB PoRep file
  assert.ok(!r.missing.some((m) => m.fileName === official2k));
  const text = formatParamsReport(r).join('\n');
  assert.match(text, /BAD v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138[0-9a-f]+\.params {2}33\.2 KiB/);
  assert.match(text, /^ok {2}porep-2k\.params {2}33\.2 KiB$/m);
});

test('--deep checks every point and finds a point off the curve that the header check cannot see; --sample checks a part', async () => {
  const one = await mkdtemp(join(tmpdir(), 'kiln-params-deep-'));
  try {
    const layout = await readParamsLayout(join(dir, 'porep-2k.params'));
    const bad = Uint8Array.from(good);
    const l = layout.sections.l;
    const at = l.offset + 5 * 96 + 60; // inside the y coordinate of l[5]
    bad[at] ^= 0x01;
    await writeFile(join(one, 'porep-2k.params'), bad);
    const progress: [string, number, number][] = [];
    const shallow = await paramsReport({ dir: one });
    assert.equal(shallow.ok, true, JSON.stringify(shallow.files[0]!.problems));
    const deep = await paramsReport({ dir: one, deep: true, progress: (s, d, t) => void progress.push([s, d, t]) });
    assert.equal(deep.ok, false);
    assert.match(deep.files[0]!.problems[0]!, /section l: point 5/);
    assert.ok(progress.length >= 2 && progress[0]![1] === 0);
    const total = Object.values(layout.sections).reduce((t, s) => t + s.count, 0);
    await writeFile(join(one, 'porep-2k.params'), good);
    const all = await paramsReport({ dir: one, deep: true });
    assert.equal(all.ok, true);
    assert.deepEqual([all.files[0]!.points!.checked, all.files[0]!.points!.total], [total, total]);
    const sample = await paramsReport({ dir: one, sample: 3 });
    assert.ok(sample.files[0]!.points!.checked <= 15 && sample.files[0]!.points!.checked >= 5, String(sample.files[0]!.points!.checked));
  } finally {
    await rm(one, { recursive: true, force: true });
  }
});

test('kiln params on the command line: report on stdout, exit code 1 on problems; on a fresh machine (no directory) what to fetch', async () => {
  const bin = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  const r = await run(process.execPath, [bin, 'params', '--dir', dir, '--cache-dir', join(dir, 'cache')]).catch((e: { code: number; stdout: string }) => e);
  assert.equal((r as { code?: number }).code, 1);
  assert.match((r as { stdout: string }).stdout, /parameter cache .*: 4 file\(s\)/);
  assert.match((r as { stdout: string }).stdout, /kiln cache .*: 1 development parameter file\(s\) \(INSECURE\)/);
  assert.doesNotMatch((r as { stdout: string }).stdout, /\x1b\[/, 'no progress-bar control characters when stdout is not a terminal');
  // the README's `kiln params --sample 1000` with nothing fetched yet: no failure, what is missing and how to get it
  const fresh = await run(process.execPath, [bin, 'params', '--sample', '1000'], { env: { ...process.env, FIL_PROOFS_PARAMETER_CACHE: join(dir, 'nope'), KILN_CACHE_DIR: join(dir, 'no-cache') } });
  assert.match(fresh.stdout, /parameter cache .*nope: does not exist/);
  assert.match(fresh.stdout, /a 32 GiB sector needs 4 files: v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-[0-9a-f]{64}\.params \(porep-32g\), .*\(winning-32g\), .*\(wpost-32g\), .*\(snap-32g\)/);
  assert.match(fresh.stdout, /`curio fetch-params 32GiB` or `lotus fetch-params 32GiB`/);
  const help = await run(process.execPath, [bin, 'params', '--help']);
  assert.match(help.stdout, /--deep/);
});

test('--counts checks ic, h and l against the PoRep circuit: the demo parameters under porep-2k.params do not serve it', async () => {
  const one = await mkdtemp(join(tmpdir(), 'kiln-params-counts-'));
  try {
    await writeFile(join(one, 'porep-2k.params'), good);
    const r = await paramsReport({ dir: one, counts: true });
    assert.equal(r.ok, false);
    // the 2 KiB PoRep partition circuit has 40 public inputs (ONE included; FACTS §4: 40 IC points)
    assert.match(r.files[0]!.problems[0]!, /counts do not match the porep-2k circuit: ic 3 \(circuit: 40\), h 63 \(circuit: \d+\), l 73 \(circuit: \d+\)/);
  } finally {
    await rm(one, { recursive: true, force: true });
  }
});
