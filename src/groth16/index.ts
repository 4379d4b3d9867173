/** The Groth16 layer: keys (bellperson .params / .vk), proofs, verifier, prover, INSECURE dev setup. */
export * from './keys.js';
export * from './proof.js';
export * from './verifier.js';
export * from './prover.js';
export * from './queries.js';
export {
  DEV_SETUP_DEFAULT_SEED,
  devParamsPath,
  insecureDevSetup,
  insecureToxicWaste,
  loadOrCreateDevParams,
  setupWithToxicWaste,
  type DevSetupOptions,
  type ToxicWaste,
} from './setup.js';
