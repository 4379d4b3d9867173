/**
 * SnapDeals end to end through the real entry points, on a 2 KiB sector sealed by kiln (`kiln seal --sector-dir`)
 * and updated with new data by `kiln update` (INSECURE development parameters made once into a temporary cache
 * shared by every step):
 *  - `kiln prove-snap` / `kiln verify-snap` from update.json + vanilla.json; a proof does not verify against
 *    another update's public inputs; proving vanilla proofs against a wrong comm_r_new is refused before any work;
 *  - the daemon over gRPC (a client built at run time from proto/cuzk.proto): SNAP_DEALS_UPDATE returns a proof
 *    that verifies; malformed bincode and wrong fields FAIL naming the problem while the daemon keeps serving;
 *  - `kiln circuit-info --circuit snap-2k`: rust-fil-proofs' pinned 1,705,039 constraints.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ProofKind } from '../src/engine/types.js';
import { loadPorepVerifyingKey } from '../src/kinds/params.js';
import { snapVerifyingKeySource, verifySnap } from '../src/kinds/snap/snap.js';
import { readUpdateFile } from '../src/filecoin/snap/update-file.js';
import { buildRequest } from '../src/client/grpc-client.js';
import { kilnCli, sealSnapUpdates, smallSectorDaemon } from './e2e-support.js';

const STATUS = { COMPLETED: 1, FAILED: 2 };

let dir: string;
let cache: string;
let update: string;
let elements: Uint8Array[];

const kiln = kilnCli;

const dirs = (): string[] => ['--params-dir', join(dir, 'no-official-params'), '--cache-dir', cache];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-snap-e2e-'));
  cache = join(dir, 'params', 'kiln-cache'); // the daemon below uses param_cache = dir/params
  ({ update, elements } = await sealSnapUpdates(dir));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('kiln update → prove-snap → verify-snap (2 KiB); another update\'s inputs are INVALID; a wrong comm_r_new is refused', { timeout: 900_000 }, async () => {
  const proof = join(dir, 'snap.proof');
  const p = await kiln(['prove-snap', '--update', update, ...dirs(), '--backend', 'native', '--out', proof]);
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stderr, /INSECURE development parameters/);
  assert.match(p.stdout, /msm_h/); // the timing breakdown
  assert.equal(readFileSync(proof).length, 192);
  assert.match(p.stdout, /, verified \(INSECURE development parameters .*: never accepted on chain\)$/m); // the result line says it
  const again = await kiln(['prove-snap', '--update', update, ...dirs(), '--backend', 'native', '--json']); // parameters cached
  assert.equal(again.code, 0, again.stderr);
  const j = JSON.parse(again.stdout);
  assert.equal(j.bytes, 192);
  assert.equal(j.insecure, true);
  console.log(`# 2 KiB SnapDeals: kiln prove-snap ${(again.ms / 1000).toFixed(1)} s wall (engine job ${(j.ms / 1000).toFixed(1)} s)`);

  const ok = await kiln(['verify-snap', '--update', update, ...dirs(), '--proof', proof]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /^valid \(INSECURE development verifying key .*: never accepted on chain\)$/m);
  const bad = await kiln(['verify-snap', '--update', join(dir, 'upd2', 'update.json'), ...dirs(), '--proof', proof]);
  assert.equal(bad.code, 1, bad.stdout + bad.stderr);
  assert.match(bad.stdout, /INVALID/);
  // the first update's vanilla proofs against the second update's comm_d_new / comm_r_new: refused before any work
  const refused = await kiln(['prove-snap', '--update', join(dir, 'upd2', 'update.json'), '--vanilla', join(dir, 'upd', 'vanilla.json'), ...dirs(), '--backend', 'native']);
  assert.equal(refused.code, 1);
  // named by the user's option and file, not by the gRPC field (vanilla_proofs[0])
  assert.match(refused.stderr, /^kiln: --vanilla \S+vanilla\.json element 0 \(StackedDrg2KiBV1\): partition 0: comm_r_new is not Poseidon\(comm_c, root_r_new\)/m);
});

test('kiln circuit-info --circuit snap-2k: 1,705,039 constraints, 4 public inputs; bad ids are clear errors', async () => {
  const c = await kiln(['circuit-info', '--circuit', 'snap-2k']);
  assert.equal(c.code, 0, c.stderr);
  const info = JSON.parse(c.stdout);
  assert.equal(info.constraints, 1_705_039);
  assert.equal(info.publicInputs, 4);
  assert.equal(info.partitions, 1);
  assert.equal(info.paramsIdentifier, 'empty_sector_update::PublicParams{ sector_nodes: 64 }');
  const bad = await kiln(['circuit-info', '--circuit', 'snap-3k']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /unknown circuit 'snap-3k'/);
});

describe('the daemon over gRPC', () => {
  const suite = smallSectorDaemon(() => dir, 600_000);
  const call = (m: string, req: Record<string, unknown>): Promise<any> => suite.get().call(m, req);

  const submit = async (o: Record<string, unknown> = {}): Promise<Record<string, unknown>> => {
    const { raw } = await readUpdateFile(update);
    return {
      proof_kind: ProofKind.SNAP_DEALS_UPDATE,
      registered_proof: 0,
      sector_size: 2048,
      vanilla_proofs: elements.map((e) => Buffer.from(e)),
      comm_r_old: Buffer.from(raw.commROld),
      comm_d_new: Buffer.from(raw.commDNew),
      comm_r_new: Buffer.from(raw.commRNew),
      miner_id: 1234,
      sector_number: 7,
      ...o,
    };
  };

  test('Prove SNAP_DEALS_UPDATE (2 KiB): COMPLETED, a 192-byte proof that verifies against comm_r_old / comm_d_new / comm_r_new', { timeout: 900_000 }, async () => {
    const t0 = performance.now();
    const res = (await call('Prove', { submit: await submit({ request_id: 'snap-1' }) })).result;
    assert.equal(res.status, STATUS.COMPLETED, res.error_message);
    assert.equal(res.proof.length, 192);
    console.log(`# 2 KiB SnapDeals through the daemon: ${(performance.now() - t0).toFixed(0)} ms (total_ms ${res.total_ms}, synthesis ${res.synthesis_ms}, prove ${res.gpu_compute_ms})`);
    const { info, pub } = await readUpdateFile(update);
    const other = await readUpdateFile(join(dir, 'upd2', 'update.json'));
    const vk = await loadPorepVerifyingKey(snapVerifyingKeySource(info, join(dir, 'params'), join(dir, 'params', 'kiln-cache')));
    assert.ok(verifySnap(info, pub, new Uint8Array(res.proof), vk));
    assert.ok(!verifySnap(info, other.pub, new Uint8Array(res.proof), vk));
    const status = await call('GetStatus', {});
    assert.ok(status.loaded_srs.some((s: any) => s.circuit_id === 'snap-2k'));
  });

  test('malformed bincode and wrong fields FAIL naming the problem; the daemon keeps serving', { timeout: 900_000 }, async () => {
    const el = elements[0]!;
    const withTag = el.slice();
    withTag[32 + 8 + 8 * 32 + 8] = 2; // challenge_proofs[0].proof_r_old's MerkleProof tag
    const withLen = el.slice();
    withLen[32] = 9; // apex_leafs length
    const other = await readUpdateFile(join(dir, 'upd2', 'update.json'));
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['truncated', { vanilla_proofs: [Buffer.from(el.subarray(0, 1000))] }, /vanilla_proofs\[0\]: vanilla proof: challenge_proofs\[0\]\.proof_d_new\.base\[1\]\.hashes\[0\] is truncated/],
      ['wrong tag', { vanilla_proofs: [Buffer.from(withTag)] }, /vanilla_proofs\[0\]: .*challenge_proofs\[0\]\.proof_r_old\.tag = 2 \(Top\) is wrong/],
      ['wrong length', { vanilla_proofs: [Buffer.from(withLen)] }, /vanilla_proofs\[0\]: .*apex_leafs length = 9, expected 8/],
      ['trailing bytes', { vanilla_proofs: [Buffer.concat([el, Buffer.alloc(1)])] }, /trailing bytes/],
      ['garbage', { vanilla_proofs: [Buffer.from([0xde, 0xad, 0xbe, 0xef])] }, /vanilla_proofs\[0\]: vanilla proof: comm_c is truncated/],
      ['no vanilla proofs', { vanilla_proofs: [] }, /vanilla_proofs has 0 elements; a 2KiB SnapDeals update takes 1 PartitionProof/],
      ['short comm_r_new', { comm_r_new: Buffer.alloc(31) }, /comm_r_new must be 32 bytes, got 31/],
      ['non-canonical comm_d_new', { comm_d_new: Buffer.alloc(32, 0xff) }, /comm_d_new is not a canonical field element/],
      ['another update\'s comm_d_new', { comm_d_new: Buffer.from(other.raw.commDNew) }, /vanilla_proofs\[0\]: partition 0 challenge 0 \(node \d+\): proof_d_new's root is not comm_d_new/],
      ['unknown registered proof', { registered_proof: 9 }, /registered_proof 9 is not a RegisteredUpdateProof/],
      ['sector size', { sector_size: 8 << 20 }, /sector_size 8388608 does not match registered_proof StackedDrg2KiBV1/],
    ];
    for (const [what, fields, re] of cases) {
      const r = (await call('Prove', { submit: await submit(fields) })).result;
      assert.equal(r.status, STATUS.FAILED, what);
      assert.match(r.error_message, re, what);
    }
    // kiln bench single --type snap --update FILE builds this very request
    const built = await buildRequest({ addr: '', type: 'snap', update });
    const ok = (await call('Prove', { submit: built })).result;
    assert.equal(ok.status, STATUS.COMPLETED, ok.error_message);
    const want = await submit();
    for (const f of ['proof_kind', 'registered_proof', 'sector_size', 'comm_r_old', 'comm_d_new', 'comm_r_new', 'vanilla_proofs'] as const) assert.deepEqual(built[f], want[f], f);
  });
});
