/**
 * The slow twin of the native witness interpreter (native/src/witness/interp.hpp): a witness program
 * (program.ts) run over a tape with bigints.
 */
import { FR_BYTES, FR_MODULUS, mod, modInverse, readFr, writeFr } from '../field/layout.js';
import { WOP, WOP_NEG, WOP_REL, WOP_INP, WOP_INDEX_MASK, WOP_NONE, TARGET_INPUT, type WitnessProgram, ProgramError } from './program.js';

/**
 * The slow twin of the native interpreter: runs a program over a tape (canonical values) with
 * bigints and returns the full assignment as Montgomery Fr bytes, exactly as WitnessGenerator
 * lays it out. Throws ProgramError on a malformed program and 'DivisionByZero' like the gadget.
 */
export function interpretProgram(p: WitnessProgram, tape: readonly bigint[]): Uint8Array {
  if (tape.length !== p.numSlots) throw new ProgramError(`tape has ${tape.length} values, the program takes ${p.numSlots}`);
  const R = FR_MODULUS;
  const coeffs: bigint[] = [];
  for (let i = 0; i < p.coeffs.length / FR_BYTES; i++) coeffs.push(readFrCanonical(p.coeffs, i));
  const inputs: bigint[] = new Array(p.numInputs).fill(0n);
  const aux: bigint[] = new Array(p.numAux).fill(0n);
  inputs[0] = 1n;
  for (const [si, seg] of p.segments.entries()) {
    const words = p.blocks[seg.block];
    if (!words) throw new ProgramError(`segment ${si}: no block ${seg.block}`);
    const first = si === 0;
    let nextAux = first ? 0 : seg.auxBase;
    let nextInput = first ? 1 : seg.inputBase;
    // a segment reads the prologue (absolute) and itself (relative), nothing not yet written
    const absInputs = first ? Infinity : p.segments[1].inputBase;
    const absAux = first ? Infinity : p.segments[1].auxBase;
    const get = (o: number): bigint => {
      const idx = o & WOP_INDEX_MASK;
      const rel = (o & WOP_REL) !== 0;
      if (o & WOP_INP) {
        const i = (rel ? seg.inputBase : 0) + idx;
        if (i >= nextInput || (!rel && i >= absInputs)) throw new ProgramError(`segment ${si}: input ${i} is not readable here`);
        return inputs[i];
      }
      const j = (rel ? seg.auxBase : 0) + idx;
      if (j >= nextAux || (!rel && j >= absAux)) throw new ProgramError(`segment ${si}: aux ${j} is not readable here`);
      return aux[j];
    };
    const bit = (o: number): boolean => (get(o) !== 0n) !== ((o & WOP_NEG) !== 0);
    const slot = (o: number): bigint => {
      const s = ((o & WOP_REL) !== 0 ? seg.slotBase : 0) + (o & WOP_INDEX_MASK);
      if (s >= tape.length) throw new ProgramError(`segment ${si}: slot ${s} out of range`);
      return mod(tape[s], R);
    };
    const coeff = (o: number): bigint => {
      if (o === WOP_NONE) return 0n;
      if (o >= coeffs.length) throw new ProgramError(`coefficient ${o} out of range`);
      return coeffs[o];
    };
    let k = 0;
    while (k < words.length) {
      const h = words[k++];
      const op = h & 0xff;
      const toInput = (h & TARGET_INPUT) !== 0;
      const count = h >>> 9;
      const put = (v: bigint): void => {
        if (toInput) {
          if (nextInput >= p.numInputs) throw new ProgramError('too many inputs');
          inputs[nextInput++] = v;
        } else {
          if (nextAux >= p.numAux) throw new ProgramError('too many aux');
          aux[nextAux++] = v;
        }
      };
      const putBits = (x: bigint, n: number): void => {
        for (let i = 0; i < n; i++) put((x >> BigInt(i)) & 1n);
      };
      switch (op) {
        case WOP.INPUT:
          put(slot(words[k++]));
          break;
        case WOP.INPUT_BITS:
          putBits(slot(words[k++]), count);
          break;
        case WOP.BITS:
          putBits(get(words[k++]), count);
          break;
        case WOP.XOR:
        case WOP.AND:
        case WOP.ANDNOT:
        case WOP.NOR: {
          const a = get(words[k++]) !== 0n;
          const b = get(words[k++]) !== 0n;
          const r = op === WOP.XOR ? a !== b : op === WOP.AND ? a && b : op === WOP.ANDNOT ? a && !b : !a && !b;
          put(r ? 1n : 0n);
          break;
        }
        case WOP.CH:
        case WOP.MAJ: {
          const a = bit(words[k++]);
          const b = bit(words[k++]);
          const c = bit(words[k++]);
          const r = op === WOP.CH ? (a && b) !== (!a && c) : ((a && b) !== (a && c)) !== (b && c);
          put(r ? 1n : 0n);
          break;
        }
        case WOP.ADDMANY: {
          const nbits = count & 0xff;
          const nops = count >>> 8;
          let sum = 0n;
          for (let o = 0; o < nops; o++) for (let i = 0; i < 32; i++) if (bit(words[k++])) sum += 1n << BigInt(i);
          putBits(sum, nbits);
          break;
        }
        case WOP.PACK: {
          let x = 0n;
          for (let i = 0; i < count; i++) if (bit(words[k++])) x |= 1n << BigInt(i);
          put(x);
          break;
        }
        case WOP.LC: {
          let acc = 0n;
          for (let i = 0; i < count; i++) {
            const v = get(words[k++]);
            acc += coeff(words[k++]) * v;
          }
          put(acc % R);
          break;
        }
        case WOP.ADD:
          put((get(words[k++]) + get(words[k++])) % R);
          break;
        case WOP.COPY:
          put(get(words[k++]));
          break;
        case WOP.MUL:
          put((get(words[k++]) * get(words[k++])) % R);
          break;
        case WOP.SQR: {
          const a = get(words[k++]);
          put((a * a) % R);
          break;
        }
        case WOP.SQADD: {
          const t = get(words[k++]) + coeff(words[k++]);
          put((t * t) % R);
          break;
        }
        case WOP.MULADD: {
          const a = get(words[k++]);
          const b = get(words[k++]);
          const pre = coeff(words[k++]);
          const post = coeff(words[k++]);
          put((a * (b + pre) + post) % R);
          break;
        }
        case WOP.INV: {
          const a = get(words[k++]);
          if (a === 0n) throw new ProgramError('DivisionByZero');
          put(modInverse(a, R));
          break;
        }
        case WOP.SELECT: {
          const c = bit(words[k++]);
          const x = get(words[k++]);
          const y = get(words[k++]);
          put(c ? x : y);
          break;
        }
        default:
          throw new ProgramError(`segment ${si}: unknown opcode ${op} at word ${k - 1}`);
      }
    }
    const end = si + 1 < p.segments.length ? p.segments[si + 1] : undefined;
    if (end && si > 0 && (nextAux !== end.auxBase || nextInput !== end.inputBase)) {
      throw new ProgramError(`segment ${si} wrote up to aux ${nextAux} / input ${nextInput}, the next starts at ${end.auxBase} / ${end.inputBase}`);
    }
  }
  const out = new Uint8Array((p.numInputs + p.numAux) * FR_BYTES);
  for (let i = 0; i < p.numInputs; i++) writeFr(out, i, inputs[i]);
  for (let j = 0; j < p.numAux; j++) writeFr(out, p.numInputs + j, aux[j]);
  return out;
}

function readFrCanonical(buf: Uint8Array, i: number): bigint {
  return readFr(buf, i);
}
