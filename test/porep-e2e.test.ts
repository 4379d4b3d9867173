/**
 * PoRep C2 end to end, through the real entry points: the `kiln` command (setup, prove, verify, seal, demo)
 * and the daemon over gRPC (a client built at run time from proto/cuzk.proto). The 2 KiB circuit gets
 * INSECURE development parameters, made once by `kiln setup` into the kiln cache and used by every later step,
 * the daemon included, with no cache option anywhere: the CLI and the daemon both read $KILN_CACHE_DIR and
 * $FIL_PROOFS_PARAMETER_CACHE (one cache, one rule; about two minutes on a 2-core machine for the setup, the
 * proofs themselves ~20 s each, the NI-PoRep one 13 partitions of them: 6-7.5 minutes). Every result says INSECURE.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseC1, parseCommit2In } from '../src/filecoin/c1.js';
import { porepParamsSource, porepShape, verifyPorep } from '../src/kinds/porep/porep-c2.js';
import { loadPorepVerifyingKey } from '../src/kinds/params.js';
import { pino } from 'pino';
import { fixture } from './support.js';
import { kilnCli, suiteDaemon } from './e2e-support.js';


let dir: string;
/** $KILN_CACHE_DIR of this file: the CLI's --cache-dir and the daemon's [kiln] cache_dir by default. */
let cache: string;
/** $FIL_PROOFS_PARAMETER_CACHE: no official parameters there. */
let params: string;
const savedEnv = { cache: process.env.KILN_CACHE_DIR, params: process.env.FIL_PROOFS_PARAMETER_CACHE };

const kiln = kilnCli;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-porep-e2e-'));
  cache = join(dir, 'cache');
  params = join(dir, 'no-official-params');
  // the kiln processes below inherit them; the daemon of this process reads them at start
  process.env.KILN_CACHE_DIR = cache;
  process.env.FIL_PROOFS_PARAMETER_CACHE = params;
});

after(async () => {
  process.env.KILN_CACHE_DIR = savedEnv.cache;
  if (savedEnv.params === undefined) delete process.env.FIL_PROOFS_PARAMETER_CACHE;
  else process.env.FIL_PROOFS_PARAMETER_CACHE = savedEnv.params;
  await rm(dir, { recursive: true, force: true });
});

/** The development parameter files of the kiln cache, with their modification times. */
function devParams(): Map<string, number> {
  const d = join(cache, 'dev-params');
  return new Map(readdirSync(d).map((f) => [f, statSync(join(d, f)).mtimeMs]));
}

test('kiln setup makes the 2 KiB development parameters into the kiln cache; kiln prove uses them and kiln verify accepts, both saying INSECURE; any other comm_r is rejected', async () => {
  const s = await kiln(['setup', '--sector-size', '2KiB']);
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stderr, /INSECURE development parameters/);
  const made = devParams();
  assert.equal([...made.keys()].filter((f) => /^dev-[0-9a-f]+\.(params|vk)$/.test(f)).length, 2, [...made.keys()].join(', '));

  const proof = join(dir, 'fixture.proof');
  const p = await kiln(['prove', '--c1', fixture('2KiB.commit2in.json'), '--out', proof]);
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stderr, /INSECURE development parameters \(no official ones in .*no-official-params\), cached: /); // setup's, not made again
  assert.match(p.stdout, /msm_h/); // the timing breakdown
  assert.match(p.stdout, /^proof: 192 B written to .*, every partition verified \(INSECURE development parameters .*dev-[0-9a-f]+\.params: never accepted on chain\)$/m);
  assert.equal(readFileSync(proof).length, 192);
  assert.deepEqual(devParams(), made);

  const ok = await kiln(['verify', '--c1', fixture('2KiB.c1.json'), '--proof', proof]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /^valid \(INSECURE development verifying key .*: never accepted on chain\)$/m);

  // The same C1 with another comm_r (still a field element) must not verify.
  const c1 = JSON.parse(readFileSync(fixture('2KiB.c1.json'), 'utf8'));
  for (const flip of [0, 17]) {
    const other = structuredClone(c1);
    other.comm_r[flip] ^= 1;
    const f = join(dir, `other-comm-r-${flip}.json`);
    writeFileSync(f, JSON.stringify(other));
    const bad = await kiln(['verify', '--c1', f, '--proof', proof]);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /INVALID/);
  }
});

test('kiln seal → kiln prove → kiln verify on a sector kiln sealed itself', async () => {
  const c1File = join(dir, 'sealed.json');
  const s = await kiln(['seal', '--sector-size', '2KiB', '--out', c1File, '--rng-seed', 'e2e', '--miner', 'f01234', '--sector', '7']);
  assert.equal(s.code, 0, s.stderr);
  const c2 = parseCommit2In(readFileSync(c1File));
  assert.equal(c2.sectorNum, 7);
  const proof = join(dir, 'sealed.proof');
  const p = await kiln(['prove', '--c1', c1File, '--out', proof]);
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stderr, /development parameters.*cached/); // made by kiln setup, reused
  const v = await kiln(['verify', '--c1', c1File, '--proof', proof]);
  assert.equal(v.code, 0, v.stdout + v.stderr);
  // The fixture's proof is not a proof of this sector.
  const wrong = await kiln(['verify', '--c1', c1File, '--proof', join(dir, 'fixture.proof')]);
  assert.equal(wrong.code, 1);
});

test('kiln demo, as the README\'s quick start runs it, with the parameters kiln setup made: verified, and says INSECURE', async () => {
  const d = await kiln(['demo']); // `node dist/src/cli/main.js demo` (test/cli-bin.test.ts pins the README's line)
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stderr, /INSECURE development parameters \(no official ones in .*\), cached: /);
  assert.match(d.stdout, /^verified: yes \(INSECURE development parameters .*: never accepted on chain\)$/m);
});

describe('the daemon over gRPC', () => {
  // One daemon with the CLI's defaults ($KILN_CACHE_DIR, $FIL_PROOFS_PARAMETER_CACHE; development parameters
  // allowed) for both tests, logging into `log`: the 2 KiB parameters (1.1 GB) are read once, by the first proof.
  const log: { level: number; msg: string }[] = [];
  const daemon = suiteDaemon(() => ({
    // no cache or parameter directory configured: the daemon's defaults are the CLI's ($KILN_CACHE_DIR, $FIL_PROOFS_PARAMETER_CACHE)
    socket: join(dir, 'kiln.sock'),
    httpListen: '',
    logger: pino({ level: 'info' }, { write: (line: string) => void log.push(JSON.parse(line) as { level: number; msg: string }) }),
    timeoutMs: 1_800_000,
    configure: (c) => {
      c.srs.dev_params = true;
    },
  }));
  const prove = (submit: Record<string, unknown>): Promise<any> => daemon.get().prove(submit);

  test('the daemon proves the 2 KiB fixture over gRPC (Curio\'s Commit2In in vanilla_proof) with the parameters kiln setup made, and the proof verifies', async () => {
    const made = devParams();
    const wrapper = readFileSync(fixture('2KiB.commit2in.json'));
    const r = await prove({ request_id: 'e2e-2k', proof_kind: 1, sector_size: 2048, registered_proof: 5, vanilla_proof: wrapper });
    assert.equal(r.status, 1, r.error_message); // COMPLETED
    assert.equal(r.proof.length, 192);
    assert.ok(r.total_ms >= r.queue_wait_ms + r.srs_load_ms, JSON.stringify(r));
    assert.ok(r.synthesis_ms > 0 && r.gpu_compute_ms > 0, JSON.stringify(r));
    // Verified here independently of the daemon, with the verifying key of the shared cache.
    const c1 = parseC1(readFileSync(fixture('2KiB.c1.json')));
    const { shape } = porepShape(c1.registeredProof, cache);
    const vk = await loadPorepVerifyingKey(await porepParamsSource(c1.registeredProof, shape, params, join(cache, 'dev-params')));
    assert.deepEqual(verifyPorep(c1, new Uint8Array(r.proof), vk), [true]);
    // the parameters kiln setup made, read (not made again), and said to be INSECURE at warning level
    assert.deepEqual(devParams(), made);
    const warn = log.filter((l) => l.level === 40).map((l) => l.msg);
    assert.ok(warn.some((m) => m.startsWith(`parameters of porep-2k: INSECURE development parameters (no official ones in ${params}), cached: ${join(cache, 'dev-params')}/dev-`)), warn.join('\n'));
    assert.ok(warn.some((m) => m.startsWith('proof job completed with INSECURE development parameters')), warn.join('\n'));
    assert.ok(!log.some((l) => /generating INSECURE/.test(l.msg)));
    assert.ok(log.some((l) => l.msg.startsWith(`durable jobs: the job journal is in ${join(cache, 'state')}`)));
  });

  test('NI-PoRep: kiln seal --ni → the daemon proves its 13 partitions (registered_proof 15, as Curio sends it) → kiln verify accepts the 2,496 bytes', async () => {
    const c1File = join(dir, 'ni.json');
    const s = await kiln(['seal', '--ni', '--sector-size', '2KiB', '--out', c1File, '--rng-seed', 'e2e-ni', '--miner-id', 'f01234', '--sector-number', '9']);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stderr, /sealed StackedDrg2KiBV1_2_Feat_NonInteractivePoRep/);
    const proofFile = join(dir, 'ni.proof');
    const r = await prove({ request_id: 'e2e-ni', proof_kind: 1, sector_size: 2048, registered_proof: 15, sector_number: 9, vanilla_proof: readFileSync(c1File) });
    assert.equal(r.status, 1, r.error_message); // COMPLETED: every partition verified by the daemon
    assert.equal(r.proof.length, 13 * 192);
    console.log(`# NI-PoRep 2 KiB through the daemon: total_ms ${r.total_ms} (srs_load_ms ${r.srs_load_ms}, synthesis ${r.synthesis_ms}, prove ${r.gpu_compute_ms})`);
    writeFileSync(proofFile, r.proof);
    const v = await kiln(['verify', '--c1', c1File, '--proof', proofFile]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.match(v.stdout, /^partition 12: valid$/m);
    // two partitions' proofs swapped: each proves its own challenges, not the other's
    const p = readFileSync(proofFile);
    writeFileSync(proofFile, Buffer.concat([p.subarray(192, 384), p.subarray(0, 192), p.subarray(384)]));
    const bad = await kiln(['verify', '--c1', c1File, '--proof', proofFile]);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /^partition 0: INVALID$/m);
    assert.match(bad.stdout, /^partition 2: valid$/m);
  });
});
