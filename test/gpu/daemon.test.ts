/**
 * The daemon on the GPU: `kiln daemon` with `[kiln] backend = "cuda"` proves the 2 KiB PoRep fixture
 * sent over gRPC (cuzk's Prove RPC, Curio's Commit2In in vanilla_proof) twice — the second time with
 * the circuit and SRS resident on the device — and the proofs verify. Skipped without a GPU (CI).
 * Fixture: $KILN_FIXTURES, ../shared/fixtures or .device/fixtures (the GPU machine). INSECURE
 * development parameters, cached in $KILN_GPU_TEST_DIR (default <tmp>/kiln-gpu-test; shared with
 * cuda.test.ts, which usually creates them first).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { cudaCapabilities } from '../../src/backend/cuda.js';
import { parseCommit2In } from '../../src/filecoin/c1.js';
import { porepParamsSource, porepShape, verifyPorep } from '../../src/kinds/porep/porep-c2.js';
import { loadPorepVerifyingKey } from '../../src/kinds/params.js';
import { runDaemon, type Daemon } from '../../src/server/daemon.js';
import { fixture, fixtureDirs, hasFixture, testDaemonDirs } from '../support.js';

const probe = cudaCapabilities();
const skip = !probe.cuda ? `no GPU: ${probe.error ?? 'unknown'}` : !hasFixture('2KiB.commit2in.json') ? `fixture not found in ${fixtureDirs.join(', ')}` : false;

test('daemon with backend "cuda" proves the 2 KiB fixture over gRPC; the proofs verify', { skip }, async () => {
  const dir = process.env.KILN_GPU_TEST_DIR ?? join(tmpdir(), 'kiln-gpu-test');
  mkdirSync(dir, { recursive: true });
  let daemon: Daemon | undefined;
  let client: any;
  try {
    daemon = await runDaemon({
      listen: `unix://${join(dir, `kiln-${process.pid}.sock`)}`,
      httpListen: '',
      logLevel: 'silent',
      handleSignals: false,
      shutdownGraceSeconds: 5,
      backend: 'cuda',
      configure: (c) => {
        testDaemonDirs(c, dir);
        c.srs.dev_params = true;
      },
    });
    assert.equal(daemon.engine.backend.name, 'cuda', 'the daemon did not pick the CUDA backend');
    const proto = join('proto', 'cuzk.proto');
    const def = protoLoader.loadSync(proto, { keepCase: true, longs: Number, enums: Number, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as any;
    client = new pkg.cuzk.v1.ProvingEngine(daemon.grpcAddress, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 256 << 20,
      'grpc.max_send_message_length': 256 << 20,
    });
    const wrapper = readFileSync(fixture('2KiB.commit2in.json'));
    const c1 = parseCommit2In(wrapper).phase1Out;
    const { shape } = porepShape(c1.registeredProof, join(dir, 'kiln-cache'));
    const vk = await loadPorepVerifyingKey(await porepParamsSource(c1.registeredProof, shape, dir, join(dir, 'kiln-cache', 'dev-params')));
    for (const round of ['first (loads SRS, uploads circuit)', 'second (resident)']) {
      const t0 = performance.now();
      const res: any = await new Promise((resolve, reject) =>
        client.Prove(
          { submit: { request_id: `gpu-2k-${round}`, proof_kind: 1, sector_size: 2048, registered_proof: 5, vanilla_proof: wrapper } },
          { deadline: Date.now() + 600_000 },
          (err: Error | null, r: unknown) => (err ? reject(err) : resolve(r)),
        ),
      );
      const r = res.result;
      assert.equal(r.status, 1, r.error_message); // COMPLETED
      assert.equal(r.proof.length, 192);
      assert.deepEqual(verifyPorep(c1, new Uint8Array(r.proof), vk), [true]);
      process.stdout.write(
        `# daemon [${round}]: wall ${(performance.now() - t0).toFixed(0)} ms; timings: total=${r.total_ms} ms (queue=${r.queue_wait_ms}, srs=${r.srs_load_ms}, synth=${r.synthesis_ms}, gpu=${r.gpu_compute_ms}) — verified\n`,
      );
    }
  } finally {
    client?.close();
    await daemon?.close();
  }
});
