/**
 * What a restart does with the job journal, apart from the engine's own tables (engine.ts restore(),
 * replanRestored()): the journal's findings logged one line each, and the recovered jobs planned again oldest
 * first, a bounded number at a time.
 */
import type { Logger } from 'pino';
import type { JournalOpenResult } from './journal.js';

/** Logs what the journal could not use (dropped or repaired lines, rebuilt jobs, lost finish records, damaged
 *  request files), one line each by job id and reason, then what it read. */
export function logJournalFindings(log: Logger, journal: string | undefined, r: JournalOpenResult): void {
  for (const d of r.dropped) log.warn({ journal, line: d.line, offset: d.offset, job: d.jobId, record: d.type, reason: d.reason }, `job journal: record dropped${d.jobId === undefined ? '' : ` (job ${d.jobId}, read from the damaged line)`}: ${d.reason}`);
  if (r.badLines > r.dropped.length) log.warn({ journal, more: r.badLines - r.dropped.length }, 'job journal: more records dropped (not listed one by one)');
  if (r.badLines > 0) log.warn({ journal, lines: r.badLines }, `job journal: ${r.badLines} record(s) failed their checksum or did not parse and were skipped (each is logged above)`);
  for (const x of r.repaired) log.warn({ journal, line: x.line, job: x.jobId, record: x.type }, 'job journal: a record with one flipped bit was repaired (its checksum matches again)');
  for (const id of r.rebuilt) log.warn({ journal, job: id }, 'job journal: the records of this job were lost; rebuilt from its request file');
  for (const l of r.lost) log.error({ journal, job: l.id, reason: l.reason }, 'job journal: the result of a finished job was lost');
  for (const d of r.damagedRequests) log.error({ journal, job: d.id, file: d.movedTo, err: d.error }, 'job journal: a request file with no journal record could not be read; moved aside, not deleted');
  for (const id of r.cancelled) log.info({ journal, job: id }, 'job journal: a job cancelled before the restart stays cancelled');
  if (r.removedTemp.length > 0) log.warn({ files: r.removedTemp }, 'job journal: partial files removed');
  log.info({ journal, bytes: r.read.bytes, lines: r.read.lines, unfinished: r.unfinished.length, finished: r.finished.length }, 'job journal read');
}

/** Runs `one` over `items` in their order, at most `concurrency` at once (each next item goes to the first of
 *  them free): a recovered job is planned again before any younger one starts planning. */
export async function inOrderBounded<T>(items: readonly T[], concurrency: number, one: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await one(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(items.length, concurrency)) }, lane));
}
