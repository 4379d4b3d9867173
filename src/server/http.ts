/**
 * The HTTP status server (node:http), cuzk's `status_listen`:
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

const json = (res: ServerResponse, code: number, body: unknown): void => {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8' });
  res.end(text);
};

async function route(engine: Engine, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method !== 'GET') return json(res, 405, { error: 'only GET' });
  const path = url.pathname.replace(/\/+$/, '') || '/';
  if (path === '/status') {
    const n = (k: string): number | undefined => (url.searchParams.has(k) ? Number(url.searchParams.get(k)) : undefined);
    return json(res, 200, engine.status({ offset: n('offset'), limit: n('limit') }));
  }
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
  if (path === '/') return json(res, 200, { endpoints: ['/status', '/metrics', '/jobs/<id>', '/trace/<id>', '/trace?jobs=a,b'] });
  return json(res, 404, { error: `no route ${path}` });
}

export interface HttpServerHandle {
  server: Server;
  address: string;
  close(): Promise<void>;
}

export async function startHttpServer(engine: Engine, listen: string): Promise<HttpServerHandle> {
  const where = parseListen(listen);
  const server = createServer((req, res) => {
    route(engine, req, res).catch((e: unknown) => {
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
