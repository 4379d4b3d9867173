/**
 * The device-memory plan of one circuit on one GPU: what stays resident on the device and
 * what streams from pinned host memory, sized so that a 32 GiB circuit proves on a card of 16 or 24 GiB
 * and nothing changes on a card that holds everything. A pure function of sizes (the circuit's
 * footprint, the bytes the plan may use): tested in CI without a GPU; the CUDA backend
 * (src/backend/cuda.ts) makes one per circuit it loads and hands its numbers to the addon
 * (native/cuda/partition.cu provePartition's plan, msm_run.hpp's chunked MSMs).
 *
 * What a partition proof holds on the device (n = 2^logN, W = the witness, 32 B per element):
 *   resident   the NTT twiddles (n/2 · 32 B), the coefficient tables and the A/B query indices,
 *              the matrices and SRS sections the plan keeps there
 *   phase 1    the witness (twice with `prefetchWitness`: the next proof's copy overlaps this one's
 *              compute), the quotient's buffers (4: a, b, c formed first; 3: one at a time, transforms
 *              out of place; 2: in place), the staging slots of streamed data
 *   phase 2    the witness (as above), h, the staging slots, the MSMs' scratch (their buckets and one
 *              chunk's sort and accumulation; the addon sizes its chunks to this budget)
 * The plan starts from the smallest that works (everything streamed, two quotient buffers, small
 * slots, no prefetch) and spends what is left in order of time saved per byte: the matrices resident
 * (their copy is exposed at the start of every proof), the SRS sections resident (the copy-bound ones
 * first: l, b_g2, a, b_g1, then h, whose copy hides under its own MSM), bigger staging slots (bigger
 * MSM chunks), a third quotient buffer (no bit-reversal passes), the witness prefetch, a fourth
 * quotient buffer, and the rest to the MSMs' scratch. When the MSMs' scratch covers a single pass over
 * every section, the budget is "as needed" (0): the addon then runs each MSM in one pass, as before.
 */
import { fmtBytes } from '../util/bytes.js';

export type SectionName = 'h' | 'l' | 'a' | 'b_g1' | 'b_g2';
export const SECTION_NAMES: readonly SectionName[] = ['h', 'l', 'a', 'b_g1', 'b_g2'];
const G1 = 96;
const G2 = 192;
const FR = 32;
const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** The sizes of a circuit that its device memory depends on. */
export interface CircuitFootprint {
  /** Domain 2^logN. */
  logN: number;
  /** Witness elements (inputs + aux). */
  numVars: number;
  /** Bytes of the CSR matrices A, B, C on the device: rowPtr, colIdx, coeffIdx (streamable). */
  matrixBytes: number;
  /** Bytes that stay on the device with any plan: the coefficient tables and the A/B query indices. */
  fixedBytes: number;
  /** Points per SRS section (h, l, a, b_g1 in G1; b_g2 in G2). */
  sections: Record<SectionName, number>;
}

export type Placement = 'resident' | 'streamed';

export interface DevicePlan {
  /** Whether the circuit fits at all (with everything streamed). */
  feasible: boolean;
  /** Device bytes of the smallest plan (what a GPU needs for this circuit at least). */
  neededBytes: number;
  budgetBytes: number;
  matrices: Placement;
  sections: Record<SectionName, Placement>;
  quotientBuffers: 2 | 3 | 4;
  prefetchWitness: boolean;
  /** The MSMs' scratch budget; 0: as much as a single pass over every section needs (it fits). */
  msmScratchBytes: number;
  /** Copies of the h section kept on the device (precomputed multiples: the CUDA addon's precomputeBases,
   *  made before the circuit's first proof); 1: the section only. Only a resident h with a single-pass MSM
   *  scratch and a section's worth of room besides gets them. */
  hCopies: number;
  /** Staging slots for the streamed SRS chunks while the MSMs run (0 when no section streams); an
   *  MSM chunk of a streamed section fills one slot. */
  slots: number;
  slotBytes: number;
  /** The two staging slots of streamed matrix rows while a, b and c are formed (0 when resident). */
  matrixSlotBytes: number;
  /** Device bytes kept between proofs: twiddles, fixed tables, resident matrices and sections. */
  residentBytes: number;
  /** Bytes copied host → device per partition proof (streamed sections and matrices). */
  streamedBytesPerPartition: number;
  /** Pinned host bytes holding the streamed sections (the matrices stay in the shape's arrays). */
  hostBytes: number;
  /** Peak device bytes of one proof besides the resident ones. */
  workingBytes: number;
  /** One line for the status. */
  summary: string;
}

export const sectionBytes = (s: SectionName, points: number): number => points * (s === 'b_g2' ? G2 : G1);

/** The MSM scratch the smallest plan gives: a quarter of a single pass's, within [160 MiB, 768 MiB]
 *  (the addon's chunks shrink to fit, down to 4,096 points). */
export const MIN_MSM_SCRATCH = 768 * MiB;
export const minMsmScratch = (fp: CircuitFootprint): number => Math.min(MIN_MSM_SCRATCH, Math.max(160 * MiB, Math.floor(singlePassScratch(fp) / 4)));
/** Staging of the SRS chunks: two or three slots of 64 MiB up to 1 GiB (a slot holds one MSM chunk;
 *  with three, the copies of the sparse MSMs' chunks run ahead under the dense h MSM's compute); the
 *  matrices' rows: two slots of 64 MiB. */
export const MIN_SLOT = 64 * MiB;
export const MAX_SLOT = 1 * GiB;
export const MATRIX_SLOT = 64 * MiB;

/**
 * Scratch of one MSM chunk of `points` points with window c (native/cuda/msm.cu msm_chunk_scratch:
 * the same model, kept equal by test/device-plan.test.ts's figures), and the buckets kept across
 * the chunks of a run.
 */
export function msmChunkScratch(curve: 1 | 2, points: number, c: number): number {
  const X = curve === 1 ? 192 : 384;
  let b = 40 * points + 2 * 80000 * X + 32 * MiB;
  if (c > 0) {
    const W = Math.ceil(256 / c);
    const nb = W * 2 ** (c - 1);
    const total = points * W;
    b += 16 * total + Math.floor(total / 8) + 20 * nb + (Math.floor(total / 64) + Math.floor(total / 1024) + 2 * nb) * X;
  }
  return b;
}
export function msmPersistent(curve: 1 | 2, c: number): number {
  const X = curve === 1 ? 192 : 384;
  if (c === 0) return 2 * X;
  const nb = Math.ceil(256 / c) * 2 ** (c - 1);
  return nb * X + Math.floor((nb * X) / 8) + 2 * X;
}
/** The window a single pass over m full-width points takes (msm.cu pick_window's model). */
export function pickWindow(m: number): number {
  let best = 4;
  let bestCost = Infinity;
  for (let c = 4; c <= 20; c++) {
    const cost = Math.ceil(256 / c) * (m + 25 * 2 ** (c - 1));
    if (cost < bestCost) {
      bestCost = cost;
      best = c;
    }
  }
  return best;
}
/** Scratch of a single pass over every section (the largest of the five MSMs, the others' buckets
 *  beside it), with all scalars full-width: the "as needed" budget. */
export function singlePassScratch(fp: CircuitFootprint): number {
  let most = 0;
  let held = 0;
  for (const s of SECTION_NAMES) {
    const n = fp.sections[s];
    const curve = s === 'b_g2' ? 2 : 1;
    const c = pickWindow(n);
    held += msmPersistent(curve, c);
    most = Math.max(most, msmChunkScratch(curve, n, c));
  }
  return held + most;
}

interface Config {
  matrices: Placement;
  sections: Record<SectionName, Placement>;
  q: 2 | 3 | 4;
  prefetch: boolean;
  slotBytes: number;
  slots: number;
  msm: number;
  /** Copies of a resident h (precomputed multiples). */
  hCopies: number;
}

function measure(fp: CircuitFootprint, k: Config): { resident: number; p1: number; p2: number; streamed: number; host: number } {
  const n = 2 ** fp.logN;
  const w = fp.numVars * FR * (k.prefetch ? 2 : 1);
  const twiddles = (n / 2) * FR;
  let resident = twiddles + fp.fixedBytes + (k.matrices === 'resident' ? fp.matrixBytes : 0);
  let streamed = k.matrices === 'streamed' ? fp.matrixBytes : 0;
  let host = 0;
  for (const s of SECTION_NAMES) {
    const b = sectionBytes(s, fp.sections[s]);
    if (k.sections[s] === 'resident') resident += s === 'h' ? k.hCopies * b : b;
    else {
      streamed += b;
      host += b;
    }
  }
  const sectionsStreamed = SECTION_NAMES.some((s) => k.sections[s] === 'streamed');
  const ring1 = k.matrices === 'streamed' ? 2 * MATRIX_SLOT : 0;
  const ring2 = sectionsStreamed ? k.slots * k.slotBytes : 0;
  const p1 = w + k.q * n * FR + ring1;
  const p2 = w + n * FR + ring2 + k.msm;
  return { resident, p1, p2, streamed, host };
}

const total = (m: ReturnType<typeof measure>): number => m.resident + Math.max(m.p1, m.p2);

/** Choices a caller may force (diagnostics: the CUDA backend's planMatrices option, $KILN_PLAN_MATRICES at the edges). */
export interface PlanOptions {
  /** 'streamed': the matrices stream even when they would fit (their room goes to the MSMs). */
  matrices?: Placement;
  /** Copies of a resident h in the room left (hCopies); without it, none (the CUDA backend's precomputeH). */
  precomputeH?: boolean;
}

/** The plan of `fp` within `budgetBytes` of device memory (see the file comment). */
export function planDeviceMemory(fp: CircuitFootprint, budgetBytes: number, opts: PlanOptions = {}): DevicePlan {
  const all = (p: Placement): Record<SectionName, Placement> => ({ h: p, l: p, a: p, b_g1: p, b_g2: p });
  const minMsm = minMsmScratch(fp);
  let k: Config = { matrices: 'streamed', sections: all('streamed'), q: 2, prefetch: false, slotBytes: MIN_SLOT, slots: 2, msm: minMsm, hCopies: 1 };
  const needed = total(measure(fp, k));
  const fits = (c: Config): boolean => total(measure(fp, c)) <= budgetBytes;
  const feasible = needed <= budgetBytes;
  if (feasible) {
    const tryStep = (c: Config): void => {
      if (fits(c)) k = c;
    };
    if (opts.matrices !== 'streamed') tryStep({ ...k, matrices: 'resident' });
    for (const s of ['l', 'b_g2', 'a', 'b_g1', 'h'] as const) tryStep({ ...k, sections: { ...k.sections, [s]: 'resident' } });
    // a slot holds one MSM chunk (or matrix rows): no bigger than the largest section
    const largest = Math.max(...SECTION_NAMES.map((x) => sectionBytes(x, fp.sections[x])), fp.matrixBytes / 3);
    search: for (let slot = MAX_SLOT; slot >= k.slotBytes; slot /= 2) {
      if (slot / 2 >= largest) continue;
      for (const slots of [3, 2]) {
        if (fits({ ...k, slotBytes: slot, slots })) {
          k = { ...k, slotBytes: slot, slots };
          break search;
        }
      }
    }
    tryStep({ ...k, q: 3 });
    tryStep({ ...k, prefetch: true });
    tryStep({ ...k, q: 4 });
    // the rest to the MSMs' scratch: as much as phase 2 leaves, "as needed" when a single pass fits
    const m = measure(fp, { ...k, msm: 0 });
    const room = budgetBytes - m.resident - m.p2;
    const single = singlePassScratch(fp);
    k = { ...k, msm: room >= single ? 0 : Math.max(k.msm, room) };
    // then copies of a resident h (the dense MSM's digits spread over them): from what the single pass
    // leaves, less one section (precomputeBases holds the old table beside the new one while it runs)
    if (opts.precomputeH === true && k.sections.h === 'resident' && k.msm === 0) k = { ...k, hCopies: hCopiesFor(fp, room - single) };
  }
  const m = measure(fp, k);
  const streamedNames = SECTION_NAMES.filter((s) => k.sections[s] === 'streamed');
  const anyStreamed = streamedNames.length > 0;
  const parts = [
    `matrices ${k.matrices}`,
    streamedNames.length === 0 ? 'SRS resident' : streamedNames.length === 5 ? 'SRS streamed' : `SRS ${streamedNames.join(', ')} streamed, the rest resident`,
    anyStreamed ? `staging ${k.slots} × ${fmtBytes(k.slotBytes)}` : '',
    k.q === 4 ? 'quotient 4 buffers' : k.q === 3 ? 'quotient one vector at a time (3 buffers)' : 'quotient in place (2 buffers)',
    k.prefetch ? 'witness prefetched' : 'witness copied in turn',
    k.msm === 0 ? 'MSM single pass' : `MSM scratch ${fmtBytes(k.msm)}`,
    k.hCopies > 1 ? `h × ${k.hCopies} precomputed` : '',
  ].filter((x) => x !== '');
  return {
    feasible,
    neededBytes: needed,
    budgetBytes,
    matrices: k.matrices,
    sections: k.sections,
    quotientBuffers: k.q,
    prefetchWitness: k.prefetch,
    msmScratchBytes: k.msm,
    hCopies: k.hCopies,
    slots: anyStreamed ? k.slots : 0,
    slotBytes: anyStreamed ? k.slotBytes : 0,
    matrixSlotBytes: k.matrices === 'streamed' ? MATRIX_SLOT : 0,
    residentBytes: m.resident,
    streamedBytesPerPartition: m.streamed,
    hostBytes: m.host,
    workingBytes: Math.max(m.p1, m.p2),
    summary: feasible ? parts.join('; ') : `does not fit: needs ${fmtBytes(needed)}, ${fmtBytes(budgetBytes)} available`,
  };
}

/** Most copies of h: 12 (with 22-bit windows a scalar's 12 digits each in their own copy: one window of
 *  buckets), and copies × points < 2^31 (the MSM's 31-bit base index). */
export const MAX_H_COPIES = 12;

/** Copies of h that `spare` bytes hold besides the section (1: none; never one that would not fit). */
export function hCopiesFor(fp: CircuitFootprint, spare: number): number {
  const n = fp.sections.h;
  const hb = sectionBytes('h', n);
  if (n <= 0 || !(spare > hb)) return 1;
  const extra = Math.floor((spare - hb) / hb);
  const copies = Math.min(MAX_H_COPIES, 1 + extra, Math.floor((2 ** 31 - 1) / n));
  return copies >= 2 ? copies : 1;
}

/** The same plan with less of the per-proof memory (after an out-of-memory failure): the quotient in
 *  place, no witness prefetch, half the MSMs' scratch (at least MIN_MSM_SCRATCH). Resident sections
 *  stay where they are. Returns undefined when there is nothing left to shrink. */
export function shrinkPlan(p: DevicePlan, fp: CircuitFootprint): DevicePlan | undefined {
  const single = singlePassScratch(fp);
  const msm = p.msmScratchBytes === 0 ? single / 2 : p.msmScratchBytes / 2;
  const next: DevicePlan = {
    ...p,
    quotientBuffers: 2,
    prefetchWitness: false,
    msmScratchBytes: Math.max(minMsmScratch(fp), Math.floor(msm)),
  };
  if (next.quotientBuffers === p.quotientBuffers && next.prefetchWitness === p.prefetchWitness && next.msmScratchBytes >= p.msmScratchBytes && p.msmScratchBytes !== 0) {
    return undefined;
  }
  next.summary = `${p.summary} (re-planned after running out of device memory: quotient in place, no prefetch, MSM scratch ${fmtBytes(next.msmScratchBytes)})`;
  return next;
}

/** The budget a GPU's plans use: the free memory when the backend started, capped by the limit,
 *  less a reserve for the CUDA runtime, kernels' scratch and the pool's rounding. */
export function deviceBudget(freeBytes: number, totalBytes: number, limit?: { bytes: number } | { fraction: number }): { budgetBytes: number; limitBytes?: number } {
  const limitBytes = limit === undefined ? undefined : 'bytes' in limit ? limit.bytes : Math.floor(limit.fraction * totalBytes);
  const cap = Math.min(freeBytes, limitBytes ?? Infinity);
  const reserve = 512 * MiB + Math.floor(0.015 * cap);
  return { budgetBytes: Math.max(0, cap - reserve), limitBytes };
}

/** A memory limit from text: bytes ("25769803776"), a size ("24GiB", "16GB") or a percentage ("75%"). */
export function parseMemoryLimit(text: string): { bytes: number } | { fraction: number } {
  const t = text.trim();
  const pct = /^(\d+(?:\.\d+)?)\s*%$/.exec(t);
  if (pct) {
    const f = Number(pct[1]) / 100;
    if (!(f > 0 && f <= 1)) throw new RangeError(`memory limit ${text}: a percentage must be in (0, 100]`);
    return { fraction: f };
  }
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?$/i.exec(t);
  if (!m) throw new RangeError(`memory limit ${text}: bytes, a size such as 24GiB, or a percentage such as 75%`);
  const unit = (m[2] ?? 'B').toUpperCase();
  const mult: Record<string, number> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KIB: 2 ** 10, MIB: 2 ** 20, GIB: 2 ** 30, TIB: 2 ** 40 };
  const bytes = Math.floor(Number(m[1]) * mult[unit]);
  if (!(bytes >= GiB)) throw new RangeError(`memory limit ${text}: at least 1 GiB`);
  return { bytes };
}

/** The footprint of a circuit from what a partition proof is given (PartitionInput's shape, domain
 *  and query indices). */
export function footprintOf(input: {
  shape: { numInputs: number; numAux: number; a: CsrLike; b: CsrLike; c: CsrLike };
  logN: number;
  na: number;
  nb: number;
}): CircuitFootprint {
  const { shape, logN, na, nb } = input;
  let matrixBytes = 0;
  let coeffBytes = 0;
  for (const m of [shape.a, shape.b, shape.c]) {
    matrixBytes += m.rowPtr.byteLength + m.colIdx.byteLength + m.coeffIdx.byteLength;
    coeffBytes += m.coeffs.byteLength;
  }
  return {
    logN,
    numVars: shape.numInputs + shape.numAux,
    matrixBytes,
    fixedBytes: coeffBytes + (na + nb) * 4,
    sections: { h: 2 ** logN - 1, l: shape.numAux, a: na, b_g1: nb, b_g2: nb },
  };
}
interface CsrLike {
  rowPtr: { byteLength: number };
  colIdx: { byteLength: number };
  coeffIdx: { byteLength: number };
  coeffs: { byteLength: number };
}
