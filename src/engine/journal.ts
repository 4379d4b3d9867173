/**
 * Durable jobs: an append-only, fsync'd write-ahead journal under `[daemon] state_dir`.
 *
 *   <state_dir>/journal.log          one record per line: `<sha256 prefix, 16 hex> <JSON>\n`
 *   <state_dir>/requests/<job id>    the request of each accepted, unfinished job (binary, below)
 *
 * SubmitProof answers only after the job's request file and its `accept` record are on disk
 * (written, fsync'd, and the directory entry fsync'd): an acknowledged job survives `kill -9` and
 * a power cut. On start the journal is read (a torn last line, from a crash mid-append, fails its
 * checksum and is dropped), unfinished jobs (queued or running) are planned and queued again under
 * their ids, finished ones are kept for AwaitProof until `job_retention_s` after they ended, and the
 * journal is compacted (rewritten to a temporary file, fsync'd, renamed over the old one).
 *
 * Why a journal and not SQLite: the daemon needs one table, written in order and read whole at
 * start; no native SQLite binding is installed here and npm packages must build offline (and
 * node:sqlite needs Node 22.5+, kiln runs on Node 20). A journal of JSON lines with a checksum per
 * record, fsync after each append and a compaction by rename gives the same promise (an
 * acknowledged write survives a crash) with nothing but node:fs, and stays readable with `cat`.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, rm, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobTimings } from './jobs.js';
import { proofRequest, type ProofRequest } from './types.js';

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
}

type JournalRecord =
  | { t: 'accept'; job: JournalJob }
  | { t: 'running'; id: string }
  | { t: 'finish'; job: JournalJob }
  | { t: 'totals'; completed: number; failed: number; cancelled: number };

export interface JournalOpenResult {
  journal: Journal;
  /** Unfinished jobs (queued or running when the daemon stopped), oldest first. */
  unfinished: JournalJob[];
  /** Finished jobs still within their retention. */
  finished: JournalJob[];
  totals: { completed: number; failed: number; cancelled: number };
  /** Lines that failed their checksum or did not parse (a torn last line after a crash). */
  badLines: number;
  /** Temporary files of an interrupted write that were removed. */
  removedTemp: string[];
}

const checksum = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);
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

/** Writes `data` to `path` durably: a temporary name in the same directory, fsync, rename, fsync of the directory. */
export async function writeFileDurable(path: string, data: Uint8Array | string): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf('/')) || '/';
  const tmp = `${path}.tmp-${process.pid}-${createHash('sha256').update(`${Math.random()}`).digest('hex').slice(0, 8)}`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await rm(tmp, { force: true });
    throw e;
  }
  await fh.close();
  await rename(tmp, path);
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

/** A request as bytes: magic, u32 header length, JSON header (scalars, byte-field lengths), the byte fields. */
export function encodeRequest(r: ProofRequest): Uint8Array {
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
  const body = Buffer.concat([Buffer.from(REQ_MAGIC), len, h, ...fields]);
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

export function decodeRequest(b: Uint8Array): ProofRequest {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  if (buf.length < REQ_MAGIC.length + 4 + 32 || buf.subarray(0, REQ_MAGIC.length).toString() !== REQ_MAGIC) throw new Error('not a kiln request file');
  const body = buf.subarray(0, buf.length - 32);
  if (!createHash('sha256').update(body).digest().equals(buf.subarray(buf.length - 32))) throw new Error('request file checksum mismatch');
  const hl = body.readUInt32LE(REQ_MAGIC.length);
  const h = JSON.parse(body.subarray(REQ_MAGIC.length + 4, REQ_MAGIC.length + 4 + hl).toString('utf8')) as Record<string, unknown> & { lengths: number[]; vanillaProofs: number };
  let at = REQ_MAGIC.length + 4 + hl;
  const parts = h.lengths.map((n) => {
    const p = new Uint8Array(body.subarray(at, at + n));
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

export class Journal {
  private chain: Promise<void> = Promise.resolve();
  private appended = 0;
  private failed: Error | undefined;
  /** The latest record of every job (what a compaction writes). */
  private readonly jobs = new Map<string, JournalJob>();
  readonly totals = { completed: 0, failed: 0, cancelled: 0 };

  private constructor(
    readonly dir: string,
    private fh: FileHandle,
    private readonly retentionMs: number,
  ) {}

  get path(): string {
    return join(this.dir, 'journal.log');
  }

  private requestPath(id: string): string {
    return join(this.dir, 'requests', id);
  }

  /** Opens (creating) the journal in `dir`, recovers its jobs, compacts it. */
  static async open(dir: string, opts: { retentionMs: number; now?: number }): Promise<JournalOpenResult> {
    await mkdir(join(dir, 'requests'), { recursive: true, mode: 0o700 });
    const removedTemp = await cleanTempFiles([dir, join(dir, 'requests')]);
    const now = opts.now ?? Date.now();
    const jobs = new Map<string, JournalJob>();
    const totals = { completed: 0, failed: 0, cancelled: 0 };
    let badLines = 0;
    let text = '';
    try {
      text = await readFile(join(dir, 'journal.log'), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const complete = text.split('\n');
    if (complete.pop() !== '') badLines++; // a last line without its newline: torn by a crash mid-append
    for (const line of complete) {
      const sp = line.indexOf(' ');
      const body = sp > 0 ? line.slice(sp + 1) : '';
      if (sp !== 16 || checksum(body) !== line.slice(0, 16)) {
        badLines++;
        continue;
      }
      let rec: JournalRecord;
      try {
        rec = JSON.parse(body) as JournalRecord;
      } catch {
        badLines++;
        continue;
      }
      if (rec.t === 'accept') jobs.set(rec.job.id, { ...rec.job, state: 'queued' });
      else if (rec.t === 'running') {
        const j = jobs.get(rec.id);
        if (j !== undefined && j.state === 'queued') j.state = 'running';
      } else if (rec.t === 'finish') {
        const prev = jobs.get(rec.job.id);
        if (prev === undefined || !isFinished(prev.state)) totals[rec.job.state as 'completed' | 'failed' | 'cancelled']++;
        jobs.set(rec.job.id, rec.job);
      } else if (rec.t === 'totals') {
        totals.completed = rec.completed;
        totals.failed = rec.failed;
        totals.cancelled = rec.cancelled;
      }
    }
    // drop finished jobs past their retention; unfinished ones need their request file
    const unfinished: JournalJob[] = [];
    const finished: JournalJob[] = [];
    const keepRequests = new Set<string>();
    for (const j of [...jobs.values()].sort((a, b) => a.seq - b.seq)) {
      if (isFinished(j.state)) {
        if ((j.finishedAt ?? 0) + opts.retentionMs > now) finished.push(j);
        else jobs.delete(j.id);
      } else {
        unfinished.push(j);
        keepRequests.add(j.id);
      }
    }
    for (const f of await readdir(join(dir, 'requests'))) if (!keepRequests.has(f)) await rm(join(dir, 'requests', f), { force: true });
    // compaction: the live view, written aside and renamed over the journal
    const snapshot = [
      line({ t: 'totals', ...totals }),
      ...unfinished.map((j) => line({ t: 'accept', job: { ...j, state: 'queued' } })),
      ...unfinished.filter((j) => j.state === 'running').map((j) => line({ t: 'running', id: j.id })),
      ...finished.map((j) => line({ t: 'finish', job: j })),
    ].join('');
    await writeFileDurable(join(dir, 'journal.log'), snapshot);
    const fh = await open(join(dir, 'journal.log'), 'a', 0o600);
    const journal = new Journal(dir, fh, opts.retentionMs);
    for (const j of jobs.values()) journal.jobs.set(j.id, j);
    Object.assign(journal.totals, totals);
    return { journal, unfinished, finished, totals, badLines, removedTemp };
  }

  /** Records an accepted job: its request file, then the `accept` record; resolves when both are on disk. */
  async accept(job: Omit<JournalJob, 'state'>, req: ProofRequest): Promise<void> {
    const j: JournalJob = { ...job, state: 'queued' };
    await this.serial(async () => {
      await writeFileDurable(this.requestPath(job.id), encodeRequest(req));
      await this.write(line({ t: 'accept', job: j }));
    });
    this.jobs.set(j.id, j);
  }

  /** The request of an unfinished job (after a restart). */
  async request(id: string): Promise<ProofRequest> {
    return decodeRequest(await readFile(this.requestPath(id)));
  }

  running(id: string): Promise<void> {
    const j = this.jobs.get(id);
    if (j === undefined) return Promise.resolve();
    j.state = 'running';
    return this.serial(() => this.write(line({ t: 'running', id })));
  }

  /** Records how a job ended (with the header, so a job that never was accepted is kept too). */
  finish(job: JournalJob): Promise<void> {
    const prev = this.jobs.get(job.id);
    if (prev === undefined || !isFinished(prev.state)) this.totals[job.state as 'completed' | 'failed' | 'cancelled']++;
    this.jobs.set(job.id, job);
    return this.serial(async () => {
      await this.write(line({ t: 'finish', job }));
      await unlink(this.requestPath(job.id)).catch(() => undefined);
      if (this.appended > 1000 + 4 * this.jobs.size) await this.compact();
    });
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
    await this.fh.close().catch(() => undefined);
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const p = this.chain.then(() => {
      if (this.failed) throw this.failed;
      return fn();
    });
    this.chain = p.catch(() => undefined);
    return p;
  }

  private async write(text: string): Promise<void> {
    try {
      await this.fh.write(text);
      await this.fh.datasync();
      this.appended++;
    } catch (e) {
      // a journal that cannot be written cannot promise anything: refuse further work
      this.failed = new Error(`job journal ${this.path}: ${(e as Error).message}`);
      throw this.failed;
    }
  }

  private async compact(): Promise<void> {
    const all = [...this.jobs.values()].sort((a, b) => a.seq - b.seq);
    const now = Date.now();
    const text = [
      line({ t: 'totals', ...this.totals }),
      ...all.filter((j) => !isFinished(j.state)).map((j) => line({ t: 'accept', job: { ...j, state: 'queued' } })),
      ...all.filter((j) => j.state === 'running').map((j) => line({ t: 'running', id: j.id })),
      ...all.filter((j) => isFinished(j.state) && (j.finishedAt ?? 0) + this.retentionMs > now).map((j) => line({ t: 'finish', job: j })),
    ].join('');
    await this.fh.close();
    await writeFileDurable(this.path, text);
    this.fh = await open(this.path, 'a', 0o600);
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
