/** File helpers shared by the caches (shapes, witness programs). */
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';

/**
 * Writes `chunks` to `path` through a temporary file beside it and a rename, so readers never see
 * a partial file; every chunk is written whole (writeSync may write less than asked, and one call
 * writes at most ~2 GiB on Linux).
 */
export function writeChunksAtomic(path: string, chunks: readonly Uint8Array[]): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    for (const c of chunks) {
      for (let done = 0; done < c.length; ) done += writeSync(fd, c, done, Math.min(c.length - done, 1 << 30));
    }
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
