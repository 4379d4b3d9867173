/**
 * Durable jobs: an append-only, fsync'd write-ahead journal under `[daemon] state_dir`.
 *
 *   <state_dir>/journal.log          one record per line: `<sha256 prefix, 16 hex> <JSON>\n`
 *   <state_dir>/requests/<job id>    the request of each accepted, unfinished job (binary, below)
 *
 * SubmitProof answers only after the job's request file and its `accept` record are on disk
 * (written, fsync'd, and the directory entry fsync'd): an acknowledged job survives `kill -9` and
 * a power cut. CancelProof of an unfinished job appends a `cancel` record before it answers. On
 * start the journal is read streaming (journal-read.ts: a torn last line, from a crash mid-append,
 * fails its checksum and is dropped; a line with one flipped bit is repaired), unfinished jobs
 * (queued or running) are planned and queued again under their ids, cancelled ones come back
 * CANCELLED, finished ones are kept for AwaitProof until `job_retention_s` after they ended, and the
 * journal is compacted (rewritten to a temporary file, fsync'd, renamed over the old one).
 *
 * Damage never costs what can still be used: a request file is removed only when the journal holds
 * the job's finish record; a request file whose job the journal lost (a damaged or truncated
 * journal) rebuilds the job from it (the file has every field a plan needs); an unfinished job whose
 * request file is gone had finished (the file is removed only after the finish record is written),
 * so it comes back FAILED saying its finish record was lost; a damaged request file is moved aside
 * to `<state_dir>/damaged/`, never deleted. Every dropped line is reported (JournalOpenResult).
 *
 * Why a journal and not SQLite: the daemon needs one table, written in order and read once (streamed) at
 * start; no native SQLite binding is installed here and npm packages must build offline (and
 * node:sqlite needs Node 22.5+, kiln runs on Node 20). A journal of JSON lines with a checksum per
 * record, fsync after each append and a compaction by rename gives the same promise (an
 * acknowledged write survives a crash) with nothing but node:fs, and stays readable with `cat`.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Joined } from '../util/hash.js';
import { requestDigest, type JobTimings } from './jobs.js';
import { checksum, namedError, scanJournal, type DroppedRecord, type RepairedRecord, type ScannedJob } from './journal-read.js';
import { proofRequest, type ProofRequest } from './types.js';

export type { DroppedRecord, RepairedRecord } from './journal-read.js';

export type JournalState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** What the journal knows of a job. */
export interface JournalJob {
  id: string;
  requestId: string;
  kind: number;
  kindName: string;
  priority: number;
  seq: number;
  /** Wall clock (ms since the epoch). */
  submittedAt: number;
  /** requestDigest of its request (jobs.ts: a repeated request_id must carry the same); absent in
   *  records written before digests, and for requests without an id. */
  digest?: string;
  state: JournalState;
  finishedAt?: number;
  /** base64 of the proof bytes (completed jobs). */
  proof?: string;
  error?: string;
  timings?: JobTimings;
  /** The proof was made with INSECURE development parameters (absent: official ones, or an older record). */
  insecureParams?: true;
}

export type JournalRecord =
  | { t: 'accept'; job: JournalJob }
  | { t: 'running'; id: string }
  /** CancelProof of an unfinished job (its finish record may never come: a kill -9 mid-proof). */
  | { t: 'cancel'; id: string; at: number }
  | { t: 'finish'; job: JournalJob }
  /** The counters, counting every finish record before this line (a compaction writes it last). */
  | { t: 'totals'; completed: number; failed: number; cancelled: number };

export interface JournalOpenResult {
  journal: Journal;
  /** Unfinished jobs (queued or running when the daemon stopped), oldest first. */
  unfinished: JournalJob[];
  /** Finished jobs still within their retention. */
  finished: JournalJob[];
  totals: { completed: number; failed: number; cancelled: number };
  /** Lines that were dropped (failed their checksum beyond repair or did not parse: a torn last line
   *  after a crash, a damaged record); `dropped` lists the first 1,000 of them. */
  badLines: number;
  dropped: DroppedRecord[];
  /** Lines with one flipped bit, restored. */
  repaired: RepairedRecord[];
  /** Unfinished jobs rebuilt from their request files: the journal had lost their records (also in `unfinished`). */
  rebuilt: string[];
  /** Jobs that had finished (no request file left) but whose finish record was lost: now FAILED, saying so (also in `finished`). */
  lost: { id: string; reason: string }[];
  /** Request files that could not be decoded and had no journal record, moved to `<state_dir>/damaged/`. */
  damagedRequests: { id: string; movedTo: string; error: string }[];
  /** Jobs cancelled (a `cancel` record) before the daemon stopped, before they finished: now CANCELLED (also in `finished`). */
  cancelled: string[];
  /** Bytes and lines read. */
  read: { bytes: number; lines: number };
  /** Temporary files of an interrupted write that were removed. */
  removedTemp: string[];
}

const REQ_MAGIC = 'KLNREQ1\n';
const TMP_RE = /\.tmp-(\d+)-[0-9a-f]+$/;

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Writes all of `buf` at the file's position (continuing short writes). */
async function writeAll(fh: FileHandle, buf: Uint8Array): Promise<void> {
  for (let off = 0; off < buf.length; ) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
}

const isByteParts = (d: readonly Uint8Array[] | Iterable<string>): d is readonly Uint8Array[] => Array.isArray(d) && d.every((p) => p instanceof Uint8Array);

/**
 * Writes `data` to `path` durably: a temporary name in the same directory, fsync, rename, fsync of
 * the directory. `data` may be lines (an iterable of strings), written in ~1 MiB pieces: a snapshot
 * of any size is never one string; or byte arrays, written one after the other.
 */
export async function writeFileDurable(path: string, data: Uint8Array | readonly Uint8Array[] | string | Iterable<string>): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf('/')) || '/';
  const tmp = `${path}.tmp-${process.pid}-${createHash('sha256').update(`${Math.random()}`).digest('hex').slice(0, 8)}`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    if (typeof data === 'string' || data instanceof Uint8Array) await writeAll(fh, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    else if (isByteParts(data)) for (const part of data) await writeAll(fh, part);
    else {
      let piece: string[] = [];
      let size = 0;
      for (const l of data) {
        piece.push(l);
        size += l.length;
        if (size >= 1 << 20) {
          await writeAll(fh, Buffer.from(piece.join(''), 'utf8'));
          piece = [];
          size = 0;
        }
      }
      await writeAll(fh, Buffer.from(piece.join(''), 'utf8'));
    }
    await fh.sync();
  } catch (e) {
    await fh.close();
    await rm(tmp, { force: true });
    throw e;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  await fsyncDir(dir);
}

/** Whether a process of this id is alive (a temp file of a live process is not a leftover). */
function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes leftovers of writes interrupted by a crash in `dirs`: `<name>.tmp-<pid>-<hex>` (the journal,
 * requests, development parameters) and `<name>.<pid>.tmp` (shape and program caches), when that
 * process is gone (another daemon sharing the cache may be writing them). Missing dirs are skipped.
 */
export async function cleanTempFiles(dirs: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const n of names) {
      const m = TMP_RE.exec(n) ?? /\.(\d+)\.tmp(?:\.sha256)?$/.exec(n);
      if (m === null || pidAlive(Number(m[1]))) continue;
      await rm(join(dir, n), { force: true });
      removed.push(join(dir, n));
    }
  }
  return removed;
}

/** State directories this process holds (a second daemon in the same process is refused too). */
const heldStateDirs = new Set<string>();

/**
 * Takes `<dir>/daemon.pid` (created exclusively, holding this process id) so that two daemons never
 * share one journal: with durable jobs the default (`<cache_dir>/state`), a second daemon started
 * with the same defaults would otherwise append to the same journal.log. A file left by a process
 * that is gone is taken over. `release` removes it (Daemon.close).
 */
export async function lockStateDir(dir: string): Promise<{ path: string; release(): Promise<void> }> {
  const path = join(dir, 'daemon.pid');
  const refuse = (holder: string): Error =>
    new Error(
      `[daemon] state_dir ${dir} is in use by ${holder} (${path}): two daemons cannot share one job journal; ` +
        'give this one its own state_dir, or state_dir = "" for jobs in memory only',
    );
  if (heldStateDirs.has(path)) throw refuse('another daemon of this process');
  await mkdir(dir, { recursive: true, mode: 0o700 }).catch((e: unknown) => {
    throw namedError(path, `its state_dir ${dir} cannot be created`, e);
  });
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw namedError(path, 'the state_dir lock cannot be written', e);
      const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && pidAlive(pid)) throw refuse(`the kiln daemon of pid ${pid}`);
      await rm(path, { force: true }); // left by a process that is gone (a crash, kill -9)
    }
  }
  heldStateDirs.add(path);
  return {
    path,
    release: async () => {
      heldStateDirs.delete(path);
      await rm(path, { force: true });
    },
  };
}

/** A request file's parts before its checksum: magic and u32 header length, JSON header (scalars,
 *  byte-field lengths), then the byte fields themselves (not copied). */
function requestParts(r: ProofRequest): Uint8Array[] {
  const fields = [r.vanillaProof, ...r.vanillaProofs, r.randomness, r.commROld, r.commRNew, r.commDNew];
  const header = JSON.stringify({
    requestId: r.requestId,
    proofKind: r.proofKind,
    sectorSize: r.sectorSize,
    registeredProof: r.registeredProof,
    priority: r.priority,
    sectorNumber: r.sectorNumber,
    minerId: r.minerId,
    partitionIndex: r.partitionIndex,
    vanillaProofs: r.vanillaProofs.length,
    lengths: fields.map((f) => f.length),
  });
  const h = Buffer.from(header, 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(h.length);
  return [Buffer.concat([Buffer.from(REQ_MAGIC), len, h]), ...fields];
}

/** A request as bytes: magic, u32 header length, JSON header (scalars, byte-field lengths), the byte
 *  fields, the SHA-256 of all that. */
export function encodeRequest(r: ProofRequest): Uint8Array {
  const body = Buffer.concat(requestParts(r));
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

/** encodeRequest's bytes as the parts to write one after the other, the byte fields not copied and
 *  the checksum hashed a slice at a time (util/hash.ts): joining and hashing a 100 MiB request at once
 *  held the event loop for 0.7 s here (bench/ingest.ts). */
async function requestRecord(r: ProofRequest): Promise<Uint8Array[]> {
  const parts = requestParts(r);
  return [...parts, await sha256Joined(parts)];
}

/** A request file's body (without its checksum) after the magic and size checks, and its checksum. */
function requestFileBody(b: Uint8Array): { body: Buffer; sum: Buffer } {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (buf.length < REQ_MAGIC.length + 4 + 32 || buf.subarray(0, REQ_MAGIC.length).toString() !== REQ_MAGIC) throw new Error('not a kiln request file');
  return { body: buf.subarray(0, buf.length - 32), sum: buf.subarray(buf.length - 32) };
}

/** The request in a checked body; its byte fields copied, or views of `body` when `views`. */
function requestFromBody(body: Buffer, views: boolean): ProofRequest {
  const hl = body.readUInt32LE(REQ_MAGIC.length);
  const h = JSON.parse(body.subarray(REQ_MAGIC.length + 4, REQ_MAGIC.length + 4 + hl).toString('utf8')) as Record<string, unknown> & { lengths: number[]; vanillaProofs: number };
  let at = REQ_MAGIC.length + 4 + hl;
  const parts = h.lengths.map((n) => {
    const p = views ? new Uint8Array(body.buffer, body.byteOffset + at, n) : new Uint8Array(body.subarray(at, at + n));
    at += n;
    return p;
  });
  if (at !== body.length) throw new Error('request file lengths do not add up');
  const [vanillaProof, ...rest] = parts;
  const vanillaProofs = rest.slice(0, h.vanillaProofs);
  const [randomness, commROld, commRNew, commDNew] = rest.slice(h.vanillaProofs);
  return proofRequest({
    requestId: String(h.requestId),
    proofKind: Number(h.proofKind),
    sectorSize: Number(h.sectorSize),
    registeredProof: Number(h.registeredProof),
    priority: Number(h.priority),
    sectorNumber: Number(h.sectorNumber),
    minerId: Number(h.minerId),
    partitionIndex: Number(h.partitionIndex),
    vanillaProof,
    vanillaProofs,
    randomness,
    commROld,
    commRNew,
    commDNew,
  });
}

export function decodeRequest(b: Uint8Array): ProofRequest {
  const { body, sum } = requestFileBody(b);
  if (!createHash('sha256').update(body).digest().equals(sum)) throw new Error('request file checksum mismatch');
  return requestFromBody(body, false);
}

/** Request files this size or larger are read into shared memory (Journal.request). */
const SHARED_FILE_BYTES = 1 << 20;

/** How the journal writes its appends (tests inject short writes and ENOSPC): writes `length` bytes
 *  of `buf` from `offset` at the end of the file, returns how many it wrote (a short write is allowed). */
export interface JournalIo {
  write(fh: FileHandle, buf: Buffer, offset: number, length: number): Promise<number>;
}

const defaultIo: JournalIo = {
  write: async (fh, buf, offset, length) => (await fh.write(buf, offset, length, null)).bytesWritten,
};

/** Why the journal cannot promise durability now (an append failed; it retries by itself). */
export interface JournalDegraded {
  /** The error, naming the journal's path. */
  error: string;
  /** When the first failed append of this episode happened (ms since the epoch). */
  since: number;
  /** Records kept in memory until they can be written (`running` and `finish` records of jobs). */
  pending: number;
}

/** Thrown by accept() while the journal cannot be written (the engine answers RESOURCE_EXHAUSTED). */
export class JournalDegradedError extends Error {}

interface Pending {
  text: string;
  /** Run once the record is on disk (a finish record: remove the job's request file). */
  then?: () => Promise<void>;
}

export class Journal {
  private chain: Promise<void> = Promise.resolve();
  private appended = 0;
  /** Bytes of whole records in journal.log: every append starts here (a failed one is cut back to it). */
  private size = 0;
  /** A failed append may have left bytes past `size` that could not be cut yet. */
  private tornTail = false;
  private degradedState: { error: string; since: number } | undefined;
  /** Records not written yet, in order (they are written before anything else). */
  private readonly pending: Pending[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Called when the journal becomes degraded (with why) and when it is durable again (undefined). */
  onStateChange: ((d: JournalDegraded | undefined) => void) | undefined;
  /** The latest record of every job (what a compaction writes). */
  private readonly jobs = new Map<string, ScannedJob>();
  readonly totals = { completed: 0, failed: 0, cancelled: 0 };

  private constructor(
    readonly dir: string,
    private fh: FileHandle,
    private readonly retentionMs: number,
    private readonly io: JournalIo,
    private readonly retryMs: number,
  ) {}

  get path(): string {
    return join(this.dir, 'journal.log');
  }

  private requestPath(id: string): string {
    return join(this.dir, 'requests', id);
  }

  /** Undefined while every record is on disk; otherwise why not, since when, and what waits. */
  get degraded(): JournalDegraded | undefined {
    return this.degradedState === undefined ? undefined : { ...this.degradedState, pending: this.pending.length };
  }

  /** Opens (creating) the journal in `dir`, recovers its jobs, compacts it. `io` replaces the appends'
   *  writes (tests), `retryMs` is how often a degraded journal tries its pending records (default 2 s).
   *  Every error names the path it is about (a journal that is a directory, an immutable one, …). */
  static async open(dir: string, opts: { retentionMs: number; now?: number; io?: JournalIo; retryMs?: number }): Promise<JournalOpenResult> {
    const path = join(dir, 'journal.log');
    const reqDir = join(dir, 'requests');
    await mkdir(reqDir, { recursive: true, mode: 0o700 }).catch((e: unknown) => {
      throw namedError(path, `its requests folder ${reqDir} cannot be created`, e);
    });
    const removedTemp = await cleanTempFiles([dir, reqDir]);
    const now = opts.now ?? Date.now();
    const files = new Set(
      await readdir(reqDir).catch((e: unknown) => {
        throw namedError(path, `its requests folder ${reqDir} cannot be listed`, e);
      }),
    );
    const scan = await scanJournal(path, { now, retentionMs: opts.retentionMs, watch: files });
    const { jobs, totals } = scan;
    const lost: JournalOpenResult['lost'] = [];
    const cancelled: string[] = [];
    for (const j of jobs.values()) {
      if (isFinished(j.state)) continue;
      if (j.cancelledAt !== undefined) {
        // cancelled (CancelProof) before the daemon stopped: it stays cancelled
        const { cancelledAt, ...rest } = j;
        jobs.set(j.id, { ...rest, state: 'cancelled', finishedAt: cancelledAt });
        totals.cancelled++;
        cancelled.push(j.id);
      } else if (!files.has(j.id)) {
        // a request file is removed only after the job's finish record is written: the job had finished
        const reason = lostFinishReason(j.id, join(reqDir, j.id), scan.dropped, scan.droppedCount);
        jobs.set(j.id, { ...j, state: 'failed', finishedAt: now, error: reason });
        totals.failed++;
        lost.push({ id: j.id, reason });
      }
    }
    // request files: obsolete once their job's finish record is on disk; a job the journal lost is rebuilt from its file
    const orphans: { id: string; req: ProofRequest; mtimeMs: number }[] = [];
    const damagedRequests: JournalOpenResult['damagedRequests'] = [];
    for (const id of files) {
      const j = jobs.get(id);
      if (j !== undefined && !isFinished(j.state)) continue;
      const file = join(reqDir, id);
      if (j !== undefined || scan.expiredWatched.has(id)) {
        await rm(file, { force: true, recursive: false }).catch(() => undefined);
        continue;
      }
      try {
        const [bytes, st] = await Promise.all([readFile(file), stat(file)]);
        orphans.push({ id, req: decodeRequest(bytes), mtimeMs: st.mtimeMs });
      } catch (e) {
        // kept for a person to look at (moved, so it is not read at every start); left in place if it cannot be moved
        const to = join(dir, 'damaged', id);
        const movedTo = await mkdir(join(dir, 'damaged'), { recursive: true, mode: 0o700 })
          .then(() => rename(file, to))
          .then(() => to, () => file);
        damagedRequests.push({ id, movedTo, error: (e as Error).message });
      }
    }
    let seq = 0;
    for (const j of jobs.values()) seq = Math.max(seq, j.seq + 1);
    const rebuilt: string[] = [];
    for (const o of orphans.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.id < b.id ? -1 : 1))) {
      const r = o.req;
      jobs.set(o.id, {
        id: o.id,
        requestId: r.requestId,
        kind: r.proofKind,
        kindName: `kind-${r.proofKind}`,
        priority: r.priority,
        seq: seq++,
        submittedAt: Math.round(o.mtimeMs),
        digest: r.requestId === '' ? undefined : await requestDigest(r),
        state: 'queued',
      });
      rebuilt.push(o.id);
    }
    const all = [...jobs.values()].sort((a, b) => a.seq - b.seq);
    const unfinished = all.filter((j) => !isFinished(j.state));
    const finished = all.filter((j) => isFinished(j.state));
    // compaction: the live view, written aside and renamed over the journal
    await writeFileDurable(path, snapshotLines(all, totals, () => true)).catch((e: unknown) => {
      throw namedError(path, 'cannot be rewritten (compaction at start)', e);
    });
    const fh = await open(path, 'a', 0o600).catch((e: unknown) => {
      throw namedError(path, 'cannot be opened for appending', e);
    });
    const journal = new Journal(dir, fh, opts.retentionMs, opts.io ?? defaultIo, opts.retryMs ?? 2000);
    journal.size = (await fh.stat()).size;
    for (const j of all) journal.jobs.set(j.id, j);
    Object.assign(journal.totals, totals);
    return {
      journal,
      unfinished,
      finished,
      totals,
      badLines: scan.droppedCount,
      dropped: scan.dropped,
      repaired: scan.repaired,
      rebuilt,
      lost,
      damagedRequests,
      cancelled,
      read: { bytes: scan.bytes, lines: scan.lines },
      removedTemp,
    };
  }

  /** Records an accepted job: its request file, then the `accept` record; resolves when both are on
   *  disk. While the journal is degraded (and its pending records still cannot be written) it throws
   *  JournalDegradedError without writing anything. */
  async accept(job: Omit<JournalJob, 'state'>, req: ProofRequest): Promise<void> {
    const j: JournalJob = { ...job, state: 'queued' };
    const record = await requestRecord(req);
    await this.serial(async () => {
      if (!(await this.drain())) throw this.degradedError();
      try {
        await writeFileDurable(this.requestPath(job.id), record);
      } catch (e) {
        this.degrade(`request file ${this.requestPath(job.id)}: ${(e as Error).message}`);
        throw this.degradedError();
      }
      try {
        await this.append(line({ t: 'accept', job: j }));
      } catch (e) {
        await unlink(this.requestPath(job.id)).catch(() => undefined);
        throw e;
      }
    });
    this.jobs.set(j.id, j);
  }

  /** The request of an unfinished job (after a restart). A large one is read into shared memory, its fields
   *  views of it, as a large gRPC request arrives (server/stream-decoder.ts): they reach the planner's worker
   *  threads without a copy on the event loop; its checksum is hashed a slice at a time (util/hash.ts). */
  async request(id: string): Promise<ProofRequest> {
    const fh = await open(this.requestPath(id), 'r');
    let file: Buffer;
    try {
      const { size } = await fh.stat();
      file = size >= SHARED_FILE_BYTES ? Buffer.from(new SharedArrayBuffer(size)) : Buffer.alloc(size);
      for (let at = 0; at < size; ) {
        const { bytesRead } = await fh.read(file, at, size - at, at);
        if (bytesRead === 0) throw new Error(`request file ${this.requestPath(id)}: ${size - at} bytes short of its size`);
        at += bytesRead;
      }
    } finally {
      await fh.close();
    }
    const { body, sum } = requestFileBody(file);
    if (!(await sha256Joined([body])).equals(sum)) throw new Error('request file checksum mismatch');
    return requestFromBody(body, true);
  }

  /** Records that a job started. Never rejects for a full disk: the record is kept and written later. */
  running(id: string): Promise<void> {
    const j = this.jobs.get(id);
    if (j === undefined) return Promise.resolve();
    j.state = 'running';
    return this.serial(() => this.record({ text: line({ t: 'running', id }) }));
  }

  /** Records a CancelProof of an unfinished job (a restart brings it back CANCELLED even if its finish
   *  record never comes). Like running(), kept in memory while the journal cannot be written. */
  cancel(id: string): Promise<void> {
    const j = this.jobs.get(id);
    if (j === undefined || isFinished(j.state) || j.cancelledAt !== undefined) return Promise.resolve();
    const at = Date.now();
    j.cancelledAt = at;
    return this.serial(() => this.record({ text: line({ t: 'cancel', id, at }) }));
  }

  /** Records how a job ended (with the header, so a job that never was accepted is kept too). A record
   *  that cannot be written now is kept in memory and written when the journal can be written again. */
  finish(job: JournalJob): Promise<void> {
    const prev = this.jobs.get(job.id);
    if (prev === undefined || !isFinished(prev.state)) this.totals[job.state as 'completed' | 'failed' | 'cancelled']++;
    this.jobs.set(job.id, job);
    return this.serial(async () => {
      await this.record({ text: line({ t: 'finish', job }), then: () => unlink(this.requestPath(job.id)).then(() => undefined, () => undefined) });
      if (this.degradedState === undefined && this.appended > 1000 + 4 * this.jobs.size) await this.compact();
    });
  }

  /** Tries to write the pending records now; true when the journal is durable again (or was). */
  retry(): Promise<boolean> {
    let ok = false;
    return this.serial(async () => {
      ok = await this.drain();
    }).then(() => ok);
  }

  /** Forgets a finished job past its retention (the next compaction leaves it out). */
  forget(id: string): void {
    const j = this.jobs.get(id);
    if (j !== undefined && isFinished(j.state)) this.jobs.delete(id);
  }

  /** Waits for every write queued so far. */
  async flush(): Promise<void> {
    await this.chain;
  }

  async close(): Promise<void> {
    await this.chain.catch(() => undefined);
    if (this.pending.length > 0) await this.retry().catch(() => false);
    this.closed = true;
    if (this.retryTimer !== undefined) clearInterval(this.retryTimer);
    this.retryTimer = undefined;
    await this.fh.close().catch(() => undefined);
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** The refusal while degraded (why, since when, the state_dir path). */
  degradedError(): JournalDegradedError {
    const d = this.degraded!;
    return new JournalDegradedError(
      `durability lost: the job journal in [daemon] state_dir ${this.dir} cannot be written since ${new Date(d.since).toISOString()} (${d.error}); new jobs are refused until it can be (${d.pending} records waiting; free space there, it retries every ${this.retryMs / 1000} s)`,
    );
  }

  private degrade(error: string): void {
    const first = this.degradedState === undefined;
    this.degradedState = { error, since: this.degradedState?.since ?? Date.now() };
    if (first) {
      if (!this.closed && this.retryTimer === undefined) {
        this.retryTimer = setInterval(() => void this.retry().catch(() => undefined), this.retryMs);
        this.retryTimer.unref();
      }
      this.onStateChange?.(this.degraded);
    }
  }

  private recovered(): void {
    if (this.degradedState === undefined) return;
    this.degradedState = undefined;
    if (this.retryTimer !== undefined) clearInterval(this.retryTimer);
    this.retryTimer = undefined;
    this.onStateChange?.(undefined);
  }

  /** Writes the pending records in order; true when none is left (the journal is durable again). */
  private async drain(): Promise<boolean> {
    while (this.pending.length > 0) {
      const p = this.pending[0]!;
      try {
        await this.append(p.text);
      } catch {
        return false;
      }
      this.pending.shift();
      await p.then?.();
    }
    this.recovered();
    return true;
  }

  /** A record that may wait: written after the pending ones, or kept with them when it cannot be. */
  private async record(p: Pending): Promise<void> {
    this.pending.push(p);
    await this.drain();
  }

  /**
   * Appends one whole record and fsyncs it. Short writes are continued; on an error the file is cut
   * back to where the record began (no torn record stays), the journal becomes degraded and the
   * error (naming the path) is thrown. A success leaves the degraded state (the caller's drain()).
   */
  private async append(text: string): Promise<void> {
    const buf = Buffer.from(text, 'utf8');
    try {
      if (this.tornTail) {
        await this.fh.truncate(this.size);
        await this.fh.sync();
        this.tornTail = false;
      }
      let off = 0;
      while (off < buf.length) {
        const n = await this.io.write(this.fh, buf, off, buf.length - off);
        if (!(n > 0)) throw new Error(`a write of ${buf.length - off} bytes wrote ${n}`);
        off += n;
      }
      await this.fh.datasync();
      this.size += buf.length;
      this.appended++;
    } catch (e) {
      this.tornTail = true;
      try {
        await this.fh.truncate(this.size);
        await this.fh.sync();
        this.tornTail = false;
      } catch {
        /* cut at the next append */
      }
      const err = new Error(`job journal ${this.path}: ${(e as Error).message}`);
      this.degrade(err.message);
      throw err;
    }
  }

  private async compact(): Promise<void> {
    const now = Date.now();
    const all = [...this.jobs.values()].sort((a, b) => a.seq - b.seq);
    let size = 0;
    const lines = snapshotLines(all, this.totals, (j) => (j.finishedAt ?? 0) + this.retentionMs > now);
    // written aside first: a compaction that fails (a full disk) leaves the journal as it was
    try {
      await writeFileDurable(
        this.path,
        (function* () {
          for (const l of lines) {
            size += Buffer.byteLength(l);
            yield l;
          }
        })(),
      );
    } catch {
      return;
    }
    await this.fh.close();
    this.fh = await open(this.path, 'a', 0o600);
    this.size = size;
    this.tornTail = false;
    this.appended = 0;
  }
}

function isFinished(s: JournalState): boolean {
  return s === 'completed' || s === 'failed' || s === 'cancelled';
}

function line(rec: JournalRecord): string {
  const body = JSON.stringify(rec);
  return `${checksum(body)} ${body}\n`;
}

/** The live view of `jobs` (ordered by seq) as journal lines: each unfinished job's accept record
 *  (then running and cancel records), each finished job `keep` accepts, and the totals last (they
 *  count the finish records before them). */
function* snapshotLines(jobs: readonly ScannedJob[], totals: JournalOpenResult['totals'], keep: (j: JournalJob) => boolean): Generator<string> {
  const live = jobs.filter((j) => !isFinished(j.state));
  for (const { cancelledAt: _, ...j } of live) yield line({ t: 'accept', job: { ...j, state: 'queued' } });
  for (const j of live) if (j.state === 'running') yield line({ t: 'running', id: j.id });
  for (const j of live) if (j.cancelledAt !== undefined) yield line({ t: 'cancel', id: j.id, at: j.cancelledAt });
  for (const j of jobs) if (isFinished(j.state) && keep(j)) yield line({ t: 'finish', job: j });
  yield line({ t: 'totals', ...totals });
}

/** Why an unfinished job without its request file comes back FAILED (its finish record was lost). */
function lostFinishReason(id: string, file: string, dropped: readonly DroppedRecord[], droppedCount: number): string {
  const own = dropped.find((d) => d.jobId === id && d.type !== 'accept' && d.type !== 'running' && d.type !== 'cancel');
  const where =
    own !== undefined
      ? `its finish record (journal line ${own.line}) is damaged: ${own.reason}`
      : droppedCount > 0
        ? `its finish record was lost: the journal had ${droppedCount} damaged or torn record(s)`
        : 'its finish record is not in the journal';
  return (
    `after a restart: the job had finished (its request file ${file} is gone, and a request file is removed only once the job's finish record is written), ` +
    `but ${where}; its result is not known: submit the request again`
  );
}
