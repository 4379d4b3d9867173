/**
 * SHA-256 of large byte arrays without holding the event loop: the bytes are hashed a slice at a
 * time and the loop runs in between (setImmediate). One call over a 100 MiB request held the loop
 * ~85 ms here; webcrypto's digest, which runs in the thread pool, first copies its input on the loop
 * (166–470 ms for 49–100 MiB on the 2-core dev machine, bench/ingest.ts) and refuses views of a
 * SharedArrayBuffer (the daemon's large gRPC messages, src/server/stream-decoder.ts).
 */
import { createHash } from 'node:crypto';

/** Bytes hashed between two turns of the event loop (~1 ms of SHA-256). */
const SLICE_BYTES = 1 << 20;

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function hashSliced(parts: readonly Uint8Array[], each: boolean): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let h = createHash('sha256');
  let since = 0;
  for (const p of parts) {
    for (let at = 0; at < p.length; ) {
      const n = Math.min(p.length - at, SLICE_BYTES - since);
      h.update(p.subarray(at, at + n));
      at += n;
      since += n;
      if (since === SLICE_BYTES) {
        since = 0;
        await turn();
      }
    }
    if (each) {
      out.push(h.digest());
      h = createHash('sha256');
    }
  }
  if (!each) out.push(h.digest());
  return out;
}

/** The SHA-256 of each of `parts`. */
export function sha256Each(parts: readonly Uint8Array[]): Promise<Buffer[]> {
  return hashSliced(parts, true);
}

/** The SHA-256 of `parts` one after the other (of their concatenation). */
export async function sha256Joined(parts: readonly Uint8Array[]): Promise<Buffer> {
  return (await hashSliced(parts, false))[0];
}
