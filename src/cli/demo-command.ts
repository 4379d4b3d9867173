/**
 * The main job (`kiln demo`): kiln seals a 2 KiB sector itself (random data), proves its C1 with the
 * exact StackedDrg circuit, verifies the proof against the C1's public inputs, and prints where the
 * time went. (`kiln demo-circuit`, the synthetic DemoCircuit, is demo-circuit-command.ts.)
 */
import { spanTreeText } from './options.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import { parseCommit2In } from '../filecoin/c1.js';
import { verifyPorep } from '../kinds/porep/porep-c2.js';
import { loadPorepVerifyingKey } from '../kinds/params.js';
import { Span } from '../util/timing.js';
import { paramsWords } from './insecure.js';
import { proveC1 } from './porep-commands.js';
import { runSeal } from './seal.js';
import { commandProgress } from '../util/progress.js';

export interface MainJobOptions {
  paramsDir: string;
  cacheDir: string;
  backend: Backend;
  json: boolean;
  /** Keep the sealed C1 and the proof here (default: the cache directory). */
  keepDir?: string;
}

export async function runMainJob(o: MainJobOptions): Promise<void> {
  const ui = commandProgress(o.json);
  try {
    await mainJob(o, ui);
  } finally {
    ui.stop();
  }
}

async function mainJob(o: MainJobOptions, ui: ReturnType<typeof commandProgress>): Promise<void> {
  const say = ui.say;
  const dir = o.keepDir ?? join(o.cacheDir, 'demo');
  mkdirSync(dir, { recursive: true });
  const c1File = join(dir, 'sealed-2KiB.commit2in.json');
  const root = new Span('demo: seal + prove + verify (2 KiB)');
  say('kiln demo: sealing a 2 KiB sector with random data, then proving and verifying its C2');
  const text = await root.time('seal', () => runSeal({ sectorSize: '2KiB', out: c1File }, true));
  const c1 = await root.time('parse', () => parseCommit2In(text).phase1Out);
  say(`  sealed: comm_r ${Buffer.from(c1.commR).toString('hex')} (C1 in ${c1File})`);
  const proved = await root.time('prove (in-process engine)', async (s) => {
    const r = await proveC1(new TextEncoder().encode(text), { ...o, say, progress: ui.progress }).finally(ui.stop); // the bar ends before the output
    s.adopt(r.span);
    return r;
  });
  const { bytes, source } = proved;
  const vk = await loadPorepVerifyingKey(source);
  const ok = await root.time('verify (independent, from the verifying key)', () => verifyPorep(c1, bytes, vk).every(Boolean));
  root.end();
  const hex = Buffer.from(bytes).toString('hex');
  if (o.json) {
    console.log(JSON.stringify({ verified: ok, proof: hex, c1: c1File, params: source, insecure: source.kind === 'dev', spans: root.toJSON() }, null, 2));
  } else {
    console.log(spanTreeText(root));
    console.log(`proof (${bytes.length} B): ${hex}`);
    console.log(ok ? `verified: yes (${paramsWords(source)})` : 'verified: NO');
  }
  if (!ok) throw new Error('the proof did not verify');
}
