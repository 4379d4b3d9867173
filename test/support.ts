/**
 * The one support module of the tests: a seeded random stream and the paths of the repository, the
 * shared fixtures and the shared reference scripts, the directories of a test daemon. No tests here.
 *
 * Tests compile to dist/test/ (and dist/test/gpu/); every path here is computed from this module's
 * own location (dist/test/support.js), so it is the same whichever test imports it.
 *
 * Importing it gives the test process (and every `kiln` process it starts) a temporary kiln cache,
 * KILN_CACHE_DIR, unless one is set: kiln's defaults ([kiln] cache_dir, the CLI's --cache-dir, the
 * daemon's state_dir under it) are ~/.cache/kiln, and no test writes to the home directory.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FR_MODULUS, G1, G2 } from '../src/field/layout.js';
import type { Backend } from '../src/backend/backend.js';
import type { EngineConfig } from '../src/engine/config.js';
import type { VerifyingKey } from '../src/groth16/keys.js';

if (!process.env.KILN_CACHE_DIR) {
  const cache = mkdtempSync(path.join(tmpdir(), 'kiln-test-cache-'));
  process.env.KILN_CACHE_DIR = cache;
  process.on('exit', () => rmSync(cache, { recursive: true, force: true }));
}

/**
 * A test daemon's directories (runDaemon's `configure`): Filecoin parameters in `paramsDir`, kiln's own
 * files in `cacheDir` (default `<paramsDir>/kiln-cache`), jobs in memory only (`[daemon] state_dir = ""`):
 * daemons of one test file share no journal, and nothing lands in the home directory. Tests of durable
 * jobs set state_dir after it.
 */
export function testDaemonDirs(c: EngineConfig, paramsDir: string, cacheDir = path.join(paramsDir, 'kiln-cache')): void {
  c.srs.param_cache = paramsDir;
  c.kiln.cache_dir = cacheDir;
  c.daemon.state_dir = '';
}

/** The repository root (the folder that holds package.json). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** ../shared beside the repository: FACTS.md, fixtures/, reference/. */
export const sharedDir = path.resolve(repoRoot, '..', 'shared');

/** Where fixtures are looked for, first match wins: $KILN_FIXTURES, ../shared/fixtures, .device/fixtures (the GPU machine). */
export const fixtureDirs: string[] = [process.env.KILN_FIXTURES, path.join(sharedDir, 'fixtures'), path.join(repoRoot, '.device', 'fixtures')].filter(
  (d): d is string => d !== undefined && d !== '',
);

/** The path of a shared fixture file (e.g. '2KiB.c1.json'): the first fixture folder that has it, else ../shared/fixtures/<name>. */
export function fixture(name: string): string {
  for (const d of fixtureDirs) {
    const p = path.join(d, name);
    if (existsSync(p)) return p;
  }
  return path.join(sharedDir, 'fixtures', name);
}

/** Whether a fixture file can be found (for tests that skip without it). */
export function hasFixture(name: string): boolean {
  return fixtureDirs.some((d) => existsSync(path.join(d, name)));
}

/** The shared reference scripts' folder (../shared/reference), or a file in it. */
export function reference(name = ''): string {
  return path.join(sharedDir, 'reference', name);
}

/** Runs one python3 process with the reference scripts importable (and sys, json imported); returns its stdout lines. */
export function python(body: string): string[] {
  const code = `import sys, json\nsys.path.insert(0, ${JSON.stringify(reference())})\n${body}`;
  return execFileSync('python3', ['-c', code], { encoding: 'utf8', maxBuffer: 64 << 20 }).trim().split('\n');
}

/**
 * A deterministic random stream (xoshiro128**, seeded through splitmix32), for tests only: never
 * for keys. Calling it gives an element of Fr, or of [0, m) when `m` is given (512 bits reduced, so
 * the bias is negligible for any m below 2^384).
 */
export interface Rng {
  (m?: bigint): bigint;
  /** A uniform 32-bit unsigned integer. */
  u32(): number;
  /** A uniform integer in [0, n), n ≤ 2^32. */
  int(n: number): number;
  /** A uniform non-zero element of Fr. */
  nonZero(): bigint;
  /** n uniform bytes. */
  bytes(n: number): Uint8Array;
  /** A fair coin. */
  bool(): boolean;
}

export function rng(seed: number): Rng {
  // splitmix32 expands the seed into the four words of the state (never all zero).
  let z = seed >>> 0;
  const split = (): number => {
    z = (z + 0x9e3779b9) >>> 0;
    let t = z;
    t = Math.imul(t ^ (t >>> 16), 0x85ebca6b) >>> 0;
    t = Math.imul(t ^ (t >>> 13), 0xc2b2ae35) >>> 0;
    return (t ^ (t >>> 16)) >>> 0;
  };
  let a = split();
  let b = split();
  let c = split();
  let d = split();
  if ((a | b | c | d) === 0) a = 1;
  const rotl = (x: number, k: number): number => ((x << k) | (x >>> (32 - k))) >>> 0;
  const u32 = (): number => {
    const result = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c = (c ^ a) >>> 0;
    d = (d ^ b) >>> 0;
    b = (b ^ c) >>> 0;
    a = (a ^ d) >>> 0;
    c = (c ^ t) >>> 0;
    d = rotl(d, 11);
    return result;
  };
  const wide = (): bigint => {
    let x = 0n;
    for (let k = 0; k < 16; k++) x = (x << 32n) | BigInt(u32());
    return x;
  };
  const next = ((m: bigint = FR_MODULUS): bigint => wide() % m) as Rng;
  next.u32 = u32;
  next.int = (n: number): number => {
    if (!(n >= 1 && n <= 2 ** 32)) throw new RangeError(`rng.int: n must be in [1, 2^32], got ${n}`);
    return Math.floor((u32() / 2 ** 32) * n);
  };
  next.nonZero = (): bigint => (wide() % (FR_MODULUS - 1n)) + 1n;
  next.bytes = (n: number): Uint8Array => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = u32() & 0xff;
    return out;
  };
  next.bool = (): boolean => (u32() & 1) === 1;
  return next;
}

/** n random field elements below 2^254 < r (valid Montgomery representations), seeded. */
export function randomFrBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n * 32);
  const w = new Uint32Array(out.buffer);
  const r = rng(seed).u32;
  for (let i = 0; i < w.length; i++) w[i] = r();
  for (let i = 0; i < n; i++) w[i * 8 + 7] &= 0x3fffffff;
  return out;
}

/** Montgomery 1 (R mod r): the scalar 1 in the byte layout of the backends. */
export const FR_ONE_MONT = new Uint8Array(new BigUint64Array([0x00000001fffffffen, 0x5884b7fa00034802n, 0x998c4fefecbc4ff5n, 0x1824b159acc5056fn]).buffer);

/** A verifying key of small multiples of the generators (no setup behind it): for tests of file
 *  layouts and loaders, with `ic` of 19·G, 23·G, … (`inputs` points). */
export function sampleVerifyingKey(inputs = 1): VerifyingKey {
  return {
    alphaG1: G1.BASE.multiply(3n),
    betaG1: G1.BASE.multiply(5n),
    betaG2: G2.BASE.multiply(7n),
    gammaG2: G2.BASE.multiply(11n),
    deltaG1: G1.BASE.multiply(13n),
    deltaG2: G2.BASE.multiply(17n),
    ic: Array.from({ length: inputs }, (_, i) => G1.BASE.multiply(19n + 4n * BigInt(i))),
  };
}

/** `backend` whose prover steps (each matrix-vector product, the quotient, each MSM) take `ms` more,
 *  each call's name pushed to `calls`: a partition proof of ≥ 9 steps that a cancellation can catch. */
export function slowProver(backend: Backend, ms: number, calls: string[] = []): Backend {
  return new Proxy(backend, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv);
      if (typeof v !== 'function') return v;
      if (!['csrMatVec', 'quotient', 'msmG1', 'msmG2'].includes(String(prop))) return v.bind(target);
      return async (...args: unknown[]) => {
        calls.push(String(prop));
        const r = await v.apply(target, args);
        await new Promise((res) => setTimeout(res, ms));
        return r;
      };
    },
  }) as Backend;
}

/** A task for engine/task-worker.ts runOffThread (tests of its progress channel): reports 1..n, returns n. */
export function progressTask(arg: { n: number }, progress: (p: unknown) => void): number {
  for (let k = 1; k <= arg.n; k++) progress({ step: `step ${k}`, done: k, total: arg.n });
  return arg.n;
}

/** The first 32-byte element where two assignments differ (-1: equal; the shorter length when the lengths differ):
 *  the witness-program tests' byte-for-byte comparison, naming where. */
export function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length) / 32;
  if (Buffer.from(a).equals(Buffer.from(b))) return -1;
  for (let i = 0; i < a.length / 32; i++) {
    if (!Buffer.from(a.subarray(i * 32, i * 32 + 32)).equals(Buffer.from(b.subarray(i * 32, i * 32 + 32)))) return i;
  }
  return -1;
}
