/**
 * The prover's whole-partition path (Backend.provePartition, which the CUDA backend implements on
 * the device), checked without a GPU: a backend that offers provePartition must be called once,
 * give the same proof bytes as the step-by-step prover for the same r and s, a proof that
 * verifies, and its reported phase timings must reach the prover's result and span. (test/gpu/cuda.test.ts compares the device's sums with the CPU's.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PartitionInput, PartitionSums } from '../src/backend/backend.js';
import { NativeBackend, nativeAvailable } from '../src/backend/native.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { ShapeRecorder } from '../src/r1cs/shape.js';
import { WitnessGenerator } from '../src/r1cs/witness.js';
import { encodeProof } from '../src/groth16/proof.js';
import { partitionSumsStepwise, PROVER_PHASES, proveWithRandomness } from '../src/groth16/prover.js';
import { insecureDevSetup } from '../src/groth16/setup.js';
import { prepareVerifyingKey, verifyProof } from '../src/groth16/verifier.js';
import { Span } from '../src/util/timing.js';

const skip = nativeAvailable() ? false : 'native addon not built';

/** provePartition on the CPU through the step-by-step path (what the device does in one call). */
class StepwisePartitionBackend extends NativeBackend {
  calls = 0;
  async provePartition(input: PartitionInput): Promise<PartitionSums> {
    this.calls++;
    const sums = await partitionSumsStepwise(this, input);
    // distinct made-up timings, to see them arrive in the prover's result and span
    return { ...sums, timings: { matvec: 1, ntt_h: 2, msm_h: 3, msm_l: 4, msm_a: 5, msm_b1: 6, msm_b2: 7, batch_add: 8 } };
  }
}

test('whole-partition path: same proof as the step-by-step prover, verifies, timings reported', { skip }, async () => {
  const circuit = new DemoCircuit({ constraints: 3000, dense: false });
  const rec = new ShapeRecorder();
  circuit.synthesize(rec);
  const shape = rec.finish();
  const wg = new WitnessGenerator(shape.numInputs);
  circuit.synthesize(wg);
  const w = wg.assignment();
  const cpu = new NativeBackend();
  const params = await insecureDevSetup(shape, cpu);
  const fake = new StepwisePartitionBackend();
  const r = 0x1234567890abcdefn;
  const s = 0xfedcba0987654321n;
  const plain = await proveWithRandomness(params, shape, w, r, s, cpu);
  const span = new Span('prove');
  const whole = await proveWithRandomness(params, shape, w, r, s, fake, span);
  span.end();
  assert.equal(fake.calls, 1, 'the prover did not use provePartition');
  assert.deepEqual(encodeProof(whole.proof), encodeProof(plain.proof));
  assert.ok(verifyProof(prepareVerifyingKey(params.vk), whole.proof, wg.inputs()));
  assert.equal(whole.timings.ntt_h, 2);
  assert.equal(whole.timings.batch_add, 8);
  assert.equal(whole.timings.release, 0);
  assert.deepEqual(
    span.children.map((c) => c.name),
    [...PROVER_PHASES],
  );
  // a different r gives a different proof through the same path (the blinding reaches assembly)
  const other = await proveWithRandomness(params, shape, w, r + 1n, s, fake);
  assert.notDeepEqual(encodeProof(other.proof), encodeProof(plain.proof));
});
