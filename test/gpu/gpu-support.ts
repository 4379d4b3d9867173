/**
 * What the GPU test files share: the capability probe, the reason to skip (no GPU, or no CPU addon to compare
 * with), a log line in the TAP output and hex for messages.
 */
import { cudaCapabilities } from '../../src/backend/cuda.js';
import { nativeAvailable } from '../../src/backend/native.js';

export const probe = cudaCapabilities();
export const skip: string | false = !probe.cuda ? `no GPU: ${probe.error ?? 'unknown'}` : !nativeAvailable() ? 'CPU addon not built' : false;
export const log = (s: string): void => {
  process.stdout.write(`# ${s}\n`);
};
export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
