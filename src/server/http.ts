/**
 * The HTTP status server (node:http), cuzk's `status_listen`:
 *   GET /                    the status page (status-page.ts; live queues, job timelines, lanes, SRS, memory)
 *   GET /status/timeline     JSON: the page's job/partition spans (status-page.ts)
 *   GET /status              JSON: queues, jobs (with partitions and timings), SRS, memory, lanes/GPUs
 *   GET /metrics             Prometheus text
 *   GET /jobs/<id>           one job: summary and span tree
 *   GET /trace/<id>          Chrome trace-event JSON of one job (open in Perfetto / chrome://tracing)
 *   GET /trace?jobs=a,b,…    the same for several jobs on one time axis (default: every retained job)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine } from '../engine/engine.js';
import { errorText } from '../engine/engine.js';
import { STATUS_JOBS_MAX, boundText } from '../util/limits.js';
import { parseListen } from './proto.js';
import { statusPageRoute } from './status-page.js';
import { bearer, hostAllowed, isLoopback, tokenMatches } from './auth.js';

const json = (res: ServerResponse, code: number, body: unknown): void => {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8' });
  res.end(text);
};

export interface HttpServerOptions {
  /** The bearer token: when set, job details (the job list of /status, /jobs, /trace) need
   *  `Authorization: Bearer <token>`, and /status without it shows no job id (Engine.status
   *  hideJobIds); counts, queues and /metrics do not. */
  token?: string;
  /** Host header names answered besides the loopback ones ([daemon] status_hosts). */
  hosts?: readonly string[];
  /** Told about a listener other machines can reach. */
  warn?: (msg: string) => void;
}

async function route(engine: Engine, req: IncomingMessage, res: ServerResponse, opts: HttpServerOptions & { boundHost: string }): Promise<void> {
  // DNS rebinding: a page of another site that resolves its name to this address is refused
  if (!hostAllowed(req.headers.host, opts.hosts ?? [], opts.boundHost)) {
    return json(res, 403, { error: `Host ${boundText(String(req.headers.host ?? '(none)'), 100)} is not served here (add it to [daemon] status_hosts)` });
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method !== 'GET') return json(res, 405, { error: 'only GET' });
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const token = opts.token ?? '';
  const authorized = token === '' || tokenMatches(bearer(req.headers.authorization), token);
  const needToken = (): void => {
    res.setHeader('www-authenticate', 'Bearer');
    json(res, 401, { error: 'job details need the token: send "Authorization: Bearer <token>" ([daemon] auth_token)' });
  };
  if (path === '/status') {
    const n = (k: string): number | undefined => (url.searchParams.has(k) ? Number(url.searchParams.get(k)) : undefined);
    const st = engine.status({ offset: n('offset'), limit: authorized ? n('limit') : 0, hideJobIds: !authorized });
    if (!authorized) st.jobsHidden = 'job ids, request ids and errors are shown with "Authorization: Bearer <token>"';
    return json(res, 200, st);
  }
  if (!authorized && (path.startsWith('/jobs/') || path === '/trace' || path.startsWith('/trace/') || path === '/status/timeline')) return needToken();
  if (path === '/metrics') {
    const text = await engine.metrics.text();
    res.writeHead(200, { 'content-type': engine.metrics.contentType });
    res.end(text);
    return;
  }
  let m = /^\/jobs\/([^/]+)$/.exec(path);
  if (m) {
    const id = decodeURIComponent(m[1]);
    const job = engine.getJob(id);
    if (!job) return json(res, 404, { error: `job not found: ${boundText(id, 128)}` });
    return json(res, 200, { ...job.summary(), spans: job.span.toJSON() });
  }
  m = /^\/trace\/([^/]+)$/.exec(path);
  if (m) {
    const id = decodeURIComponent(m[1]);
    if (!engine.getJob(id)) return json(res, 404, { error: `job not found: ${boundText(id, 128)}` });
    return json(res, 200, engine.trace([id]));
  }
  if (path === '/trace') {
    const ids = (url.searchParams.get('jobs')?.split(',').filter(Boolean) ?? engine.jobIds()).slice(0, STATUS_JOBS_MAX);
    return json(res, 200, engine.trace(ids));
  }
  if (path === '/' && url.searchParams.has('json')) return json(res, 200, { endpoints: ['/ (the status page)', '/status', '/status/timeline', '/metrics', '/jobs/<id>', '/trace/<id>', '/trace?jobs=a,b'] });
  if (statusPageRoute(engine, path, res)) return;
  return json(res, 404, { error: `no route ${path}` });
}

export interface HttpServerHandle {
  server: Server;
  address: string;
  close(): Promise<void>;
}

export async function startHttpServer(engine: Engine, listen: string, opts: HttpServerOptions = {}): Promise<HttpServerHandle> {
  // `:PORT` binds loopback only (parseListen): the status server shows what the daemon is doing
  const where = parseListen(listen);
  const boundHost = 'socket' in where ? 'localhost' : where.host;
  // it has no TLS: a token sent to it from another machine would cross the network in clear text
  if (!('socket' in where) && !isLoopback(where.host) && opts.token) {
    throw new Error(
      `config daemon.status_listen = "${listen}" is reachable from other machines, and the HTTP status server has no TLS: ` +
        'the bearer token ([daemon] auth_token) would cross the network in clear text. Listen on 127.0.0.1 (reach it through an SSH tunnel or a TLS proxy)',
    );
  }
  if (!('socket' in where) && !isLoopback(where.host)) {
    opts.warn?.(
      `the HTTP status server listens on ${where.host}:${where.port}, reachable from other machines and WITHOUT A TOKEN: ` +
        'anyone who can reach it sees every job id, request id and error (listen on 127.0.0.1 to keep it on this machine)',
    );
  }
  const server = createServer((req, res) => {
    route(engine, req, res, { ...opts, boundHost }).catch((e: unknown) => {
      // a malformed URL (bad percent-encoding, e.g. /jobs/%ZZ) is the client's error
      if (!res.headersSent) json(res, e instanceof URIError ? 400 : 500, { error: errorText(e) });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('socket' in where) server.listen(where.socket, resolve);
    else server.listen(where.port, where.host, resolve);
  });
  const a = server.address();
  const address = typeof a === 'string' ? `unix://${a}` : `${(a as AddressInfo).address}:${(a as AddressInfo).port}`;
  return {
    server,
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
