/**
 * The ONE place where the engine reaches the StackedDrg PoRep circuit (src/filecoin/circuit/).
 * Kept behind a small loader so tests can substitute a fake circuit module.
 */
import { stackedCircuitFor, stackedShapeCircuit } from '../../filecoin/circuit/index.js';
import type { C1Output } from '../../filecoin/c1.js';
import type { SealProofInfo } from '../../filecoin/registry.js';
import type { Circuit } from '../../r1cs/cs.js';

export interface StackedCircuitModule {
  /** The circuit of partition `partition` of a parsed C1, with its witness. */
  stackedCircuitFor(c1: C1Output, partition: number): Circuit;
  /** The blank (shape-mode) partition circuit of a registered seal proof. */
  stackedShapeCircuit(info: SealProofInfo): Circuit;
}

export class CircuitUnavailableError extends Error {
  constructor(detail: string) {
    super(`PoRep circuit not available: ${detail}`);
    this.name = 'CircuitUnavailableError';
  }
}

const stacked: StackedCircuitModule = { stackedCircuitFor, stackedShapeCircuit };

export function loadStackedCircuit(): Promise<StackedCircuitModule> {
  return Promise.resolve(stacked);
}
