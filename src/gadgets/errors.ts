/**
 * Synthesis errors, as bellperson's `SynthesisError` variants that gadgets raise. They are thrown
 * (circuit synthesis aborts), never returned.
 */
export type SynthesisErrorKind = 'AssignmentMissing' | 'Unsatisfiable' | 'DivisionByZero';

export class SynthesisError extends Error {
  constructor(
    readonly kind: SynthesisErrorKind,
    detail?: string,
  ) {
    super(detail === undefined ? kind : `${kind}: ${detail}`);
    this.name = 'SynthesisError';
  }
}

/** `value.get()?` of bellperson: the value, or AssignmentMissing. Only called inside value closures. */
export function required<T>(value: T | undefined): T {
  if (value === undefined) throw new SynthesisError('AssignmentMissing');
  return value;
}

/** BLS12-381 scalar field: NUM_BITS = 255, CAPACITY = NUM_BITS − 1 (ff's PrimeField constants). */
export const FR_NUM_BITS = 255;
export const FR_CAPACITY = 254;
