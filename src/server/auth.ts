/**
 * Access control of the daemon: the bearer token ([daemon] auth_token or auth_token_file) every
 * gRPC call must carry as `authorization: Bearer <token>` metadata when one is configured, TLS
 * credentials for gRPC over TCP (tls_cert / tls_key, and tls_client_ca for mutual TLS), the Host
 * header allow-list of the HTTP server (loopback names plus [daemon] status_hosts: a page on another
 * site cannot reach it through DNS rebinding), and the warnings a listener reachable from other
 * machines without credentials gets.
 *
 * Curio's cuzk client dials without TLS or token: run kiln beside it on the unix socket (mode 0600,
 * the default) or on loopback TCP (127.0.0.1:PORT), with no token (README "Access control").
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import type { EngineConfig } from '../engine/config.js';

/** The configured token ('' = none): auth_token, else the first line of auth_token_file. */
export async function resolveAuthToken(cfg: EngineConfig['daemon']): Promise<string> {
  if (cfg.auth_token !== '' && cfg.auth_token_file !== '') throw new Error('config [daemon]: set auth_token or auth_token_file, not both');
  if (cfg.auth_token_file !== '') {
    let text: string;
    try {
      text = await readFile(cfg.auth_token_file, 'utf8');
    } catch (e) {
      throw new Error(`config daemon.auth_token_file: cannot read ${cfg.auth_token_file}: ${(e as Error).message}`);
    }
    const t = text.split('\n')[0].trim();
    if (t === '') throw new Error(`config daemon.auth_token_file: ${cfg.auth_token_file} is empty`);
    return t;
  }
  return cfg.auth_token;
}

/** Constant-time comparison of a presented token with the configured one (hashed: equal lengths). */
export function tokenMatches(presented: string | undefined, token: string): boolean {
  if (presented === undefined) return false;
  const h = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(presented), h(token));
}

/** The token of an `authorization: Bearer <token>` value. */
export function bearer(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(value.trim());
  return m ? m[1].trim() : undefined;
}

/** Whether a gRPC call carries the token. */
export function grpcAuthorized(metadata: grpc.Metadata, token: string): boolean {
  if (token === '') return true;
  const v = metadata.get('authorization');
  return v.some((x) => tokenMatches(bearer(typeof x === 'string' ? x : x.toString('utf8')), token));
}

export async function grpcServerCredentials(cfg: EngineConfig['daemon']): Promise<{ creds: grpc.ServerCredentials; tls: boolean }> {
  if (cfg.tls_cert === '' && cfg.tls_key === '') {
    if (cfg.tls_client_ca !== '') throw new Error('config daemon.tls_client_ca needs tls_cert and tls_key');
    return { creds: grpc.ServerCredentials.createInsecure(), tls: false };
  }
  if (cfg.tls_cert === '' || cfg.tls_key === '') throw new Error('config [daemon]: tls_cert and tls_key go together');
  const read = async (key: string, path: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (e) {
      throw new Error(`config daemon.${key}: cannot read ${path}: ${(e as Error).message}`);
    }
  };
  const cert = await read('tls_cert', cfg.tls_cert);
  const key = await read('tls_key', cfg.tls_key);
  const ca = cfg.tls_client_ca !== '' ? await read('tls_client_ca', cfg.tls_client_ca) : null;
  return { creds: grpc.ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], ca !== null), tls: true };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', 'ip6-localhost']);

/** Whether a host (name or address) is loopback. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return LOOPBACK_NAMES.has(h) || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::ffff:127.0.0.1';
}

/** The host name of a Host header (without port or IPv6 brackets), lower case. */
export function hostOfHeader(host: string | undefined): string | undefined {
  if (host === undefined || host === '') return undefined;
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(host) ?? /^([^:]+)(?::\d+)?$/.exec(host);
  return m ? m[1].toLowerCase() : undefined;
}

/** Whether the HTTP server answers a request with this Host header: loopback names, the configured
 *  names, and the address it listens on when that is a specific one. */
export function hostAllowed(header: string | undefined, allowed: readonly string[], boundHost: string): boolean {
  const h = hostOfHeader(header);
  if (h === undefined) return false;
  if (isLoopback(h)) return true;
  if (allowed.includes(h)) return true;
  const b = boundHost.toLowerCase();
  return b !== '0.0.0.0' && b !== '::' && b !== '' && h === b;
}
