/**
 * SnapDeals on the command line:
 *  - `kiln update`: a sector update of a kiln-sealed sector (`kiln seal --sector-dir D`) with new data: the new
 *    replica encoded with rho per h (h_default), comm_d_new / comm_r_new, every partition's vanilla proof (checked)
 *    written as cuzk-bench's vanilla file (a JSON array of base64 bincode PartitionProofs), the new replica, and
 *    update.json (registered proof, comm_r_old / comm_d_new / comm_r_new as 32-byte LE hex, h, the vanilla file);
 *  - `kiln synth-snap`: the same files for a synthetic, fully consistent update of any size (32 GiB: 16 partitions),
 *    without a sector (snap/synthetic.ts);
 *  - `kiln prove-snap` / `kiln verify-snap`: SNAP_DEALS_UPDATE through the in-process engine (planner, circuit
 *    provider and parameter loader of the daemon; the proofs are verified before they are returned) and the
 *    verification of partitions × 192 bytes against the public inputs;
 *  - `kiln circuit-info --circuit snap-*` (runSnapCircuitInfo).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { readOptionFile } from '../util/files.js';
import { commandProgress } from '../util/progress.js';
import { withOption } from './post-commands.js';
import { hiddenAlias } from './options.js';
import type { Backend } from '../backend/backend.js';
import type { KindOptions } from '../kinds/kind.js';
import type { SnapProofInfo } from '../filecoin/snap/registry.js';
import { hexLE, readUpdateFile, writeUpdateFiles } from '../filecoin/snap/update-file.js';
import { verdictLine } from './insecure.js';
import { type CliKind, type KindLocalProof, type KindProveOptions, printProof, proveKindLocally, registerProveVerifyPair, sizesInfo, verifyingKeyOf } from './kind-commands.js';

export interface SnapCommandDefaults {
  paramsDir: () => string;
  cacheDir: () => string;
  selectBackend: (name: string, opts: { device: number }) => Backend;
}


export interface UpdateOptions {
  sectorDir: string;
  data: string;
  out: string;
}

/** `kiln update`: returns the update.json path. */
export async function runUpdate(o: UpdateOptions, say: (m: string) => void = console.error): Promise<string> {
  const { readSectorDir, sectorTreeLeaf } = await import('../filecoin/seal/sector-store.js');
  const { prepareSectorData } = await import('../filecoin/seal/options.js');
  const { snapProofBySectorSize, snapHDefault } = await import('../filecoin/snap/registry.js');
  const { snapUpdateInMemory, snapPartitionProofs } = await import('../filecoin/snap/update.js');
  const { checkSnapPartition, serializeSnapPartitionProof } = await import('../filecoin/snap/vanilla.js');
  const { frFromBytesLE, frToBytesLE } = await import('../filecoin/hash/fr32.js');
  const { vanillaFileText } = await import('../filecoin/post/vanilla.js');
  const t0 = performance.now();
  const s = readSectorDir(o.sectorDir);
  const info = snapProofBySectorSize(s.info.sectorSize);
  if (!info) throw new Error(`${o.sectorDir}: no RegisteredUpdateProof for ${s.info.sectorSize}-byte sectors`);
  const p = info.params;
  const data = prepareSectorData(new Uint8Array(readOptionFile('--data', o.data)), s.info.sectorSize);
  const labelsROld = Array.from({ length: p.sectorNodes }, (_, i) => sectorTreeLeaf(s, i));
  const labelsDNew = Array.from({ length: p.sectorNodes }, (_, i) => frFromBytesLE(data.subarray(i * 32, i * 32 + 32)));
  const h = snapHDefault(p.sectorNodes);
  const u = snapUpdateInMemory(p, h, s.commC, labelsROld, labelsDNew);
  if (hexLE(u.pub.commROld) !== Buffer.from(s.commR).toString('hex')) throw new Error(`${o.sectorDir}: the replica and comm_c do not give the sector's comm_r`);
  const proofs = snapPartitionProofs(p, u.pub.commRNew, u.trees);
  proofs.forEach((pp, k) => checkSnapPartition(p, k, h, u.pub, pp));
  const elements = proofs.map((pp) => serializeSnapPartitionProof(pp, p));
  const file = writeUpdateFiles(o.out, info, h, u.pub, elements, vanillaFileText);
  const replica = new Uint8Array(s.info.sectorSize);
  u.labelsRNew.forEach((x, i) => replica.set(frToBytesLE(x), i * 32));
  writeFileSync(join(o.out, 'replica-new.bin'), replica);
  say(`${info.name} update of sector ${s.sectorNumber}: comm_r_old ${hexLE(u.pub.commROld)}, comm_d_new ${hexLE(u.pub.commDNew)}, comm_r_new ${hexLE(u.pub.commRNew)} (h = ${h})`);
  say(`${proofs.length} partition proof(s) of ${elements[0]!.length} B in ${join(o.out, 'vanilla.json')}, new replica in ${join(o.out, 'replica-new.bin')} (${Math.round(performance.now() - t0)} ms)`);
  return file;
}

export interface SynthSnapOptions {
  sectorSize: string;
  out: string;
  seed?: string;
  h?: string;
}

/** `kiln synth-snap`: returns the update.json path. */
export async function runSynthSnap(o: SynthSnapOptions, say: (m: string) => void = console.error): Promise<string> {
  const { parseSectorSize, sectorSizeRefusal } = await import('../filecoin/registry.js');
  const { snapProofBySectorSize, snapHDefault } = await import('../filecoin/snap/registry.js');
  const { syntheticSnapUpdate } = await import('../filecoin/snap/synthetic.js');
  const { snapPartitionProof } = await import('../filecoin/snap/update.js');
  const { checkSnapPartition, serializeSnapPartitionProof } = await import('../filecoin/snap/vanilla.js');
  const { vanillaFileText } = await import('../filecoin/post/vanilla.js');
  const size = parseSectorSize(o.sectorSize);
  if (!size) throw new InvalidArgumentError(sectorSizeRefusal(o.sectorSize, '--sector-size'));
  const info = snapProofBySectorSize(size.sectorSize)!;
  const p = info.params;
  const h = o.h === undefined ? snapHDefault(p.sectorNodes) : Number(o.h);
  if (!p.hs.includes(h)) throw new InvalidArgumentError(`--h ${o.h} is not allowed for ${size.label} (allowed: ${[...new Set(p.hs)].join(', ')})`);
  const seed = BigInt(o.seed ?? '1');
  const t0 = performance.now();
  const u = syntheticSnapUpdate(p, h, seed);
  const pub = { commROld: u.commROld, commDNew: u.commDNew, commRNew: u.commRNew };
  const elements: Uint8Array[] = [];
  for (let k = 0; k < p.partitionCount; k++) {
    const pp = snapPartitionProof(p, k, u.commRNew, u.trees);
    checkSnapPartition(p, k, h, pub, pp);
    elements.push(serializeSnapPartitionProof(pp, p));
  }
  const file = writeUpdateFiles(o.out, info, h, pub, elements, vanillaFileText);
  say(`synthetic ${info.name} update (seed ${seed}, h = ${h}): ${elements.length} partition proofs of ${elements[0]!.length} B in ${join(o.out, 'vanilla.json')}, ${file} (${Math.round(performance.now() - t0)} ms)`);
  return file;
}

export type SnapLocalProof = KindLocalProof;

/** Proves a SnapDeals update through an in-process engine (dev parameters allowed, INSECURE, and said so). */
export async function proveSnapLocally(
  req: { info: SnapProofInfo; vanillaProofs: Uint8Array[]; raw: { commROld: Uint8Array; commDNew: Uint8Array; commRNew: Uint8Array } },
  o: KindProveOptions,
): Promise<SnapLocalProof> {
  const { ProofKind } = await import('../engine/types.js');
  const makeKind = async (opts: KindOptions): Promise<CliKind> => (await import('../kinds/snap/planner.js')).createSnapKind(opts);
  return proveKindLocally(makeKind, { proofKind: ProofKind.SNAP_DEALS_UPDATE, registeredProof: req.info.id, vanillaProofs: req.vanillaProofs, ...req.raw }, o);
}

export interface ProveSnapOptions {
  update: string;
  vanilla?: string;
  out?: string;
  paramsDir: string;
  cacheDir: string;
  backend: Backend;
  json: boolean;
}

export async function runProveSnap(o: ProveSnapOptions): Promise<void> {
  const ui = commandProgress(o.json);
  const say = ui.say;
  const { info, raw, vanillaPath } = await readUpdateFile(o.update);
  const { readVanillaFile } = await import('../filecoin/post/vanilla.js');
  const { describeBackend } = await import('../backend/select.js');
  const vfile = o.vanilla ?? vanillaPath;
  // the vanilla file is the user's --vanilla, or the one --update's update.json names
  const label = o.vanilla !== undefined ? `--vanilla ${vfile}` : `${vfile} (named by --update ${o.update})`;
  const vanillaProofs = withOption(o.vanilla !== undefined ? '--vanilla' : `(named by --update ${o.update})`, () => readVanillaFile(vfile));
  say(`${info.name} (${info.circuitId}): ${vanillaProofs.length} partition proof(s) from ${vfile}, backend ${describeBackend(o.backend)}`);
  const r = await proveSnapLocally({ info, vanillaProofs, raw }, { ...o, say, progress: ui.progress, label }).finally(ui.stop);
  printProof(o, r, info.name, ` (${info.params.partitionCount} partition${info.params.partitionCount > 1 ? 's' : ''})`);
}

/** Verifies partitions × 192 bytes against the update's public inputs; true when valid. */
export async function runVerifySnap(o: { update: string; proof: string; paramsDir: string; cacheDir: string }): Promise<boolean> {
  const { info, pub } = await readUpdateFile(o.update);
  const { snapVerifyingKeySource, verifySnap } = await import('../kinds/snap/snap.js');
  const source = snapVerifyingKeySource(info, o.paramsDir, o.cacheDir);
  const vk = await verifyingKeyOf(source, info.name);
  const proof = new Uint8Array(readOptionFile('--proof', o.proof));
  const ok = verifySnap(info, pub, proof, vk);
  console.log(verdictLine(ok, source));
  return ok;
}

/** `kiln circuit-info --circuit snap-*`: the circuit counted without storing. */
export async function runSnapCircuitInfo(circuitId: string): Promise<Record<string, unknown>> {
  const { snapProofByCircuitId, snapParamsIdentifier } = await import('../filecoin/snap/registry.js');
  const { snapCircuitSizes } = await import('../kinds/snap/snap.js');
  const info = snapProofByCircuitId(circuitId);
  if (!info) throw new InvalidArgumentError(`unknown circuit '${circuitId}' (snap-2k, snap-8m, snap-512m, snap-32g, snap-64g)`);
  const t0 = performance.now();
  const s = snapCircuitSizes(info);
  const p = info.params;
  return {
    circuitId,
    registeredProof: info.name,
    sectorSize: info.size.sectorSize,
    partitions: p.partitionCount,
    challengesPerPartition: p.challengeCount,
    apexLeaves: p.apexLeafCount,
    hs: p.hs,
    treeR: `${p.tree.baseArity}-${p.tree.subArity}-${p.tree.topArity}`,
    ...sizesInfo(s),
    paramsIdentifier: snapParamsIdentifier(p.sectorNodes),
    countMs: Math.round(performance.now() - t0),
  };
}

/** Registers update, synth-snap, prove-snap and verify-snap on the `kiln` program. */
export function registerSnapCommands(program: Command, d: SnapCommandDefaults): void {
  program
    .command('update')
    .description(
      'SnapDeals sector update of a kiln-sealed sector (kiln seal --sector-dir): encode the new data into the replica (rho per h = h_default), ' +
        'compute comm_d_new / comm_r_new and write the partition vanilla proofs (vanilla.json), the new replica and update.json into --out',
    )
    .requiredOption('--sector-dir <dir>', 'the sealed sector directory (kiln seal --sector-dir)')
    .requiredOption('--data <file>', 'the new data: sector-size bytes of Fr32-padded nodes, or the unpadded 127/128 of that')
    .requiredOption('--out <dir>', 'where to write update.json, vanilla.json and replica-new.bin')
    .action(async (opts) => {
      await runUpdate({ sectorDir: opts.sectorDir, data: opts.data, out: opts.out });
    });
  const synth = program
    .command('synth-snap')
    .description('synthetic, consistent SnapDeals vanilla proofs of any size (32 GiB: 16 partitions of 86 challenges) for benches: update.json and vanilla.json into --out')
    .option('--sector-size <size>', 'sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)', '32GiB')
    .requiredOption('--out <dir>', 'output directory')
    .option('--rng-seed <n>', 'seed of every pseudo-random value', '1')
    .option('--h <n>', 'high bits selecting rho (default h_default: 10 for 32 GiB, 1 for 2 KiB)')
    .action(async (opts) => {
      await runSynthSnap({ sectorSize: opts.sectorSize, out: opts.out, seed: opts.rngSeed, h: opts.h });
    });
  hiddenAlias(synth, '--seed <n>', 'rngSeed');
  registerProveVerifyPair(program, d, {
    names: { prove: 'prove-snap', verify: 'verify-snap' },
    descriptions: {
      prove:
        'SnapDeals (EmptySectorUpdate): prove every partition from the vanilla proofs, verify, write partitions × 192 bytes and print the ' +
        'timing breakdown. Without official parameters in --params-dir it generates INSECURE development parameters (once, cached) and says so.',
      verify: 'verify a SnapDeals proof (partitions × 192 bytes) against update.json\'s public inputs (exit status 0 when valid, 1 when not)',
    },
    inputs: (c) => c.requiredOption('--update <file>', 'update.json (kiln update / kiln synth-snap): registered proof, comm_r_old, comm_d_new, comm_r_new, vanilla file'),
    proveInputs: (c) => c.option('--vanilla <file>', 'vanilla proofs instead of the one update.json names (a JSON array of base64 bincode PartitionProofs, or one raw element)'),
    proofHelp: 'the proof file',
    prove: (opts, common) => runProveSnap({ update: opts.update as string, vanilla: opts.vanilla as string | undefined, ...common }),
    verify: (opts, common) => runVerifySnap({ update: opts.update as string, ...common }),
  });
}
