/**
 * The PoSt kinds' work off the event loop (issue 16): the shape recorded in a worker thread is the shape recorded
 * in this thread (same digest, same witness program), concurrent requests share one compile, close() stops a
 * compile in progress; the planning task in a synthesis worker gives the public inputs and the witness tape this
 * thread would, and the same errors.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { selectBackend } from '../src/backend/select.js';
import { defaultConfig } from '../src/engine/config.js';
import { SynthesisPool, type SynthTask } from '../src/engine/synth-pool.js';
import { PlanError, type PlanContext, type ProofRequest } from '../src/engine/types.js';
import { postCircuitFor } from '../src/filecoin/post/circuit.js';
import { postTape } from '../src/filecoin/post/program.js';
import { postCircuitId, postProofById } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import { encodeTape, type WitnessProgram } from '../src/r1cs/program.js';
import { programChunks } from '../src/r1cs/program-file.js';
import { shapeDigest } from '../src/r1cs/shape.js';
import { createPoStKind } from '../src/kinds/post/planner.js';
import { planPoStRequest } from '../src/kinds/post/request.js';
import { postShape } from '../src/kinds/post/post.js';
import { postPlanTask } from '../src/kinds/post/tasks.js';

let dir: string;
let pool: SynthesisPool;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-post-offthread-'));
  pool = new SynthesisPool(1);
});
after(async () => {
  await pool.close();
  await rm(dir, { recursive: true, force: true });
});

/** A kind with its caches under `sub`; `devParams`: parameters can be had (a planner looks for them first). */
const kindIn = (sub: string, devParams = false): ReturnType<typeof createPoStKind> => {
  const config = defaultConfig();
  config.srs.param_cache = join(dir, sub);
  config.srs.dev_params = devParams;
  return createPoStKind({ config, backend: selectBackend('reference'), cacheDir: join(dir, sub, 'kiln-cache') });
};

test('a PoSt shape recorded in a worker thread: the same shape and witness program as in this thread; concurrent requests share one compile', async () => {
  const kind = kindIn('a');
  const info = postProofById(10)!; // StackedDrgWindow2KiBV1_1: wpost-2k
  const [c1, c2] = await Promise.all([kind.circuits.compiled('wpost-2k'), kind.circuits.compiled('wpost-2k')]);
  assert.equal(c1, c2, 'one compile, one compiled circuit');
  assert.equal(await kind.circuits.compiled('wpost-2k'), c1);
  const here = postShape(info).circuit;
  assert.equal(c1.shape.numConstraints, here.shape.numConstraints);
  assert.equal(shapeDigest(c1.shape), shapeDigest(here.shape), 'the same matrices');
  assert.deepEqual(c1.queries, here.queries, 'the query indices the worker sent back');
  // the witness program the worker sent back with the shape is the one recorded here
  const bytes = (p: WitnessProgram): Buffer => Buffer.concat([...programChunks(p)]);
  assert.ok(bytes(c1.program).equals(bytes(here.program)), 'the same witness program');
  await kind.circuits.close?.();
});

test('close() stops a PoSt shape compile in progress', async () => {
  const kind = kindIn('b');
  const shape = kind.circuits.compiled('wpost-512m'); // ~2 s here
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  await kind.circuits.close?.();
  await assert.rejects(shape);
  assert.ok(performance.now() - t0 < 1000, `stopped in ${performance.now() - t0} ms`);
});

const randomness = new Uint8Array(32).fill(9);
randomness[31] = 0x1f;
const request = (registeredProof: number, elements: Uint8Array[]): ProofRequest =>
  ({ registeredProof, sectorSize: 0, randomness, partitionIndex: 0, vanillaProofs: elements, vanillaProof: new Uint8Array(0), minerId: 0 }) as unknown as ProofRequest;

test('the planning task (synthesis worker): the public inputs and witness tape of this thread; errors name the element', async () => {
  for (const id of [0, 10, 13]) {
    const info = postProofById(id)!;
    const { elements } = synthPoSt({ info, randomness, sectors: info.type === 'winning' ? 1 : 2, firstSectorId: 7n, threads: 1 });
    const here = planPoStRequest(request(id, elements), info.type);
    const r = postPlanTask({ registeredProof: id, elements, randomness, partitionIndex: 0, tape: true });
    assert.ok(r.ok);
    assert.deepEqual(r.inputs, here.inputs);
    assert.equal(r.firstSectorId, 7n);
    assert.deepEqual(r.tape, encodeTape(postTape(postCircuitFor(info, here.sectors))), `tape of ${id}`);
    // through the planner: in the pool's worker
    const kind = kindIn(`p${id}`, true);
    const ctx = { synthPool: pool, buffers: { take: (n: number) => new Uint8Array(n), give: () => undefined } } as unknown as PlanContext;
    const work = await (info.type === 'winning' ? kind.winning : kind.window).plan(request(id, elements), ctx);
    assert.match(work.describe ?? '', /sector 7|partition 0 \(2 sectors\)/);
    const bad = elements.map((e) => e.slice());
    bad[bad.length - 1]![40] ^= 1; // inside comm_r or the first path
    await assert.rejects((info.type === 'winning' ? kind.winning : kind.window).plan(request(id, bad), ctx), (e: Error) => e instanceof PlanError && new RegExp(`vanilla_proofs\\[${bad.length - 1}\\]|sector 8|sector 7`).test(e.message));
    // parameters are looked for first: without them the request is refused before its vanilla proofs are checked
    const ran: string[] = [];
    const spy = { ...ctx, synthPool: { run: (t: SynthTask) => (ran.push(t.fn), pool.run(t)) } } as unknown as PlanContext;
    const bare = kindIn(`n${id}`);
    await assert.rejects((info.type === 'winning' ? bare.winning : bare.window).plan(request(id, elements), spy), new RegExp(`^Error: no parameters for ${postCircuitId(info)}: looked for `));
    assert.deepEqual(ran, []);
  }
});
