/**
 * Loggers: pino, as JSON lines (the default: for log collectors) or as text lines for a person
 * (`[logging] format = "text"`): `2026-12-05T10:00:00.123Z INFO  kiln daemon listening grpc=… http=…`. The CLI's
 * in-process engines (kiln prove, prove-post, prove-snap, demo) log warnings as text on stderr and leave out what
 * the command reports itself (cliEngineLogger).
 */
import { pino, type Logger } from 'pino';

export type LogFormat = 'json' | 'text';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has (shown in the line's head) or that are too big for a line (a job's span tree: GET /jobs/<id>). */
const HEAD = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service', 'spans']);

function showValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/** One pino JSON line as a text line: time, level, message, then key=value for the other fields. */
export function formatLogLine(json: string, opts: { time?: boolean } = {}): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.replace(/\n$/, '');
  }
  const level = LEVELS[rec.level as number] ?? String(rec.level);
  const fields = Object.entries(rec)
    .filter(([k, v]) => !HEAD.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${showValue(v)}`);
  const time = opts.time === false || typeof rec.time !== 'number' ? '' : `${new Date(rec.time).toISOString()} `;
  return `${time}${level.padEnd(5)} ${String(rec.msg ?? '')}${fields.length ? `  ${fields.join(' ')}` : ''}`;
}

/** A destination that writes each record as a text line to `out`. */
function textDestination(out: (line: string) => void, opts: { time?: boolean; drop?: (rec: string) => boolean } = {}): { write(s: string): void } {
  return {
    write(s: string): void {
      for (const line of s.split('\n')) {
        if (line === '' || opts.drop?.(line)) continue;
        out(formatLogLine(line, opts));
      }
    },
  };
}

/** The daemon's logger: JSON lines (default) or text lines on stdout. */
export function createLogger(o: { level: string; format?: LogFormat; base?: Record<string, unknown> }): Logger {
  const options = { level: o.level, base: o.base ?? { service: 'kiln' } };
  if (o.format === 'text') return pino(options, textDestination((l) => void process.stdout.write(`${l}\n`)));
  return pino(options);
}

/** Messages the CLI reports itself: a failed job (its error is what the command prints, once) and span gaps (a
 *  debug detail of the span tree). */
const CLI_OWN = ['"msg":"proof job failed"', '"msg":"span gap over 2 %"'];

/** The logger of the CLI's in-process engines: warnings and errors as `kiln: WARN  …` text lines on stderr, not
 *  JSON, and none of what the command reports itself. */
export function cliEngineLogger(write: (line: string) => void = (l) => void process.stderr.write(`${l}\n`)): Logger {
  return pino(
    { level: 'warn', base: undefined },
    textDestination((l) => write(`kiln: ${l}`), { time: false, drop: (rec) => CLI_OWN.some((m) => rec.includes(m)) }),
  );
}
