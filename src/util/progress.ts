/**
 * The one progress helper of the CLI: `(stage, done, total)` callbacks rendered with cli-progress on
 * stderr, one bar per stage (a new stage replaces the bar). Bars are drawn only when both stdout and
 * stderr are terminals (`KILN_PROGRESS=0` turns them off, `=1` forces them); otherwise every call is
 * a no-op, so scripts that pipe kiln's output see no control characters. Libraries never draw: they
 * take a progress callback and the CLI passes `progress` in. `log` prints a line without tearing the
 * bar (the bar's line is cleared, the line printed, the bar redrawn).
 */
import cliProgress from 'cli-progress';

export type ProgressFn = (stage: string, done: number, total: number) => void;

export interface ProgressRenderer {
  readonly progress: ProgressFn;
  /** Whether bars are drawn (false when stdout is not a terminal). */
  readonly enabled: boolean;
  /** Prints a line (to stdout), keeping the bar intact below it. */
  log(line: string): void;
  /** Stops the current bar (call once at the end, also on errors; idempotent). */
  stop(): void;
}

/** Whether progress bars should be drawn for this process. */
export function progressWanted(stream: NodeJS.WriteStream = process.stderr): boolean {
  const env = process.env.KILN_PROGRESS;
  if (env === '0') return false;
  if (env === '1') return true;
  return Boolean(process.stdout.isTTY && stream.isTTY);
}

export function cliProgressRenderer(stream: NodeJS.WriteStream = process.stderr, enabled = progressWanted(stream)): ProgressRenderer {
  if (!enabled) return { progress: () => {}, enabled: false, log: (l) => console.log(l), stop: () => {} };
  let bar: cliProgress.SingleBar | undefined;
  let current: string | undefined;
  const stop = (): void => {
    bar?.stop();
    bar = undefined;
    current = undefined;
  };
  const progress: ProgressFn = (stage, done, total) => {
    if (stage !== current || bar === undefined) {
      stop();
      current = stage;
      bar = new cliProgress.SingleBar(
        {
          stream,
          format: `${stage.padEnd(16)} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}`,
          hideCursor: false,
          clearOnComplete: false,
          etaBuffer: 50,
          fps: 5,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, done);
      return;
    }
    bar!.setTotal(total);
    bar!.update(done);
  };
  const log = (line: string): void => {
    if (bar === undefined) {
      console.log(line);
      return;
    }
    stream.write('\r\x1b[2K'); // clear the bar's line, print, redraw the bar below
    process.stdout.write(`${line}\n`);
    (bar as unknown as { render(): void }).render();
  };
  return { progress, enabled: true, log, stop };
}
