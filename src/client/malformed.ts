/**
 * Malformed requests for the daemon, by class (the fuzz test and `npm run bench:soak` share them):
 * random bytes, truncated and mistyped JSON, corrupted base64, mutations of a valid C1, values
 * outside the proto enums, oversized request ids and inputs, unicode, deep nesting, unknown job ids
 * and circuit ids. Every one must get a clean answer: a gRPC error with a status other than INTERNAL
 * and a bounded message, or a job that FAILS with a bounded message naming the problem.
 */

export interface MalformedCase {
  cls: string;
  method: 'SubmitProof' | 'AwaitProof' | 'CancelProof' | 'PreloadSRS' | 'EvictSRS';
  req: Record<string, unknown>;
}

/** The classes (names) malformedCase draws from, with their weights. */
export const MALFORMED_CLASSES: readonly (readonly [string, number])[] = [
  ['random-bytes', 12],
  ['truncated-json', 10],
  ['mistyped-json', 10],
  ['corrupt-base64', 8],
  ['c1-mutation', 4],
  ['bad-kind', 6],
  ['bad-priority', 6],
  ['long-request-id', 5],
  ['unicode', 8],
  ['deep-nesting', 5],
  ['demo-bad-values', 8],
  ['unknown-job', 8],
  ['bad-circuit', 6],
  ['wrong-fields', 4],
];

export interface MalformedInputs {
  /** A valid Commit2In wrapper (JSON bytes). */
  commit2in: Uint8Array;
  /** The raw C1 JSON inside it. */
  c1: Uint8Array;
}

export interface U32Source {
  u32(): number;
}

const POREP = 1;
const DEMO = 1000;

export function malformedCase(r: U32Source, inputs: MalformedInputs, cls?: string): MalformedCase {
  const int = (n: number): number => r.u32() % Math.max(1, n);
  const bytes = (n: number): Buffer => {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = r.u32() & 0xff;
    return b;
  };
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  if (cls === undefined) {
    const total = MALFORMED_CLASSES.reduce((n, [, w]) => n + w, 0);
    let x = int(total);
    for (const [c, w] of MALFORMED_CLASSES) {
      if (x < w) {
        cls = c;
        break;
      }
      x -= w;
    }
  }
  const submit = (req: Record<string, unknown>): MalformedCase => ({ cls: cls!, method: 'SubmitProof', req });
  const c2 = (): Record<string, unknown> => JSON.parse(Buffer.from(inputs.commit2in).toString('utf8')) as Record<string, unknown>;
  const unicode = (): string => pick(['🦀', 'Ω', '\u202e', '\u0000', 'ß', '中', '\ud83d', '\uffff', 'é']).repeat(1 + int(8));
  switch (cls) {
    case 'random-bytes':
      return submit({ proof_kind: pick([POREP, DEMO]), vanilla_proof: bytes(int(4096)) });
    case 'truncated-json': {
      const src = pick([inputs.commit2in, inputs.c1]);
      return submit({ proof_kind: POREP, vanilla_proof: Buffer.from(src.subarray(0, int(src.length))) });
    }
    case 'mistyped-json': {
      const o = c2();
      const key = pick(['SectorNum', 'SectorSize', 'Phase1Out', 'Miner']);
      o[key] = pick<unknown>(['x', -1, 1.5, [], {}, null, true, 2 ** 64, '9'.repeat(400)]);
      return submit({ proof_kind: POREP, vanilla_proof: Buffer.from(JSON.stringify(o)) });
    }
    case 'corrupt-base64': {
      const o = c2();
      const s = String(o.Phase1Out);
      const at = int(s.length);
      o.Phase1Out = pick([`${s.slice(0, at)}!${s.slice(at + 1)}`, s.slice(0, at), `${s}=`, s.replace(/[A-M]/g, '-')]);
      return submit({ proof_kind: POREP, vanilla_proof: Buffer.from(JSON.stringify(o)) });
    }
    case 'c1-mutation': {
      const o = JSON.parse(Buffer.from(inputs.c1).toString('utf8')) as unknown;
      mutateNumber(o, int, pick);
      return submit({ proof_kind: POREP, vanilla_proof: Buffer.from(JSON.stringify(o)) });
    }
    case 'bad-kind':
      return submit({ proof_kind: pick([5, 6, 77, 999, 1001, 65535, -1, 2 ** 31 - 1]), vanilla_proof: Buffer.from('{}') });
    case 'bad-priority':
      return submit({ proof_kind: DEMO, priority: pick([5, 9, 100, -1, -7, 2 ** 31 - 1]), vanilla_proof: Buffer.from('{}') });
    case 'long-request-id':
      return submit({ proof_kind: DEMO, request_id: 'r'.repeat(257 + int(20_000)), vanilla_proof: Buffer.from('{}') });
    case 'unicode':
      return pick([
        () => submit({ proof_kind: POREP, request_id: unicode().slice(0, 60), vanilla_proof: Buffer.from(`{"SectorNum":"${unicode()}"}`) }),
        () => submit({ proof_kind: DEMO, vanilla_proof: Buffer.from(JSON.stringify({ seed: unicode() })) }),
        (): MalformedCase => ({ cls: cls!, method: 'AwaitProof', req: { job_id: unicode(), timeout_ms: 1 } }),
        (): MalformedCase => ({ cls: cls!, method: 'PreloadSRS', req: { circuit_id: unicode() } }),
      ])();
    case 'deep-nesting': {
      const n = 65 + int(200_000);
      const text = pick(['[', '{"a":', '[{"b":']).repeat(n);
      return submit({ proof_kind: pick([POREP, DEMO]), vanilla_proof: Buffer.from(text) });
    }
    case 'demo-bad-values': {
      const key = pick(['seed', 'partitions', 'constraints']);
      // every value is outside the demo kind's ranges for every key (null would mean "the default")
      const v = pick<unknown>([-1, 0.5, 'x', 1e12, [], { a: 1 }, 2 ** 53, 'z'.repeat(int(100_000))]);
      return submit({ proof_kind: DEMO, vanilla_proof: Buffer.from(JSON.stringify({ partitions: 0, [key]: v })) });
    }
    case 'unknown-job':
      return {
        cls,
        method: pick(['AwaitProof', 'CancelProof'] as const),
        req: { job_id: pick(['', 'nope', bytes(16).toString('hex'), 'x'.repeat(int(10_000))]), timeout_ms: pick([0, 1, '9223372036854775808', '18446744073709551615']) },
      };
    case 'bad-circuit':
      return { cls, method: pick(['PreloadSRS', 'EvictSRS'] as const), req: { circuit_id: pick(['', 'porep-1g', 'demo-x', 'porep-2k/../../etc', 'x'.repeat(int(5000)), 'demo-99999999999']) } };
    case 'wrong-fields':
      return submit({ proof_kind: POREP, vanilla_proof: inputs.commit2in, sector_size: pick([1, 4096, 34359738368]), registered_proof: pick([0, 3, 99]), sector_number: pick([0, 5, 1e9]) });
    default:
      throw new Error(`unknown malformed class ${cls}`);
  }
}

/** Changes one number (or byte) somewhere inside a parsed JSON value, in place. */
function mutateNumber(root: unknown, int: (n: number) => number, pick: <T>(xs: readonly T[]) => T): void {
  // walk down random branches to a number
  let node = root as Record<string, unknown> | unknown[];
  for (let depth = 0; depth < 40; depth++) {
    const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    if (keys.length === 0) return;
    const k = keys[int(keys.length)] as never;
    const v = (node as Record<string, unknown>)[k];
    if (typeof v === 'number') {
      (node as Record<string, unknown>)[k] = pick([v ^ 1, v + 1, v > 0 ? v - 1 : 7, 255 - v, -v - 1]);
      return;
    }
    if (v !== null && typeof v === 'object') node = v as Record<string, unknown>;
    else {
      (node as Record<string, unknown>)[k] = pick<unknown>([1, 'x', null]);
      return;
    }
  }
}
