/**
 * Shared by the 32 GiB benches (porep32, post32, snap32): the per-partition figures of finished jobs
 * (synthesis, prove, the device wait and stream_wait inside it, the backend's phases, verify) and the
 * device-memory plan: what is resident, what streams per partition, the copy engine's busy time
 * against the GPU's, and what the copies become at PCIe 4.0 x16's 25 GB/s.
 */
import type { Engine, Job } from '../src/engine/engine.js';
import type { DeviceMemoryPlanStatus } from '../src/backend/backend.js';
import type { Span } from '../src/util/timing.js';

export interface PartitionFigures {
  synth: number;
  laneWait: number;
  prove: number;
  deviceWait: number;
  streamWait: number;
  /** In the prove span: the circuit's upload to the device (its first proof, unless PreloadSRS did it) and the
   *  call's time the device did not time (a thread of libuv's pool, the results' conversion). */
  circuitUpload: number;
  hostWait: number;
  phases: number;
  verify: number;
}

/** Children of a prove span that are waits, not the backend's phases. */
const PROVE_WAITS = new Set(['device_wait', 'circuit_upload', 'host_wait']);

const sec = (ms: number): string => (ms / 1000).toFixed(2);
const gib = (b: number): string => (b / 2 ** 30).toFixed(1);
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1]! : NaN;
};

/** Per partition of a finished job: synth, lane wait, prove (wall), the waits inside it (device, circuit
 *  upload, host), the backend's phases (sum, waits excluded), verify. */
export function partitionFigures(job: Job): PartitionFigures[] {
  const out: PartitionFigures[] = [];
  for (const p of job.span.children.filter((c) => c.name.startsWith('partition['))) {
    const child = (n: string): Span | undefined => p.children.find((c) => c.name === n);
    const prove = child('prove');
    out.push({
      synth: child('synth')?.durationMs ?? NaN,
      laneWait: child('lane_wait')?.durationMs ?? 0,
      prove: prove?.durationMs ?? NaN,
      deviceWait: prove?.children.find((c) => c.name === 'device_wait')?.durationMs ?? 0,
      streamWait: prove?.children.find((c) => c.name === 'stream_wait')?.durationMs ?? 0,
      circuitUpload: prove?.children.find((c) => c.name === 'circuit_upload')?.durationMs ?? 0,
      hostWait: prove?.children.find((c) => c.name === 'host_wait')?.durationMs ?? 0,
      phases: prove ? prove.children.filter((c) => !PROVE_WAITS.has(c.name)).reduce((t, c) => t + c.durationMs, 0) : NaN,
      verify: child('verify')?.durationMs ?? NaN,
    });
  }
  return out;
}

/** The first device's memory plan, when its backend has one (CUDA). */
export const planOf = (engine: Engine): DeviceMemoryPlanStatus | undefined => engine.devices.list[0]?.backend.memoryPlan?.();

/** One line: the plan's budget and, per circuit, what is resident and what streams. '' without a plan. */
export function planLine(engine: Engine): string {
  const p = planOf(engine);
  if (!p) return '';
  return (
    `device-memory plan: budget ${gib(p.budgetBytes)} GiB${p.limitBytes !== undefined ? ` (memory_limit ${gib(p.limitBytes)} GiB)` : ''}; ` +
    p.circuits
      .map((x) => `${x.circuit}: ${x.summary}; resident ${gib(x.residentBytes)} GiB, streamed ${gib(x.streamedBytesPerPartition)} GiB per partition, pinned host ${gib(x.hostBytes)} GiB, working ${gib(x.workingBytes)} GiB`)
      .join(' | ')
  );
}

/** The results rows of the plan for `circuitId`, given the partitions proved (their figures) and the
 *  partitions per proof. Empty without a plan. */
export function planRows(engine: Engine, circuitId: string, parts: PartitionFigures[], perProof: number): string[][] {
  const plan = planOf(engine);
  const circ = plan?.circuits.find((x) => x.circuit === circuitId);
  if (!plan || !circ) return [];
  const phases = median(parts.map((p) => p.phases));
  const last = plan.lastPartition;
  const copy25 = (circ.streamedBytesPerPartition / 25e9) * 1000;
  return [
    ['device-memory plan', `${circ.summary} (budget ${gib(plan.budgetBytes)} GiB)`],
    ['device bytes resident / working per partition (planned)', `${gib(circ.residentBytes)} GiB / ${gib(circ.workingBytes)} GiB`],
    ['bytes host → device per proof (streamed sections and matrices)', `${gib(circ.streamedBytesPerPartition * perProof)} GiB (${gib(circ.streamedBytesPerPartition)} GiB per partition)`],
    [
      'copy engine busy / GPU phases, last partition',
      `${sec(last?.copyMs ?? 0)} s / ${sec(last?.gpuMs ?? 0)} s (${gib(last?.streamedBytes ?? 0)} GiB: ${((last?.streamedBytes ?? 0) / Math.max(1e-9, (last?.copyMs ?? 0) / 1000) / 1e9).toFixed(1)} GB/s)`,
    ],
    ['compute waiting for copies per partition (median stream_wait)', `${median(parts.map((p) => p.streamWait)).toFixed(0)} ms`],
    [
      'the same at PCIe 4.0 x16 (25 GB/s): copy per partition vs GPU phases',
      `${sec(copy25)} s vs ${sec(phases)} s → about ${sec(Math.max(phases, copy25) * perProof)} s/proof of GPU (copy-bound when the copy is longer)`,
    ],
    ['pinned host memory of the streamed sections', `${gib(circ.hostBytes)} GiB`],
  ];
}

/** The per-partition rows: synthesis, prove (wall / device wait / GPU phases), verify. */
export function partitionRows(parts: PartitionFigures[]): string[][] {
  if (!parts.length) return [];
  const m = (f: keyof PartitionFigures): number => median(parts.map((p) => p[f]));
  return [
    [`synthesis per partition (median of ${parts.length})`, `${sec(m('synth'))} s`],
    ['prove per partition (median): wall / waiting for the device / GPU phases', `${sec(m('prove'))} s / ${sec(m('deviceWait'))} s / ${sec(m('phases'))} s`],
    ['inside prove, the most: circuit upload / waiting for a native thread (host_wait)', `${sec(Math.max(...parts.map((p) => p.circuitUpload)))} s / ${sec(Math.max(...parts.map((p) => p.hostWait)))} s`],
    ['verify per partition (median)', `${m('verify').toFixed(0)} ms`],
  ];
}
