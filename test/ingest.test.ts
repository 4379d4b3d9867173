/**
 * Large requests without long turns of the event loop (issue 30 item 9): grpc-js's message framing
 * with kiln's decoder (one buffer filled frame by frame, large messages in shared memory), the request
 * digest and the journal's request file hashed a slice at a time, a C1 handed to the planner packed. A turn is measured in this thread's
 * CPU time (Linux schedstat), so the machine's other load does not count; the bound is relative to a
 * control: hashing the same bytes in one call.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { requestDigest } from '../src/engine/jobs.js';
import { Journal, decodeRequest, encodeRequest } from '../src/engine/journal.js';
import { proofRequest } from '../src/engine/types.js';
import { SHARED_MESSAGE_BYTES, installStreamDecoder } from '../src/server/stream-decoder.js';
import { sha256Each, sha256Joined } from '../src/util/hash.js';
import { parseC1Input } from '../src/filecoin/c1.js';
import { packC1, unpackC1Partition } from '../src/filecoin/c1-packed.js';
import { porepPlanTask } from '../src/kinds/porep/tasks.js';
import { fixture } from './support.js';

/** This thread's CPU time in ms (NaN where /proc/thread-self/schedstat is missing). */
function cpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** Runs `f` while a setImmediate chain notes the CPU time between its turns: the most one turn held. */
async function longestTurn<T>(f: () => Promise<T>): Promise<{ value: T; cpuMs: number }> {
  let stop = false;
  let longest = 0;
  let last = cpuMs();
  const turn = (): void => {
    const now = cpuMs();
    longest = Math.max(longest, now - last);
    last = now;
    if (!stop) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const value = await f();
    return { value, cpuMs: longest };
  } finally {
    stop = true;
  }
}

/**
 * The least of `tries` runs' longest turns: a garbage collection that lands in one run's turn is the
 * runtime's, not the code's; a turn the code itself holds too long shows in every run.
 */
async function leastLongestTurn<T>(tries: number, f: (attempt: number) => Promise<T>): Promise<{ value: T; cpuMs: number }> {
  let best: { value: T; cpuMs: number } | undefined;
  for (let k = 0; k < tries; k++) {
    const run = await longestTurn(() => f(k));
    if (best === undefined || run.cpuMs < best.cpuMs) best = run;
  }
  return best!;
}

/** The CPU time of hashing `b` in one call: the control the turns are compared with. */
function oneCallHashMs(b: Uint8Array): number {
  const t = cpuMs();
  createHash('sha256').update(b).digest();
  return cpuMs() - t;
}

const framed = (msg: Buffer, flag: number): Buffer => {
  const h = Buffer.alloc(5);
  h[0] = flag;
  h.writeUInt32BE(msg.length, 1);
  return Buffer.concat([h, msg]);
};

test("grpc-js's StreamDecoder, replaced: any split of the frames gives the same messages; large ones in shared memory; over the limit refused", () => {
  assert.equal(installStreamDecoder(), true);
  assert.equal(installStreamDecoder(), true, 'once per process');
  const { StreamDecoder } = createRequire(import.meta.url)('@grpc/grpc-js/build/src/stream-decoder.js') as {
    StreamDecoder: new (max: number) => { write(b: Buffer): Buffer[] };
  };
  const big = Buffer.alloc(SHARED_MESSAGE_BYTES + 3);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 9)) & 0xff;
  const want = [framed(Buffer.from('abc'), 0), framed(Buffer.alloc(0), 0), framed(big, 0), framed(Buffer.from([9]), 1)];
  const wire = Buffer.concat(want);
  for (const chunk of [1, 2, 5, 4099, 16384, wire.length]) {
    const d = new StreamDecoder(256 << 20);
    const got: Buffer[] = [];
    for (let at = 0; at < wire.length; at += chunk) got.push(...d.write(wire.subarray(at, at + chunk)));
    assert.equal(got.length, want.length, `chunks of ${chunk}`);
    got.forEach((g, i) => assert.ok(g.equals(want[i]!), `chunks of ${chunk}: message ${i}`));
    assert.ok(got[2]!.buffer instanceof SharedArrayBuffer, 'a large message is in shared memory');
    assert.ok(!(got[0]!.buffer instanceof SharedArrayBuffer));
  }
  assert.throws(() => new StreamDecoder(10).write(framed(Buffer.alloc(11), 0)), /^Error: Received message larger than max \(11 vs 10\)$/);
});

test('sha256Each / sha256Joined: the hashes of one call, for parts of any size', async () => {
  const parts = [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3.5 * 2 ** 20, 5].map((n, k) => Buffer.alloc(n, k + 1));
  const each = await sha256Each(parts);
  parts.forEach((p, i) => assert.ok(each[i]!.equals(createHash('sha256').update(p).digest()), `part ${i}`));
  assert.ok((await sha256Joined(parts)).equals(createHash('sha256').update(Buffer.concat(parts)).digest()));
});

test('a 64 MiB request in shared memory: its digest and its journal request file (written, read back) are those of ordinary memory, made without a long turn of the event loop', async () => {
  const shared = Buffer.from(new SharedArrayBuffer(64 << 20));
  for (let i = 0; i < shared.length; i += 4096) shared[i] = i >> 12;
  const plain = Buffer.from(shared);
  const req = (vanillaProof: Uint8Array) => proofRequest({ requestId: 'big', proofKind: 1, sectorSize: 2048, vanillaProof, randomness: new Uint8Array(32).fill(3) });
  const control = oneCallHashMs(shared);

  const digest = await leastLongestTurn(3, () => requestDigest(req(shared)));
  assert.equal(digest.value, await requestDigest(req(plain)));

  const dir = await mkdtemp(join(tmpdir(), 'kiln-ingest-'));
  try {
    const { journal } = await Journal.open(dir, { retentionMs: 60_000 });
    const header = (k: number) => ({ id: `job-${k + 1}`, requestId: `big-${k}`, kind: 1, kindName: 'porep-c2', priority: 2, seq: k, submittedAt: Date.now() });
    const accepted = await leastLongestTurn(3, (k) => journal.accept(header(k), req(shared)));
    const file = await readFile(join(dir, 'requests', 'job-1'));
    assert.ok(file.equals(encodeRequest(req(plain))), 'the request file encodeRequest writes');
    assert.ok(Buffer.from(decodeRequest(file).vanillaProof).equals(plain));
    // read back after a restart: into shared memory too (the planner's workers get it without a copy)
    const read = await leastLongestTurn(3, () => journal.request('job-1'));
    assert.ok(read.value.vanillaProof.buffer instanceof SharedArrayBuffer);
    assert.ok(Buffer.from(read.value.vanillaProof).equals(plain));
    assert.deepEqual({ ...read.value, vanillaProof: undefined }, { ...decodeRequest(file), vanillaProof: undefined });
    await journal.close();
    console.log(
      `# longest turn (thread CPU): digest ${digest.cpuMs.toFixed(1)} ms, journal accept ${accepted.cpuMs.toFixed(1)} ms, ` +
        `request read back ${read.cpuMs.toFixed(1)} ms; one call hashing 64 MiB ${control.toFixed(1)} ms`,
    );
    if (Number.isNaN(control)) return; // no schedstat: the bytes are checked, the turns cannot be
    assert.ok(digest.cpuMs < control / 2, `the digest held the loop ${digest.cpuMs} ms of CPU (one call: ${control} ms)`);
    assert.ok(accepted.cpuMs < control / 2, `the journal's accept held the loop ${accepted.cpuMs} ms of CPU (one call: ${control} ms)`);
    assert.ok(read.cpuMs < control / 2, `reading the request back held the loop ${read.cpuMs} ms of CPU (one call: ${control} ms)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a C1 reaches the planner's thread packed: its partitions as shared bytes, each unpacked alone to what parsing gave", async () => {
  const bytes = await readFile(fixture('2KiB.commit2in.json'));
  const planned = porepPlanTask({ bytes });
  assert.ok(planned.ok && planned.split === undefined);
  const packed = planned.c2.phase1Out;
  assert.equal(packed.partitions.length, 1);
  assert.ok(packed.partitions[0]!.buffer instanceof SharedArrayBuffer, 'shared: no copy to a check or witness task');
  const c1 = parseC1Input(bytes).phase1Out;
  assert.deepEqual(unpackC1Partition(packed, 0), c1);
  // three partitions: each unpacked with the others empty
  const p = c1.partitions[0]!;
  const three = packC1({ ...c1, partitions: [p, [], p] });
  assert.deepEqual(unpackC1Partition(three, 2), { ...c1, partitions: [[], [], p] });
  assert.deepEqual(unpackC1Partition(three, 1).partitions, [[], [], []]);
  assert.throws(() => unpackC1Partition(three, 3), RangeError);
});
