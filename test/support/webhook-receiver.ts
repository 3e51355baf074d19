import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constructEvent, WebhookSignatureError } from '../../clients/shared/webhook-verify.ts';
import { waitFor } from './wait.ts';

export interface ReceivedRequest {
  /** 1-based, in arrival order. */
  n: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it came off the wire. */
  rawBody: string;
  at: number;
  /** What the receiver answered. */
  status: number;
}

export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (a slow receiver). */
  delayMs?: number;
}

export type Responder = (req: ReceivedRequest) => Reply | Promise<Reply>;

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Swap behaviour at any time (a receiver that recovers). */
  respond: Responder;
  /** Distinct X-Webhook-Id values seen. */
  distinctIds(): Set<string>;
  /** Resolves once `predicate` holds over the requests seen, or rejects after `timeoutMs`. */
  waitFor(predicate: (reqs: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP server on loopback that records every webhook it gets. */
export async function startReceiver(respond: Responder = () => ({ status: 200, body: 'ok' })): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const receiver = { respond } as WebhookReceiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = {
        n: requests.length + 1,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        status: 0,
      };
      requests.push(received);
      void Promise.resolve(receiver.respond(received)).then(async (reply) => {
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        received.status = reply.status;
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    distinctIds: () => new Set(requests.map((r) => String(r.headers['x-webhook-id']))),
    async waitFor(predicate: (reqs: ReceivedRequest[]) => boolean, timeoutMs = 20_000) {
      const met = await waitFor(async () => predicate(requests), (ok) => ok, timeoutMs, 25);
      if (!met) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${requests.length} requests seen)`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/**
 * A merchant's handler done right: verify the raw body with the SDK verifier,
 * answer 401 on a bad signature and 200 otherwise.
 */
export function verifyingResponder(secrets: () => string | string[]): Responder {
  return (req) => {
    try {
      constructEvent(req.rawBody, req.headers as Record<string, string>, secrets());
      return { status: 200, body: 'verified' };
    } catch (err) {
      if (err instanceof WebhookSignatureError) return { status: 401, body: err.reason };
      throw err;
    }
  };
}
