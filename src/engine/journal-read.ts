/**
 * Reading the job journal at start (journal.ts writes it and decides what the jobs become).
 *
 * The file is streamed in 1 MiB chunks and split on newlines: a journal of any size is read with
 * memory for the jobs it keeps, never as one string. Each line is checked against its checksum; a
 * line that fails it is first repaired if one flipped bit explains the damage (each of the line's
 * bits is flipped in turn until the checksum matches: with a 64-bit checksum a wrong match is
 * out of reach), otherwise it is dropped and reported with its line number, offset, the reason
 * and the job id it seems to be about (read from the damaged text, so marked as such). Finished
 * jobs past their retention are forgotten as they are read.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { JournalJob, JournalRecord } from './journal.js';

/** The checksum of a journal line: the first 16 hex digits of the body's SHA-256. */
export const checksum = (s: string | Uint8Array): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** A line of the journal that was not used, and why. */
export interface DroppedRecord {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line in the file. */
  offset: number;
  reason: string;
  /** The job the line seems to be about, read from the damaged text (absent when none is legible). */
  jobId?: string;
  /** The record type it seems to be (accept, running, cancel, finish, totals). */
  type?: string;
}

/** A line whose checksum failed and that one flipped bit restored. */
export interface RepairedRecord {
  line: number;
  offset: number;
  type: string;
  jobId?: string;
}

export type ScannedJob = JournalJob & { cancelledAt?: number };

export interface JournalScan {
  /** The latest state of every job the journal still holds (unfinished, or finished within retention). */
  jobs: Map<string, ScannedJob>;
  totals: { completed: number; failed: number; cancelled: number };
  /** Jobs of `watch` whose finish record was read but whose retention had ended. */
  expiredWatched: Set<string>;
  dropped: DroppedRecord[];
  /** Every dropped line (`dropped` lists the first MAX_LISTED). */
  droppedCount: number;
  repaired: RepairedRecord[];
  lines: number;
  bytes: number;
}

const CHUNK = 1 << 20;
/** No record kiln writes comes near this (a finish record with a SnapDeals proof and a 4,096-character error is ~10 KB). */
const MAX_LINE = 1 << 20;
/** Dropped and repaired lines listed one by one (the rest are counted). */
export const MAX_LISTED = 1000;
/** Lines up to this length get the one-bit repair (8 · L candidates of L bytes each). */
const REPAIR_MAX_LINE = 8192;
/** Bytes hashed for repairs in one scan, at most (~2 s on a slow core). */
const REPAIR_BUDGET = 1 << 30;

const HEADER = 17; // 16 hex digits and a space

function popcount8(x: number): number {
  let n = 0;
  for (let v = x; v !== 0; v &= v - 1) n++;
  return n;
}

/**
 * The line as written, when exactly one of its bits was flipped; undefined otherwise. `budget.left`
 * is the number of bytes it may still hash (spent here).
 */
export function repairLine(line: Buffer, budget: { left: number }): Buffer | undefined {
  if (line.length <= HEADER || line.length > REPAIR_MAX_LINE) return undefined;
  const body = Buffer.from(line.subarray(HEADER));
  // a flip in the checksum or the separator: the body hashes to a header one bit away
  const header = Buffer.from(`${checksum(body)} `, 'latin1');
  let bits = 0;
  for (let i = 0; i < HEADER; i++) bits += popcount8(header[i] ^ line[i]);
  if (bits === 1) return Buffer.concat([header, body]);
  if (bits === 0) return undefined; // the line is not damaged (the caller did not need us)
  // a flip in the body: the header must be intact (16 hex digits and the space)
  const want = line.toString('latin1', 0, 16);
  if (line[16] !== 0x20 || !/^[0-9a-f]{16}$/.test(want)) return undefined;
  const cost = 4 * body.length * body.length + 8 * body.length;
  if (cost > budget.left) return undefined;
  budget.left -= cost;
  const prefix = createHash('sha256');
  const one = Buffer.alloc(1);
  for (let i = 0; i < body.length; i++) {
    const rest = body.subarray(i + 1);
    for (let b = 0; b < 8; b++) {
      one[0] = body[i] ^ (1 << b);
      const h = prefix.copy().update(one).update(rest).digest('hex');
      if (h.startsWith(want)) {
        body[i] = one[0];
        return Buffer.concat([line.subarray(0, HEADER), body]);
      }
    }
    prefix.update(body.subarray(i, i + 1));
  }
  return undefined;
}

/** What a damaged line seems to be: its type and job id, if legible. */
function guess(body: string): { type?: string; jobId?: string } {
  try {
    const r = JSON.parse(body) as { t?: unknown; id?: unknown; job?: { id?: unknown } };
    const id = r.job?.id ?? r.id;
    return { type: typeof r.t === 'string' ? r.t : undefined, jobId: typeof id === 'string' ? id : undefined };
  } catch {
    return { type: /"t":"(\w{1,16})"/.exec(body)?.[1], jobId: /"id":"([^"\\]{1,200})"/.exec(body)?.[1] };
  }
}

const isFinished = (s: string): boolean => s === 'completed' || s === 'failed' || s === 'cancelled';

/**
 * Reads the journal at `path` (an absent file is an empty journal). `watch`: job ids whose finish
 * matters even past retention (those with a request file: a finished job's file is obsolete).
 * Errors name the path.
 */
export async function scanJournal(path: string, opts: { now: number; retentionMs: number; watch: ReadonlySet<string> }): Promise<JournalScan> {
  const jobs = new Map<string, ScannedJob>();
  const totals = { completed: 0, failed: 0, cancelled: 0 };
  const s: JournalScan = { jobs, totals, expiredWatched: new Set(), dropped: [], droppedCount: 0, repaired: [], lines: 0, bytes: 0 };
  const budget = { left: REPAIR_BUDGET };
  const drop = (d: DroppedRecord): void => {
    if (s.dropped.length < MAX_LISTED) s.dropped.push(d);
    s.droppedCount++;
  };

  const apply = (rec: JournalRecord, line: number, offset: number): void => {
    if (rec.t === 'accept') {
      if (typeof rec.job?.id !== 'string') return drop({ line, offset, reason: 'an accept record without a job id', type: 'accept' });
      jobs.set(rec.job.id, { ...rec.job, state: 'queued' });
    } else if (rec.t === 'running') {
      const j = jobs.get(rec.id);
      if (j !== undefined && j.state === 'queued') j.state = 'running';
    } else if (rec.t === 'cancel') {
      const j = jobs.get(rec.id);
      if (j !== undefined && !isFinished(j.state)) j.cancelledAt = rec.at;
    } else if (rec.t === 'finish') {
      const j = rec.job;
      if (typeof j?.id !== 'string' || !isFinished(j.state)) return drop({ line, offset, reason: 'a finish record without a job id or a final state', type: 'finish', jobId: j?.id });
      const prev = jobs.get(j.id);
      if (prev === undefined || !isFinished(prev.state)) totals[j.state as 'completed' | 'failed' | 'cancelled']++;
      if ((j.finishedAt ?? 0) + opts.retentionMs > opts.now) jobs.set(j.id, j);
      else {
        jobs.delete(j.id);
        if (opts.watch.has(j.id)) s.expiredWatched.add(j.id);
      }
    } else if (rec.t === 'totals') {
      totals.completed = rec.completed;
      totals.failed = rec.failed;
      totals.cancelled = rec.cancelled;
    } else drop({ line, offset, reason: `an unknown record type ${JSON.stringify(String((rec as { t?: unknown }).t)).slice(0, 40)}` });
  };

  const onLine = (raw: Buffer, line: number, offset: number): void => {
    let buf = raw;
    let repaired = false;
    if (!(buf.length > HEADER && buf[16] === 0x20 && checksum(buf.subarray(HEADER)) === buf.toString('latin1', 0, 16))) {
      const fixed = repairLine(buf, budget);
      if (fixed === undefined) {
        const g = guess(buf.subarray(Math.min(HEADER, buf.length)).toString('utf8'));
        return drop({ line, offset, reason: buf.length > REPAIR_MAX_LINE ? 'checksum mismatch (too long to repair)' : 'checksum mismatch (more than one bit damaged)', ...g });
      }
      buf = fixed;
      repaired = true;
    }
    const body = buf.toString('utf8', HEADER);
    let rec: JournalRecord;
    try {
      rec = JSON.parse(body) as JournalRecord;
      if (rec === null || typeof rec !== 'object' || typeof rec.t !== 'string') throw new Error('not a record');
    } catch (e) {
      return drop({ line, offset, reason: `not a record (${(e as Error).message})`, ...guess(body) });
    }
    if (repaired && s.repaired.length < MAX_LISTED) {
      const { jobId } = guess(body);
      s.repaired.push({ line, offset, type: rec.t, ...(jobId === undefined ? {} : { jobId }) });
    }
    apply(rec, line, offset);
  };

  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return s;
    throw namedError(path, 'cannot be opened', e);
  }
  try {
    const chunk = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer[] = [];
    let carryLen = 0;
    let tooLong = false;
    let lineStart = 0; // file offset of the line being read
    let pos = 0;
    for (;;) {
      let n: number;
      try {
        n = (await fh.read(chunk, 0, CHUNK, pos)).bytesRead;
      } catch (e) {
        throw namedError(path, `cannot be read (at byte ${pos})`, e);
      }
      if (n === 0) break;
      const view = chunk.subarray(0, n);
      let at = 0;
      while (at < n) {
        const nl = view.indexOf(0x0a, at);
        const end = nl < 0 ? n : nl;
        if (nl >= 0 && carryLen === 0 && !tooLong && end - at <= MAX_LINE) {
          // the whole line is in this chunk: used before the chunk is read into again, no copy
          s.lines++;
          onLine(view.subarray(at, end), s.lines, lineStart);
        } else {
          if (!tooLong) {
            if (carryLen + end - at > MAX_LINE) {
              tooLong = true;
              carry = [];
              carryLen = 0;
            } else if (end > at) {
              carry.push(Buffer.from(view.subarray(at, end)));
              carryLen += end - at;
            }
          }
          if (nl < 0) break; // the line goes on in the next chunk
          s.lines++;
          if (tooLong) drop({ line: s.lines, offset: lineStart, reason: `a line longer than ${MAX_LINE} bytes` });
          else onLine(Buffer.concat(carry, carryLen), s.lines, lineStart);
          carry = [];
          carryLen = 0;
          tooLong = false;
        }
        at = end + 1;
        lineStart = pos + at;
      }
      pos += n;
    }
    s.bytes = pos;
    if (carryLen > 0 || tooLong) {
      s.lines++;
      const g = tooLong ? {} : guess(Buffer.concat(carry, carryLen).subarray(HEADER).toString('utf8'));
      drop({ line: s.lines, offset: lineStart, reason: `the last line has no newline (${pos - lineStart} bytes: a write torn by a crash)`, ...g });
    }
  } finally {
    await fh.close();
  }
  return s;
}

/** `e` with a message that names the path (and keeps its code: EISDIR, EPERM, …). */
export function namedError(path: string, what: string, e: unknown): Error {
  const err = new Error(`job journal ${path}: ${what}: ${(e as Error).message}`) as NodeJS.ErrnoException;
  const code = (e as NodeJS.ErrnoException).code;
  if (code !== undefined) err.code = code;
  return err;
}
