/**
 * The import graph of src/ (value imports, re-exports and dynamic imports; `import type` erases at compile time):
 * no circles anywhere, and every import goes to its own layer or one below, as the README's architecture picture
 * draws them. A scan of the TypeScript sources as text (comments removed first).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from './support.js';

const SRC = join(repoRoot, 'src');

/** Layers, top first (README "Architecture"); util/ serves every layer. util/tuning.ts reads the environment's
 *  tuning variables for the entry points (cli, server, benches), so it sits with them. */
const LAYERS: string[][] = [['cli', 'server', 'client', 'util/tuning.ts'], ['kinds'], ['engine'], ['filecoin', 'gadgets', 'interop'], ['groth16', 'r1cs'], ['backend', 'curve', 'field'], ['util']];
function layerOf(file: string): number {
  const i = LAYERS.findIndex((l) => l.some((p) => file === p || file.startsWith(`${p}/`)));
  assert.ok(i >= 0, `${file}: in no layer of the README's picture`);
  return i;
}

const stripComments = (s: string): string => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

/** file (relative to src/, .ts) → the src files it imports as values. */
function importGraph(): Map<string, Set<string>> {
  const files = readdirSync(SRC, { recursive: true }).map(String).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const g = new Map<string, Set<string>>();
  for (const f of files) {
    const text = stripComments(readFileSync(join(SRC, f), 'utf8'));
    const deps = new Set<string>();
    const add = (spec: string): void => void deps.add(relative(SRC, resolve(dirname(join(SRC, f)), spec)).replace(/\.js$/, '.ts'));
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[^;]*?\s+from\s+)?'(\.[^']+)'/gm)) if (m[1] === undefined) add(m[2]!);
    for (const m of text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)) add(m[1]!);
    g.set(f, deps);
  }
  return g;
}

/** The strongly connected components of more than one file (Tarjan). */
function circles(g: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!g.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of g.keys()) if (!index.has(v)) visit(v);
  return out;
}

test('the scan sees what it should: a circle and an upward import made up for it are found', () => {
  const g = new Map([
    ['kinds/a.ts', new Set(['kinds/b.ts'])],
    ['kinds/b.ts', new Set(['kinds/a.ts', 'engine/c.ts'])],
    ['engine/c.ts', new Set(['kinds/a.ts'])],
  ]);
  assert.deepEqual(circles(g), [['engine/c.ts', 'kinds/a.ts', 'kinds/b.ts']]);
  assert.ok(layerOf('engine/c.ts') > layerOf('kinds/a.ts'));
  const real = importGraph();
  assert.ok(real.size > 150, `${real.size} files`);
  assert.ok(real.get('kinds/post/planner.ts')?.has('kinds/kind.ts'), 'a static import is seen');
  assert.ok(real.get('cli/main.ts')?.has('client/grpc-client.ts'), 'a dynamic import is seen');
});

test('no import circles in src/ (a kind\'s synthesis-worker tasks import what they run, never its planner)', () => {
  assert.deepEqual(circles(importGraph()), []);
});

test('every import goes to its own layer or below (cli/server/client → kinds → engine → filecoin → groth16/r1cs → backend/curve/field → util)', () => {
  const up: string[] = [];
  for (const [f, deps] of importGraph()) {
    for (const d of deps) {
      assert.ok(existsInSrc(d), `${f} imports ${d}, which is not in src/`);
      if (layerOf(d) < layerOf(f)) up.push(`${f} → ${d}`);
    }
  }
  assert.deepEqual(up, []);
});

function existsInSrc(f: string): boolean {
  try {
    readFileSync(join(SRC, f));
    return true;
  } catch {
    return false;
  }
}
