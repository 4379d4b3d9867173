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
  // one loop per type (a loop reading either one was ~10x slower: 440 ms for a 32 GiB C1); a string's
  // content is skipped with the runtime's own search for its closing quote
  return typeof text === 'string' ? depthExceedsText(text, max) : depthExceedsBytes(text, max);
}

/** Where the string whose opening quote is at `open` ends (its closing quote), or −1. */
function closingQuote(find: (from: number) => number, at: (i: number) => number, open: number): number {
  let j = find(open + 1);
  while (j >= 0) {
    let backslashes = 0;
    while (at(j - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return j;
    j = find(j + 1);
  }
  return -1;
}

/** The characters that change the depth or start a string: the regular expression skips the rest natively. */
const JSON_STRUCTURE = /["[\]{}]/g;

function depthExceedsText(text: string, max: number): boolean {
  let depth = 0;
  const find = (from: number): number => text.indexOf('"', from);
  const at = (i: number): number => text.charCodeAt(i);
  const re = new RegExp(JSON_STRUCTURE);
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const b = text.charCodeAt(m.index);
    if (b === 0x22) {
      const end = closingQuote(find, at, m.index);
      if (end < 0) return false; // an unterminated string: JSON.parse says so
      re.lastIndex = end + 1;
    } else if (b === 0x5b || b === 0x7b) {
      if (++depth > max) return true;
    } else depth--;
  }
  return false;
}

function depthExceedsBytes(text: Uint8Array, max: number): boolean {
  let depth = 0;
  const find = (from: number): number => text.indexOf(0x22, from);
  const at = (i: number): number => text[i] ?? -1;
  for (let i = 0; i < text.length; i++) {
    const b = text[i]!;
    if (b === 0x22) {
      const end = closingQuote(find, at, i);
      if (end < 0) return false;
      i = end;
    } else if (b === 0x5b || b === 0x7b) {
      if (++depth > max) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}
