/**
 * SnapDeals at 32 GiB end to end through the daemon (npm run bench:snap32, on the GPU machine): a synthetic,
 * consistent full-size update (synthetic.ts, as kiln synth-snap: 16 partition proofs of 86 challenges) → the
 * circuit snap-32g (shape and witness program: prologue + one challenge recorded, replicated with relocation;
 * 81,049,499 constraints), INSECURE development
 * parameters (made once, timed) and the SRS onto the device (PreloadSRS) → N SNAP_DEALS_UPDATE requests over gRPC
 * (unix socket, daemon in this process), each 16 partitions through the per-partition pipeline, verified by the
 * daemon and again here from the verifying key.
 *
 *   node dist/bench/snap32.js (or run32.js --kind snap) [--sector-size 32GiB] [--proofs 2] [--dir DIR] [--backend cuda] [--md FILE] [--no-write] [--keep]
 *   (--proofs 0 --keep: only the synthetic update, the shape cache and the parameters, for a first call)
 *
 * Prints the first proof's latency, the steady interval, the engine's timings, s/proof and peak host RSS (VmHWM);
 * appends a section to bench/RESULTS.md (or --md FILE). --dir holds the vanilla file, the shape cache and the
 * development parameters; it is removed at the end unless --keep.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { connectEngine } from '../src/client/grpc-client.js';
import { ProofKind } from '../src/engine/types.js';
import { parseSectorSize } from '../src/filecoin/registry.js';
import { snapProofBySectorSize } from '../src/filecoin/snap/registry.js';
import { readVanillaFile } from '../src/filecoin/post/vanilla.js';
import { loadPorepVerifyingKey } from '../src/kinds/params.js';
import { snapVerifyingKeySource, verifySnap } from '../src/kinds/snap/snap.js';
import { runSynthSnap } from '../src/cli/snap-commands.js';
import { readUpdateFile } from '../src/filecoin/snap/update-file.js';
import { benchDaemon, commitLine, machineLine, writeSection } from './report.js';
import { type Answer, benchArgs, benchLog, isEntry, prepareCircuit, proofParts, proofRows, proveBackToBack, runBench, sec, vmHwmGiB } from './run32.js';

const a = benchArgs('kiln-snap');
const count = Number(a.opt('--proofs', '2'));

export async function main(): Promise<void> {
  const { sectorLabel, dir, backendName } = a;
  const size = parseSectorSize(sectorLabel);
  if (size === undefined) throw new Error(`--sector-size ${sectorLabel}: not a sector size`);
  const info = snapProofBySectorSize(size.sectorSize)!;
  mkdirSync(dir, { recursive: true });
  const log = benchLog();
  log.log(`bench:snap32 ${sectorLabel}: ${count} SnapDeals update proof(s) of ${info.params.partitionCount} partitions, backend ${backendName}, dir ${dir}; ${machineLine()}; commit ${process.env.KILN_COMMIT ?? commitLine()}`);
  const rows: (string | number)[][] = [];
  // 1. the synthetic update (cached in dir)
  const updDir = path.join(dir, `synth-${info.circuitId}`);
  const t = performance.now();
  if (!existsSync(path.join(updDir, 'update.json'))) await runSynthSnap({ sectorSize: sectorLabel, out: updDir, seed: '32' }, log.say);
  const upd = await readUpdateFile(path.join(updDir, 'update.json'));
  const elements = readVanillaFile(upd.vanillaPath).map((e) => Buffer.from(e));
  const synthMs = performance.now() - t;
  log.say(`synth-snap ${info.name}: ${elements.length} partition proofs, ${(elements.reduce((n, e) => n + e.length, 0) / 2 ** 20).toFixed(1)} MiB in ${sec(synthMs)} s`);
  rows.push([`synth-snap (${elements.length} partition proofs)`, `${sec(synthMs)} s`]);

  // 2. the daemon, in this process
  const { daemon, envLine: benchEnvLine } = await benchDaemon(dir, backendName);
  let ok = true;
  try {
    const engine = daemon.engine;
    const c = connectEngine(daemon.grpcAddress);
    const id = info.circuitId;
    const { shape, shapeMs, preloadMs } = await prepareCircuit(engine, c, id, log, 7_200_000);
    rows.push([`${id}: shape and witness program (prologue + challenge 0 recorded, replicated with relocation)`, `${sec(shapeMs)} s (${shape.numConstraints} constraints)`]);
    rows.push([`${id}: PreloadSRS (development setup when missing + SRS onto the device)`, `${sec(preloadMs)} s`]);
    if (count === 0) {
      // --proofs 0 --keep: only synth-snap, the shape cache and the parameters (a first device call under its time limit)
      c.close();
      return;
    }
    // 3. N updates back to back
    const submit = async (i: number): Promise<Answer> => {
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
      return ((await c.call('Prove', { submit: req }, 7_200_000)) as { result: Answer }).result;
    };
    const done = await proveBackToBack(count, submit, { label: 'snap proof', log }).catch((e: unknown) => {
      ok = false;
      throw e;
    });
    const vk = await loadPorepVerifyingKey(snapVerifyingKeySource(info, dir, path.join(dir, 'kiln-cache')));
    for (const d of done) {
      const v = verifySnap(info, upd.pub, d.proof, vk);
      if (!v) ok = false;
      log.say(`snap proof ${d.i + 1}: ${d.proof.length} B, verified from the verifying key: ${v}`);
    }
    const parts = proofParts(engine, done, log);
    rows.push(
      ...proofRows(engine, id, done, parts, `update proof (${info.params.partitionCount} partitions)`),
      ['peak host RSS (VmHWM, daemon + client)', `${vmHwmGiB().toFixed(2)} GiB`],
    );
    c.close();
  } finally {
    await daemon.close();
    if (!a.keep) rmSync(dir, { recursive: true, force: true });
  }
  const notes = [
    `${sectorLabel} synthetic SnapDeals update (region-uniform trees, as kiln synth-snap), INSECURE development parameters, backend ${backendName}, daemon in this process over a unix socket`,
    `every proof verified by the daemon and again from the verifying key: ${ok}`,
    ...(benchEnvLine ? [benchEnvLine] : []),
  ];
  writeSection(`SnapDeals ${sectorLabel} end to end through the daemon (bench/snap32.ts)`, ['step', 'figure'], rows, log.lines, notes, { mdFile: a.mdFile, write: a.write });
  if (!ok) process.exitCode = 1;
}

if (isEntry(import.meta.url)) runBench(main);
