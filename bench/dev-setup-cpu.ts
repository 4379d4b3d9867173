/**
 * The INSECURE CPU development setup (groth16/setup.ts writeInsecureDevParamsCpu) of the small circuits tests and
 * `kiln demo` make: its steps' times with the field work (Lagrange basis, A/B/C at τ, query scalars) in the CPU addon
 * (Backend.devSetupScalars) and with its TypeScript twin, and whether the two .params files are byte-identical.
 *   node dist/bench/dev-setup-cpu.js [--circuits porep-2k,snap-2k] [--no-twin] [--no-write]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../src/backend/backend.js';
import { NativeBackend } from '../src/backend/native.js';
import { defaultConfig } from '../src/engine/config.js';
import type { CircuitLike } from '../src/groth16/compiled.js';
import { writeInsecureDevParamsCpu } from '../src/groth16/setup.js';
import { porepInfoForSize, porepShape } from '../src/kinds/porep/porep-c2.js';
import { createSnapKind } from '../src/kinds/snap/planner.js';
import { appendResults, markdownTable } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1]! : dflt;
};

/** Times of each step of one setup (ms), and the whole. */
async function timed(circuit: CircuitLike, backend: Backend, file: string): Promise<{ total: number; steps: Map<string, number> }> {
  const steps = new Map<string, number>();
  let t = performance.now();
  let last: string | undefined;
  const t0 = t;
  await writeInsecureDevParamsCpu(circuit, backend, file, {
    onStep: (step) => {
      const now = performance.now();
      if (last !== undefined) steps.set(last, now - t);
      last = step;
      t = now;
    },
  });
  return { total: performance.now() - t0, steps };
}

const dir = await mkdtemp(join(tmpdir(), 'kiln-bench-dev-setup-'));
try {
  const native = new NativeBackend();
  if (native.devSetupScalars === undefined) throw new Error('the CPU addon has no devSetupScalars: rebuild it (npx node-gyp rebuild)');
  // the same backend without devSetupScalars: the TypeScript twin computes the scalars
  const twin = new Proxy(native, { get: (o, p) => (p === 'devSetupScalars' ? undefined : Reflect.get(o, p, o)) }) as Backend;
  const rows: (string | number)[][] = [];
  for (const id of opt('--circuits', 'porep-2k,snap-2k').split(',')) {
    let circuit: CircuitLike;
    let close = async (): Promise<void> => {};
    if (id === 'porep-2k') circuit = porepShape(porepInfoForSize(2048), join(dir, 'shapes')).shape;
    else if (id === 'snap-2k') {
      const kind = createSnapKind({ config: defaultConfig(), backend: native, cacheDir: join(dir, 'snap-cache'), notice: () => {} });
      circuit = await kind.circuits.compiled('snap-2k');
      close = async () => void (await kind.circuits.close?.());
    } else throw new Error(`--circuits: porep-2k or snap-2k, got ${id}`);
    const runs: [string, Backend][] = [['native field steps', native], ...(argv.includes('--no-twin') ? [] : [['TypeScript field steps', twin] as [string, Backend]])];
    const files: Buffer[] = [];
    for (const [label, backend] of runs) {
      const file = join(dir, `${id}-${files.length}.params`);
      const r = await timed(circuit, backend, file);
      const field = ['Lagrange basis at τ', 'A, B, C at τ', 'query scalars'].reduce((s, k) => s + (r.steps.get(k) ?? 0), 0);
      const fixedBase = ['h (G1)', 'l (G1)', 'a (G1)', 'b (G1)', 'b (G2)', 'ic (G1)'].reduce((s, k) => s + (r.steps.get(k) ?? 0), 0);
      files.push(await readFile(file));
      await rm(file);
      const row = [id, label, (r.total / 1000).toFixed(1), (field / 1000).toFixed(1), (fixedBase / 1000).toFixed(1), ((r.steps.get('write the file') ?? 0) / 1000).toFixed(1)];
      console.log(row.join('\t'));
      rows.push(row);
    }
    const same = files.length < 2 || files[0]!.equals(files[1]!);
    console.log(`${id}: the .params files ${files.length < 2 ? '(one run)' : same ? 'byte-identical' : 'DIFFER'} (${(files[0]!.length / 1e9).toFixed(2)} GB)`);
    rows.push([id, 'files', same ? 'byte-identical' : 'DIFFER', '', '', '']);
    await close();
    if (!same) process.exitCode = 1;
  }
  const table = markdownTable(['circuit', 'run', 'total (s)', 'field steps (s)', 'fixed-base multiplications (s)', 'write (s)'], rows);
  console.log(table);
  if (!argv.includes('--no-write')) appendResults('CPU development setup (bench/dev-setup-cpu.ts)', table, ['native CPU backend; the field steps natively (devSetupScalars) and by the TypeScript twin; INSECURE development parameters']);
} finally {
  await rm(dir, { recursive: true, force: true });
}
