/**
 * The SnapDeals kind's work off the event loop (issue 16): the shape recorded in a worker thread is the shape
 * recorded in this thread (same digest, same witness program), concurrent requests share one compile, close()
 * stops a compile in progress; the planning task in a synthesis worker accepts what this thread accepts and names
 * the same errors; the tape task gives this thread's tape; a planned request's witness (native program on the
 * worker's tape) is the TypeScript witness.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { selectBackend } from '../src/backend/select.js';
import { defaultConfig } from '../src/engine/config.js';
import { SynthesisPool, type SynthTask } from '../src/engine/synth-pool.js';
import { PlanError, type PlanContext, type ProofRequest } from '../src/engine/types.js';
import { Span } from '../src/util/timing.js';
import { snapTape } from '../src/filecoin/snap/program.js';
import { snapHDefault, snapProofById } from '../src/filecoin/snap/registry.js';
import { syntheticSnapUpdate } from '../src/filecoin/snap/synthetic.js';
import { snapPartitionProof } from '../src/filecoin/snap/update.js';
import { parseSnapPartitionProof, serializeSnapPartitionProof, snapCircuitFor } from '../src/filecoin/snap/vanilla.js';
import { encodeTape, type WitnessProgram } from '../src/r1cs/program.js';
import { programChunks } from '../src/r1cs/program-file.js';
import { shapeDigest } from '../src/r1cs/shape.js';
import { devParamsPath } from '../src/groth16/setup.js';
import { createSnapKind } from '../src/kinds/snap/planner.js';
import { planSnapRequest } from '../src/kinds/snap/request.js';
import { snapShape, snapWitnessTs } from '../src/kinds/snap/snap.js';
import { snapPlanTask, snapTapeTask } from '../src/kinds/snap/tasks.js';

let dir: string;
let pool: SynthesisPool;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-snap-offthread-'));
  pool = new SynthesisPool(1);
});
after(async () => {
  await pool.close();
  await rm(dir, { recursive: true, force: true });
});

/** A kind with its caches under `sub`; `devParams`: parameters can be had (a planner looks for them first). */
const kindIn = (sub: string, devParams = false): ReturnType<typeof createSnapKind> => {
  const config = defaultConfig();
  config.srs.param_cache = join(dir, sub);
  config.srs.dev_params = devParams;
  return createSnapKind({ config, backend: selectBackend('reference'), cacheDir: join(dir, sub, 'kiln-cache') });
};

test('a SnapDeals shape recorded in a worker thread: the same shape and witness program as in this thread; concurrent requests share one compile', async () => {
  const kind = kindIn('a');
  const info = snapProofById(0)!; // snap-2k
  const [c1, c2] = await Promise.all([kind.circuits.compiled('snap-2k'), kind.circuits.compiled('snap-2k')]);
  assert.equal(c1, c2, 'one compile, one compiled circuit');
  assert.equal(await kind.circuits.compiled('snap-2k'), c1);
  const here = snapShape(info).circuit;
  assert.equal(c1.shape.numConstraints, here.shape.numConstraints);
  assert.equal(c1.knownDigest, shapeDigest(here.shape), 'the same matrices; the digest sent back with the shape');
  assert.deepEqual(c1.queries, here.queries, 'the query indices the worker sent back');
  // the witness program the worker sent back with the shape is the one recorded here
  const bytes = (p: WitnessProgram): Buffer => Buffer.concat([...programChunks(p)]);
  assert.ok(bytes(c1.program).equals(bytes(here.program)), 'the same witness program');
  await kind.circuits.close?.();
});

test('close() stops a SnapDeals shape compile in progress', async () => {
  const kind = kindIn('b');
  const shape = kind.circuits.compiled('snap-8m'); // ~30 s here
  await new Promise((r) => setTimeout(r, 300));
  const t0 = performance.now();
  await kind.circuits.close?.();
  await assert.rejects(shape);
  assert.ok(performance.now() - t0 < 1000, `stopped in ${performance.now() - t0} ms`);
});

const le = (x: bigint): Uint8Array => {
  const b = new Uint8Array(32);
  for (let i = 0; i < 32; i++) b[i] = Number((x >> BigInt(8 * i)) & 0xffn);
  return b;
};

test('the planning and tape tasks (synthesis worker): what this thread accepts, the same errors, this thread\'s tape; the planned witness is the TypeScript one', async () => {
  const info = snapProofById(0)!; // 2 KiB: one partition
  const p = info.params;
  const h = snapHDefault(p.sectorNodes);
  const u = syntheticSnapUpdate(p, h, 5n);
  const pub = { commROld: u.commROld, commDNew: u.commDNew, commRNew: u.commRNew };
  const elements = Array.from({ length: p.partitionCount }, (_, k) => serializeSnapPartitionProof(snapPartitionProof(p, k, u.commRNew, u.trees), p));
  const request = (els: Uint8Array[]): ProofRequest =>
    ({ registeredProof: 0, sectorSize: 0, vanillaProofs: els, commROld: le(u.commROld), commDNew: le(u.commDNew), commRNew: le(u.commRNew), minerId: 0, sectorNumber: 0 }) as unknown as ProofRequest;
  const here = planSnapRequest(request(elements));
  assert.equal(here.h, h);
  const r = snapPlanTask({ registeredProof: 0, elements, h, pub });
  assert.ok(r.ok);
  const t = snapTapeTask({ registeredProof: 0, k: 0, h, pub, element: elements[0]! });
  assert.deepEqual(t.tape, encodeTape(snapTape(snapCircuitFor(p, 0, h, pub, parseSnapPartitionProof(elements[0]!, p)))), 'the same tape');

  // a flipped byte: the same message in the worker as in this thread
  const bad = elements.map((e) => e.slice());
  bad[0]![bad[0]!.length - 40] ^= 1;
  const msg = (() => {
    try {
      planSnapRequest(request(bad));
    } catch (e) {
      assert.ok(e instanceof PlanError);
      return e.message;
    }
    assert.fail('a flipped byte passed the checks');
  })();
  assert.match(msg, /vanilla_proofs\[0\]/);
  assert.deepEqual(snapPlanTask({ registeredProof: 0, elements: bad, h, pub }), { ok: false, error: msg });

  // through the planner: checked in the pool's worker; synthesis from the raw element
  const kind = kindIn('p', true);
  const ctx = { synthPool: pool, buffers: { take: (n: number) => new Uint8Array(n), give: () => undefined } } as unknown as PlanContext;
  await assert.rejects(kind.planner.plan(request(bad), ctx), (e: Error) => e instanceof PlanError && e.message === msg);
  await assert.rejects(kind.planner.plan({ ...request(elements), commRNew: le(u.commRNew + 1n) } as ProofRequest, ctx), (e: Error) => e instanceof PlanError && /vanilla_proofs\[0\]/.test(e.message));
  // parameters are looked for first: without them the request is refused before its partition proofs are checked
  const ran: string[] = [];
  const spy = { ...ctx, synthPool: { run: (t: SynthTask) => (ran.push(t.fn), pool.run(t)) } } as unknown as PlanContext;
  await assert.rejects(kindIn('n').planner.plan(request(elements), spy), /^Error: no parameters for snap-2k: looked for /);
  assert.deepEqual(ran, []);
  const work = await kind.planner.plan(request(elements), ctx);
  assert.equal(work.partitions, 1);
  const { shape } = await kind.circuits.compiled('snap-2k');
  const w = await work.synthesize(0, new Span('test'));
  const ts = snapWitnessTs(info, { k: 0, h, pub, proof: here.partitions[0]! }, shape.numInputs);
  assert.deepEqual(w.inputs, ts.inputs);
  assert.ok(Buffer.from(w.assignment).equals(Buffer.from(ts.assignment)), 'the same witness bytes');
  w.release?.();
  work.dispose?.();
  await kind.circuits.close?.();
});

test('the CPU development setup runs in a worker thread: the file is made under the dev-params directory, named by the shape, its key sized for the shape', async () => {
  const config = defaultConfig();
  config.srs.param_cache = join(dir, 'd');
  config.srs.dev_params = true;
  const notices: string[] = [];
  const kind = createSnapKind({ config, backend: selectBackend('native'), cacheDir: join(dir, 'd', 'kiln-cache'), notice: (m) => notices.push(m) });
  const { shape } = await kind.circuits.compiled('snap-2k');
  const devFile = devParamsPath(shape, join(dir, 'd', 'kiln-cache', 'dev-params'));
  assert.equal(existsSync(devFile), false);
  const params = await kind.circuits.params('snap-2k', new Span('test'));
  assert.ok(existsSync(devFile), 'made by the worker');
  assert.equal(params.vk.ic.length, shape.numInputs);
  assert.deepEqual(kind.paramsSource('snap-2k'), { kind: 'dev', path: devFile });
  assert.ok(notices.some((m) => /no official file \S*\/v28-/.test(m)), notices.join('\n'));
  await kind.circuits.close?.();
});
