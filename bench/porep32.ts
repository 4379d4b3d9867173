/**
 * A 32 GiB PoRep C2 end to end through the daemon (npm run bench:porep32, on the GPU machine):
 * synth-c1 → the partition circuit's shape → INSECURE development parameters (made once, timed) and
 * the SRS loaded onto the device (PreloadSRS) → N proofs submitted back to back over gRPC (unix
 * socket, daemon in this process), each verified by the daemon and again here from the verifying key.
 *
 *   node dist/bench/porep32.js (or run32.js --kind porep) [--sector-size 32GiB] [--proofs 3] [--dir DIR] [--backend cuda]
 *                              [--md FILE] [--no-write] [--keep] [--ni]
 *
 * --ni: NI-PoRep (registered proof 18 / 19: 126 partitions of the same circuit, docs/ni-porep.md).
 * The synthetic NI C1 states its challenges (a synthetic sector cannot derive them from its comm_r),
 * so the daemon runs with [kiln] insecure_stated_ni_challenges = true; its 649 MB Commit2In is past
 * the 256 MiB gRPC message limit (kiln's and Curio's client's alike), so the proofs are submitted to
 * the daemon's engine in this process instead of over the socket (the same planner and pipeline).
 *
 * Prints s/proof (the first proof's latency and the steady interval between completions), synthesis
 * and GPU time per partition, the wrapper gap (prove span minus the backend's phase timings), peak
 * host RSS (VmHWM of this process: daemon and client) and appends a section to bench/RESULTS.md
 * (or --md FILE: the GPU machine's copy of the repository does not come back). Peak device memory
 * is sampled outside (scripts/device/porep32.sh runs nvidia-smi beside it).
 *
 * --dir holds the C1, the shape cache and the development parameters (~47 GB at 32 GiB); it is
 * removed at the end unless --keep.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { connectEngine } from '../src/client/grpc-client.js';
import { parseC1Input, withStatedChallenges } from '../src/filecoin/c1.js';
import { parseSectorSize, sealProofInfo } from '../src/filecoin/registry.js';
import { synthC1 } from '../src/filecoin/seal/index.js';
import type { Engine } from '../src/engine/engine.js';
import { ProofKind, proofRequest } from '../src/engine/types.js';
import { resultToWire } from '../src/server/grpc.js';
import { writeChunksAtomic } from '../src/util/files.js';
import { porepCircuitId, porepVerifyingKeySource, verifyPorep } from '../src/kinds/porep/porep-c2.js';
import { loadPorepVerifyingKey } from '../src/kinds/params.js';
import { planRows } from './plan-report.js';
import { benchDaemon, commitLine, machineLine, writeSection } from './report.js';
import { type Answer, type Connection, benchArgs, benchLog, isEntry, median, prepareCircuit, proofParts, proveBackToBack, runBench, sec, vmHwmGiB } from './run32.js';

const a = benchArgs('kiln-porep');
const sectorLabel = a.sectorLabel;
const proofs = Number(a.opt('--proofs', '3'));
const dir = a.dir;
const backendName = a.backendName;
const ni = a.has('--ni');
const variant = ni ? ' NI-PoRep' : '';

export async function main(): Promise<void> {
  const size = parseSectorSize(sectorLabel);
  if (size === undefined) throw new Error(`--sector-size ${sectorLabel}: not a sector size`);
  if (!(proofs >= 0) || !Number.isInteger(proofs)) throw new Error('--proofs must be an integer ≥ 0 (0: prepare the C1, shape and parameters only; with --keep)');
  mkdirSync(dir, { recursive: true });
  const bl = benchLog();
  const { log, say, lines } = bl;
  log(`bench:porep32 ${sectorLabel}${variant}, ${proofs} proofs, backend ${backendName}, dir ${dir}; ${machineLine()}; commit ${process.env.KILN_COMMIT ?? commitLine()}`);

  // 1. a consistent synthetic C1 (Commit2In wrapper, as Curio sends it)
  let t = performance.now();
  const c1File = path.join(dir, `synth-${sectorLabel}${ni ? '-ni' : ''}.commit2in.json`);
  if (!existsSync(c1File)) {
    const version = ni ? 'V1_2_Feat_NonInteractivePoRep' : 'V1_1';
    writeChunksAtomic(c1File, synthC1({ sectorSize: sectorLabel, version, rngSeed: 'bench-porep32' }).commit2InChunks());
  }
  const c1Bytes = readFileSync(c1File);
  const synthC1Ms = performance.now() - t;
  log(`synth-c1: ${sec(synthC1Ms)} s, ${(c1Bytes.length / 2 ** 20).toFixed(1)} MiB`);

  // 2. the daemon, in this process
  // the synthetic NI C1's challenges are stated (see above)
  const { daemon, envLine: benchEnvLine } = await benchDaemon(dir, backendName, { configure: (c) => (c.kiln.insecure_stated_ni_challenges = ni) });
  const circuitId = porepCircuitId(size.sectorSize);
  const rows: (string | number)[][] = [];
  const notes: string[] = benchEnvLine ? [benchEnvLine] : [];
  let ok = true;
  try {
    const engine = daemon.engine;
    // 3-4. the shape (one challenge recorded, replicated; cached in dir), the parameters (development setup when
    // missing) and the SRS onto the device (PreloadSRS), with the device-memory plan
    const c = connectEngine(daemon.grpcAddress);
    const { shapeMs, preloadMs } = await prepareCircuit(engine, c, circuitId, bl);
    if (proofs === 0) {
      say('--proofs 0: the C1, the shape and the parameters are ready');
      return;
    }

    // 5. N proofs back to back: all submitted at once; the engine proves them in order of arrival
    const done = await proveBackToBack(proofs, (i) => (ni ? proveInProcess(engine, i, c1Bytes) : proveOverGrpc(c, i, c1Bytes)), { label: 'proof', log: bl }).catch((e: unknown) => {
      ok = false;
      throw e;
    });
    c.close();

    // 6. each proof verified again here, from the verifying key (as `kiln verify` does)
    const c1 = withStatedChallenges(parseC1Input(c1Bytes).phase1Out);
    const vk = await loadPorepVerifyingKey(await porepVerifyingKeySource(c1.registeredProof, dir, path.join(dir, 'kiln-cache')));
    for (const d of done) {
      const v = verifyPorep(c1, d.proof, vk);
      if (!v.every(Boolean)) ok = false;
      say(`proof ${d.i + 1}: ${d.proof.length} B, verified from the verifying key: ${v.every(Boolean)}`);
    }

    // 7. figures
    const first = done[0].ms;
    const steady = done.length > 1 ? (done[done.length - 1].ms - done[0].ms) / (done.length - 1) : NaN;
    const parts = proofParts(engine, done, bl);
    const synth = median(parts.map((p) => p.synth));
    const prove = median(parts.map((p) => p.prove));
    const phases = median(parts.map((p) => p.phases));
    const deviceWait = median(parts.map((p) => p.deviceWait));
    const gap = median(parts.map((p) => p.prove - p.phases - p.deviceWait - p.circuitUpload - p.hostWait));
    const gpuSum = parts.reduce((t, p) => t + p.phases, 0);
    const perPart = parts.length / done.length;
    const verify = median(parts.map((p) => p.verify));
    const hwm = vmHwmGiB();
    say(
      `s/proof: first ${sec(first)} s, steady ${sec(steady)} s; per partition (median of ${parts.length}): synth ${sec(synth)} s, ` +
        `prove ${sec(prove)} s (device wait ${sec(deviceWait)} s, GPU phases ${sec(phases)} s, wrapper gap ${gap.toFixed(0)} ms), verify ${verify.toFixed(0)} ms; ` +
        `GPU busy ${sec(gpuSum)} s of ${sec(done[done.length - 1].ms)} s; peak RSS ${hwm.toFixed(2)} GiB`,
    );
    rows.push(
      ['synth-c1', `${sec(synthC1Ms)} s`],
      ['shape (one challenge recorded, replicated)', `${sec(shapeMs)} s`],
      ['PreloadSRS (development setup when missing + SRS onto the device)', `${sec(preloadMs)} s`],
      [`first proof (${done[0].proof.length} B, ${parts.length / done.length} partitions)`, `${sec(first)} s`],
      [`steady s/proof (${done.length} back to back: interval between completions)`, Number.isNaN(steady) ? '–' : `${sec(steady)} s`],
      [`${done.length} proofs, first submission to last answer`, `${sec(done[done.length - 1].ms)} s (${sec(done[done.length - 1].ms / done.length)} s/proof)`],
      ['synthesis per partition (median)', `${sec(synth)} s`],
      ['prove per partition (median): wall / waiting for the device / GPU phases / wrapper gap', `${sec(prove)} s / ${sec(deviceWait)} s / ${sec(phases)} s / ${gap.toFixed(0)} ms`],
      ['GPU time, all partitions / wall of the proofs', `${sec(gpuSum)} s / ${sec(done[done.length - 1].ms)} s (${((100 * gpuSum) / done[done.length - 1].ms).toFixed(0)}% busy)`],
      ['verify per partition (median)', `${verify.toFixed(0)} ms`],
      ...planRows(engine, circuitId, parts, perPart),
      ['peak host RSS (VmHWM, daemon + client)', `${hwm.toFixed(2)} GiB`],
    );
    notes.push(
      ni
        ? `${sectorLabel} NI-PoRep synthetic C1 (kiln synth-c1 --ni: ${c1.partitions.length} partitions × ${c1.partitions[0]!.length} challenges, stated: [kiln] insecure_stated_ni_challenges), INSECURE development parameters, backend ${backendName}, ` +
          `its ${(c1Bytes.length / 2 ** 20).toFixed(0)} MiB Commit2In submitted to the daemon's engine in this process (at 32/64 GiB, 649 MB, past the 256 MiB gRPC limit)`
        : `${sectorLabel} synthetic C1 (kiln synth-c1), INSECURE development parameters, backend ${backendName}, daemon in this process over a unix socket`,
      `every proof verified by the daemon and again from the verifying key: ${ok}`,
    );
  } finally {
    await daemon.close();
    if (!a.keep) rmSync(dir, { recursive: true, force: true });
  }
  const title = `PoRep C2 ${sectorLabel}${variant} end to end through the daemon (bench/porep32.ts${ni ? ' --ni' : ''})`;
  writeSection(title, ['step', 'figure'], rows, lines, notes, { mdFile: a.mdFile, write: a.write });
  if (!ok) process.exitCode = 1;
}

/** Proof i over gRPC (Curio's path). */
async function proveOverGrpc(c: Connection, i: number, c1Bytes: Uint8Array): Promise<Answer> {
  const size = parseSectorSize(sectorLabel)!;
  const r = (await c.call('Prove', { submit: { proof_kind: 1, request_id: `porep32-${i}`, vanilla_proof: c1Bytes, sector_size: size.sectorSize } }, 3_600_000)) as { result: Answer };
  return r.result;
}

/** Proof i submitted to the daemon's engine in this process (the request gRPC would carry; same answer fields). */
async function proveInProcess(engine: Engine, i: number, vanillaProof: Uint8Array): Promise<Answer> {
  const size = parseSectorSize(sectorLabel)!;
  const info = sealProofInfo(`StackedDrg${size.label}V1_2_Feat_NonInteractivePoRep`)!;
  const { job } = await engine.submit(proofRequest({ proofKind: ProofKind.POREP_SEAL_COMMIT, requestId: `porep32-ni-${i}`, vanillaProof, sectorSize: size.sectorSize, registeredProof: info.id }));
  const r = await engine.await(job.id);
  if (r === undefined) throw new Error(`job ${job.id} vanished`);
  return resultToWire(r) as Answer;
}

if (isEntry(import.meta.url)) runBench(main);
