/**
 * WindowPoSt and WinningPoSt at 32 GiB end to end through the daemon (npm run bench:post32, on the GPU machine):
 * synthetic full-size vanilla proofs (synthPoSt: a 2349-sector WindowPoSt partition, a WinningPoSt sector) →
 * per circuit (wpost-32g, winning-32g): the shape (one sector recorded, replicated), INSECURE development
 * parameters (made once, timed) and the SRS onto the device (PreloadSRS) → N proofs submitted back to back over
 * gRPC (unix socket, daemon in this process), each verified by the daemon and again here from the verifying key.
 *
 *   node dist/bench/post32.js (or run32.js --kind post) [--sector-size 32GiB] [--window 2] [--winning 3] [--sequential] [--prepare] [--dir DIR] [--backend cuda]
 *                             [--md FILE] [--no-write] [--keep]
 *
 * Prints, per kind: the first proof's latency, the steady interval between completions, the engine's timings
 * (queue, srs, synth, gpu) and, per proof, request in → verified proof out; peak host RSS (VmHWM). Appends a
 * section to bench/RESULTS.md (or --md FILE). --dir holds the vanilla files, the shape cache and the development
 * parameters (~61 GB for wpost-32g: with a 64 GiB disk, set KILN_POST_SHAPE_CACHE=0 so the ~7 GB shape stays in
 * memory; scripts/device/post32.sh does); it is removed at the end unless --keep.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connectEngine } from '../src/client/grpc-client.js';
import { ProofKind } from '../src/engine/types.js';
import { parseSectorSize } from '../src/filecoin/registry.js';
import { postCircuitId, postProofName, allPoStProofs } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import type { PoStProofInfo } from '../src/filecoin/post/types.js';
import { parsePoStSectorProof, readVanillaFile, vanillaFileText } from '../src/filecoin/post/vanilla.js';
import { loadPorepVerifyingKey } from '../src/kinds/params.js';
import { postVerifyingKeySource, verifyPoSt } from '../src/kinds/post/post.js';
import { benchDaemon, commitLine, machineLine, writeSection } from './report.js';
import { type Answer, benchArgs, benchLog, isEntry, prepareCircuit, proofParts, proofRows, proveBackToBack, runBench, sec, vmHwmGiB } from './run32.js';

const a = benchArgs('kiln-post');
const sequential = a.has('--sequential');
// --prepare (with --keep): synth-post, the shapes and the parameters only, no proofs (the development setup wants the
// whole GPU: a later run with a small card's memory held proves with them)
const prepareOnly = a.has('--prepare');
const counts = { window: Number(a.opt('--window', '2')), winning: Number(a.opt('--winning', '3')) };
// a fixed, canonical randomness (as Curio sends it: [31] &= 0x3f)
const randomness = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);
randomness[31]! &= 0x3f;

export async function main(): Promise<void> {
  const { sectorLabel, dir, backendName } = a;
  const size = parseSectorSize(sectorLabel);
  if (size === undefined) throw new Error(`--sector-size ${sectorLabel}: not a sector size`);
  const kinds = (['winning', 'window'] as const).filter((k) => counts[k] > 0);
  const infos: Record<'window' | 'winning', PoStProofInfo> = {
    window: allPoStProofs().find((p) => p.type === 'window' && p.api === 'V1_2' && p.size === size)!,
    winning: allPoStProofs().find((p) => p.type === 'winning' && p.size === size)!,
  };
  mkdirSync(dir, { recursive: true });
  const log = benchLog();
  log.log(`bench:post32 ${sectorLabel}: ${counts.window} WindowPoSt + ${counts.winning} WinningPoSt, backend ${backendName}, dir ${dir}; ${machineLine()}; commit ${process.env.KILN_COMMIT ?? commitLine()}`);
  const rows: (string | number)[][] = [];
  // 1. synthetic vanilla proofs of full size (cached in dir)
  const vanilla: Record<string, Uint8Array[]> = {};
  for (const k of kinds) {
    const info = infos[k];
    const file = path.join(dir, `synth-${postCircuitId(info)}.vanilla.json`);
    const t = performance.now();
    if (!existsSync(file)) writeFileSync(file, vanillaFileText(synthPoSt({ info, randomness, rngSeed: 'bench-post32' }).elements));
    vanilla[k] = readVanillaFile(file);
    const ms = performance.now() - t;
    log.say(`synth-post ${postProofName(info)}: ${vanilla[k]!.length} sector proof(s), ${(vanilla[k]!.reduce((n, e) => n + e.length, 0) / 2 ** 20).toFixed(1)} MiB in ${sec(ms)} s`);
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
      // 3. the shape (one sector recorded, replicated; cached in dir), the parameters and the SRS onto the device
      const { shape, shapeMs, preloadMs } = await prepareCircuit(engine, c, id, log);
      rows.push([`${id}: shape (one sector recorded, replicated)`, `${sec(shapeMs)} s (${shape.numConstraints} constraints)`], [`${id}: PreloadSRS (development setup when missing + SRS onto the device)`, `${sec(preloadMs)} s`]);
      if (prepareOnly) continue;
      // 4. N proofs: submitted together, 20 ms apart (throughput), or --sequential: each after the previous answer
      const elements = vanilla[k]!.map((e) => Buffer.from(e));
      const submit = async (i: number): Promise<Answer> => {
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
        return ((await c.call('Prove', { submit: req }, 3_600_000)) as { result: Answer }).result;
      };
      const done = await proveBackToBack(counts[k], submit, { label: `${k} proof`, log, sequential }).catch((e: unknown) => {
        ok = false;
        throw e;
      });
      // 5. verified again here from the verifying key: the daemon's parameters (official when in dir, else the
      // development ones of this shape, not recompiled)
      const sectors = vanilla[k]!.map((e) => parsePoStSectorProof(e, info));
      const vk = await loadPorepVerifyingKey(postVerifyingKeySource(info, dir, path.join(dir, 'kiln-cache'), shape));
      for (const d of done) {
        const v = await verifyPoSt(info, sectors, { randomness, partitionIndex: 0 }, d.proof, vk);
        if (!v) ok = false;
        log.say(`${k} proof ${d.i + 1}: ${d.proof.length} B, verified from the verifying key: ${v}`);
      }
      const parts = proofParts(engine, done, log);
      rows.push(...proofRows(engine, id, done, parts, `proof (${sequential ? 'one at a time' : `${done.length} submitted together`})`));
    }
    c.close();
    rows.push(['peak host RSS (VmHWM, daemon + client)', `${vmHwmGiB().toFixed(2)} GiB`]);
  } finally {
    await daemon.close();
    if (!a.keep) rmSync(dir, { recursive: true, force: true });
  }
  const notes = [
    `${sectorLabel} synthetic vanilla proofs (synthPoSt, as kiln synth-post), INSECURE development parameters, backend ${backendName}, daemon in this process over a unix socket`,
    `every proof verified by the daemon and again from the verifying key: ${ok}`,
    ...(benchEnvLine ? [benchEnvLine] : []),
  ];
  writeSection(`WindowPoSt and WinningPoSt ${sectorLabel} end to end through the daemon (bench/post32.ts)`, ['step', 'figure'], rows, log.lines, notes, { mdFile: a.mdFile, write: a.write });
  if (!ok) process.exitCode = 1;
}

if (isEntry(import.meta.url)) runBench(main);
