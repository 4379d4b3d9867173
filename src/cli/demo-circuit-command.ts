/**
 * `kiln demo-circuit`: proves the built-in synthetic DemoCircuit (src/r1cs/demo-circuit.ts) with
 * cached INSECURE development parameters: shape, witness, prove, verify (fast; no Filecoin data).
 */
import { spanTreeText } from './options.js';
import { existsSync } from 'node:fs';
import type { Backend } from '../backend/backend.js';
import { describeBackend } from '../backend/select.js';
import { encodeProof, loadOrCreateDevParams, prepareVerifyingKey, prove, verifyProof } from '../groth16/index.js';
import { CompiledCircuit } from '../groth16/compiled.js';
import { devParamsPath } from '../groth16/setup.js';
import { DemoCircuit } from '../r1cs/demo-circuit.js';
import { recordShape } from '../r1cs/shape.js';
import { WitnessGenerator } from '../r1cs/witness.js';
import { Span } from '../util/timing.js';
import { paramsWords } from './insecure.js';

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

  const compiled = await root.time('shape', () => new CompiledCircuit(recordShape((cs) => circuit.synthesize(cs))));
  const { shape } = compiled;
  log(`  shape: ${shape.numConstraints} constraints, ${shape.numInputs} inputs (with ONE), ${shape.numAux} aux`);

  const cached = existsSync(devParamsPath(compiled, o.cacheDir));
  log(`  parameters: ${cached ? 'cached' : 'generating'} INSECURE development parameters in ${o.cacheDir}`);
  const params = await root.time('srs', () => loadOrCreateDevParams(compiled, o.backend, o.cacheDir));

  const witness = await root.time('synth', () => {
    const wg = new WitnessGenerator(shape.numInputs);
    circuit.synthesize(wg);
    return { assignment: wg.assignment(), inputs: wg.inputs() };
  });

  const proving = root.child('prove');
  const result = await prove(params, compiled, witness.assignment, o.backend, proving);
  proving.end();

  const ok = await root.time('verify', () => verifyProof(prepareVerifyingKey(params.vk), result.proof, witness.inputs));
  root.end();
  const proofBytes = encodeProof(result.proof);
  if (o.json) {
    console.log(JSON.stringify({ verified: ok, proof: Buffer.from(proofBytes).toString('hex'), insecure: true, spans: root.toJSON() }, null, 2));
  } else {
    console.log(spanTreeText(root));
    console.log(`proof (${proofBytes.length} B): ${Buffer.from(proofBytes).toString('hex')}`);
    console.log(ok ? `verified: yes (${paramsWords({ kind: 'dev', path: devParamsPath(compiled, o.cacheDir) })})` : 'verified: NO');
  }
  if (!ok) throw new Error('the proof did not verify');
}
