/**
 * A storage provider's mixed load through the daemon (npm run bench:mixed): PoRep C2 proofs back to back
 * for the whole run, WinningPoSt requests at random moments, and a WindowPoSt deadline of several partitions
 * submitted together, every proof verified by the daemon before it is answered.
 *
 *   node dist/bench/mixed.js [--sector-size 32GiB] [--prepare] [--porep-alone 3] [--minutes 3] [--porep-depth 2]
 *                            [--winning 8] [--window-partitions 4] [--window-at 40] [--idle-winning 5] [--seed 29] [--gpus 0]
 *                            [--dir DIR] [--backend cuda] [--reverify] [--md FILE] [--no-write] [--keep]
 *
 * Steps: the inputs (a synthetic C1 as kiln synth-c1 makes it, synthetic WinningPoSt and WindowPoSt vanilla proofs
 * as kiln synth-post does; cached in --dir), the daemon in this process (unix socket, INSECURE development parameters
 * made when missing), per circuit (porep-, winning-, wpost-<size>) the shape and PreloadSRS; --prepare stops there
 * (the directory is kept: the development setup of wpost-32g alone takes ~110 s). Then
 *  1. PoRep alone: --porep-alone proofs submitted together (s/proof alone: the interval between completions);
 *  2. the mix, --minutes long: PoRep proofs back to back (--porep-depth requests in the daemon at any time, a new one
 *     submitted as one is answered), --winning WinningPoSt requests at seeded random moments, and at --window-at
 *     seconds one deadline of --window-partitions WindowPoSt partitions submitted together (partition_index 0…N−1);
 *  3. the daemon idle after that work: --idle-winning WinningPoSt requests one at a time, a second apart.
 * Prints latency percentiles per kind (request in → verified proof out), PoRep throughput mixed against alone, the
 * answer order of the (equal-priority) PoReps, how soon each PoRep's first partition started synthesis, and the span
 * trees of the slowest WinningPoSt and WindowPoSt jobs; appends the table to bench/RESULTS.md (or --md FILE).
 *
 * On the CPU (small sizes): `node dist/bench/mixed.js --sector-size 2KiB --backend native --minutes 1 --porep-alone 2
 * --winning 4 --window-partitions 2 --window-at 15`. At 32 GiB (GPU): scripts/device/mixed.sh (npm run bench:mixed).
 * Disk: the development parameters of porep-32g (47 GB) and wpost-32g (61 GB) with the porep shape (7.6 GB) need
 * ~120 GB in --dir.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectEngine, type BenchConnection } from '../src/client/grpc-client.js';
import type { BackendName } from '../src/backend/select.js';
import type { Job } from '../src/engine/engine.js';
import { ProofKind } from '../src/engine/types.js';
import { parseCommit2In } from '../src/filecoin/c1.js';
import { allPoStProofs, postCircuitId, postProofName } from '../src/filecoin/post/registry.js';
import { synthPoSt } from '../src/filecoin/post/synthetic.js';
import type { PoStProofInfo } from '../src/filecoin/post/types.js';
import { parsePoStSectorProof, readVanillaFile, vanillaFileText } from '../src/filecoin/post/vanilla.js';
import { parseSectorSize } from '../src/filecoin/registry.js';
import { synthC1 } from '../src/filecoin/seal/index.js';
import { porepCircuitId, porepVerifyingKeySource, verifyPorep } from '../src/kinds/porep/porep-c2.js';
import { loadPorepVerifyingKey } from '../src/kinds/params.js';
import { postVerifyingKeySource, verifyPoSt } from '../src/kinds/post/post.js';
import { formatSpanTree, type Span } from '../src/util/timing.js';
import { planLine } from './plan-report.js';
import { benchDaemon, commitLine, machineLine, writeSection } from './report.js';

const argv = process.argv;
const opt = (name: string, dflt: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
};
const num = (name: string, dflt: number, min = 0): number => {
  const v = Number(opt(name, String(dflt)));
  if (!Number.isFinite(v) || v < min) throw new Error(`${name} must be a number ≥ ${min}`);
  return v;
};
const sectorLabel = opt('--sector-size', '32GiB');
const prepareOnly = argv.includes('--prepare');
const porepAlone = Math.floor(num('--porep-alone', 3));
const minutes = num('--minutes', 3);
const porepDepth = Math.floor(num('--porep-depth', 2, 1));
const winningCount = Math.floor(num('--winning', 8));
const windowPartitions = Math.floor(num('--window-partitions', 4));
const idleWinning = Math.floor(num('--idle-winning', 5));
const windowAtS = num('--window-at', Math.min(40, minutes * 20));
const seed = Math.floor(num('--seed', 29));
const gpus = argv.includes('--gpus') ? opt('--gpus', '').split(',').filter((x) => x !== '').map(Number) : undefined;
const dir = path.resolve(opt('--dir', path.join(os.tmpdir(), `kiln-mixed-${sectorLabel}`)));
const backendName = opt('--backend', 'cuda') as BackendName;
const mdFile = argv.includes('--md') ? opt('--md', '') : undefined;
const CALL_MS = 3_600_000;

const t00 = performance.now();
const log = (s: string): void => console.log(`[${((performance.now() - t00) / 1000).toFixed(1).padStart(7)} s] ${s}`);
const vmHwmGiB = (): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 2 ** 20;
const sec = (ms: number): string => (ms / 1000).toFixed(2);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
// a fixed, canonical randomness (as Curio sends it: [31] &= 0x3f)
const randomness = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);
randomness[31]! &= 0x3f;

type Kind = 'porep' | 'winning' | 'window';

/** One request: when it was sent and answered (performance.now() of this process), and the daemon's job. */
interface Done {
  kind: Kind;
  phase: 'alone' | 'mixed' | 'idle';
  /** Submission order within its kind and phase. */
  i: number;
  sentMs: number;
  doneMs: number;
  jobId: string;
  status: number;
  error: string;
  proof: Uint8Array;
  timings: Record<string, number>;
}

/** A seeded uniform integer in [0, n) (mulberry32): the WinningPoSt moments repeat from run to run. */
function seededInts(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return Math.floor((((x ^ (x >>> 14)) >>> 0) / 2 ** 32) * n);
  };
}

/** The q-th quantile (0..1) of xs, nearest rank. */
function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

/** Wall time per proof: from `fromMs` to the last answer, over the answers (s/proof of a phase). */
function perProofMs(ds: readonly Done[], fromMs: number): number {
  return ds.length > 0 ? (Math.max(...ds.map((d) => d.doneMs)) - fromMs) / ds.length : NaN;
}

/** How long after a job left the queue its first partition's witness began (its checks included: the
 *  partition's `checks` wait is inside synth, so this is the job's planning of partition 0 after it starts). */
function firstPartitionMs(job: Job | undefined): number {
  const p0 = job?.span.children.find((c) => c.name === 'partition[0]');
  const synth = p0?.children.find((c: Span) => c.name === 'synth');
  const witness = synth?.children.find((c) => c.name !== 'checks');
  return witness === undefined || job?.startedAtMs === undefined ? NaN : witness.startMs - job.startedAtMs;
}

async function main(): Promise<void> {
  const size = parseSectorSize(sectorLabel);
  if (size === undefined) throw new Error(`--sector-size ${sectorLabel}: not a sector size`);
  const infos: Record<'winning' | 'window', PoStProofInfo> = {
    window: allPoStProofs().find((p) => p.type === 'window' && p.api === 'V1_2' && p.size === size)!,
    winning: allPoStProofs().find((p) => p.type === 'winning' && p.size === size)!,
  };
  const reverify = argv.includes('--reverify') || size.sectorSize < 2 ** 30; // noble re-verifies a 32 GiB WindowPoSt in ~16 s
  mkdirSync(dir, { recursive: true });
  log(
    `bench:mixed ${sectorLabel}${prepareOnly ? ' --prepare' : `: ${porepAlone} PoRep alone, then ${minutes} min of PoRep (depth ${porepDepth}) + ${winningCount} WinningPoSt + a ${windowPartitions}-partition WindowPoSt deadline at ${windowAtS} s`}, ` +
      `backend ${backendName}${gpus ? ` on GPU ${gpus.join(',')}` : ''}, dir ${dir}; ${machineLine()}; commit ${process.env.KILN_COMMIT ?? commitLine()}`,
  );
  const rows: (string | number)[][] = [];
  const lines: string[] = [];
  const say = (s: string): void => {
    log(s);
    lines.push(s);
  };

  // 1. inputs (cached in dir)
  let t = performance.now();
  const c1File = path.join(dir, `synth-${sectorLabel}.commit2in.json`);
  if (!existsSync(c1File)) writeFileSync(c1File, synthC1({ sectorSize: sectorLabel, rngSeed: 'bench-mixed' }).commit2In);
  const c1Bytes = readFileSync(c1File);
  say(`synth-c1 ${sectorLabel}: ${(c1Bytes.length / 2 ** 20).toFixed(1)} MiB in ${sec(performance.now() - t)} s`);
  const vanilla = {} as Record<'winning' | 'window', Uint8Array[]>;
  // --window-partitions 0: no WindowPoSt (its 61 GB of development parameters do not fit a 64 GiB disk beside PoRep's)
  for (const k of windowPartitions > 0 ? (['winning', 'window'] as const) : (['winning'] as const)) {
    t = performance.now();
    const file = path.join(dir, `synth-${postCircuitId(infos[k])}.vanilla.json`);
    if (!existsSync(file)) writeFileSync(file, vanillaFileText(synthPoSt({ info: infos[k], randomness, rngSeed: 'bench-mixed' }).elements));
    vanilla[k] = readVanillaFile(file);
    say(`synth-post ${postProofName(infos[k])}: ${vanilla[k].length} sector proof(s) in ${sec(performance.now() - t)} s`);
  }

  // 2. the daemon, in this process
  const { daemon, envLine: benchEnvLine } = await benchDaemon(dir, backendName, {
    logLevel: 'warn',
    configure: (c) => {
      if (gpus !== undefined) c.gpus.devices = gpus;
    },
  });
  const engine = daemon.engine;
  const c = connectEngine(daemon.grpcAddress);
  const ids = { porep: porepCircuitId(size.sectorSize), winning: postCircuitId(infos.winning), window: postCircuitId(infos.window) };
  let ok = true;
  const done: Done[] = [];
  try {
    // 3. shapes and parameters (the development setup when missing), every SRS onto the device
    for (const id of windowPartitions > 0 ? [ids.winning, ids.window, ids.porep] : [ids.winning, ids.porep]) {
      const provider = engine.srs.provider(id);
      if (provider === undefined) throw new Error(`no provider for ${id}`);
      t = performance.now();
      const { shape } = await provider.compiled(id);
      const shapeMs = performance.now() - t;
      t = performance.now();
      const pre = (await c.call('PreloadSRS', { circuit_id: id }, CALL_MS)) as { already_loaded?: boolean; load_time_ms?: number };
      const preMs = performance.now() - t;
      say(`${id}: shape ${shape.numConstraints} constraints in ${sec(shapeMs)} s; PreloadSRS ${sec(preMs)} s (${JSON.stringify(pre)}); RSS peak ${vmHwmGiB().toFixed(2)} GiB`);
      const loadSpan = engine.srs.loadSpan(id);
      if (loadSpan) for (const l of formatSpanTree(loadSpan).split('\n')) lines.push(`  ${l}`);
      rows.push([`${id}: shape / PreloadSRS (development setup when missing)`, `${sec(shapeMs)} s / ${sec(preMs)} s`]);
    }
    const pl = planLine(engine);
    if (pl) say(pl);
    if (prepareOnly) {
      say(`--prepare: inputs, shapes and parameters are ready in ${dir} (kept)`);
      return;
    }

    const requests: Record<Kind, (i: number) => Record<string, unknown>> = {
      porep: () => ({ proof_kind: ProofKind.POREP_SEAL_COMMIT, vanilla_proof: c1Bytes, sector_size: size.sectorSize }),
      winning: () => ({
        proof_kind: ProofKind.WINNING_POST,
        registered_proof: infos.winning.id,
        sector_size: size.sectorSize,
        vanilla_proofs: vanilla.winning.map((e) => Buffer.from(e)),
        randomness: Buffer.from(randomness),
        miner_id: 1000,
      }),
      window: (i) => ({
        proof_kind: ProofKind.WINDOW_POST_PARTITION,
        registered_proof: infos.window.id,
        sector_size: size.sectorSize,
        vanilla_proofs: vanilla.window.map((e) => Buffer.from(e)),
        randomness: Buffer.from(randomness),
        miner_id: 1000,
        partition_index: i % Math.max(1, windowPartitions),
      }),
    };
    const prove = async (conn: BenchConnection, kind: Kind, phase: Done['phase'], i: number): Promise<Done> => {
      const sentMs = performance.now();
      const req = { ...requests[kind](i), request_id: `mixed-${phase}-${kind}-${i}` };
      const res = ((await conn.call('Prove', { submit: req }, CALL_MS)) as { result: { job_id: string; status: number; error_message: string; proof: Uint8Array } & Record<string, number> }).result;
      const d: Done = { kind, phase, i, sentMs, doneMs: performance.now(), jobId: res.job_id, status: res.status, error: res.error_message, proof: new Uint8Array(res.proof ?? []), timings: res };
      done.push(d);
      log(`${phase} ${kind} ${i + 1}: ${res.status === 1 ? 'COMPLETED' : `status ${res.status}: ${res.error_message}`}, request in → verified proof out ${sec(d.doneMs - sentMs)} s (queue=${res.queue_wait_ms}, synth=${res.synthesis_ms}, gpu=${res.gpu_compute_ms} ms)`);
      if (res.status !== 1) ok = false;
      return d;
    };

    // 4. PoRep alone: submitted together, answered back to back
    const tAlone = performance.now();
    await Promise.all(Array.from({ length: porepAlone }, async (_, i) => {
      await sleep(i * 20); // keep the order of arrival
      await prove(c, 'porep', 'alone', i);
    }));
    const aloneMs = performance.now() - tAlone;

    // 5. the mix: PoRep back to back, WinningPoSt at random moments, one WindowPoSt deadline
    const runMs = minutes * 60_000;
    const random = seededInts(seed);
    const winningAt = Array.from({ length: winningCount }, () => 2_000 + random(Math.max(1, runMs - 4_000))).sort((a, b) => a - b);
    say(`mixed phase: WinningPoSt at ${winningAt.map((x) => sec(x)).join(', ')} s; WindowPoSt deadline (${windowPartitions} partitions) at ${windowAtS} s`);
    const t0 = performance.now();
    let porepSent = 0;
    const porepLoop = async (): Promise<void> => {
      // one chain per depth: a new request as soon as one is answered, until the phase ends
      await Promise.all(Array.from({ length: porepDepth }, async (_, lane) => {
        await sleep(lane * 20);
        while (performance.now() - t0 < runMs) await prove(c, 'porep', 'mixed', porepSent++);
      }));
    };
    const winningLoop = Promise.all(winningAt.map(async (at, i) => {
      await sleep(at);
      await prove(c, 'winning', 'mixed', i);
    }));
    const windowDeadline = (async () => {
      if (windowPartitions <= 0) return;
      await sleep(windowAtS * 1000);
      await Promise.all(Array.from({ length: windowPartitions }, (_, i) => prove(c, 'window', 'mixed', i)));
    })();
    await Promise.all([porepLoop(), winningLoop, windowDeadline]);
    const mixedMs = performance.now() - t0;

    // 5b. the daemon idle after that work: WinningPoSt one at a time, a second apart (nothing else running)
    for (let i = 0; i < idleWinning; i++) {
      await sleep(1_000);
      await prove(c, 'winning', 'idle', i);
    }

    // 6. every proof again from the verifying key (small sizes, or --reverify)
    if (reverify) {
      const c1 = parseCommit2In(c1Bytes).phase1Out;
      const porepVk = await loadPorepVerifyingKey(await porepVerifyingKeySource(c1.registeredProof, dir, path.join(dir, 'kiln-cache')));
      const postVk = {} as Record<'winning' | 'window', Awaited<ReturnType<typeof loadPorepVerifyingKey>>>;
      for (const k of windowPartitions > 0 ? (['winning', 'window'] as const) : (['winning'] as const)) {
        const circuit = await engine.srs.provider(ids[k])!.compiled(ids[k]);
        postVk[k] = await loadPorepVerifyingKey(postVerifyingKeySource(infos[k], dir, path.join(dir, 'kiln-cache'), circuit));
      }
      const sectors = { winning: vanilla.winning.map((e) => parsePoStSectorProof(e, infos.winning)), window: (vanilla.window ?? []).map((e) => parsePoStSectorProof(e, infos.window)) };
      let bad = 0;
      for (const d of done.filter((x) => x.status === 1)) {
        const v =
          d.kind === 'porep'
            ? verifyPorep(c1, d.proof, porepVk).every(Boolean)
            : await verifyPoSt(infos[d.kind], sectors[d.kind], { randomness, partitionIndex: d.kind === 'window' ? d.i % Math.max(1, windowPartitions) : 0 }, d.proof, postVk[d.kind]);
        if (!v) bad++;
      }
      if (bad > 0) ok = false;
      say(`every answered proof verified again from the verifying key: ${done.length - bad} of ${done.length}`);
    }

    // 7. figures
    const of = (kind: Kind, phase: Done['phase']): Done[] => done.filter((d) => d.kind === kind && d.phase === phase && d.status === 1);
    const lat = (ds: readonly Done[]): number[] => ds.map((d) => d.doneMs - d.sentMs);
    const pct = (ds: readonly Done[]): string => {
      const l = lat(ds);
      return l.length === 0 ? '–' : `${sec(quantile(l, 0.5))} / ${sec(quantile(l, 0.9))} / ${sec(quantile(l, 0.99))} / ${sec(Math.max(...l))} s`;
    };
    const alone = of('porep', 'alone');
    const mixedPorep = of('porep', 'mixed');
    const winning = of('winning', 'mixed');
    const windowPoSt = of('window', 'mixed');
    const aloneS = perProofMs(alone, tAlone);
    const mixedS = perProofMs(mixedPorep, t0);
    // answer order of the mixed PoReps (all NORMAL): submission index in the order they were answered
    const answered = [...mixedPorep].sort((a, b) => a.doneMs - b.doneMs).map((d) => d.i);
    const inversions = answered.reduce((n, x, k) => n + answered.slice(k + 1).filter((y) => y < x).length, 0);
    const firstStart = [...alone, ...mixedPorep].map((d) => firstPartitionMs(engine.getJob(d.jobId))).filter((x) => !Number.isNaN(x));
    const deadline = windowPoSt.length > 0 ? Math.max(...windowPoSt.map((d) => d.doneMs)) - Math.min(...windowPoSt.map((d) => d.sentMs)) : NaN;
    rows.push(
      [`PoRep alone: ${alone.length} submitted together, s/proof (wall to the last answer / proofs) / first answer`, `${Number.isNaN(aloneS) ? '–' : `${sec(aloneS)} s`} / ${alone.length ? sec(Math.min(...lat(alone))) : '–'} s (${sec(aloneMs)} s in all)`],
      [`PoRep in the mix: ${mixedPorep.length} answered in ${sec(mixedMs)} s, s/proof (wall to the last answer / proofs)`, Number.isNaN(mixedS) ? '–' : `${sec(mixedS)} s`],
      ['PoRep throughput, mixed against alone', Number.isNaN(mixedS) || Number.isNaN(aloneS) ? '–' : `${((100 * aloneS) / mixedS).toFixed(0)} %`],
      [`PoRep answer order in the mix (all NORMAL; submission index as answered)`, `${answered.map((x) => x + 1).join(',')} (${inversions === 0 ? 'in order' : `${inversions} inversion(s)`})`],
      ['PoRep: job out of the queue → its first partition\'s witness starts (its checks), median / max', firstStart.length ? `${sec(quantile(firstStart, 0.5))} / ${sec(Math.max(...firstStart))} s` : '–'],
      [`PoRep in the mix: request in → verified proof out, p50 / p90 / p99 / max (${mixedPorep.length})`, pct(mixedPorep)],
      [`WinningPoSt (${winning.length} at random moments): request in → verified proof out, p50 / p90 / p99 / max`, pct(winning)],
      [`WinningPoSt on the idle daemon after that work (${of('winning', 'idle').length}, one at a time, 1 s apart): request in → verified proof out, p50 / p90 / p99 / max`, pct(of('winning', 'idle'))],
      [`WindowPoSt (${windowPoSt.length} partitions of one deadline, submitted together): request in → verified proof out, p50 / p90 / p99 / max`, pct(windowPoSt)],
      ['WindowPoSt deadline: first request in → last partition out', Number.isNaN(deadline) ? '–' : `${sec(deadline)} s`],
      ['peak host RSS (VmHWM, daemon + client)', `${vmHwmGiB().toFixed(2)} GiB`],
    );
    const slowest = (ds: readonly Done[]): Done | undefined => [...ds].sort((a, b) => b.doneMs - b.sentMs - (a.doneMs - a.sentMs))[0];
    for (const [what, d] of [['slowest WinningPoSt', slowest(winning)], ['slowest WindowPoSt partition', slowest(windowPoSt)], ['slowest PoRep in the mix', slowest(mixedPorep)]] as const) {
      const job = d && engine.getJob(d.jobId);
      if (!job) continue;
      lines.push(`${what} (${job.id}, ${sec(d.doneMs - d.sentMs)} s):`);
      for (const l of formatSpanTree(job.span).split('\n')) lines.push(`  ${l}`);
    }
  } finally {
    c.close();
    await daemon.close();
    if (!argv.includes('--keep') && !prepareOnly) rmSync(dir, { recursive: true, force: true });
  }
  const notes = [
    `${sectorLabel}: synthetic C1 (kiln synth-c1) and vanilla proofs (kiln synth-post), INSECURE development parameters, backend ${backendName}${gpus ? ` (GPU ${gpus.join(',')})` : ''}, daemon in this process over a unix socket`,
    `every proof verified by the daemon before its answer${argv.includes('--prepare') ? '' : `; all answered COMPLETED: ${ok}`}`,
    ...(benchEnvLine ? [benchEnvLine] : []),
  ];
  writeSection(`Mixed load ${sectorLabel}: PoRep back to back, WinningPoSt at random moments, a WindowPoSt deadline (bench/mixed.ts)`, ['figure', 'value'], rows, lines, notes, { mdFile, write: !argv.includes('--no-write') });
  if (!ok) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
