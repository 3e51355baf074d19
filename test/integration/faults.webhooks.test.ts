import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { attemptsOf, deliveriesOf, emitPaymentCompleted, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';
import { recordReliability } from '../support/reliability-summary.ts';

/**
 * Hostile webhook receivers, end to end through the delivery worker: one that
 * resets every connection, one that floods an endless body, one that sends its
 * headers and then nothing, one that trickles its status line a byte at a time.
 * Each delivery ends in the right state with every attempt logged, no socket
 * is left open, and a healthy receiver delivering at the same time is not held
 * up. (postWebhook itself against such receivers: outbound-http.test; the
 * worker killed mid-run: webhooks-worker-crash.)
 */
let server: WebhookTestServer;
let t: TestContext;
const hostile: Array<{ server: net.Server; open: Set<net.Socket> }> = [];
let healthy: WebhookReceiver;

/** A raw TCP receiver: `onData` decides what to do with each connection. */
async function rawReceiver(onData: (socket: net.Socket) => void): Promise<{ url: string; open: Set<net.Socket> }> {
  const open = new Set<net.Socket>();
  const srv = net.createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', () => onData(socket));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  hostile.push({ server: srv, open });
  return { url: `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}/hook`, open };
}

const receivers = {
  reset: (s: net.Socket) => s.resetAndDestroy(),
  flood: (s: net.Socket) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = `10000\r\n${'x'.repeat(0x10000)}\r\n`;
    const pump = () => {
      while (!s.destroyed && s.write(chunk));
      if (!s.destroyed) s.once('drain', pump);
    };
    pump();
  },
  hangAfterHeaders: (s: net.Socket) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf'),
  trickle: (s: net.Socket) => {
    const text = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';
    let i = 0;
    const timer = setInterval(() => (s.destroyed || i >= text.length ? clearInterval(timer) : s.write(text[i++]!)), 300);
    s.on('close', () => clearInterval(timer));
  },
};

beforeAll(async () => {
  server = await startWebhookTestServer();
  t = server.t;
  healthy = await startReceiver(() => ({ status: 200, body: 'ok' }));
});
afterAll(async () => {
  await server?.close();
  await healthy?.close();
  for (const h of hostile) {
    for (const s of h.open) s.destroy();
    await new Promise((r) => h.server.close(r));
  }
});

async function brandAt(url: string) {
  const { brandId, apiKey } = await t.createBrand();
  const res = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { url, events: ['payment.completed'] } });
  expect(res.status).toBe(201);
  return brandId;
}

describe('hostile receivers through the delivery worker', () => {
  it('each delivery ends right, every attempt is logged, no socket stays open, and a healthy receiver is not held up', async () => {
    const scenes = {} as Record<keyof typeof receivers, { brandId: number; open: Set<net.Socket> }>;
    for (const [name, behave] of Object.entries(receivers) as Array<[keyof typeof receivers, (s: net.Socket) => void]>) {
      const r = await rawReceiver(behave);
      scenes[name] = { brandId: await brandAt(r.url), open: r.open };
    }
    const healthyBrand = await brandAt(healthy.url);
    let n = 1;
    for (const { brandId } of Object.values(scenes)) await emitPaymentCompleted(t, brandId, n++);
    const started = Date.now();
    for (let i = 0; i < 20; i++) await emitPaymentCompleted(t, healthyBrand, 100 + i);

    await eventually(async () => healthy.distinctIds().size === 20, 15_000, 'healthy receiver got all 20');
    const healthyMs = Date.now() - started;
    const settled = async (brandId: number) =>
      eventually(async () => {
        const [d] = await deliveriesOf(t, brandId);
        return d && (d.status === 'success' || d.status === 'dead_letter') ? d : null;
      }, 30_000, `brand ${brandId} settled`);

    // Resets and trickles never produce a complete answer: retried to the end, each attempt logged.
    for (const [name, kind] of [['reset', 'connection'], ['trickle', 'timeout']] as const) {
      const d = await settled(scenes[name].brandId);
      expect(d, name).toMatchObject({ status: 'dead_letter', attempts: 4, response_status: null });
      expect((await attemptsOf(t, d.id)).map((a) => a.error_kind), name).toEqual([kind, kind, kind, kind]);
    }
    // A 200 status line is the receiver's answer; what follows it is cut, not held against it.
    const flood = await settled(scenes.flood.brandId);
    expect(flood).toMatchObject({ status: 'success', attempts: 1, response_status: 200 });
    const [floodBody] = await t.sql<{ n: number }>('SELECT length(response_body) AS n FROM webhook_attempts WHERE delivery_id = $1', [flood.id]);
    expect(floodBody!.n).toBe(4096);
    const hang = await settled(scenes.hangAfterHeaders.brandId);
    expect(hang).toMatchObject({ status: 'success', attempts: 1, response_status: 200 });
    const [hangAttempt] = await attemptsOf(t, hang.id);
    expect(Number(hangAttempt!.duration_ms)).toBeLessThan(3000);

    // The service dropped every connection it opened to them.
    await eventually(async () => Object.values(scenes).every((s) => s.open.size === 0), 10_000, 'hostile sockets closed');
    recordReliability({ suite: 'faults-webhooks', faults: Object.keys(scenes).length, lost: 20 - healthy.distinctIds().size });
    process.stdout.write(`[faults-webhooks] ${Object.keys(scenes).length} hostile receivers; healthy receiver got 20/20 in ${healthyMs} ms meanwhile\n`);
  }, 60_000);
});
