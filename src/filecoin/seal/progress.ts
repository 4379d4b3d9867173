/**
 * A `(stage, done, total)` progress callback rendered with cli-progress on stderr: one bar per stage,
 * replaced when the stage changes. The library never draws anything itself; the CLI passes this in.
 */
import cliProgress from 'cli-progress';

export interface ProgressRenderer {
  readonly progress: (stage: string, done: number, total: number) => void;
  /** Stops the current bar (call once at the end, also on errors). */
  stop(): void;
}

export function cliProgressRenderer(stream: NodeJS.WriteStream = process.stderr): ProgressRenderer {
  let bar: cliProgress.SingleBar | undefined;
  let current: string | undefined;
  const stop = (): void => {
    bar?.stop();
    bar = undefined;
    current = undefined;
  };
  const progress = (stage: string, done: number, total: number): void => {
    if (stage !== current) {
      stop();
      current = stage;
      bar = new cliProgress.SingleBar({
        stream,
        format: `${stage.padEnd(16)} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}`,
        hideCursor: false,
        clearOnComplete: false,
        etaBuffer: 50,
        fps: 5,
      }, cliProgress.Presets.shades_classic);
      bar.start(total, done);
      return;
    }
    bar!.setTotal(total);
    bar!.update(done);
  };
  return { progress, stop };
}
