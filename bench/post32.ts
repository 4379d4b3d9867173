/**
 * WindowPoSt and WinningPoSt at 32 GiB end to end through the daemon (npm run bench:post32, on the GPU machine):
 * synthetic full-size vanilla proofs (synthPoSt: a 2349-sector WindowPoSt partition, a WinningPoSt sector) →
 * per circuit (wpost-32g, winning-32g): the shape (one sector recorded, replicated), INSECURE development
 * parameters (made once, timed) and the SRS onto the device (PreloadSRS) → N proofs submitted back to back over
 * gRPC (unix socket, daemon in this process), each verified by the daemon and again here from the verifying key.
 *
 *   node dist/bench/post32.js [--sector-size 32GiB] [--window 2] [--winning 3] [--sequential] [--prepare] [--dir DIR] [--backend cuda]
 *                             [--md FILE] [--no-write] [--keep]
 *
 * Prints, per kind: the first proof's latency, the steady interval between completions, the engine's timings
 * (queue, srs, synth, gpu) and, per proof, request in → verified proof out; peak host RSS (VmHWM). Appends a
 * section to bench/RESULTS.md (or --md FILE). --dir holds the vanilla files, the shape cache and the development
 * parameters (~61 GB for wpost-32g: with a 64 GiB disk, set KILN_POST_SHAPE_CACHE=0 so the ~7 GB shape stays in
 * memory; scripts/device/post32.sh does); it is removed at the end unless --keep.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectEngine } from '../src/client/bench.js';
import type { BackendName } from '../src/backend/select.js';
import { ProofKind } from '../src/engine/types.js';
import { parseSectorSize } from '../src/filecoin/registry.js';
import { postCircuitId, postProofName, allPoStProofs } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import type { PoStProofInfo } from '../src/filecoin/post/types.js';
import { parsePoStSectorProof, readVanillaFile, vanillaFileText } from '../src/filecoin/post/vanilla.js';
import { loadPorepVerifyingKey } from '../src/kinds/porep/porep-c2.js';
import { postVerifyingKeySource, verifyPoSt } from '../src/kinds/post/post.js';
import { formatSpanTree } from '../src/util/timing.js';
import { partitionFigures, partitionRows, planLine, planRows } from './plan-report.js';
import { benchDaemon, commitLine, machineLine, writeSection } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
};
const sectorLabel = opt('--sector-size', '32GiB');
const sequential = argv.includes('--sequential');
// --prepare (with --keep): synth-post, the shapes and the parameters only, no proofs (the development setup wants the
// whole GPU: a later run with a small card's memory held proves with them)
const prepareOnly = argv.includes('--prepare');
const counts = { window: Number(opt('--window', '2')), winning: Number(opt('--winning', '3')) };
const dir = path.resolve(opt('--dir', path.join(os.tmpdir(), `kiln-post-${sectorLabel}`)));
const backendName = opt('--backend', 'cuda') as BackendName;
const mdFile = argv.includes('--md') ? opt('--md', '') : undefined;

const t00 = performance.now();
const log = (s: string): void => console.log(`[${((performance.now() - t00) / 1000).toFixed(1).padStart(7)} s] ${s}`);
const vmHwmGiB = (): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 2 ** 20;
const sec = (ms: number): string => (ms / 1000).toFixed(2);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1]! : NaN;
};
// a fixed, canonical randomness (as Curio sends it: [31] &= 0x3f)
const randomness = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);
randomness[31]! &= 0x3f;

async function main(): Promise<void> {
  const size = parseSectorSize(sectorLabel);
  if (size === undefined) throw new Error(`--sector-size ${sectorLabel}: not a sector size`);
  const kinds = (['winning', 'window'] as const).filter((k) => counts[k] > 0);
  const infos: Record<'window' | 'winning', PoStProofInfo> = {
    window: allPoStProofs().find((p) => p.type === 'window' && p.api === 'V1_2' && p.size === size)!,
    winning: allPoStProofs().find((p) => p.type === 'winning' && p.size === size)!,
  };
  mkdirSync(dir, { recursive: true });
  log(`bench:post32 ${sectorLabel}: ${counts.window} WindowPoSt + ${counts.winning} WinningPoSt, backend ${backendName}, dir ${dir}; ${machineLine()}; commit ${process.env.KILN_COMMIT ?? commitLine()}`);

  const rows: (string | number)[][] = [];
  const lines: string[] = [];
  const say = (s: string): void => {
    log(s);
    lines.push(s);
  };
  // 1. synthetic vanilla proofs of full size (cached in dir)
  const vanilla: Record<string, Uint8Array[]> = {};
  for (const k of kinds) {
    const info = infos[k];
    const file = path.join(dir, `synth-${postCircuitId(info)}.vanilla.json`);
    const t = performance.now();
    if (!existsSync(file)) writeFileSync(file, vanillaFileText(synthPoSt({ info, randomness, rngSeed: 'bench-post32' }).elements));
    vanilla[k] = readVanillaFile(file);
    const ms = performance.now() - t;
    say(`synth-post ${postProofName(info)}: ${vanilla[k]!.length} sector proof(s), ${(vanilla[k]!.reduce((a, e) => a + e.length, 0) / 2 ** 20).toFixed(1)} MiB in ${sec(ms)} s`);
    rows.push([`synth-post ${k} (${vanilla[k]!.length} sector proofs)`, `${sec(ms)} s`]);
  }

  // 2. the daemon, in this process
  const { daemon, envLine: benchEnvLine } = await benchDaemon(dir, backendName);
  let ok = true;
  try {
    const engine = daemon.engine;
    const c = connectEngine(daemon.grpcAddress);
    for (const k of kinds) {
      const info = infos[k];
      const id = postCircuitId(info);
      const provider = engine.srs.provider(id);
      if (provider === undefined) throw new Error(`no provider for ${id}`);
      // 3. the shape (one sector recorded, replicated; cached in dir)
      let t = performance.now();
      const shape = await provider.shape(id);
      const shapeMs = performance.now() - t;
      say(`shape ${id}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux in ${sec(shapeMs)} s; RSS peak ${vmHwmGiB().toFixed(2)} GiB`);
      // 4. parameters: development setup when missing, and the SRS onto the device
      t = performance.now();
      const pre = (await c.call('PreloadSRS', { circuit_id: id }, 3_600_000)) as { already_loaded?: boolean; load_time_ms?: number };
      const preloadMs = performance.now() - t;
      const entry = engine.srs.status().find((s) => s.circuitId === id);
      say(`PreloadSRS ${id}: ${sec(preloadMs)} s (${JSON.stringify(pre)}); SRS ${((entry?.sizeBytes ?? 0) / 2 ** 30).toFixed(2)} GiB; RSS peak ${vmHwmGiB().toFixed(2)} GiB`);
      const loadSpan = engine.srs.loadSpan(id);
      if (loadSpan) for (const l of formatSpanTree(loadSpan).split('\n')) say(`  ${l}`);
      const pl = planLine(engine);
      if (pl) say(pl);
      if (prepareOnly) {
        rows.push([`${id}: shape (one sector recorded, replicated)`, `${sec(shapeMs)} s (${shape.numConstraints} constraints)`], [`${id}: PreloadSRS (development setup when missing + SRS onto the device)`, `${sec(preloadMs)} s`]);
        continue;
      }
      // 5. N proofs back to back
      const elements = vanilla[k]!.map((e) => Buffer.from(e));
      const t0 = performance.now();
      const done: { i: number; ms: number; latency: number; jobId: string; status: number; error: string; proof: Uint8Array; r: Record<string, number> }[] = [];
      const one = async (i: number): Promise<void> => {
          const sent = performance.now();
          const req = {
            proof_kind: k === 'window' ? ProofKind.WINDOW_POST_PARTITION : ProofKind.WINNING_POST,
            request_id: `post32-${k}-${i}`,
            registered_proof: info.id,
            sector_size: info.size.sectorSize,
            vanilla_proofs: elements,
            randomness: Buffer.from(randomness),
            miner_id: 1000,
            partition_index: 0,
          };
          const res = ((await c.call('Prove', { submit: req }, 3_600_000)) as { result: { job_id: string; status: number; error_message: string; proof: Uint8Array } & Record<string, number> }).result;
          const now = performance.now();
          done.push({ i, ms: now - t0, latency: now - sent, jobId: res.job_id, status: res.status, error: res.error_message, proof: new Uint8Array(res.proof ?? []), r: res });
          say(`${k} proof ${i + 1}/${counts[k]}: ${res.status === 1 ? 'COMPLETED' : `status ${res.status}: ${res.error_message}`}, request in → verified proof out ${sec(now - sent)} s; timings: total=${res.total_ms} ms (queue=${res.queue_wait_ms}, srs=${res.srs_load_ms}, synth=${res.synthesis_ms}, gpu=${res.gpu_compute_ms})`);
      };
      // --sequential: each request waits for the previous answer (latency of one proof with nothing queued);
      // otherwise all are submitted together, 20 ms apart (throughput)
      if (sequential) for (let i = 0; i < counts[k]; i++) await one(i);
      else await Promise.all(Array.from({ length: counts[k] }, async (_, i) => { await new Promise((r) => setTimeout(r, i * 20)); await one(i); }));
      done.sort((a, b) => a.ms - b.ms);
      const failed = done.filter((d) => d.status !== 1);
      if (failed.length) {
        ok = false;
        throw new Error(`${failed.length} ${k} proof(s) failed: ${failed[0]!.error}`);
      }
      // 6. verified again here from the verifying key
      const sectors = vanilla[k]!.map((e) => parsePoStSectorProof(e, info));
      // the daemon's parameters: official when in dir, else the development ones of this shape (not recompiled)
      const src = postVerifyingKeySource(info, dir, path.join(dir, 'kiln-cache'), shape);
      const vk = await loadPorepVerifyingKey(src);
      for (const d of done) {
        const v = await verifyPoSt(info, sectors, { randomness, partitionIndex: 0 }, d.proof, vk);
        if (!v) ok = false;
        say(`${k} proof ${d.i + 1}: ${d.proof.length} B, verified from the verifying key: ${v}`);
      }
      const lastJob = engine.getJob(done[done.length - 1]!.jobId);
      if (lastJob) for (const l of formatSpanTree(lastJob.span).split('\n')) lines.push(`  ${l}`);
      const parts = done.flatMap((d) => {
        const job = engine.getJob(d.jobId);
        return job ? partitionFigures(job) : [];
      });
      const steady = done.length > 1 ? (done[done.length - 1]!.ms - done[0]!.ms) / (done.length - 1) : NaN;
      const m = (f: string): string => `${median(done.map((d) => d.r[f] ?? NaN)).toFixed(0)} ms`;
      rows.push(
        [`${id}: shape (one sector recorded, replicated)`, `${sec(shapeMs)} s (${shape.numConstraints} constraints)`],
        [`${id}: PreloadSRS (development setup when missing + SRS onto the device)`, `${sec(preloadMs)} s`],
        [`${id}: first proof, request in → verified proof out`, `${sec(done[0]!.latency)} s`],
        [`${id}: request in → verified proof out, median of ${done.length} (${sequential ? 'one at a time' : `${done.length} submitted together`})`, `${sec(median(done.map((d) => d.latency)))} s`],
        [`${id}: steady interval between completions`, Number.isNaN(steady) ? '–' : `${sec(steady)} s`],
        [`${id}: engine timings (median): total / synth / gpu`, `${m('total_ms')} / ${m('synthesis_ms')} / ${m('gpu_compute_ms')}`],
        ...partitionRows(parts),
        ...planRows(engine, id, parts, parts.length / done.length),
      );
    }
    c.close();
    rows.push(['peak host RSS (VmHWM, daemon + client)', `${vmHwmGiB().toFixed(2)} GiB`]);
  } finally {
    await daemon.close();
    if (!argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
  }
  const notes = [
    `${sectorLabel} synthetic vanilla proofs (synthPoSt, as kiln synth-post), INSECURE development parameters, backend ${backendName}, daemon in this process over a unix socket`,
    `every proof verified by the daemon and again from the verifying key: ${ok}`,
    ...(benchEnvLine ? [benchEnvLine] : []),
  ];
  writeSection(`WindowPoSt and WinningPoSt ${sectorLabel} end to end through the daemon (bench/post32.ts)`, ['step', 'figure'], rows, lines, notes, { mdFile, write: !argv.includes('--no-write') });
  if (!ok) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
