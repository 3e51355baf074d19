import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { apiSurfaceCodes, meta, withErrorResponses, ok, okList, pageMetaWithPagesSchema, pageQuerySchema, type RouteMeta } from '../../contract/common/index.ts';
import { HttpCore, type ClientOptions, type RequestOptions } from '../../clients/shared/http.ts';
import { buildResources, routeInvoker } from '../../clients/shared/resources.ts';

/**
 * A small contract of our own, so the SDK runtime is tested on shapes the real
 * contract may not have yet (path params, no-body routes, unsafe POSTs).
 */
const c = initContract();
const thing = z.object({ id: z.number().int(), name: z.string() });

// Declared apart from the wrapper so ts-rest infers each path as a literal.
const testRoutes = c.router(
  {
    list: {
      method: 'GET',
      path: '/things',
      query: pageQuerySchema.extend({ colour: z.enum(['red', 'blue']).optional() }),
      responses: { 200: okList(thing, pageMetaWithPagesSchema) },
      metadata: meta({ auth: 'merchant' }),
    },
    get: { method: 'GET', path: '/things/:id', responses: { 200: ok(thing) }, metadata: meta({ auth: 'merchant' }) },
    create: {
      method: 'POST',
      path: '/things',
      body: z.strictObject({ name: z.string() }),
      responses: { 201: ok(thing) },
      metadata: meta({ auth: 'merchant', idempotent: true }),
    },
    fire: {
      method: 'POST',
      path: '/things/:id/fire',
      body: c.noBody(),
      responses: { 200: ok(z.object({ fired: z.boolean() })) },
      metadata: meta({ auth: 'merchant' }),
    },
    ping: { method: 'POST', path: '/ping', body: c.noBody(), responses: { 204: c.noBody() }, metadata: meta({ auth: 'none' }) },
  },
  { pathPrefix: '/api/test', strictStatusCodes: true },
);

export const testContract = withErrorResponses(testRoutes, apiSurfaceCodes);

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** How to answer one request; a script is a queue of these, then the route's normal answer. */
export type Responder = (req: IncomingMessage, res: ServerResponse) => void;

export const fail =
  (status: number, code: string, headers: Record<string, string> = {}, field: string | null = null): Responder =>
  (_req, res) => {
    const message = `${code} happened`;
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${code.toLowerCase()}`, ...headers });
    res.end(JSON.stringify({ success: false, error: message, errors: [{ code, message, field }], request_id: `req_${code.toLowerCase()}` }));
  };
/** Drops the connection without answering: the client sees a network error. */
export const reset: Responder = (req) => req.socket.destroy();
/** Never answers (until the client gives up). */
export const hang: Responder = () => undefined;
export const html502: Responder = (_req, res) => {
  res.writeHead(502, { 'content-type': 'text/html' });
  res.end('<html><body>Bad gateway</body></html>');
};

const ALL = Array.from({ length: 45 }, (_, i) => ({ id: i + 1, name: `thing ${i + 1}` }));

function normal(req: IncomingMessage, res: ServerResponse, body: string): void {
  const url = new URL(req.url!, 'http://x');
  const send = (status: number, payload: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_ok12345678' });
    res.end(JSON.stringify(payload));
  };
  if (req.method === 'GET' && url.pathname === '/api/test/things') {
    const page = Number(url.searchParams.get('page') ?? 1);
    const perPage = Number(url.searchParams.get('per_page') ?? 20);
    const data = ALL.slice((page - 1) * perPage, page * perPage);
    return send(200, { success: true, data, meta: { page, per_page: perPage, total: ALL.length, total_pages: Math.ceil(ALL.length / perPage) } });
  }
  const one = /^\/api\/test\/things\/([^/]+)$/.exec(url.pathname);
  if (req.method === 'GET' && one) return send(200, { success: true, data: { id: 7, name: decodeURIComponent(one[1]!) } });
  if (req.method === 'POST' && url.pathname === '/api/test/things') return send(201, { success: true, data: { id: 99, name: JSON.parse(body).name } });
  if (req.method === 'POST' && /^\/api\/test\/things\/[^/]+\/fire$/.test(url.pathname)) return send(200, { success: true, data: { fired: true } });
  if (req.method === 'POST' && url.pathname === '/api/test/ping') {
    res.writeHead(204).end();
    return;
  }
  fail(404, 'NOT_FOUND')(req, res);
}

export interface FlakyServer {
  baseUrl: string;
  requests: SeenRequest[];
  /** Answers for the next requests, in order; afterwards requests get the normal answer. */
  script(...responders: Responder[]): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFlakyServer(): Promise<FlakyServer> {
  const requests: SeenRequest[] = [];
  let queue: Responder[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body, at: performance.now() });
      const next = queue.shift();
      if (next) next(req, res);
      else normal(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    script: (...responders) => {
      queue = [...responders];
    },
    reset: () => {
      queue = [];
      requests.length = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The test contract as an SDK, built exactly the way the merchant SDK builds itself. */
export function testClient(options: ClientOptions) {
  const core = new HttpCore({ retryDelay: { initialMs: 20, maxMs: 200 }, ...options }, { name: '@paycollect/test', version: '9.9.9' });
  return buildResources(
    testContract,
    routeInvoker<RequestOptions>(core, (route): Record<string, string> =>
      (route.metadata as RouteMeta).auth === 'merchant' ? { authorization: 'Bearer test_key' } : {},
    ),
  );
}
