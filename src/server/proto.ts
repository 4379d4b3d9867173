/**
 * Loads proto/cuzk.proto at run time (@grpc/proto-loader), for the server and the bench client.
 * Fields keep their snake_case wire names; uint64 become JS numbers for the client (every value kiln
 * sends is below 2^53) and exact decimal strings for the server (SERVER_LOADER_OPTIONS: a request's
 * u64 beyond 2^53 is named exactly when it is refused); enums are numbers; bytes are Buffers.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  defaults: true,
  oneofs: true,
};

/** The server's: uint64 fields of requests as decimal strings, exact (grpc.ts requestFromWire). */
export const SERVER_LOADER_OPTIONS: protoLoader.Options = { ...LOADER_OPTIONS, longs: String };

/** proto/cuzk.proto of this checkout (searched upwards from this file, so it works from src/ and dist/). */
export function protoPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const p = join(dir, 'proto', 'cuzk.proto');
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  throw new Error('proto/cuzk.proto not found above ' + dirname(fileURLToPath(import.meta.url)));
}

export interface ProvingEngineDef {
  service: grpc.ServiceDefinition;
  Client: grpc.ServiceClientConstructor;
}

export function loadProvingEngine(path = protoPath(), options = LOADER_OPTIONS): ProvingEngineDef {
  const def = protoLoader.loadSync(path, options);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { cuzk: { v1: { ProvingEngine: grpc.ServiceClientConstructor } } };
  const Client = pkg.cuzk.v1.ProvingEngine;
  return { service: Client.service, Client };
}

/** `unix:///path` / `unix:/path` → { socket }, `host:port` → { host, port }; `:port` (no host) is
 *  loopback, 127.0.0.1, for gRPC and HTTP alike: every interface is asked for by name (`0.0.0.0:port`,
 *  `[::]:port`). */
export function parseListen(addr: string): { socket: string } | { host: string; port: number } {
  if (addr.startsWith('unix:')) {
    const path = addr.replace(/^unix:(\/\/)?/, '');
    if (!path.startsWith('/')) throw new Error(`listen ${addr}: the unix socket path must be absolute (unix:///path)`);
    return { socket: path };
  }
  const m = /^(.*):(\d+)$/.exec(addr);
  if (!m) throw new Error(`listen ${addr}: expected host:port or unix:///path`);
  const port = Number(m[2]);
  if (port > 65535) throw new Error(`listen ${addr}: port out of range`);
  return { host: m[1].replace(/^\[(.*)\]$/, '$1') || '127.0.0.1', port };
}

/**
 * Trailing metadata of a proof made with INSECURE development parameters (AwaitProof, Prove answers). The
 * wire stays Curio's proto (no field added; Curio's client ignores metadata it does not know); kiln's bench
 * client prints it beside the result.
 */
export const INSECURE_TRAILER = 'kiln-insecure-params';
export const INSECURE_TRAILER_TEXT = 'made with INSECURE development parameters: never accepted on chain';
