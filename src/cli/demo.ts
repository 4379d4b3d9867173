/**
 * The main job (`kiln demo`): kiln seals a 2 KiB sector itself (random data), proves its C1 with the
 * exact StackedDrg circuit, verifies the proof against the C1's public inputs, and prints where the
 * time went. `kiln demo-circuit` proves the built-in synthetic demo circuit instead (fast).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend } from '../backend/backend.js';
import { describeBackend } from '../backend/select.js';
import { parseCommit2In } from '../filecoin/c1.js';
import { loadPorepVerifyingKey, verifyPorep } from '../filecoin/porep.js';
import { encodeProof, loadOrCreateDevParams, prepareVerifyingKey, prove, verifyProof } from '../groth16/index.js';
import { devParamsPath } from '../groth16/setup.js';
import { DemoCircuit } from '../r1cs/demo.js';
import { recordShape } from '../r1cs/shape.js';
import { WitnessGenerator } from '../r1cs/witness.js';
import { existsSync } from 'node:fs';
import { Span, formatSpanTree } from '../util/timing.js';
import { proveC1 } from './porep.js';
import { runSeal } from './seal.js';

export interface MainJobOptions {
  paramsDir: string;
  cacheDir: string;
  backend: Backend;
  json: boolean;
  /** Keep the sealed C1 and the proof here (default: the cache directory). */
  keepDir?: string;
}

export async function runMainJob(o: MainJobOptions): Promise<void> {
  const say = (m: string): void => {
    if (!o.json) console.error(m);
  };
  const dir = o.keepDir ?? join(o.cacheDir, 'demo');
  mkdirSync(dir, { recursive: true });
  const c1File = join(dir, 'sealed-2KiB.commit2in.json');
  const root = new Span('demo: seal + prove + verify (2 KiB)');
  say('kiln demo: sealing a 2 KiB sector with random data, then proving and verifying its C2');
  const text = await root.time('seal', () => runSeal({ sectorSize: '2KiB', out: c1File }, true));
  const c1 = await root.time('parse', () => parseCommit2In(text).phase1Out);
  say(`  sealed: comm_r ${Buffer.from(c1.commR).toString('hex')} (C1 in ${c1File})`);
  const { bytes, source } = await proveC1(c1, { ...o, say }, root);
  const vk = await loadPorepVerifyingKey(source);
  const ok = await root.time('verify (independent, from the verifying key)', () => verifyPorep(c1, bytes, vk).every(Boolean));
  root.end();
  const hex = Buffer.from(bytes).toString('hex');
  if (o.json) {
    console.log(JSON.stringify({ verified: ok, proof: hex, c1: c1File, params: source, spans: root.toJSON() }, null, 2));
  } else {
    console.log(formatSpanTree(root));
    console.log(`proof (${bytes.length} B): ${hex}`);
    console.log(ok ? 'verified: yes' : 'verified: NO');
  }
  if (!ok) throw new Error('the proof did not verify');
}

export interface DemoRun {
  constraints: number;
  seed: number;
  backend: Backend;
  cacheDir: string;
  json: boolean;
}

/** The synthetic demo circuit: shape, witness, (cached) dev parameters, prove, verify. */
export async function runDemoCircuit(o: DemoRun): Promise<void> {
  const circuit = new DemoCircuit({ constraints: o.constraints, seed: o.seed });
  const root = new Span('demo-circuit');
  const log = (msg: string): void => {
    if (!o.json) console.log(msg);
  };
  log(`kiln demo-circuit: ${o.constraints} constraints, backend ${describeBackend(o.backend)}`);

  const shape = await root.time('shape', () => recordShape((cs) => circuit.synthesize(cs)));
  log(`  shape: ${shape.numConstraints} constraints, ${shape.numInputs} inputs (with ONE), ${shape.numAux} aux`);

  const cached = existsSync(devParamsPath(shape, o.cacheDir));
  log(`  parameters: ${cached ? 'cached' : 'generating'} INSECURE development parameters in ${o.cacheDir}`);
  const params = await root.time('srs', () => loadOrCreateDevParams(shape, o.backend, o.cacheDir));

  const witness = await root.time('synth', () => {
    const wg = new WitnessGenerator(shape.numInputs);
    circuit.synthesize(wg);
    return { assignment: wg.assignment(), inputs: wg.inputs() };
  });

  const proving = root.child('prove');
  const result = await prove(params, shape, witness.assignment, o.backend, proving);
  proving.end();

  const ok = await root.time('verify', () => verifyProof(prepareVerifyingKey(params.vk), result.proof, witness.inputs));
  root.end();
  const proofBytes = encodeProof(result.proof);
  if (o.json) {
    console.log(JSON.stringify({ verified: ok, proof: Buffer.from(proofBytes).toString('hex'), spans: root.toJSON() }, null, 2));
  } else {
    console.log(formatSpanTree(root));
    console.log(`proof (${proofBytes.length} B): ${Buffer.from(proofBytes).toString('hex')}`);
    console.log(ok ? 'verified: yes' : 'verified: NO');
  }
  if (!ok) throw new Error('the proof did not verify');
}
