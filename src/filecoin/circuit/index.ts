/** Filecoin circuits: neptune's legacy Poseidon gadget, Merkle inclusion (PoR), the StackedDrg PoRep partition circuit. */
export { poseidonHashCircuit, poseidonCircuitConstraintCount } from './poseidon.js';
export {
  pick,
  select,
  insert,
  porCircuit,
  blankAuthPath,
  hashMultiLeafCircuit,
  sha256HashMultiLeafCircuit,
  type AuthPath,
  type AuthPathLevel,
  type MerkleHasher,
  type RootArg,
} from './por.js';
export {
  StackedCircuit,
  createLabelCircuit,
  hashSingleColumn,
  blankStackedWitness,
  stackedParamsFor,
  stackedTestParams,
  stackedBlankCircuit,
  stackedShapeCircuit,
  stackedCircuitFor,
  challengeWitness,
  type PoseidonTreeShape,
  type StackedCircuitParams,
  type StackedWitness,
  type ChallengeWitness,
  type ColumnWitness,
} from './stacked.js';
