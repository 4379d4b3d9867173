/**
 * The daemon's size limits (README "Limits"): what one request may make the daemon hold, log or
 * answer. Each is enforced where the data enters (gRPC handlers, the engine, the planners).
 */

/** request_id: at most this many UTF-8 bytes (cuzk's ids are UUIDs or `<kind>-<sector>` strings). */
export const MAX_REQUEST_ID_BYTES = 256;
/** Error messages (job errors, gRPC details, log fields): at most this many characters. */
export const MAX_ERROR_CHARS = 4096;
/** JSON inputs (Commit2In, C1, the demo body): at most this nesting depth. */
export const MAX_JSON_DEPTH = 64;
/** Jobs listed by GET /status (most recent first; counts by state cover all). */
export const STATUS_JOBS_DEFAULT = 50;
export const STATUS_JOBS_MAX = 500;
/** Unfinished jobs shown by GET /status/timeline (running first; its `liveJobs` counts them all). */
export const TIMELINE_LIVE_JOBS = 50;
/** Node's timers hold at most 2^31 − 1 ms (~24.8 days); longer waits are chunked. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `s` cut to `max` characters with a marker saying how much was cut. */
export function boundText(s: string, max = MAX_ERROR_CHARS): string {
  if (s.length <= max) return s;
  return `${s.slice(0, max)}… [${s.length - max} more characters cut]`;
}

/** Waits `ms` milliseconds (any non-negative number, Infinity included) in timer-sized chunks;
 *  resolves early when `until` settles. Returns true when the time ran out. */
export function waitMs(ms: number, until: Promise<unknown>): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const end = Date.now() + ms; // Infinity stays Infinity
    const arm = (): void => {
      const left = end - Date.now();
      if (left <= 0) {
        done = true;
        resolve(true);
        return;
      }
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    };
    until.then(
      () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(false);
      },
      () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(false);
      },
    );
    arm();
  });
}

/**
 * The deepest nesting of arrays/objects in JSON text (strings skipped), stopping as soon as it
 * passes `max`: a linear scan that refuses `[[[[…` before JSON.parse or a recursive walk sees it.
 */
export function jsonDepthExceeds(text: string | Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  const str = typeof text === 'string';
  for (let i = 0; i < text.length; i++) {
    const b = str ? text.charCodeAt(i) : (text as Uint8Array)[i];
    if (inString) {
      if (b === 0x5c) i++; // backslash: skip the escaped byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      if (++depth > max) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}
