/**
 * grpc-js's StreamDecoder (the length-prefixed messages of a call's DATA frames) with one change: a
 * message is copied into one buffer frame by frame as it arrives, instead of keeping the frames and
 * joining them (Buffer.concat) when the last one comes. That join was one copy of the whole request
 * on the event loop, the largest stall a large request caused: 200–810 ms for 100 MiB on the 2-core
 * dev machine (fresh pages), in kiln and in a bare grpc-js server alike (bench/ingest.ts, profiles).
 * A message of SHARED_MESSAGE_BYTES or more is put in a SharedArrayBuffer, so that its byte fields
 * (protobufjs decodes them as views of it) reach worker threads without being copied again: the
 * structured clone of a view on an ordinary buffer copies the whole buffer, here on the event loop
 * (the planning task of a 49 MiB C1: 227–377 ms).
 *
 * grpc-js creates one StreamDecoder per call (server and client side) from its module's export; the
 * class's `write` is replaced once per process (installStreamDecoder), so every call after that,
 * client calls in the same process too, decodes this way. A decoder in the middle of a message when
 * it is installed finishes with grpc-js's own code.
 */
import { createRequire } from 'node:module';

/** Messages (5-byte frame header included) of at least this many bytes go into a SharedArrayBuffer. */
export const SHARED_MESSAGE_BYTES = 1 << 20;

interface GrpcStreamDecoder {
  maxReadMessageLength: number;
  readState: number;
  write(data: Buffer): Buffer[];
}

interface DecodeState {
  /** The frame header: compressed flag and big-endian length. */
  head: Buffer;
  headAt: number;
  /** The framed message being filled (header included, as grpc-js hands it on), and how far. */
  msg: Buffer | undefined;
  at: number;
}

const STATE = Symbol('kiln.streamDecoder');
type Patched = GrpcStreamDecoder & { [STATE]?: DecodeState };

/** `write` of a decoder: the framed messages `data` completes (flag, length, message bytes). */
function decoderWrite(this: Patched, data: Buffer, original: (this: GrpcStreamDecoder, data: Buffer) => Buffer[]): Buffer[] {
  // a decoder grpc-js's own code left in the middle of a message goes on with it (readState 0: NO_DATA)
  if (this[STATE] === undefined && this.readState !== 0) return original.call(this, data);
  const s = (this[STATE] ??= { head: Buffer.alloc(5), headAt: 0, msg: undefined, at: 0 });
  const out: Buffer[] = [];
  let i = 0;
  while (i < data.length) {
    if (s.msg === undefined) {
      const n = Math.min(5 - s.headAt, data.length - i);
      data.copy(s.head, s.headAt, i, i + n);
      s.headAt += n;
      i += n;
      if (s.headAt < 5) break;
      const size = s.head.readUInt32BE(1);
      // grpc-js's message, which it answers RESOURCE_EXHAUSTED with
      if (this.maxReadMessageLength !== -1 && size > this.maxReadMessageLength) throw new Error(`Received message larger than max (${size} vs ${this.maxReadMessageLength})`);
      s.msg = size + 5 >= SHARED_MESSAGE_BYTES ? Buffer.from(new SharedArrayBuffer(size + 5)) : Buffer.allocUnsafe(size + 5);
      s.head.copy(s.msg, 0);
      s.at = 5;
      s.headAt = 0;
    }
    const n = Math.min(s.msg.length - s.at, data.length - i);
    data.copy(s.msg, s.at, i, i + n);
    s.at += n;
    i += n;
    if (s.at === s.msg.length) {
      out.push(s.msg);
      s.msg = undefined;
    }
  }
  return out;
}

let installed: boolean | undefined;

/**
 * Replaces grpc-js's StreamDecoder.prototype.write (once per process). Returns false, changing
 * nothing, when the installed grpc-js has no such class or it does not look as expected (a version
 * that changed its internals): grpc-js's own decoder then goes on working, joining each message.
 */
export function installStreamDecoder(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  let cls: { prototype: GrpcStreamDecoder; new (max: number): GrpcStreamDecoder } | undefined;
  try {
    const require = createRequire(import.meta.url);
    // the module grpc-js's server and client calls construct their decoders from
    cls = (require('@grpc/grpc-js/build/src/stream-decoder.js') as { StreamDecoder?: typeof cls }).StreamDecoder;
  } catch {
    return installed;
  }
  if (typeof cls !== 'function' || typeof cls.prototype.write !== 'function') return installed;
  const probe = new cls(7);
  if (probe.maxReadMessageLength !== 7 || probe.readState !== 0) return installed;
  const original = cls.prototype.write;
  cls.prototype.write = function (this: Patched, data: Buffer): Buffer[] {
    return decoderWrite.call(this, data, original);
  };
  installed = true;
  return installed;
}

