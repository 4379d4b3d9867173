/**
 * `kiln prove-post`, `kiln verify-post` and `kiln circuit-info --circuit winning-*|wpost-*`: WinningPoSt and
 * WindowPoSt from vanilla proof files (cuzk-bench's format: a JSON array of base64 bincode
 * `FallbackPoStSectorProof`s, as `kiln gen-vanilla` / `kiln synth-post` write; or one raw bincode element) on this
 * machine, through the same Engine, planner, circuit provider and parameter loader as the daemon (the proof is
 * verified before it is returned). Without official parameters in --params-dir, INSECURE development parameters
 * are generated once into --cache-dir and said so.
 */
import { readOptionFile } from '../util/files.js';
import { commandProgress } from '../util/progress.js';
import { cliTuning } from './options.js';
import { parseMinerId } from '../filecoin/registry.js';

import { type Command, InvalidArgumentError } from 'commander';
import type { Backend } from '../backend/backend.js';
import type { PoStProofInfo } from '../filecoin/post/types.js';
import type { KindOptions } from '../kinds/kind.js';
import { verdictLine } from './insecure.js';
import { type CliKind, type KindLocalProof, type KindProveOptions, printProof, proveKindLocally, registerProveVerifyPair, sizesInfo, verifyingKeyOf } from './kind-commands.js';

export interface PoStCommandDefaults {
  paramsDir: () => string;
  cacheDir: () => string;
  selectBackend: (name: string, opts: { device: number }) => Backend;
}

/** Runs `fn` (a reader of a file an option names, whose errors start with the file's name) with the option in
 *  front of its errors: `--vanilla v.json: …`. */
export function withOption<T>(option: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw new Error(`${option} ${(e as Error).message}`);
  }
}

/** 32 bytes from hex (optional 0x). */
export function parseRandomness(hex: string): Uint8Array {
  const h = hex.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{64}$/.test(h)) throw new InvalidArgumentError(`randomness must be 32 bytes of hex (64 digits), got '${hex}'`);
  return new Uint8Array(Buffer.from(h, 'hex'));
}

/** The proof: --registered-proof when given, else what the vanilla file's sector proofs determine by their size. */
async function postInfo(type: string, registeredProof: string | undefined, vanilla: { file: string; elements: readonly Uint8Array[] }): Promise<PoStProofInfo> {
  if (type !== 'window' && type !== 'winning') throw new InvalidArgumentError(`--type must be window or winning, got '${type}'`);
  const { parsePoStProof } = await import('../kinds/post/post.js');
  const { postProofName } = await import('../filecoin/post/registry.js');
  if (registeredProof === undefined) {
    const { postProofForVanilla } = await import('../filecoin/post/vanilla.js');
    const bytes = vanilla.elements[0]?.length ?? 0;
    const found = postProofForVanilla(type, bytes);
    if (found === undefined) throw new InvalidArgumentError(`--vanilla ${vanilla.file}: ${bytes}-byte sector proofs match no ${type} PoSt proof; give --registered-proof`);
    return found;
  }
  const info = parsePoStProof(registeredProof);
  if (!info) throw new InvalidArgumentError(`--registered-proof '${registeredProof}' is not a RegisteredPoStProof (0–14, or a name such as StackedDrgWindow2KiBV1_1)`);
  if (info.type !== type) throw new InvalidArgumentError(`--registered-proof ${postProofName(info)} is a ${info.type === 'winning' ? 'WinningPoSt' : 'WindowPoSt'} proof, not --type ${type}`);
  return info;
}

const nonNegative = (name: string, v: string | undefined, dflt = 0): number => {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError(`${name} must be a non-negative integer, got '${v}'`);
  return Number(v);
};

export interface ProvePoStOptions {
  type: string;
  vanilla: string;
  randomness: string;
  minerId?: string;
  registeredProof?: string;
  partitionIndex?: string;
  out?: string;
  paramsDir: string;
  cacheDir: string;
  backend: Backend;
  json: boolean;
}

export type PoStLocalProof = KindLocalProof;

/** Proves one PoSt partition through an in-process engine (dev parameters allowed, INSECURE, and said so). */
export async function provePoStLocally(
  req: { info: PoStProofInfo; vanillaProofs: Uint8Array[]; randomness: Uint8Array; minerId: number; partitionIndex: number },
  o: KindProveOptions,
): Promise<PoStLocalProof> {
  const { ProofKind } = await import('../engine/types.js');
  const makeKind = async (opts: KindOptions): Promise<CliKind> => (await import('../kinds/post/planner.js')).createPoStKind(opts);
  const proofKind = req.info.type === 'winning' ? ProofKind.WINNING_POST : ProofKind.WINDOW_POST_PARTITION;
  const { info, vanillaProofs, randomness, minerId, partitionIndex } = req;
  return proveKindLocally(makeKind, { proofKind, registeredProof: info.id, vanillaProofs, randomness, minerId, partitionIndex }, o);
}

export async function runProvePoSt(o: ProvePoStOptions): Promise<void> {
  const ui = commandProgress(o.json);
  const say = ui.say;
  const randomness = parseRandomness(o.randomness);
  const minerId = parseMinerId('--miner-id', o.minerId);
  const partitionIndex = nonNegative('--partition-index', o.partitionIndex);
  const { readVanillaFile } = await import('../filecoin/post/vanilla.js');
  const { postProofName, postCircuitId } = await import('../filecoin/post/registry.js');
  const { describeBackend } = await import('../backend/select.js');
  const vanillaProofs = withOption('--vanilla', () => readVanillaFile(o.vanilla));
  const info = await postInfo(o.type, o.registeredProof, { file: o.vanilla, elements: vanillaProofs });
  say(`${postProofName(info)} (${postCircuitId(info)}): ${vanillaProofs.length} vanilla proof(s) from ${o.vanilla}, backend ${describeBackend(o.backend)}`);
  const r = await provePoStLocally({ info, vanillaProofs, randomness, minerId, partitionIndex }, { ...o, say, progress: ui.progress, label: `--vanilla ${o.vanilla}` }).finally(ui.stop);
  printProof(o, r, postProofName(info));
}

export interface VerifyPoStOptions {
  type: string;
  vanilla: string;
  randomness: string;
  registeredProof?: string;
  partitionIndex?: string;
  proof: string;
  paramsDir: string;
  cacheDir: string;
}

/**
 * Verifies a PoSt proof: the public inputs come from the sectors' ids and comm_r's (read from the vanilla file),
 * the randomness and the partition index, as a chain verifier derives them. Returns true when valid.
 */
export async function runVerifyPoSt(o: VerifyPoStOptions): Promise<boolean> {
  const randomness = parseRandomness(o.randomness);
  const partitionIndex = nonNegative('--partition-index', o.partitionIndex);
  const { readVanillaFile, parsePoStSectorProof } = await import('../filecoin/post/vanilla.js');
  const { postVerifyingKeySource, verifyPoSt } = await import('../kinds/post/post.js');
  const { postProofName } = await import('../filecoin/post/registry.js');
  const elements = withOption('--vanilla', () => readVanillaFile(o.vanilla));
  const info = await postInfo(o.type, o.registeredProof, { file: o.vanilla, elements });
  const sectors = elements.map((b, k) => {
    try {
      return parsePoStSectorProof(b, info);
    } catch (e) {
      throw new Error(`--vanilla ${o.vanilla}: element ${k}: ${(e as Error).message}`);
    }
  });
  const source = postVerifyingKeySource(info, o.paramsDir, o.cacheDir, undefined, cliTuning().postShapeCache !== false);
  const vk = await verifyingKeyOf(source, postProofName(info));
  const proof = new Uint8Array(readOptionFile('--proof', o.proof));
  const ok = await verifyPoSt(info, sectors, { randomness, partitionIndex }, proof, vk);
  console.log(verdictLine(ok, source));
  return ok;
}

/** `kiln circuit-info --circuit winning-32g|wpost-32g|…`: the PoSt circuit counted without storing. */
export async function runPoStCircuitInfo(circuitId: string): Promise<Record<string, unknown>> {
  const { postProofByCircuitId, postProofName, postParamsFileName, postParamsIdentifier } = await import('../filecoin/post/registry.js');
  const { postCircuitSizes } = await import('../kinds/post/post.js');
  const info = postProofByCircuitId(circuitId);
  if (!info) throw new InvalidArgumentError(`unknown circuit '${circuitId}' (winning-2k … winning-64g, wpost-2k … wpost-64g)`);
  const t0 = performance.now();
  const s = postCircuitSizes(info);
  return {
    circuitId,
    registeredProof: postProofName(info),
    sectorSize: info.size.sectorSize,
    sectorCount: info.sectorCount,
    challengeCount: info.challengeCount,
    ...sizesInfo(s),
    paramsIdentifier: postParamsIdentifier(info),
    paramsFile: postParamsFileName(info),
    countMs: Math.round(performance.now() - t0),
    counted: 'one and two sectors counted (no storage), the whole circuit extrapolated: sectors are identical',
  };
}

/** Registers prove-post and verify-post on the `kiln` program. */
export function registerPostCommands(program: Command, d: PoStCommandDefaults): void {
  const s = (opts: Record<string, unknown>, k: string): string | undefined => opts[k] as string | undefined;
  const inputs = (opts: Record<string, unknown>) => ({
    type: s(opts, 'type')!,
    vanilla: s(opts, 'vanilla')!,
    randomness: s(opts, 'randomness')!,
    registeredProof: s(opts, 'registeredProof'),
    partitionIndex: s(opts, 'partitionIndex'),
  });
  registerProveVerifyPair(program, d, {
    names: { prove: 'prove-post', verify: 'verify-post' },
    descriptions: {
      prove:
        'WinningPoSt or WindowPoSt (one partition): prove from vanilla proofs + randomness, verify, write the 192-byte proof and ' +
        'print the timing breakdown. Without official parameters in --params-dir it generates INSECURE development parameters ' +
        '(once, cached) and says so.',
      verify: 'verify a WinningPoSt / WindowPoSt proof against its sectors (ids and comm_r from the vanilla file) and randomness (exit status 0 when valid, 1 when not)',
    },
    inputs: (c) =>
      c
        .requiredOption('--type <type>', 'window | winning')
        .requiredOption('--vanilla <file>', 'vanilla proofs: a JSON array of base64 bincode FallbackPoStSectorProofs (cuzk-bench, kiln gen-vanilla / synth-post) or one raw element')
        .requiredOption('--randomness <hex>', '32-byte randomness as hex (a field element: Curio masks the last byte with 0x3f)')
        .option('--registered-proof <id|name>', 'RegisteredPoStProof: 0–4 Winning, 5–9 Window V1, 10–14 Window V1_1, or a name such as StackedDrgWindow2KiBV1_1 (default: the one the vanilla proofs\' size determines: Winning…V1, Window…V1_1)')
        .option('--partition-index <k>', 'WindowPoSt partition index (V1 challenges depend on it)', '0'),
    proveInputs: (c) => c.option('--miner-id <f0…|n>', 'the miner, an ID address or actor id (for the record; the circuit does not use it)', '0'),
    proofHelp: 'the 192-byte proof',
    prove: (opts, common) => runProvePoSt({ ...inputs(opts), minerId: s(opts, 'minerId'), ...common }),
    verify: (opts, common) => runVerifyPoSt({ ...inputs(opts), ...common }),
  });
}
