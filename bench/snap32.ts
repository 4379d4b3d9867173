/**
 * SnapDeals at 32 GiB end to end through the daemon (npm run bench:snap32, on the GPU machine): a synthetic,
 * consistent full-size update (synthetic.ts, as kiln synth-snap: 16 partition proofs of 86 challenges) → the
 * circuit snap-32g (shape and witness program: prologue + one challenge recorded, replicated with relocation;
 * 81,049,499 constraints), INSECURE development
 * parameters (made once, timed) and the SRS onto the device (PreloadSRS) → N SNAP_DEALS_UPDATE requests over gRPC
 * (unix socket, daemon in this process), each 16 partitions through the per-partition pipeline, verified by the
 * daemon and again here from the verifying key.
 *
 *   node dist/bench/snap32.js [--sector-size 32GiB] [--proofs 2] [--dir DIR] [--backend cuda] [--md FILE] [--no-write] [--keep]
 *   (--proofs 0 --keep: only the synthetic update, the shape cache and the parameters, for a first call)
 *
 * Prints the first proof's latency, the steady interval, the engine's timings, s/proof and peak host RSS (VmHWM);
 * appends a section to bench/RESULTS.md (or --md FILE). --dir holds the vanilla file, the shape cache and the
 * development parameters; it is removed at the end unless --keep.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectEngine } from '../src/client/bench.js';
import type { BackendName } from '../src/backend/select.js';
import { ProofKind } from '../src/engine/types.js';
import { parseSectorSize } from '../src/filecoin/registry.js';
import { snapProofBySectorSize } from '../src/filecoin/snap/registry.js';
import { readVanillaFile } from '../src/filecoin/post/vanilla.js';
import { loadPorepVerifyingKey } from '../src/kinds/porep/porep-c2.js';
import { snapVerifyingKeySource, verifySnap } from '../src/kinds/snap/snap.js';
import { readUpdateFile, runSynthSnap } from '../src/cli/snap-commands.js';
import { formatSpanTree } from '../src/util/timing.js';
import { partitionFigures, partitionRows, planLine, planRows } from './plan-report.js';
import { benchDaemon, commitLine, machineLine, writeSection } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
};
const sectorLabel = opt('--sector-size', '32GiB');
const count = Number(opt('--proofs', '2'));
const dir = path.resolve(opt('--dir', path.join(os.tmpdir(), `kiln-snap-${sectorLabel}`)));
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

async function main(): Promise<void> {
  const size = parseSectorSize(sectorLabel);
  if (size === undefined) throw new Error(`--sector-size ${sectorLabel}: not a sector size`);
  const info = snapProofBySectorSize(size.sectorSize)!;
  mkdirSync(dir, { recursive: true });
  log(`bench:snap32 ${sectorLabel}: ${count} SnapDeals update proof(s) of ${info.params.partitionCount} partitions, backend ${backendName}, dir ${dir}; ${machineLine()}; commit ${process.env.KILN_COMMIT ?? commitLine()}`);
  const rows: (string | number)[][] = [];
  const lines: string[] = [];
  const say = (s: string): void => {
    log(s);
    lines.push(s);
  };
  // 1. the synthetic update (cached in dir)
  const updDir = path.join(dir, `synth-${info.circuitId}`);
  let t = performance.now();
  if (!existsSync(path.join(updDir, 'update.json'))) await runSynthSnap({ sectorSize: sectorLabel, out: updDir, seed: '32' }, say);
  const upd = await readUpdateFile(path.join(updDir, 'update.json'));
  const elements = readVanillaFile(upd.vanillaPath).map((e) => Buffer.from(e));
  const synthMs = performance.now() - t;
  say(`synth-snap ${info.name}: ${elements.length} partition proofs, ${(elements.reduce((a, e) => a + e.length, 0) / 2 ** 20).toFixed(1)} MiB in ${sec(synthMs)} s`);
  rows.push([`synth-snap (${elements.length} partition proofs)`, `${sec(synthMs)} s`]);

  // 2. the daemon, in this process
  const { daemon, envLine: benchEnvLine } = await benchDaemon(dir, backendName);
  let ok = true;
  try {
    const engine = daemon.engine;
    const c = connectEngine(daemon.grpcAddress);
    const id = info.circuitId;
    const provider = engine.srs.provider(id);
    if (provider === undefined) throw new Error(`no provider for ${id}`);
    t = performance.now();
    const shape = await provider.shape(id);
    const shapeMs = performance.now() - t;
    say(`shape ${id}: ${shape.numConstraints} constraints, ${shape.numInputs} inputs, ${shape.numAux} aux in ${sec(shapeMs)} s; RSS peak ${vmHwmGiB().toFixed(2)} GiB`);
    t = performance.now();
    const pre = (await c.call('PreloadSRS', { circuit_id: id }, 7_200_000)) as { already_loaded?: boolean; load_time_ms?: number };
    const preloadMs = performance.now() - t;
    const entry = engine.srs.status().find((s) => s.circuitId === id);
    say(`PreloadSRS ${id}: ${sec(preloadMs)} s (${JSON.stringify(pre)}); SRS ${((entry?.sizeBytes ?? 0) / 2 ** 30).toFixed(2)} GiB; RSS peak ${vmHwmGiB().toFixed(2)} GiB`);
    const loadSpan = engine.srs.loadSpan(id);
    if (loadSpan) for (const l of formatSpanTree(loadSpan).split('\n')) say(`  ${l}`);
    const pl = planLine(engine);
    if (pl) say(pl);
    rows.push([`${id}: shape and witness program (prologue + challenge 0 recorded, replicated with relocation)`, `${sec(shapeMs)} s (${shape.numConstraints} constraints)`]);
    rows.push([`${id}: PreloadSRS (development setup when missing + SRS onto the device)`, `${sec(preloadMs)} s`]);
    if (count === 0) {
      // --proofs 0 --keep: only synth-snap, the shape cache and the parameters (a first device call under its time limit)
      c.close();
      return;
    }
    // 3. N updates back to back
    const t0 = performance.now();
    const done: { i: number; ms: number; latency: number; jobId: string; status: number; error: string; proof: Uint8Array; r: Record<string, number> }[] = [];
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i * 20));
        const sent = performance.now();
        const req = {
          proof_kind: ProofKind.SNAP_DEALS_UPDATE,
          request_id: `snap32-${i}`,
          registered_proof: info.id,
          sector_size: info.size.sectorSize,
          vanilla_proofs: elements,
          comm_r_old: Buffer.from(upd.raw.commROld),
          comm_d_new: Buffer.from(upd.raw.commDNew),
          comm_r_new: Buffer.from(upd.raw.commRNew),
          miner_id: 1000,
        };
        const res = ((await c.call('Prove', { submit: req }, 7_200_000)) as { result: { job_id: string; status: number; error_message: string; proof: Uint8Array } & Record<string, number> }).result;
        const now = performance.now();
        done.push({ i, ms: now - t0, latency: now - sent, jobId: res.job_id, status: res.status, error: res.error_message, proof: new Uint8Array(res.proof ?? []), r: res });
        say(`snap proof ${i + 1}/${count}: ${res.status === 1 ? 'COMPLETED' : `status ${res.status}: ${res.error_message}`}, request in → verified proof out ${sec(now - sent)} s; timings: total=${res.total_ms} ms (queue=${res.queue_wait_ms}, srs=${res.srs_load_ms}, synth=${res.synthesis_ms}, gpu=${res.gpu_compute_ms}); RSS peak ${vmHwmGiB().toFixed(2)} GiB`);
      }),
    );
    done.sort((a, b) => a.ms - b.ms);
    const failed = done.filter((d) => d.status !== 1);
    if (failed.length) {
      ok = false;
      throw new Error(`${failed.length} snap proof(s) failed: ${failed[0]!.error}`);
    }
    const vk = await loadPorepVerifyingKey(snapVerifyingKeySource(info, dir, path.join(dir, 'kiln-cache')));
    for (const d of done) {
      const v = verifySnap(info, upd.pub, d.proof, vk);
      if (!v) ok = false;
      say(`snap proof ${d.i + 1}: ${d.proof.length} B, verified from the verifying key: ${v}`);
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
      [`${id}: first update proof (${info.params.partitionCount} partitions), request in → verified proof out`, `${sec(done[0]!.latency)} s`],
      [`${id}: steady interval between completions (s/proof)`, Number.isNaN(steady) ? '–' : `${sec(steady)} s`],
      [`${id}: engine timings (median): total / synth / gpu`, `${m('total_ms')} / ${m('synthesis_ms')} / ${m('gpu_compute_ms')}`],
      ...partitionRows(parts),
      ...planRows(engine, id, parts, parts.length / done.length),
      ['peak host RSS (VmHWM, daemon + client)', `${vmHwmGiB().toFixed(2)} GiB`],
    );
    c.close();
  } finally {
    await daemon.close();
    if (!argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
  }
  const notes = [
    `${sectorLabel} synthetic SnapDeals update (region-uniform trees, as kiln synth-snap), INSECURE development parameters, backend ${backendName}, daemon in this process over a unix socket`,
    `every proof verified by the daemon and again from the verifying key: ${ok}`,
    ...(benchEnvLine ? [benchEnvLine] : []),
  ];
  writeSection(`SnapDeals ${sectorLabel} end to end through the daemon (bench/snap32.ts)`, ['step', 'figure'], rows, lines, notes, { mdFile, write: !argv.includes('--no-write') });
  if (!ok) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
