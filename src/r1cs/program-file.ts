/**
 * The witness program's file (program.ts: the format): written in chunks, parsed with every count checked.
 */
import { FR_BYTES } from '../field/layout.js';
import { type ProgramSegment, type WitnessProgram, ProgramError } from './program.js';

// ---------------------------------------------------------------------------------------------
// Files: magic, u32 version, numInputs, numAux, numSlots, nCoeffs, nBlocks, nSegments, the
// segment table (4 u32 each), the block lengths (u32 words), coefficients (32 B each), blocks.

export const PROGRAM_MAGIC = new Uint8Array([0x4b, 0x49, 0x4c, 0x4e, 0x57, 0x50, 0x47, 0x00]); // "KILNWPG\0"
export const PROGRAM_FORMAT_VERSION = 1;
const PROGRAM_HEADER_WORDS = 7;

/** The file's bytes as chunks (no single buffer holds the whole program). */
export function programChunks(p: WitnessProgram): Uint8Array[] {
  const head = new Uint32Array(PROGRAM_HEADER_WORDS + p.segments.length * 4 + p.blocks.length);
  head.set([PROGRAM_FORMAT_VERSION, p.numInputs, p.numAux, p.numSlots, p.coeffs.length / FR_BYTES, p.blocks.length, p.segments.length]);
  let o = PROGRAM_HEADER_WORDS;
  for (const s of p.segments) {
    head.set([s.block, s.auxBase, s.inputBase, s.slotBase], o);
    o += 4;
  }
  for (const b of p.blocks) head[o++] = b.length;
  const u8 = (a: Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  return [PROGRAM_MAGIC, u8(head), p.coeffs, ...p.blocks.map(u8)];
}

/** Parses a program file; every count is checked against the file's length first. */
export function deserializeProgram(bytes: Uint8Array): WitnessProgram {
  const fail = (m: string): never => {
    throw new ProgramError(`witness program file: ${m}`);
  };
  if (bytes.length < PROGRAM_MAGIC.length + PROGRAM_HEADER_WORDS * 4) fail(`${bytes.length} bytes is too short`);
  for (let i = 0; i < PROGRAM_MAGIC.length; i++) if (bytes[i] !== PROGRAM_MAGIC[i]) fail('bad magic');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = PROGRAM_MAGIC.length;
  const u32 = (): number => {
    if (o + 4 > bytes.length) fail('truncated');
    const v = dv.getUint32(o, true);
    o += 4;
    return v;
  };
  const version = u32();
  if (version !== PROGRAM_FORMAT_VERSION) fail(`format version ${version}, expected ${PROGRAM_FORMAT_VERSION}`);
  const [numInputs, numAux, numSlots, nCoeffs, nBlocks, nSegments] = [u32(), u32(), u32(), u32(), u32(), u32()];
  if (nSegments < 1) fail('no segments');
  const tableBytes = (nSegments * 4 + nBlocks) * 4;
  if (o + tableBytes > bytes.length) fail(`truncated in the segment table (${nSegments} segments, ${nBlocks} blocks)`);
  const segments: ProgramSegment[] = [];
  for (let i = 0; i < nSegments; i++) {
    const s = { block: u32(), auxBase: u32(), inputBase: u32(), slotBase: u32() };
    if (s.block >= nBlocks) fail(`segment ${i} names block ${s.block} of ${nBlocks}`);
    segments.push(s);
  }
  const lengths: number[] = [];
  for (let i = 0; i < nBlocks; i++) lengths.push(u32());
  const expected = o + nCoeffs * FR_BYTES + lengths.reduce((t, n) => t + n * 4, 0);
  if (expected !== bytes.length) fail(`${bytes.length} bytes, the header describes ${expected}`);
  const coeffs = new Uint8Array(bytes.subarray(o, o + nCoeffs * FR_BYTES)); // a copy
  o += nCoeffs * FR_BYTES;
  const blocks = lengths.map((n) => {
    const words = new Uint32Array(n);
    new Uint8Array(words.buffer).set(bytes.subarray(o, o + n * 4));
    o += n * 4;
    return words;
  });
  return { numInputs, numAux, numSlots, coeffs, blocks, segments };
}
