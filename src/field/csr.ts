/**
 * The sparse-matrix layout over Fr shared by the constraint systems (r1cs/shape.ts compiles to it),
 * the backends (csrMatVec, provePartition) and the addons (native/API.md).
 */

/** Sparse matrix in CSR form over Fr. Coefficients are stored once in a table (`coeffs`, Montgomery
 *  Fr, 32 B each) and referenced by index, because circuits reuse few distinct constants. */
export interface CsrMatrix {
  rows: number;
  cols: number;
  /** rows + 1 offsets into colIdx / coeffIdx. */
  rowPtr: Uint32Array;
  colIdx: Uint32Array;
  coeffIdx: Uint32Array;
  coeffs: Uint8Array;
}
