/**
 * WinningPoSt and WindowPoSt end to end through the real entry points, on two 2 KiB sectors sealed by kiln
 * (`kiln seal --sector-dir`) whose vanilla proofs `kiln gen-vanilla` makes (INSECURE development
 * parameters made once into a temporary cache shared by every step: ~20 s on 2 cores, then a few seconds per proof):
 *  - `kiln prove-post` / `kiln verify-post` from vanilla proof files (cuzk-bench's JSON of base64 bincode elements);
 *  - the daemon over gRPC (a client built at run time from proto/cuzk.proto, as Curio's generated client sees the
 *    wire): Prove returns a proof that verifies; malformed bincode (truncated, wrong tag, wrong lengths, trailing
 *    bytes) and wrong randomness FAIL naming the problem while the daemon keeps serving;
 *  - the engine: a WinningPoSt submitted behind queued PoRep-priority work starts first.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { selectBackend } from '../src/backend/select.js';
import { defaultConfig } from '../src/engine/config.js';
import { Engine } from '../src/engine/engine.js';
import { AwaitStatus, Priority, ProofKind, proofRequest, type Planner } from '../src/engine/types.js';
import { postProofById } from '../src/filecoin/post/registry.js';
import { parsePoStSectorProof, readVanillaFile } from '../src/filecoin/post/vanilla.js';
import { createDemoKind } from '../src/kinds/demo-circuit.js';
import { loadPorepVerifyingKey } from '../src/kinds/params.js';
import { createPorepKind } from '../src/kinds/porep/planner.js';
import { postVerifyingKeySource, verifyPoSt } from '../src/kinds/post/post.js';
import { createPoStKind } from '../src/kinds/post/planner.js';
import { testRandomness } from './post-support.js';
import { kilnCli, sealPoStInputs, smallSectorDaemon, type PoStInput } from './e2e-support.js';

const STATUS = { COMPLETED: 1, FAILED: 2 };
const WINNING = postProofById(0)!; // StackedDrgWinning2KiBV1

let dir: string;
let cache: string;
const randomness = testRandomness(21);
const hex = Buffer.from(randomness).toString('hex');

let inputs: Record<'window' | 'winning', PoStInput>;

const kiln = kilnCli;

const dirs = (): string[] => ['--params-dir', join(dir, 'no-official-params'), '--cache-dir', cache];
const postArgs = (type: 'window' | 'winning', r = hex): string[] => [
  '--type', type, '--vanilla', inputs[type].file, '--randomness', r, '--registered-proof', String(inputs[type].info.id), ...dirs(),
];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-post-e2e-'));
  cache = join(dir, 'params', 'kiln-cache'); // the daemon below uses param_cache = dir/params
  // two 2 KiB sectors sealed by kiln (keeping replica, tree_r_last and comm_c), their vanilla proofs by gen-vanilla
  inputs = await sealPoStInputs(dir, hex);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

for (const type of ['window', 'winning'] as const) {
  test(`kiln prove-post --type ${type} → kiln verify-post (2 KiB); another randomness is INVALID or refused`, async () => {
    const proof = join(dir, `${type}.proof`);
    const p = await kiln(['prove-post', ...postArgs(type), '--miner-id', '1234', '--out', proof]);
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stderr, /INSECURE development parameters/);
    assert.match(p.stdout, /msm_h/); // the timing breakdown
    assert.equal(readFileSync(proof).length, 192);
    assert.match(p.stdout, /, verified \(INSECURE development parameters .*: never accepted on chain\)$/m); // the result line says it
    const again = await kiln(['prove-post', ...postArgs(type), '--json']); // parameters cached: the proof alone
    assert.equal(again.code, 0, again.stderr);
    const j = JSON.parse(again.stdout);
    assert.equal(j.bytes, 192);
    assert.equal(j.insecure, true);
    console.log(`# 2 KiB ${type}: kiln prove-post ${(again.ms / 1000).toFixed(1)} s wall (engine job ${(j.ms / 1000).toFixed(1)} s)`);

    const ok = await kiln(['verify-post', ...postArgs(type), '--proof', proof]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^valid \(INSECURE development verifying key .*: never accepted on chain\)$/m);
    const other = Buffer.from(testRandomness(22)).toString('hex');
    const bad = await kiln(['verify-post', ...postArgs(type, other), '--proof', proof]);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout, /INVALID/);
    // proving with the wrong randomness is refused before any work, naming the sector and challenge
    const refused = await kiln(['prove-post', ...postArgs(type, other), '--out', join(dir, 'never.proof')]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /sector 4[01] \(proof 0\) challenge \d+: the proof opens leaf \d+, but the randomness challenges leaf \d+/);
  });
}

test('kiln prove-post with the TypeScript witness path (KILN_WITNESS=ts, synthesis worker) proves the same circuit', async () => {
  const r = await kiln(['prove-post', ...postArgs('window'), '--json'], { KILN_WITNESS: 'ts' });
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.bytes, 192);
  const synth = j.spans.children.find((c: any) => c.name === 'partition[0]').children.find((c: any) => c.name === 'synth');
  assert.ok(synth.children.some((c: any) => c.name === 'worker_wait'), 'witness made in the worker pool');
  const proof = join(dir, 'ts.proof');
  writeFileSync(proof, Buffer.from(j.proof, 'hex'));
  const ok = await kiln(['verify-post', ...postArgs('window'), '--proof', proof]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
});

test('kiln prove-post: bad arguments are clear errors', async () => {
  const a = await kiln(['prove-post', ...postArgs('window').map((x) => (x === '10' ? '0' : x))]);
  assert.equal(a.code, 1);
  assert.match(a.stderr, /StackedDrgWinning2KiBV1 is a WinningPoSt proof, not --type window/);
  const b = await kiln(['prove-post', ...postArgs('window', 'abcd')]);
  assert.equal(b.code, 1);
  assert.match(b.stderr, /randomness must be 32 bytes of hex/);
  const c = await kiln(['circuit-info', '--circuit', 'wpost-2k']);
  assert.equal(c.code, 0, c.stderr);
  const info = JSON.parse(c.stdout);
  assert.equal(info.constraints, 21_866); // 2 sectors × (Poseidon-2 + equality + input + 10 × (2 oct PoR levels + path + root)) — counted
  assert.equal(info.publicInputs, 22);
});

describe('the daemon over gRPC', () => {
  const suite = smallSectorDaemon(() => dir, 120_000);
  const call = (m: string, req: Record<string, unknown>): Promise<any> => suite.get().call(m, req);

  const submit = (type: 'window' | 'winning', o: Record<string, unknown> = {}): Record<string, unknown> => ({
    proof_kind: type === 'window' ? ProofKind.WINDOW_POST_PARTITION : ProofKind.WINNING_POST,
    registered_proof: inputs[type].info.id,
    sector_size: 2048,
    vanilla_proofs: inputs[type].elements.map((e) => Buffer.from(e)),
    randomness: Buffer.from(randomness),
    miner_id: 1234,
    partition_index: 0,
    ...o,
  });

  for (const type of ['window', 'winning'] as const) {
    test(`Prove ${type} (2 KiB): COMPLETED, a 192-byte proof that verifies against the sectors and randomness`, async () => {
      const t0 = performance.now();
      const res = (await call('Prove', { submit: submit(type, { request_id: `post-${type}` }) })).result;
      assert.equal(res.status, STATUS.COMPLETED, res.error_message);
      assert.equal(res.proof.length, 192);
      console.log(`# 2 KiB ${type} through the daemon: ${(performance.now() - t0).toFixed(0)} ms (total_ms ${res.total_ms}, synthesis ${res.synthesis_ms}, prove ${res.gpu_compute_ms})`);
      const { info, proofs } = inputs[type];
      const vk = await loadPorepVerifyingKey(postVerifyingKeySource(info, join(dir, 'params'), join(dir, 'params', 'kiln-cache')));
      assert.ok(await verifyPoSt(info, proofs, { randomness, partitionIndex: 0 }, new Uint8Array(res.proof), vk));
      assert.ok(!(await verifyPoSt(info, proofs, { randomness: testRandomness(23), partitionIndex: 0 }, new Uint8Array(res.proof), vk)));
      const status = await call('GetStatus', {});
      assert.ok(status.loaded_srs.some((s: any) => s.circuit_id === (type === 'window' ? 'wpost-2k' : 'winning-2k')));
    });
  }

  test('kiln bench single/batch --type winning|wpost --vanilla FILE --randomness HEX (registered proof from the proofs\' size)', async () => {
    const { benchBatch, benchSingle } = await import('../src/client/grpc-client.js');
    for (const type of ['winning', 'wpost'] as const) {
      const lines: string[] = [];
      const file = inputs[type === 'wpost' ? 'window' : 'winning'].file;
      const r = await benchSingle({ addr: suite.get().daemon.grpcAddress, type, vanilla: file, randomness: hex, minerId: '1234', out: (l) => lines.push(l) });
      assert.equal(r.status, STATUS.COMPLETED, lines.join('\n'));
      assert.match(lines.join('\n'), /timings:\s+total=\d+ ms \(queue=\d+ ms, srs=\d+ ms, synth=\d+ ms, gpu=\d+ ms\)/); // cuzk-bench's layout (client/grpc-client.ts)
      assert.match(lines.join('\n'), /proof:\s+192 bytes/);
    }
    const b = await benchBatch({ addr: suite.get().daemon.grpcAddress, type: 'wpost', vanilla: inputs.window.file, randomness: hex, count: 2, concurrency: 2, out: () => {} });
    assert.equal(b.completed, 2);
    await assert.rejects(() => benchSingle({ addr: suite.get().daemon.grpcAddress, type: 'winning', vanilla: inputs.winning.file, out: () => {} }), /needs --randomness/);
  });

  test('malformed vanilla proofs and wrong fields FAIL naming the problem; the daemon keeps serving', async () => {
    const el = inputs.window.elements[0]!;
    const withTag = el.slice();
    withTag[56] = 7; // inclusion_proofs[0]'s MerkleProof tag
    const withLen = el.slice();
    withLen[48] = 9; // inclusion_proofs length
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['truncated', { vanilla_proofs: [Buffer.from(el.subarray(0, 1000))] }, /vanilla_proofs\[0\]: .*inclusion_proofs\[1\]\.base\[1\]\.hashes\[2\] is truncated/],
      ['wrong tag', { vanilla_proofs: [Buffer.from(withTag)] }, /vanilla_proofs\[0\]: .*inclusion_proofs\[0\]\.tag = 7/],
      ['wrong length', { vanilla_proofs: [Buffer.from(withLen)] }, /vanilla_proofs\[0\]: .*inclusion_proofs length = 9, expected 10/],
      ['trailing bytes', { vanilla_proofs: [Buffer.concat([el, Buffer.alloc(1)])] }, /trailing bytes/],
      ['no vanilla proofs', { vanilla_proofs: [] }, /vanilla_proofs is empty/],
      ['too many', { vanilla_proofs: [el, el, el].map((e) => Buffer.from(e)) }, /at most 2 sectors/],
      ['short randomness', { randomness: Buffer.alloc(31) }, /randomness must be 32 bytes, got 31/],
      ['non-canonical randomness', { randomness: Buffer.alloc(32, 0xff) }, /randomness is not a canonical field element/],
      ['other randomness', { randomness: Buffer.from(testRandomness(24)) }, /sector 40 \(proof 0\) challenge \d+: the proof opens leaf/],
      ['winning id for window', { registered_proof: 3 }, /StackedDrgWinning32GiBV1, not a WindowPoSt proof/],
      ['sector size', { sector_size: 8 << 20 }, /sector_size 8388608 does not match/],
    ];
    for (const [what, fields, re] of cases) {
      const r = (await call('Prove', { submit: submit('window', fields) })).result;
      assert.equal(r.status, STATUS.FAILED, what);
      assert.match(r.error_message, re, what);
    }
    const w = (await call('Prove', { submit: submit('winning', { vanilla_proofs: inputs.window.elements.slice(0, 1).map((e) => Buffer.from(e)) }) })).result;
    assert.equal(w.status, STATUS.FAILED);
    assert.match(w.error_message, /vanilla_proofs\[0\]/); // a window-sized element is no winning proof
    const ok = (await call('Prove', { submit: submit('window') })).result;
    assert.equal(ok.status, STATUS.COMPLETED, ok.error_message);
  });
});

test('engine: a WinningPoSt submitted behind queued PoRep work starts first', async () => {
  const backend = selectBackend('native');
  const config = defaultConfig();
  config.srs.param_cache = join(dir, 'params');
  config.srs.dev_params = true;
  config.gpus.gpu_workers_per_device = 1;
  config.synthesis.threads = 1;
  const post = createPoStKind({ config, backend });
  // PoRep C2 work as the engine ranks it (the real PoRep planner's kind and default priority), with demo
  // circuits as its partitions (a 2 KiB PoRep setup alone takes minutes on this machine)
  const porepPlanner = createPorepKind({ config, backend }).planner;
  assert.equal(porepPlanner.defaultPriority, Priority.NORMAL);
  const demo = createDemoKind({ constraints: 4000, partitions: 4, cacheDir: join(dir, 'demo-params'), backend });
  const porepLike: Planner = { ...demo.planner, kind: porepPlanner.kind, name: porepPlanner.name, defaultPriority: porepPlanner.defaultPriority };
  const engine = new Engine({
    config,
    backend,
    logger: pino({ level: 'silent' }),
    planners: [porepLike, post.winning, post.window],
    providers: [demo.circuits, post.circuits],
    defaultMetrics: false,
  });
  try {
    const porep = (seed: number) => proofRequest({ proofKind: ProofKind.POREP_SEAL_COMMIT, vanillaProof: new TextEncoder().encode(JSON.stringify({ seed })) });
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push((await engine.submit(porep(10 + i))).job);
    const queued = jobs.filter((j) => j.state === 'queued');
    assert.ok(queued.length >= 1, 'PoRep work is queued');
    const winning = (
      await engine.submit(
        proofRequest({
          proofKind: ProofKind.WINNING_POST,
          registeredProof: WINNING.id,
          vanillaProofs: inputs.winning.elements,
          randomness,
          minerId: 1234,
        }),
      )
    ).job;
    assert.equal(winning.priority, Priority.CRITICAL);
    const results = await Promise.all([...jobs, winning].map((j) => engine.await(j.id)));
    for (const r of results) assert.equal(r?.status, AwaitStatus.COMPLETED, r?.errorMessage);
    for (const j of queued) assert.ok(winning.startedAtMs! < j.startedAtMs!, `WinningPoSt started before queued PoRep job ${j.id}`);
    assert.equal(readVanillaFile(inputs.winning.file).length, 1);
    assert.equal(parsePoStSectorProof(inputs.winning.elements[0]!, WINNING).inclusionProofs.length, 66);
  } finally {
    await engine.close(0);
  }
});
