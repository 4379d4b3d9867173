/**
 * INSECURE development setup on the GPU: Groth16 parameters for tests and benchmarks ONLY (the
 * toxic waste comes from a public seed; see setup-constants.ts). The fast twin of
 * writeInsecureDevParamsCpu (setup.ts): same seed, same bytes.
 *
 * The backend's devSetupInsecure (the CUDA backend: native/cuda/setup.cu) computes everything on
 * the device from the circuit's CSR matrices: the Lagrange basis at τ by an inverse NTT of the
 * powers of τ, A/B/C at τ per variable, the h/l/a/b/ic scalars and their fixed-base
 * multiplications, the zcash encoding; it streams the five query sections from pinned staging
 * buffers into the .params file. No section passes through a JS buffer (the 32 GiB circuit's h
 * section alone is ~13 GB). This file derives the constants (setupConstants, the same values as
 * the CPU twin), writes the verifying key at the head of the file (its IC points come back from
 * the device) and the .vk, and reports progress.
 */
import { open, rm, stat } from 'node:fs/promises';
import type { Backend, DevSetupInput, DevSetupResult, DevSetupTimings } from '../backend/backend.js';
import { readG1, type G1Point } from '../field/layout.js';
import { encodeVerifyingKey, verifyingKeyByteLength, writeVerifyingKeyFile, type VerifyingKey } from './keys.js';
import { compiledOf, type CircuitLike } from './compiled.js';
import { domainSize } from './queries.js';
import { insecureToxicWaste, setupConstants, setupConstantsBytes, verifyingKeyPoints, type DevSetupOptions, type ToxicWaste } from './setup-constants.js';

/** Phases of a device setup, in order (DevSetupInput.progress[0] indexes this list). */
export const DEV_SETUP_PHASES = ['preparing', 'h', 'l', 'a', 'b_g1', 'b_g2', 'ic', 'fsync', 'done'] as const;
export type DevSetupPhase = (typeof DEV_SETUP_PHASES)[number];

/** Where a device setup is (GpuDevParamsOptions.onProgress). */
export interface DevSetupProgress {
  /** 'preparing' = the Lagrange basis, A/B/C at τ and the tables; then the sections in file order. */
  phase: DevSetupPhase;
  /** Points of the phase computed so far, and in all (0 for preparing/fsync/done). */
  done: number;
  total: number;
  /** Bytes of the sections written to the file so far, and in all (the verifying key excluded). */
  bytesWritten: number;
  bytesTotal: number;
  /** Since the call began. */
  elapsedMs: number;
}

export interface GpuDevParamsOptions extends DevSetupOptions {
  /** The toxic waste itself (tests); default: derived from `seed`. */
  toxicWaste?: ToxicWaste;
  /** Also write the verifying key here (bellperson's .vk layout: the head of the .params file). */
  vkPath?: string;
  /** Write back as it goes and fsync the file before returning (default true). */
  fsync?: boolean;
  /** G1 points per pipeline chunk (default the backend's, 2^21; tests use small ones). */
  chunkPoints?: number;
  /** Writer threads (default the backend's, 4). */
  writers?: number;
  /** Called every `progressIntervalMs` (default 1000) while the device works, and once at the end. */
  onProgress?: (p: DevSetupProgress) => void;
  progressIntervalMs?: number;
}

export interface GpuDevParamsResult {
  vk: VerifyingKey;
  /** Points per section. */
  counts: { h: number; l: number; a: number; bG1: number; bG2: number };
  /** Bytes of the .params file. */
  bytes: number;
  /** Columns with more than 256 terms (summed piecewise on the device). */
  longColumns: number;
  /** Pinned host memory of the staging buffers, and the device pool's high-water mark (besides the
   *  resident circuit and the NTT twiddles). */
  stagingBytes: number;
  devicePeakBytes: number;
  /** The backend's timings (milliseconds), plus `vk` (the verifying key written) and `wall` (this call). */
  timings: DevSetupTimings & { vk: number; wall: number };
}

/** A backend that can run the setup on its device. */
export type DevSetupBackend = Backend & Required<Pick<Backend, 'devSetupInsecure'>>;

export function hasDevSetup(backend: Backend): backend is DevSetupBackend {
  return typeof backend.devSetupInsecure === 'function';
}

/** fsync of a character device (the bench's /dev/null) fails with EINVAL: nothing to sync. */
function ignoreSyncOnDevices(e: NodeJS.ErrnoException): void {
  if (e.code !== 'EINVAL' && e.code !== 'ENOTSUP' && e.code !== 'EROFS') throw e;
}

/**
 * INSECURE: the GPU development setup of `shape` written as a bellperson .params file at
 * `paramsPath` (truncated first; removed again if the call fails), and its .vk at `opts.vkPath`.
 * The circuit stays resident on the device afterwards for the proofs that follow (the CUDA
 * backend's evictCircuit(shape) frees it).
 */
export async function writeInsecureDevParamsGpu(
  circuit: CircuitLike,
  backend: Backend,
  paramsPath: string,
  opts: GpuDevParamsOptions = {},
): Promise<GpuDevParamsResult> {
  if (!hasDevSetup(backend)) throw new Error(`backend ${backend.name} cannot run the development setup on a device (CUDA addon without devSetupInsecure?)`);
  const t0 = performance.now();
  const tw = opts.toxicWaste ?? insecureToxicWaste(opts.seed);
  const { shape, queries: q } = compiledOf(circuit);
  const n = domainSize(shape);
  const constants = setupConstantsBytes(setupConstants(tw, n));
  const vkBytes = verifyingKeyByteLength(shape.numInputs);
  const fsync = opts.fsync ?? true;
  const progress = new Float64Array(8);
  const report = (): void => {
    if (!opts.onProgress) return;
    opts.onProgress({
      phase: DEV_SETUP_PHASES[Math.min(Math.max(progress[0] | 0, 0), DEV_SETUP_PHASES.length - 1)],
      done: progress[1],
      total: progress[2],
      bytesWritten: progress[3],
      bytesTotal: progress[4],
      elapsedMs: performance.now() - t0,
    });
  };
  const input: DevSetupInput = {
    shape,
    logN: Math.log2(n),
    aIdx: q.a,
    bIdx: q.b,
    constants,
    path: paramsPath,
    offset: vkBytes,
    fsync,
    chunkPoints: opts.chunkPoints,
    writers: opts.writers,
    progress,
  };
  // Truncate (an older, longer file would keep its tail), then the device writes from vkBytes on.
  await (await open(paramsPath, 'w')).close();
  let ok = false;
  const timer = opts.onProgress ? setInterval(report, opts.progressIntervalMs ?? 1000) : undefined;
  try {
    let r: DevSetupResult;
    try {
      r = await backend.devSetupInsecure(input);
    } finally {
      if (timer) clearInterval(timer);
    }
    report();
    const [h, l, a, bG1, bG2] = r.counts;
    if (h !== n - 1 || l !== shape.numAux || a !== q.a.length || bG1 !== q.b.length || bG2 !== q.b.length) {
      throw new Error(`devSetupInsecure: section counts ${JSON.stringify(r.counts)} do not match the shape`);
    }
    const tv = performance.now();
    const ic: G1Point[] = [];
    for (let i = 0; i < shape.numInputs; i++) ic.push(readG1(r.ic, i));
    const vk: VerifyingKey = { ...verifyingKeyPoints(tw), ic };
    const head = encodeVerifyingKey(vk);
    if (head.length !== vkBytes) throw new Error(`verifying key has ${head.length} bytes, expected ${vkBytes}`);
    const fh = await open(paramsPath, 'r+');
    try {
      let o = 0;
      while (o < head.length) o += (await fh.write(head, o, head.length - o, o)).bytesWritten;
      if (fsync) await fh.sync().catch(ignoreSyncOnDevices);
    } finally {
      await fh.close();
    }
    if (opts.vkPath !== undefined) await writeVerifyingKeyFile(opts.vkPath, vk);
    ok = true;
    return {
      vk,
      counts: { h, l, a, bG1, bG2 },
      bytes: r.endOffset,
      longColumns: r.longColumns,
      stagingBytes: r.stagingBytes,
      devicePeakBytes: r.devicePeakBytes,
      timings: { ...r.timings, vk: performance.now() - tv, wall: performance.now() - t0 },
    };
  } finally {
    // Never remove what is not a regular file (the bench may write to /dev/null).
    if (!ok && (await stat(paramsPath).catch(() => undefined))?.isFile()) await rm(paramsPath, { force: true });
  }
}
