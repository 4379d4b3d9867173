/** Bellperson-compatible circuit gadgets (boolean, UInt32/64, MultiEq, SHA-256, num, multipack). */
export { SynthesisError, type SynthesisErrorKind, FR_CAPACITY, FR_NUM_BITS } from './errors.js';
export {
  AllocatedBit,
  Boolean,
  u64IntoBooleanVecLe,
  fieldIntoAllocatedBitsLe,
  fieldIntoBooleanVecLe,
} from './boolean.js';
export { MultiEq, withMultiEq } from './multieq.js';
export { UInt32 } from './uint32.js';
export { UInt64 } from './uint64.js';
export {
  sha256,
  sha256BlockNoPadding,
  sha256CompressionFunction,
  sha256Iv,
  SHA256_IV,
  SHA256_ROUND_CONSTANTS,
} from './sha256.js';
export { AllocatedNum, Num } from './num.js';
export { packIntoInputs, packBits, bytesToBits, bytesToBitsLe, computeMultipacking } from './multipack.js';
export { bytesIntoBooleanVecBe, reverseBitNumbering } from './bits.js';
