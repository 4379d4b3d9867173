/**
 * The one progress helper of the CLI: `(stage, done, total)` callbacks rendered on stderr. On a terminal
 * (stdout and stderr both TTYs, or `KILN_PROGRESS=1`) a cli-progress bar per stage with its ETA (a new stage
 * replaces the bar); otherwise a plain line every `KILN_PROGRESS_INTERVAL` seconds (default 10) while work goes
 * on: `kiln: proving partitions: 3/10 (30 %), 1 min 05 s, about 2 min 32 s left`, so that logs and pipes show
 * long work too, without control characters. `KILN_PROGRESS=0` turns both off. A total of 0 means "not known":
 * only the time spent is shown. Libraries never draw: they take a progress callback and the CLI passes
 * `progress` in. `log` prints a line without tearing the bar (the bar's line is cleared, the line printed, the
 * bar redrawn).
 */
import cliProgress from 'cli-progress';
import { formatDuration } from './timing.js';

export type ProgressFn = (stage: string, done: number, total: number) => void;

export interface ProgressRenderer {
  readonly progress: ProgressFn;
  /** Whether bars are drawn (false when stdout is not a terminal: then lines are printed now and then). */
  readonly enabled: boolean;
  /** Prints a line (to stdout), keeping the bar intact below it. */
  log(line: string): void;
  /** Prints a line to the progress stream (stderr), keeping the bar intact below it. */
  say(line: string): void;
  /** Stops the current bar or line timer (call once at the end, also on errors; idempotent). */
  stop(): void;
}

/** Whether progress bars should be drawn for this process. */
export function progressWanted(stream: NodeJS.WriteStream = process.stderr): boolean {
  const env = process.env.KILN_PROGRESS;
  if (env === '0') return false;
  if (env === '1') return true;
  return Boolean(process.stdout.isTTY && stream.isTTY);
}

/** Milliseconds between progress lines when no bar is drawn: `KILN_PROGRESS_INTERVAL` seconds, default 10. */
export function progressLineIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const s = Number(env.KILN_PROGRESS_INTERVAL);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 10_000;
}

export interface ProgressOptions {
  /** Lines when no bar is drawn (default: unless KILN_PROGRESS=0). */
  lines?: boolean;
  /** Between lines (default progressLineIntervalMs()). */
  intervalMs?: number;
  /** Where lines go (default: the stream). */
  print?: (line: string) => void;
}

export function cliProgressRenderer(stream: NodeJS.WriteStream = process.stderr, enabled = progressWanted(stream), opts: ProgressOptions = {}): ProgressRenderer {
  if (!enabled) {
    if (opts.lines ?? process.env.KILN_PROGRESS !== '0') {
      return lineRenderer(opts.intervalMs ?? progressLineIntervalMs(), opts.print ?? ((l) => void stream.write(`${l}\n`)));
    }
    return { progress: () => {}, enabled: false, log: (l) => console.log(l), say: (l) => void stream.write(`${l}\n`), stop: () => {} };
  }
  let bar: cliProgress.SingleBar | undefined;
  let current: string | undefined;
  let known = false;
  const stop = (): void => {
    bar?.stop();
    bar = undefined;
    current = undefined;
  };
  const progress: ProgressFn = (stage, done, total) => {
    if (stage !== current || bar === undefined || known !== total > 0) {
      stop();
      current = stage;
      known = total > 0;
      bar = new cliProgress.SingleBar(
        {
          stream,
          format: !known
            ? `${stage.padEnd(16)} {duration_formatted}`
            : isPercent(stage, total)
              ? `${stage.slice(0, -4).padEnd(16)} [{bar}] {percentage}% | {duration_formatted} | ETA {eta_formatted}`
              : `${stage.padEnd(16)} [{bar}] {percentage}% | {value}/{total} | {duration_formatted} | ETA {eta_formatted}`,
          hideCursor: false,
          clearOnComplete: false,
          etaBuffer: 50,
          etaAsynchronousUpdate: true,
          fps: 5,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(Math.max(total, 1), done);
      return;
    }
    bar!.setTotal(Math.max(total, 1));
    bar!.update(done);
  };
  const around = (print: () => void): void => {
    if (bar === undefined) return print();
    stream.write('\r\x1b[2K'); // clear the bar's line, print, redraw the bar below
    print();
    (bar as unknown as { render(): void }).render();
  };
  const log = (line: string): void => around(() => void process.stdout.write(`${line}\n`));
  const say = (line: string): void => around(() => void stream.write(`${line}\n`));
  return { progress, enabled: true, log, say, stop };
}

/** A stage counted in percent: its name ends with " (%)" and its total is 100. */
const isPercent = (stage: string, total: number): boolean => total === 100 && stage.endsWith(' (%)');

/** A progress line: the stage, the counts and share when the total is known, the time spent and what is left. */
export function progressLine(stage: string, done: number, total: number, elapsedMs: number, etaMs: number | undefined): string {
  const percent = isPercent(stage, total);
  const counts = percent ? `${done} %, ` : total > 0 ? `${done}/${total} (${Math.floor((100 * done) / total)} %), ` : done > 0 ? `${done} so far, ` : '';
  const left = etaMs !== undefined && total > 0 && done < total ? `, about ${formatDuration(etaMs)} left` : '';
  return `kiln: ${percent ? stage.slice(0, -4) : stage}: ${counts}${formatDuration(elapsedMs)}${left}`;
}

/** Without a terminal: a line every `intervalMs` while a stage is under way (a timer, so that work that reports
 *  nothing for a while still shows; and the calls themselves, for synchronous work that holds the event loop). */
function lineRenderer(intervalMs: number, print: (line: string) => void): ProgressRenderer {
  let stage: string | undefined;
  let done = 0;
  let total = 0;
  let stageT0 = 0;
  let stageDone0 = 0;
  let last = performance.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  const due = (): void => {
    const now = performance.now();
    if (stage === undefined || now - last < intervalMs) return;
    last = now;
    const elapsed = now - stageT0;
    const rate = done > stageDone0 ? (done - stageDone0) / elapsed : 0;
    print(progressLine(stage, done, total, elapsed, rate > 0 ? (total - done) / rate : undefined));
  };
  const progress: ProgressFn = (s, d, t) => {
    if (s !== stage) {
      stage = s;
      stageT0 = performance.now();
      stageDone0 = d;
    }
    done = d;
    total = t;
    if (timer === undefined) {
      timer = setInterval(due, Math.min(intervalMs, 1000));
      timer.unref();
    }
    due();
  };
  const stop = (): void => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    stage = undefined;
  };
  return { progress, enabled: false, log: (l) => console.log(l), say: print, stop };
}

/** What a command tells a person on stderr: its lines (`say`) and its progress (a bar or periodic lines), both
 *  silent with --json (`quiet`). Call `stop` at the end, also on errors. */
export function commandProgress(quiet: boolean): { say: (line: string) => void; progress: ProgressFn | undefined; stop(): void } {
  if (quiet) return { say: () => {}, progress: undefined, stop: () => {} };
  const r = cliProgressRenderer();
  return { say: (l) => r.say(l), progress: r.progress, stop: () => r.stop() };
}
