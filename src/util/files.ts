/** File helpers shared by the caches (shapes, witness programs) and the CLI. */
import { closeSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';

/** The bytes of a file a command-line option names (`--c1 c1.json`); an error names the option and the file. */
export function readOptionFile(option: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`${option} ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

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
