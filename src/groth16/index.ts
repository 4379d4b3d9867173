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
  devSetupOnDevice,
  ensureDevParamsFile,
  insecureDevSetup,
  insecureToxicWaste,
  loadOrCreateDevParams,
  setupConstants,
  setupWithToxicWaste,
  writeInsecureDevParamsCpu,
  type DevParamsFileOptions,
  type DevSetupOptions,
  type EnsureDevParamsOptions,
  type EnsureDevParamsResult,
  type SetupConstants,
  type ToxicWaste,
} from './setup.js';
export {
  writeInsecureDevParamsGpu,
  type DevSetupProgress,
  type GpuDevParamsOptions,
  type GpuDevParamsResult,
} from './setup-gpu.js';
