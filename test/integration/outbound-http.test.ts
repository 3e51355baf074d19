import { createServer as createTlsServer } from 'node:https';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeOutboundDispatchers, postWebhook, type WebhookRequest } from '../../server/infra/http/outbound.ts';

interface Receiver {
  url: string;
  port: number;
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  connections: number;
}

const servers: Server[] = [];

/** A real HTTP server on loopback; the handler sees the request after its body is read. */
async function receiver(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<Receiver> {
  const r: Receiver = { url: '', port: 0, requests: [], connections: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      r.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handle(req, res, body);
    });
  });
  server.on('connection', () => r.connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hooks/paycollect?src=test`;
  return r;
}

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

afterAll(async () => {
  await closeOutboundDispatchers();
});

// Throwaway self-signed pair for 127.0.0.1, generated for this test and used nowhere else.
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgw/v5RSJiPP8ZMNCi
0WdiC99SRy9J4bBFhxuOLWD9AFShRANCAASGUzIdRChblRP6AXpIsmQejxGX/Nb6
PlE/i8j4zKY0RDQMIBf4HZNREDrCJXVPmRBrFD60QU4HH45x9gqlC0qI
-----END PRIVATE KEY-----`;
const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBfzCCASWgAwIBAgIUQzCOBwVoceO3l2qoO4Ar36KbzTcwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMTExMzY0MFoYDzIxMjYxMDI4
MTEzNjQwWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASGUzIdRChblRP6AXpIsmQejxGX/Nb6PlE/i8j4zKY0RDQMIBf4HZNR
EDrCJXVPmRBrFD60QU4HH45x9gqlC0qIo1MwUTAdBgNVHQ4EFgQUzu+Ez83obwG7
wXWWgI0shIzF8RswHwYDVR0jBBgwFoAUzu+Ez83obwG7wXWWgI0shIzF8RswDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiBgt3W2DpgPqtftT+bb3TsQ
YfkvONcvFgigcTKA9h2nOAIhAL/4oQoUqGPYr57F5J60WIQqsv9lrQ6SLElwTp3r
ebDg
-----END CERTIFICATE-----`;

const payload = '{"id":"evt_1","event":"payment.completed","created_at":"2025-06-15T12:00:00Z","data":{"trx_id":"TX1","amount":"10.00"}}';

function send(url: string, overrides: Partial<WebhookRequest> = {}) {
  return postWebhook({
    url,
    headers: { 'content-type': 'application/json', 'x-webhook-id': 'whd_1', 'x-webhook-event': 'payment.completed' },
    body: payload,
    timeoutMs: 2_000,
    allowPrivate: true,
    ...overrides,
  });
}

describe('postWebhook against real receivers', () => {
  it('200: ok, with the exact body and headers delivered', async () => {
    const r = await receiver((_req, res) => res.end('thanks'));
    const result = await send(r.url);
    expect(result).toMatchObject({ ok: true, status: 200, responseBody: 'thanks', retryAfter: null, error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]).toMatchObject({ method: 'POST', url: '/hooks/paycollect?src=test', body: payload });
    expect(r.requests[0]?.headers).toMatchObject({ 'content-type': 'application/json', 'x-webhook-id': 'whd_1' });
  });

  it('500: a failure carrying the status and the body, no transport error', async () => {
    const r = await receiver((_req, res) => {
      res.statusCode = 500;
      res.end('database down');
    });
    expect(await send(r.url)).toMatchObject({ ok: false, status: 500, responseBody: 'database down', error: null });
  });

  it('301: not followed; the Location target never sees a request', async () => {
    const target = await receiver((_req, res) => res.end('should not be here'));
    const r = await receiver((_req, res) => {
      res.writeHead(301, { location: target.url });
      res.end();
    });
    const result = await send(r.url);
    expect(result).toMatchObject({ ok: false, status: 301, error: { kind: 'redirect' } });
    expect(result.error?.message).toContain(target.url);
    expect(target.requests).toHaveLength(0);
  });

  it('429: Retry-After is handed back for the scheduler', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(429, { 'retry-after': '120' });
      res.end('slow down');
    });
    expect(await send(r.url)).toMatchObject({ ok: false, status: 429, retryAfter: '120', error: null });
  });

  it('a receiver that never answers: timeout at timeoutMs', async () => {
    const r = await receiver(() => {
      /* holds the request open */
    });
    const result = await send(r.url, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, status: null, responseBody: null, error: { kind: 'timeout' } });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
  });

  it('a body that stalls after a 2xx: the timer still ends the call; the status decides', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('accepted, but ');
    });
    const result = await send(r.url, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: true, status: 200, responseBody: 'accepted, but ', error: null });
  });

  it('a receiver that resets the connection: a connection error', async () => {
    const r = await receiver((req) => req.socket.resetAndDestroy());
    const result = await send(r.url);
    expect(result).toMatchObject({ ok: false, status: null, error: { kind: 'connection' } });
  });

  it('a self-signed certificate: a TLS error, and the handler never runs', async () => {
    let reached = false;
    const server = createTlsServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }, (_req, res) => {
      reached = true;
      res.end('ok');
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const result = await send(`https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    expect(result).toMatchObject({ ok: false, status: null, error: { kind: 'tls' } });
    expect(reached).toBe(false);
  });

  it('a closed port: a connection error', async () => {
    const r = await receiver(() => {});
    const url = r.url;
    await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
    expect(await send(url)).toMatchObject({ ok: false, status: null, error: { kind: 'connection' } });
  });

  it('a 50 MB response: keeps maxResponseBytes, drops the connection, returns quickly', async () => {
    const total = 50 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    let finished = false;
    let markClosed!: () => void;
    const closed = new Promise<void>((resolve) => (markClosed = resolve));
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-length': String(total) });
      res.on('close', () => markClosed());
      res.on('finish', () => (finished = true));
      const pump = () => {
        while (sent < total && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (sent >= total) res.end();
      };
      pump();
    });

    const result = await send(r.url, { maxResponseBytes: 4096, timeoutMs: 10_000 });
    expect(result).toMatchObject({ ok: true, status: 200, error: null });
    expect(Buffer.byteLength(result.responseBody ?? '')).toBe(4096);
    // Cut at the cap, not ended by its 10 s timer.
    expect(result.durationMs).toBeLessThan(10_000);
    await closed;
    expect(finished).toBe(false);
    expect(sent).toBeLessThan(total);
  });

  it('reuses pooled keep-alive connections across deliveries', async () => {
    const r = await receiver((_req, res) => res.end('ok'));
    for (let i = 0; i < 5; i++) expect((await send(r.url)).ok).toBe(true);
    expect(r.requests).toHaveLength(5);
    // undici may open a second socket while the first is still being released after
    // its response; after that it reuses. Not one socket per delivery is what counts.
    expect(r.connections).toBeLessThanOrEqual(2);
  });
});

describe('postWebhook refusals (allowPrivate = false)', () => {
  it.each([
    (port: number) => `http://127.0.0.1:${port}/hook`,
    (port: number) => `http://localhost:${port}/hook`,
    (port: number) => `http://[::ffff:127.0.0.1]:${port}/hook`,
    (port: number) => `http://2130706433:${port}/hook`,
  ])('refuses %s without connecting', async (makeUrl) => {
    const r = await receiver((_req, res) => res.end('should not be here'));
    const result = await send(makeUrl(r.port), { allowPrivate: false });
    expect(result).toMatchObject({ ok: false, status: null, responseBody: null, error: { kind: 'ssrf' } });
    expect(r.connections).toBe(0);
    expect(r.requests).toHaveLength(0);
  });

  it.each(['ftp://example.com/hook', 'https://user:pw@example.com/hook', 'not a url'])('refuses %s and does not throw', async (url) => {
    expect(await send(url, { allowPrivate: false })).toMatchObject({ ok: false, error: { kind: 'ssrf' } });
  });
});
