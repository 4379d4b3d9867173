/**
 * CI: a .params file larger than 4 GiB whose h section alone is larger than any JS typed array
 * (44,740,000 G1 points, 4.295 GB; Node 20 caps one typed array at 4 GiB), read by the native
 * loader, its counts and size checked first: streamed through two staging buffers to a stand-in
 * device (the host's peak memory stays a few chunks), then into native memory in chunks; then the
 * same file made inconsistent (h's count field disagreeing with the length) and truncated, both
 * refused from the layout with the numbers, before any point is read.
 *
 * Cheap on purpose: h repeats a pattern of 64 points, mostly the identity (decoded with a flag
 * check) with real points at known places, written in 60 MiB blocks (~4.3 GB of disk for the
 * length of the test, deleted afterwards; skipped with the reason when the disk has less than
 * 6 GiB free). Peak memory: the 4.3 GB host load, in native memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, rm, statfs, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NativeBackend } from '../src/backend/native.js';
import { SECTION_CHUNK_BYTES, hostChunks, sectionPoint, sectionToBytes, type DeviceTarget, type PointSection } from '../src/backend/section.js';
import type { PointGroup } from '../src/curve/codec.js';
import { G1, G2, frVector, g1Vector, g2Vector } from '../src/field/layout.js';
import { ParamsFormatError, encodeParams, readParamsLayout, verifyingKeyByteLength, type Parameters } from '../src/groth16/keys.js';
import { inspectParamsFile, loadParamsFile } from '../src/groth16/params-native.js';
import { rng, sampleVerifyingKey } from './support.js';

const be = new NativeBackend();
const H = 44_740_000; // 4,295,040,000 bytes of h > 2^32
const PATTERN = 64; // h[i] = pattern[i mod 64]: the identity except at i mod 16 = 5
const REAL = (k: number): boolean => k % 16 === 5;

async function smallParams(): Promise<Parameters> {
  const next = rng(77);
  const g1 = (n: number) => be.fixedBaseMulG1(g1Vector([G1.BASE]), frVector(Array.from({ length: n }, () => next())));
  const g2 = (n: number) => be.fixedBaseMulG2(g2Vector([G2.BASE]), frVector(Array.from({ length: n }, () => next())));
  const h = await g1(PATTERN);
  for (let k = 0; k < PATTERN; k++) if (!REAL(k)) h.fill(0, k * 96, (k + 1) * 96);
  return {
    vk: sampleVerifyingKey(2),
    h,
    l: await g1(5),
    a: await g1(3),
    bG1: await g1(2),
    bG2: await g2(2),
  };
}

/** VmHWM of this process (bytes) since the last reset (`/proc/self/clear_refs` 5); undefined where
 *  Linux's procfs is not there. */
function peakRss(reset = false): number | undefined {
  try {
    if (reset) writeFileSync('/proc/self/clear_refs', '5');
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A device that keeps nothing: it checks the points of each copy against the pattern. */
function checkingDevice(small: Parameters): DeviceTarget & { points: number; stagingBytes: number } {
  const staged = new Set<Uint8Array>();
  const t = {
    points: 0,
    stagingBytes: 0,
    alloc(n: number): Uint8Array {
      const b = be.alloc(n);
      staged.add(b);
      t.stagingBytes += n;
      return b;
    },
    release(b: Uint8Array): void {
      staged.delete(b);
      be.release(b);
    },
    createResident(group: PointGroup, count: number): PointSection {
      return { kind: 'points', group, count, chunks: [], device: { owner: t, handle: group, ordinal: 0 }, release: () => {} };
    },
    async writeResident(s: PointSection, first: number, bytes: Uint8Array): Promise<void> {
      const size = s.group === 'G1' ? 96 : 192;
      const n = bytes.length / size;
      t.points += n;
      if (s.count !== H) return;
      for (const j of [0, 1, 5, 21, n - 1]) {
        const k = (first + j) % PATTERN;
        assert.deepEqual(bytes.subarray(j * 96, (j + 1) * 96), small.h.subarray(k * 96, (k + 1) * 96), `h[${first + j}]`);
      }
    },
  };
  return t;
}

test('a .params file over 4 GiB (h alone 4.295 GB) streams to a device and loads into native memory in chunks; inconsistent and cut copies are refused', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-params-large-'));
  try {
    const fs = await statfs(dir);
    const free = fs.bavail * fs.bsize;
    if (free < 6 * 2 ** 30) {
      t.skip(`needs 6 GiB free in ${dir}, ${(free / 2 ** 30).toFixed(1)} GiB available`);
      return;
    }
    const small = await smallParams();
    const bytes = encodeParams(small);
    const vkLen = verifyingKeyByteLength(2);
    const wire = bytes.subarray(vkLen + 4, vkLen + 4 + PATTERN * 96);
    const tail = bytes.subarray(vkLen + 4 + PATTERN * 96); // l, a, b_g1, b_g2 with their counts
    const path = join(dir, 'big.params');
    const t0 = performance.now();
    const fh = await open(path, 'w');
    try {
      await fh.write(bytes.subarray(0, vkLen));
      const count = new Uint8Array(4);
      new DataView(count.buffer).setUint32(0, H);
      await fh.write(count);
      const per = PATTERN * 10_240; // points per write (60 MiB), whole patterns
      const block = new Uint8Array(per * 96);
      for (let o = 0; o < block.length; o += wire.length) block.set(wire, o);
      for (let i = 0; i < H; i += per) {
        const k = Math.min(per, H - i);
        let off = 0;
        while (off < k * 96) off += (await fh.write(block, off, k * 96 - off)).bytesWritten;
      }
      await fh.write(tail);
    } finally {
      await fh.close();
    }
    const size = vkLen + 4 + H * 96 + tail.length;
    const writeMs = performance.now() - t0;

    // the layout, every count checked against the file size before anything is read; the twins agree
    const layout = await inspectParamsFile(path, { backend: be });
    assert.equal(layout.size, size);
    assert.ok(layout.size > 2 ** 32 && H * 96 > 2 ** 32);
    assert.deepEqual(layout.sections.h, { group: 'G1', count: H, offset: vkLen + 4 });
    assert.equal(layout.sections.l.count, 5);
    assert.equal(layout.sections.b_g2.count, 2);
    assert.equal(layout.sections.b_g2.offset + 2 * 192, size);
    assert.deepEqual(await readParamsLayout(path), layout);

    // streamed through two 64 MiB staging buffers: the host's peak memory grows by a few chunks only
    const device = checkingDevice(small);
    const rss0 = peakRss(true);
    const t1 = performance.now();
    const streamed = await loadParamsFile(path, { backend: be, device });
    const streamMs = performance.now() - t1;
    const rss1 = peakRss();
    assert.equal(device.points, H + 5 + 3 + 2 + 2);
    assert.equal(streamed.h.count, H);
    assert.equal(streamed.h.chunks.length, 0);
    assert.ok(device.stagingBytes <= 2 * 64 * 2 ** 20);
    if (rss0 !== undefined && rss1 !== undefined) {
      assert.ok(rss1 - rss0 < 512 * 2 ** 20, `peak RSS grew by ${((rss1 - rss0) / 2 ** 20).toFixed(0)} MiB while 4.3 GB streamed`);
    }

    // the whole file into native memory: h in two chunks (2^25 points + the rest), none of 4 GiB
    const t2 = performance.now();
    const p = await loadParamsFile(path, { backend: be });
    const loadMs = performance.now() - t2;
    try {
      assert.equal(p.h.count, H);
      const chunks = hostChunks(p.h, 'G1');
      assert.equal(chunks.length, Math.ceil((H * 96) / SECTION_CHUNK_BYTES));
      for (const c of chunks) assert.ok(c.bytes.length <= SECTION_CHUNK_BYTES && c.bytes.length < 2 ** 32);
      assert.equal(chunks.reduce((s, c) => s + c.bytes.length, 0), H * 96);
      const second = chunks[1].first;
      for (const i of [0, 1, 5, 21, 64 + 5, 12_345_685, second - 1, second, second + 5, H - 2, H - 1]) {
        const k = i % PATTERN;
        assert.deepEqual(sectionPoint(p.h, 'G1', i), small.h.subarray(k * 96, (k + 1) * 96), `h[${i}]`);
      }
      assert.deepEqual(sectionToBytes(p.l, 'G1'), small.l);
      assert.deepEqual(sectionToBytes(p.bG2, 'G2'), small.bG2);
      assert.ok(p.vk.ic[1].equals(small.vk.ic[1]));
    } finally {
      for (const s of [p.h, p.l, p.a, p.bG1, p.bG2]) s.release();
    }

    // inconsistent: h's count field claims more points than the file holds, or one fewer
    const patch = async (v: number): Promise<void> => {
      const f = await open(path, 'r+');
      const b = new Uint8Array(4);
      new DataView(b.buffer).setUint32(0, v);
      await f.write(b, 0, 4, vkLen);
      await f.close();
    };
    const refused = async (want: string): Promise<void> => {
      const t3 = performance.now();
      await assert.rejects(loadParamsFile(path, { backend: be }), (e: unknown) => {
        assert.ok(e instanceof ParamsFormatError, String(e));
        assert.equal(e.message, `${path}: ${want}`);
        return true;
      });
      assert.ok(performance.now() - t3 < 5000, 'refused from the layout, without reading the points');
    };
    const left = size - vkLen - 4;
    await patch(H + 10_000_000);
    await refused(`section h: count ${H + 10_000_000} needs ${(H + 10_000_000) * 96} bytes (${H + 10_000_000} × 96) but only ${left} remain: truncated or inconsistent`);
    await patch(H - 1); // the last 96 bytes of h are read as l's count and points: refused further on
    await assert.rejects(loadParamsFile(path, { backend: be }), (e: unknown) => e instanceof ParamsFormatError && /section (l|a|b_g1|b_g2|end): /.test(e.message));
    await patch(H);
    // cut: the last 100,000 bytes (inside h now)
    await truncate(path, size - 100_000);
    await refused(`section h: count ${H} needs ${H * 96} bytes (${H} × 96) but only ${left - 100_000} remain: truncated or inconsistent`);
    t.diagnostic(
      `file ${(size / 1e9).toFixed(2)} GB written in ${(writeMs / 1000).toFixed(1)} s; streamed in ${(streamMs / 1000).toFixed(1)} s ` +
        `(peak RSS +${rss0 !== undefined && rss1 !== undefined ? ((rss1 - rss0) / 2 ** 20).toFixed(0) : '?'} MiB); ` +
        `loaded into native memory in ${(loadMs / 1000).toFixed(1)} s (${be.capabilities().threads} threads)`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
