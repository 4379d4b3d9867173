/**
 * How a CLI result names the parameters it was made or checked with. A proof made with INSECURE development
 * parameters (toxic waste from a public seed) verifies only against them and is never accepted on chain: every
 * result line that says "verified" or "valid" says that too.
 */
import type { ParamsSource } from '../kinds/params.js';

export const NEVER_ON_CHAIN = 'never accepted on chain';

/** "official parameters <path>" or "INSECURE development parameters <path>: never accepted on chain". */
export function paramsWords(source: ParamsSource, what = 'parameters'): string {
  return source.kind === 'dev' ? `INSECURE development ${what} ${source.path}: ${NEVER_ON_CHAIN}` : `official ${what} ${source.path}`;
}

/** What a `kiln verify…` command prints for its verdict. */
export function verdictLine(ok: boolean, source: ParamsSource): string {
  return ok ? `valid (${paramsWords(source, 'verifying key')})` : 'INVALID';
}
