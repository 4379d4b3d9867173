/** The Groth16 layer: keys (bellperson .params / .vk), the native .params loader, proofs, verifier,
 *  prover, INSECURE dev setup. */
export * from './keys.js';
export {
  checkExpectedCounts,
  inspectParamsFile,
  loadParams,
  loadParamsFile,
  type ExpectedCounts,
  type LoadParamsOptions,
  type NativeLoadOptions,
} from './params-native.js';
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
