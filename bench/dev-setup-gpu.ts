/**
 * INSECURE development setup on the GPU, timed (npm run bench:dev-setup-gpu -- …, or
 * node dist/bench/dev-setup-gpu.js …): the whole writeInsecureDevParamsGpu call (circuit upload,
 * Lagrange basis by iNTT, A/B/C at τ from the CSR matrices, fixed-base multiplications, encoding on
 * the device, streaming the .params file from pinned buffers, the verifying key, fsync) for a
 * circuit shape.
 *
 * Shapes (--shape, comma-separated):
 *   2KiB, 32GiB      synthetic CSR with the sizes of kiln's PoRep partition circuits (bench/gpu.ts's
 *                    figures: constraints, inputs, aux, A/B query sizes; 2/1/2 terms per row of A/B/C,
 *                    ONE in every 20th A row: one long column). The setup's cost depends on the sizes
 *                    and term counts, not on which columns the terms hit.
 *   porep:<size>     the real PoRep partition shape of a sector size (e.g. porep:32GiB), from the shape
 *                    cache in --cache-dir (recorded and cached there when absent: minutes at 32 GiB)
 *   file:<path>      a shape file written by the shape cache (<cache>/shapes/porep-*.shape)
 *   demo:<n>         a DemoCircuit of n constraints (recorded here)
 * Options: --device N; --out <sinks> (comma-separated, each run in turn over one upload: "tmp" (the
 *          default) = a file in the OS temp folder, removed after; /dev/null measures without a
 *          disk; "auto" = tmp when the temp folder has room, else /dev/null; or a path);
 *          --no-fsync; --keep (keep the file); --chunk <points>; --writers <n>; --progress (a line
 *          every 5 s); --cache-dir <dir> (porep:, default $KILN_CACHE_DIR or ~/.cache/kiln);
 *          --append (add the table to bench/RESULTS.md); --md <file> (write the section there too).
 *
 * Programmatic: benchDevSetup(shape, name, opts) runs one shape the caller already holds (e.g. the
 * engine's 32 GiB shape) and returns the table row and the result.
 */
import { statfsSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CudaBackend, cudaCapabilities, type PartitionSpec } from '../src/backend/cuda.js';
import { NativeBackend, nativeAvailable } from '../src/backend/native.js';
import { cudaOptions } from '../src/backend/select.js';
import { tuningFromEnv } from '../src/util/tuning.js';
import type { CsrMatrix } from '../src/field/csr.js';
import { FR_MODULUS, frVector } from '../src/field/layout.js';
import type { CircuitShape } from '../src/r1cs/cs.js';
import { DemoCircuit } from '../src/r1cs/demo-circuit.js';
import { readShapeFile, recordShape } from '../src/r1cs/shape.js';
import { domainSize } from '../src/groth16/queries.js';
import { devParamsLayout } from '../src/groth16/setup.js';
import { hasDevSetup, writeInsecureDevParamsGpu, type GpuDevParamsResult } from '../src/groth16/setup-gpu.js';
import { parsePorepSectorSize, porepInfoForSize, porepShape } from '../src/kinds/porep/porep-c2.js';
import { appendResults, commitLine, machineLine, markdownTable } from './report.js';

/** The sizes of a synthetic shape: bench/gpu.ts's partition figures (na, nb: the A- and B-query
 *  sizes; nnzA/B/C: terms per row). */
type Synthetic = Omit<PartitionSpec, 'logN' | 'fracZero' | 'fracOne' | 'iterations'>;

const SYNTHETIC: Record<string, Synthetic> = {
  '2KiB': { numConstraints: 2_687_921, numInputs: 40, numAux: 2_685_673, na: 2_674_948, nb: 685_522, nnzA: 2, nnzB: 1, nnzC: 2 },
  '32GiB': { numConstraints: 130_278_541, numInputs: 328, numAux: 130_169_893, na: 129_753_620, nb: 33_112_282, nnzA: 2, nnzB: 1, nnzC: 2 },
};

function opt(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * A synthetic shape with exactly the given sizes: A row r's first term is A-dense aux r mod (na − ni)
 * (so every one of them is A-dense), its others ONE (every 20th row) or a random A-dense column; B
 * row r's term is the B-dense variable r mod nb (ONE, then aux spread evenly); C's terms random.
 */
export function syntheticShape(s: Synthetic): CircuitShape {
  const m = s.numConstraints;
  const ni = s.numInputs;
  const nv = ni + s.numAux;
  const aAux = s.na - ni;
  if (aAux > m || s.nb > m || aAux > s.numAux || s.nb - 1 > s.numAux) throw new RangeError('synthetic shape: the query sizes do not fit');
  let x = 0x9e3779b9;
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  const coeffs = frVector([1n, 2n, FR_MODULUS - 1n, 0x1234567890abcdefn]);
  const bDense = new Uint32Array(s.nb);
  bDense[0] = 0;
  for (let k = 1; k < s.nb; k++) bDense[k] = ni + Math.floor(((k - 1) * s.numAux) / (s.nb - 1));
  const matrix = (k: number, col: (r: number, t: number) => number): CsrMatrix => {
    const rowPtr = new Uint32Array(m + 1);
    for (let r = 0; r <= m; r++) rowPtr[r] = r * k;
    const nnz = m * k;
    const colIdx = new Uint32Array(nnz);
    const coeffIdx = new Uint32Array(nnz);
    for (let r = 0, i = 0; r < m; r++) {
      for (let t = 0; t < k; t++, i++) {
        colIdx[i] = col(r, t);
        coeffIdx[i] = Math.imul(i, 0x9e3779b1) >>> 30;
      }
    }
    return { rows: m, cols: nv, rowPtr, colIdx, coeffIdx, coeffs };
  };
  const a = matrix(s.nnzA, (r, t) => (t === 0 ? ni + (r % aAux) : r % 20 === 0 ? 0 : ni + (next() % aAux)));
  const b = matrix(s.nnzB, (r, t) => (t === 0 ? bDense[r % s.nb] : bDense[next() % s.nb]));
  const c = matrix(s.nnzC, () => next() % nv);
  const aAuxDensity = new Uint8Array(s.numAux);
  aAuxDensity.fill(1, 0, aAux);
  const bInputDensity = new Uint8Array(ni);
  const bAuxDensity = new Uint8Array(s.numAux);
  for (const v of bDense) {
    if (v < ni) bInputDensity[v] = 1;
    else bAuxDensity[v - ni] = 1;
  }
  return { numInputs: ni, numAux: s.numAux, numConstraints: m, a, b, c, aAuxDensity, bInputDensity, bAuxDensity };
}

function demoShape(constraints: number): CircuitShape {
  return recordShape((cs) => new DemoCircuit({ constraints }).synthesize(cs));
}

function defaultCacheDir(): string {
  return process.env.KILN_CACHE_DIR ?? `${process.env.HOME ?? '/tmp'}/.cache/kiln`;
}

const s2 = (ms: number): string => (ms / 1000).toFixed(2);
const gib = (b: number): string => (b / 2 ** 30).toFixed(2);

export interface BenchDevSetupOptions {
  /** CUDA device (default 0), or a backend already made. */
  device?: number;
  backend?: CudaBackend;
  /** Sinks, each run in turn over one upload (see the file comment); default ['tmp']. */
  out?: string[];
  fsync?: boolean;
  keep?: boolean;
  chunkPoints?: number;
  writers?: number;
  /** A progress line every 5 s. */
  progress?: boolean;
  /** Free the circuit on the device afterwards (default true). */
  evict?: boolean;
}

export interface BenchDevSetupRun {
  sink: string;
  result: GpuDevParamsResult;
  row: (string | number)[];
}

export const BENCH_COLUMNS = [
  'shape',
  'constraints',
  'domain',
  'file GB',
  'sink',
  'setup s',
  'upload s',
  'lagrange / evals / tables s',
  'h / l / a / b_g1 / b_g2 s (wall)',
  'kernels s',
  'write wait / drain / fsync s',
  'GB/s',
  'staging / device peak GiB',
  'max RSS GiB',
];

/** The setup of one shape the caller holds, timed (one run per sink, the circuit uploaded once). */
export async function benchDevSetup(shape: CircuitShape, name: string, o: BenchDevSetupOptions = {}): Promise<BenchDevSetupRun[]> {
  // the tuning variables (KILN_CUDA_ADDON, KILN_GPU_MEMORY_LIMIT, …): read here, the edge
  const backend = o.backend ?? new CudaBackend({ ...cudaOptions(tuningFromEnv(process.env)), device: o.device ?? 0, cpu: nativeAvailable() ? new NativeBackend() : undefined });
  if (!hasDevSetup(backend)) throw new Error('the CUDA addon has no devSetupInsecure: rebuild it (npm run build:cuda)');
  const expected = devParamsLayout(shape).bytes;
  const logN = Math.log2(domainSize(shape));
  const runs: BenchDevSetupRun[] = [];
  try {
    for (let out of o.out ?? ['tmp']) {
      const tmpFile = join(tmpdir(), `kiln-dev-setup-${process.pid}.params`);
      if (out === 'tmp') out = tmpFile;
      if (out === 'auto') {
        const st = statfsSync(tmpdir());
        const free = st.bavail * st.bsize;
        out = free > expected * 1.05 ? tmpFile : '/dev/null';
        console.log(`${name}: ${gib(free)} GiB free in ${tmpdir()}, the file needs ${gib(expected)} GiB: writing to ${out}`);
      }
      let last = 0;
      try {
        const r = await writeInsecureDevParamsGpu(shape, backend, out, {
          fsync: o.fsync ?? true,
          chunkPoints: o.chunkPoints,
          writers: o.writers,
          progressIntervalMs: 1000,
          onProgress: o.progress
            ? (p) => {
                if (p.elapsedMs - last < 5000 && p.phase !== 'done') return;
                last = p.elapsedMs;
                console.log(
                  `  ${name} ${s2(p.elapsedMs)} s: ${p.phase} ${p.done}/${p.total}, ${gib(p.bytesWritten)} of ${gib(p.bytesTotal)} GiB written`,
                );
              }
            : undefined,
        });
        const t = r.timings;
        const gb = r.bytes / 1e9;
        const kernels = t.lagrange + t.evals + t.tables + t.h.gpu + t.l.gpu + t.a.gpu + t.b1.gpu + t.b2.gpu + t.ic.gpu;
        const rss = process.resourceUsage().maxRSS * 1024;
        console.log(`${name}: ${shape.numConstraints} constraints, 2^${logN}: ${gb.toFixed(2)} GB to ${out} in ${s2(t.wall)} s; ${JSON.stringify(t)}; long columns ${r.longColumns}`);
        const row = [
          name,
          shape.numConstraints,
          `2^${logN}`,
          gb.toFixed(2),
          out === '/dev/null' ? '/dev/null' : (o.fsync ?? true) ? 'file + fsync' : 'file',
          s2(t.wall),
          s2(t.upload),
          `${s2(t.lagrange)} / ${s2(t.evals)} / ${s2(t.tables)}`,
          `${s2(t.h.wall)} / ${s2(t.l.wall)} / ${s2(t.a.wall)} / ${s2(t.b1.wall)} / ${s2(t.b2.wall)}`,
          s2(kernels),
          `${s2(t.writeWait)} / ${s2(t.drain)} / ${s2(t.fsync)}`,
          (gb / (t.wall / 1000)).toFixed(2),
          `${gib(r.stagingBytes)} / ${gib(r.devicePeakBytes)}`,
          gib(rss),
        ];
        runs.push({ sink: out, result: r, row });
      } finally {
        if (!o.keep && out === tmpFile) await rm(out, { force: true });
      }
    }
  } finally {
    if (o.evict ?? true) await backend.evictCircuit(shape);
  }
  return runs;
}

async function shapeOf(name: string): Promise<CircuitShape> {
  if (name.startsWith('demo:')) return demoShape(Number(name.slice(5)));
  if (name.startsWith('porep:')) return porepShape(porepInfoForSize(parsePorepSectorSize(name.slice(6))), opt('cache-dir') ?? defaultCacheDir()).shape;
  if (name.startsWith('file:')) return readShapeFile(name.slice(5));
  const s = SYNTHETIC[name];
  if (!s) throw new Error(`unknown shape ${name} (${Object.keys(SYNTHETIC).join(', ')}, porep:<size>, file:<path>, demo:<n>)`);
  return syntheticShape(s);
}

async function main(): Promise<void> {
  const tuning = tuningFromEnv(process.env);
  const probe = cudaCapabilities(tuning.addonPath);
  if (!probe.cuda) {
    console.log(`dev-setup-gpu: no GPU (${probe.error}); nothing to measure`);
    return;
  }
  const device = Number(opt('device') ?? 0);
  const backend = new CudaBackend({ ...cudaOptions(tuning), device, cpu: nativeAvailable() ? new NativeBackend() : undefined });
  if (!hasDevSetup(backend)) throw new Error('the CUDA addon has no devSetupInsecure: rebuild it (npm run build:cuda)');
  const rows: (string | number)[][] = [];
  for (const name of (opt('shape') ?? '2KiB').split(',')) {
    const t0 = performance.now();
    const shape = await shapeOf(name);
    console.log(`${name}: shape ready in ${s2(performance.now() - t0)} s (${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux)`);
    const runs = await benchDevSetup(shape, name, {
      backend,
      out: (opt('out') ?? 'tmp').split(','),
      fsync: !process.argv.includes('--no-fsync'),
      keep: process.argv.includes('--keep'),
      chunkPoints: opt('chunk') ? Number(opt('chunk')) : undefined,
      writers: opt('writers') ? Number(opt('writers')) : undefined,
      progress: process.argv.includes('--progress'),
    });
    for (const r of runs) rows.push(r.row);
  }
  const table = markdownTable(BENCH_COLUMNS, rows);
  const notes = [
    `GPU: ${probe.gpus[device]?.name}, ${probe.runtime}`,
    'INSECURE development parameters (toxic waste from the public default seed); "setup s" = writeInsecureDevParamsGpu wall time (device work, encoding, the file written, the verifying key, fsync), incl. the circuit upload ("upload s")',
    '2KiB / 32GiB rows: synthetic CSR with the PoRep partition sizes (2/1/2 terms per row, ONE in every 20th A row), not the recorded circuit; porep:<size> rows: the recorded circuit',
  ];
  console.log(`\n${table}\n`);
  const md = opt('md');
  if (md) {
    writeFileSync(md, [`## INSECURE dev setup on the GPU (bench/dev-setup-gpu.ts)`, '', `- date: ${new Date().toISOString()}`, `- machine: ${machineLine()}`, `- commit: ${commitLine()}`, ...notes.map((n) => `- ${n}`), '', table, ''].join('\n'));
  }
  if (process.argv.includes('--append')) appendResults('INSECURE dev setup on the GPU (bench/dev-setup-gpu.ts)', table, notes);
}

if (process.argv[1]?.endsWith('dev-setup-gpu.js')) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
