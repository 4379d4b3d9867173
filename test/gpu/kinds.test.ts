/**
 * Every proof kind on the GPU through the daemon (`[kiln] backend = "cuda"`, cuzk's Prove RPC over gRPC): WindowPoSt
 * and WinningPoSt on two 2 KiB sectors sealed by kiln, a SnapDeals update of a third, an interactive PoRep C2 and an
 * NI-PoRep (13 partitions) of sectors kiln sealed; each answer checked here by the CPU verifier against the
 * development verifying key, and refused for other public inputs. The same inputs as the CPU suites (post-e2e,
 * snap-e2e, porep-e2e) make, by the same helpers. Skipped without a GPU (CI). INSECURE development parameters, made
 * by the daemon on the GPU into a temporary directory.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cudaCapabilities } from '../../src/backend/cuda.js';
import { ProofKind } from '../../src/engine/types.js';
import { parseCommit2In } from '../../src/filecoin/c1.js';
import { readUpdateFile } from '../../src/filecoin/snap/update-file.js';
import { loadPorepVerifyingKey } from '../../src/kinds/params.js';
import { porepParamsSource, porepShape, verifyPorep } from '../../src/kinds/porep/porep-c2.js';
import { postVerifyingKeySource, verifyPoSt } from '../../src/kinds/post/post.js';
import { snapVerifyingKeySource, verifySnap } from '../../src/kinds/snap/snap.js';
import { kilnCli, sealPoStInputs, sealSnapUpdates, smallSectorDaemon, type PoStInput } from '../e2e-support.js';
import { testRandomness } from '../post-support.js';

const probe = cudaCapabilities();
const skip = probe.cuda ? false : `no GPU: ${probe.error ?? 'unknown'}`;
const COMPLETED = 1;

let dir: string;
const randomness = testRandomness(21);
let post: Record<'window' | 'winning', PoStInput>;
let snap: { update: string; other: string; elements: Uint8Array[] };

describe('every proof kind on the GPU through the daemon', { skip }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-gpu-kinds-'));
    post = await sealPoStInputs(dir, Buffer.from(randomness).toString('hex'));
    snap = await sealSnapUpdates(join(dir, 'snap'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const suite = smallSectorDaemon(() => dir, 600_000, 'cuda');
  const params = (): string => join(dir, 'params');
  const cache = (): string => join(dir, 'params', 'kiln-cache');
  const prove = async (submit: Record<string, unknown>): Promise<Uint8Array> => {
    const t0 = performance.now();
    const r = await suite.get().prove(submit);
    assert.equal(r.status, COMPLETED, r.error_message);
    console.log(`# ${submit.request_id} on the GPU: ${(performance.now() - t0).toFixed(0)} ms (synthesis ${r.synthesis_ms}, gpu ${r.gpu_compute_ms})`);
    return new Uint8Array(r.proof);
  };

  test('the daemon runs the CUDA backend', () => {
    assert.equal(suite.get().daemon.engine.backend.name, 'cuda');
  });

  for (const type of ['window', 'winning'] as const) {
    test(`${type === 'window' ? 'WindowPoSt' : 'WinningPoSt'} 2 KiB: the GPU's proof verifies; not for other randomness`, async () => {
      const { info, proofs, elements } = post[type];
      const proof = await prove({
        request_id: `gpu-${type}`,
        proof_kind: type === 'window' ? ProofKind.WINDOW_POST_PARTITION : ProofKind.WINNING_POST,
        registered_proof: info.id,
        sector_size: 2048,
        vanilla_proofs: elements.map((e) => Buffer.from(e)),
        randomness: Buffer.from(randomness),
        miner_id: 1234,
        partition_index: 0,
      });
      assert.equal(proof.length, 192);
      const vk = await loadPorepVerifyingKey(postVerifyingKeySource(info, params(), cache()));
      assert.ok(await verifyPoSt(info, proofs, { randomness, partitionIndex: 0 }, proof, vk));
      assert.ok(!(await verifyPoSt(info, proofs, { randomness: testRandomness(23), partitionIndex: 0 }, proof, vk)));
    });
  }

  test('SnapDeals 2 KiB: the GPU\'s proof verifies; not against another update\'s inputs', async () => {
    const { raw, info, pub } = await readUpdateFile(snap.update);
    const proof = await prove({
      request_id: 'gpu-snap',
      proof_kind: ProofKind.SNAP_DEALS_UPDATE,
      registered_proof: 0,
      sector_size: 2048,
      vanilla_proofs: snap.elements.map((e) => Buffer.from(e)),
      comm_r_old: Buffer.from(raw.commROld),
      comm_d_new: Buffer.from(raw.commDNew),
      comm_r_new: Buffer.from(raw.commRNew),
      miner_id: 1234,
      sector_number: 7,
    });
    const vk = await loadPorepVerifyingKey(snapVerifyingKeySource(info, params(), cache()));
    assert.ok(verifySnap(info, pub, proof, vk));
    assert.ok(!verifySnap(info, (await readUpdateFile(snap.other)).pub, proof, vk));
  });

  for (const ni of [false, true]) {
    test(`${ni ? 'NI-PoRep' : 'PoRep C2'} 2 KiB of a sector kiln sealed: every partition's GPU proof verifies, each only for its own challenges`, async () => {
      const c1File = join(dir, ni ? 'ni.json' : 'porep.json');
      const s = await kilnCli(['seal', ...(ni ? ['--ni'] : []), '--sector-size', '2KiB', '--out', c1File, '--rng-seed', `gpu-${ni}`, '--miner-id', 'f01234', '--sector-number', '9']);
      assert.equal(s.code, 0, s.stderr);
      const c1 = parseCommit2In(readFileSync(c1File)).phase1Out;
      const proof = await prove({ request_id: `gpu-porep-${ni}`, proof_kind: ProofKind.POREP_SEAL_COMMIT, sector_size: 2048, registered_proof: c1.registeredProof, sector_number: 9, vanilla_proof: readFileSync(c1File) });
      const n = c1.partitions.length;
      assert.equal(n, ni ? 13 : 1);
      assert.equal(proof.length, n * 192);
      const { shape } = porepShape(c1.registeredProof, cache());
      const vk = await loadPorepVerifyingKey(await porepParamsSource(c1.registeredProof, shape, params(), join(cache(), 'dev-params')));
      assert.deepEqual(verifyPorep(c1, proof, vk), new Array(n).fill(true));
      if (n > 1) {
        const swapped = new Uint8Array(proof);
        swapped.set(proof.subarray(192, 384), 0);
        swapped.set(proof.subarray(0, 192), 192);
        assert.deepEqual(verifyPorep(c1, swapped, vk).slice(0, 3), [false, false, true]);
      }
    });
  }
});
