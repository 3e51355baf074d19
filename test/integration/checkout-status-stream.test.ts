import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { eventually } from '../support/wait.ts';
import { adminRequest } from './admin-support.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { PAYMENT_STATUS_CHANNEL } from '../../server/domain/payments/status-notify.ts';
import { expireDueIntents } from '../../server/domain/payments/intents.ts';
import { failTransaction, getTransactionByTrxId } from '../../server/domain/payments/transactions.ts';
import { createNotificationHub, SubscriberLimitError } from '../../server/infra/database/notifications.ts';
import { bdNow } from '../support/sms-matching.ts';

/**
 * The checkout's status stream (Server-Sent Events) over a real server and
 * database: the completion an SMS causes through the device API reaches an
 * open stream within a second (PostgreSQL NOTIFY, one listening connection
 * per process), terminal statuses end the stream, refusals are the checkout's
 * error envelopes, one payment's change never reaches another's stream, and
 * a client that leaves frees its subscription.
 */

let t: TestContext;
let gateway: GatewayView;
let brand: { brandId: number; apiKey: string };
let phone: PairedDevice;

beforeAll(async () => {
  t = await startTestServer({ CHECKOUT_STREAMS_PER_PAYMENT: '2', CHECKOUT_STREAM_HEARTBEAT_MS: '150' });
  gateway = await seedGateway(t, 'bkash');
  brand = await t.createBrand('Stream Shop');
  phone = await pairDevice(t, { brandId: brand.brandId });
});
afterAll(() => t?.close());

const streamPath = (id: string) => `/api/checkout/v1/payments/${id}/status-stream`;

interface StreamEvent {
  at: number;
  event: string;
  data: { status: string; terminal: boolean };
}

interface OpenStream {
  status: number;
  headers: Headers;
  events: StreamEvent[];
  comments: number;
  retry: number | null;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  isEnded(): boolean;
  next(pred: (e: StreamEvent) => boolean, timeoutMs?: number): Promise<StreamEvent>;
  close(): void;
}

/** A minimal EventSource over fetch: parses `event:`/`data:`/`retry:` blocks and counts comment lines. */
async function openStream(id: string): Promise<OpenStream> {
  const abort = new AbortController();
  const res = await fetch(t.baseUrl + streamPath(id), { headers: { accept: 'text/event-stream' }, signal: abort.signal });
  const events: StreamEvent[] = [];
  const waiters: Array<() => void> = [];
  let ended = false;
  const s: OpenStream = {
    status: res.status,
    headers: res.headers,
    events,
    comments: 0,
    retry: null,
    ended: Promise.resolve(),
    isEnded: () => ended,
    next(pred, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events)}`)), timeoutMs);
        const check = () => {
          const e = events.find(pred);
          if (e) {
            clearTimeout(timer);
            resolve(e);
          } else if (ended) {
            clearTimeout(timer);
            reject(new Error(`stream ended without a matching event; got ${JSON.stringify(events)}`));
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => abort.abort(),
  };
  if (res.status !== 200 || !res.body) return s;
  s.ended = (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) s.comments++;
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
            else if (line.startsWith('retry: ')) s.retry = Number(line.slice(7));
          }
          if (data) events.push({ at: performance.now(), event, data: JSON.parse(data) });
          for (const w of waiters.splice(0)) w();
        }
      }
    } catch {
      /* aborted by the client */
    } finally {
      ended = true;
      for (const w of waiters.splice(0)) w();
    }
  })();
  return s;
}

/** The phone's wallet balance in cents: each SMS reports the balance after its money arrived (the matcher checks the chain). */
let balanceCents = 100_000;
function bkashSms(amount: string, trxId: string): string {
  balanceCents += Math.round(Number(amount) * 100);
  const balance = `${Math.floor(balanceCents / 100).toLocaleString('en-US')}.${String(balanceCents % 100).padStart(2, '0')}`;
  return `You have received Tk ${amount} from 01712345678. Fee Tk 0.00. Balance Tk ${balance}. TrxID ${trxId} at ${bdNow('dmy')}`;
}

let seq = 0;
/** A payment of `brand` whose customer has sent money and entered the TrxID: awaiting verification. */
async function awaitingPayment(apiKey = brand.apiKey): Promise<{ paymentId: string; trxId: string; amountToSend: string }> {
  const { payment_id } = await createPayment(t, apiKey, { amount: '640.00' });
  // bKash ids are 8 to 12 letters and digits.
  const trxId = `S${randomBytes(4).toString('hex').toUpperCase()}${++seq % 10}`;
  const pay = await t.request('POST', `/api/checkout/v1/payments/${payment_id}/transactions`, { body: { gateway: gateway.code, gateway_trx_id: trxId } });
  expect(pay.status, JSON.stringify(pay.body)).toBe(201);
  return { paymentId: payment_id, trxId, amountToSend: pay.body.data.amount_to_send };
}

function expectEnvelope(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ success: false, errors: [{ code, field: null }], request_id: expect.any(String) });
}

describe('GET /api/checkout/v1/payments/{id}/status-stream', () => {
  it('sends the status on connect and the completion an SMS causes, then ends', async () => {
    const { paymentId, trxId, amountToSend } = await awaitingPayment();
    const s = await openStream(paymentId);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(s.headers.get('cache-control')).toMatch(/no-store/);
    const first = await s.next(() => true);
    expect(first).toMatchObject({ event: 'status', data: { status: 'awaiting_verification', terminal: false } });
    expect(s.retry).toBeGreaterThan(0);

    const forwarded = await deviceRequest(t, phone, 'POST', '/sms/messages', {
      messages: [{ device_message_id: `stream-${trxId}`, sender: 'bKash', body: bkashSms(amountToSend, trxId), received_at: new Date().toISOString() }],
    });
    expect(forwarded.status, JSON.stringify(forwarded.body)).toBe(200);
    expect(forwarded.body.data[0].match_status).toBe('matched');
    // Pushed, not polled: nothing else reads the payment here. How fast is measured by
    // `npm run bench:e2e` (BENCHMARKS.md), never asserted by a timed test.
    const done = await s.next((e) => e.data.status === 'completed', 15_000);
    expect(done.data.terminal).toBe(true);
    await s.ended;
    expect(s.events.map((e) => e.data.status)).toEqual(['awaiting_verification', 'completed']);
    await eventually(async () => t.runtime.deps.notifications.count(PAYMENT_STATUS_CHANNEL) === 0, 5000, 'subscribers freed');
  });

  it('follows a payment through submission (awaiting verification) and a failure, which is not terminal', async () => {
    const { payment_id } = await createPayment(t, brand.apiKey, { amount: '320.00' });
    const s = await openStream(payment_id);
    expect((await s.next(() => true)).data).toEqual({ status: 'pending', terminal: false, checking_phone: false });
    // The customer submits the TrxID (from another tab, say): this stream learns it.
    const pay = await t.request('POST', `/api/checkout/v1/payments/${payment_id}/transactions`, { body: { gateway: gateway.code, gateway_trx_id: `F${randomBytes(4).toString('hex').toUpperCase()}` } });
    expect(pay.status, JSON.stringify(pay.body)).toBe(201);
    expect((await s.next((e) => e.data.status !== 'pending', 2000)).data).toEqual({ status: 'awaiting_verification', terminal: false, checking_phone: false });
    // An operator rejects it: failed, and the customer may try again, so the stream stays open.
    const em = t.runtime.deps.db;
    await failTransaction(em, (await getTransactionByTrxId(em, pay.body.data.trx_id)).id, { reason: 'Rejected by an operator' });
    expect((await s.next((e) => e.data.status === 'failed', 2000)).data).toEqual({ status: 'failed', terminal: false, checking_phone: false });
    await new Promise((r) => setTimeout(r, 200));
    expect(s.isEnded()).toBe(false);
    s.close();
  });

  it('keeps an idle stream open with heartbeat comment lines', async () => {
    const { paymentId } = await awaitingPayment();
    const s = await openStream(paymentId);
    await s.next(() => true);
    await eventually(async () => s.comments >= 2, 3000, 'two heartbeats');
    expect(s.isEnded()).toBe(false);
    expect(s.events).toHaveLength(1);
    s.close();
  });

  it('ends at once for a payment already completed, and tells a cancellation as terminal', async () => {
    // Completed earlier: one terminal event, then the end.
    const { paymentId, trxId, amountToSend } = await awaitingPayment();
    const sms = await deviceRequest(t, phone, 'POST', '/sms/messages', {
      messages: [{ device_message_id: `done-${trxId}`, sender: 'bKash', body: bkashSms(amountToSend, trxId), received_at: new Date().toISOString() }],
    });
    expect(sms.body.data[0].match_status).toBe('matched');
    const s = await openStream(paymentId);
    expect(s.status).toBe(200);
    await s.ended;
    expect(s.events.map((e) => e.data)).toEqual([{ status: 'completed', terminal: true, checking_phone: false }]);

    // Open, then cancelled by the merchant (another path that changes the status): the stream says so and ends.
    const { payment_id: open } = await createPayment(t, brand.apiKey);
    const c = await openStream(open);
    expect((await c.next(() => true)).data).toEqual({ status: 'pending', terminal: false, checking_phone: false });
    const cancel = await t.request('POST', `/api/v1/payments/${open}/cancel`, { token: brand.apiKey, body: {} });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    expect((await c.next((e) => e.data.status !== 'pending', 2000)).data).toEqual({ status: 'canceled', terminal: true, checking_phone: false });
    await c.ended;
  });

  it('answers the checkout error envelopes: unknown, malformed, a disabled brand', async () => {
    const before = t.runtime.deps.notifications.count(PAYMENT_STATUS_CHANNEL);
    expectEnvelope(await t.request('GET', streamPath('00000000-0000-4000-8000-000000000000')), 404, 'PAYMENT_NOT_FOUND');
    expectEnvelope(await t.request('GET', streamPath('not-a-uuid')), 404, 'PAYMENT_NOT_FOUND');
    const other = await t.createBrand('Paused Stream Shop');
    const { payment_id } = await createPayment(t, other.apiKey);
    const paused = await adminRequest(t, 'PATCH', `/brands/${other.brandId}`, { status: 'disabled' });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expectEnvelope(await t.request('GET', streamPath(payment_id)), 403, 'BRAND_DISABLED');
    // A refused stream holds no subscription.
    expect(t.runtime.deps.notifications.count(PAYMENT_STATUS_CHANNEL)).toBe(before);
  });

  it("never shows one payment's change on another's stream (other brand, test mode)", async () => {
    const testBrand = await t.createBrand('Test-mode Stream Shop', { mode: 'test' });
    const { payment_id: testPayment } = await createPayment(t, testBrand.apiKey);
    const other = await openStream(testPayment);
    expect((await other.next(() => true)).data.status).toBe('pending');
    const { paymentId, trxId, amountToSend } = await awaitingPayment();
    const mine = await openStream(paymentId);
    await mine.next(() => true);
    await deviceRequest(t, phone, 'POST', '/sms/messages', {
      messages: [{ device_message_id: `iso-${trxId}`, sender: 'bKash', body: bkashSms(amountToSend, trxId), received_at: new Date().toISOString() }],
    });
    await mine.next((e) => e.data.status === 'completed', 2000);
    await new Promise((r) => setTimeout(r, 300));
    expect(other.events.map((e) => e.data.status)).toEqual(['pending']);
    expect(other.isEnded()).toBe(false);
    other.close();
  });

  it('refuses streams past the per-payment limit with RATE_LIMITED, and a client that leaves frees its place', async () => {
    const { paymentId } = await awaitingPayment();
    const a = await openStream(paymentId);
    const b = await openStream(paymentId);
    await a.next(() => true);
    await b.next(() => true);
    expect(t.runtime.deps.notifications.count(PAYMENT_STATUS_CHANNEL)).toBeGreaterThanOrEqual(2);
    expectEnvelope(await t.request('GET', streamPath(paymentId)), 429, 'RATE_LIMITED');

    a.close();
    b.close();
    await eventually(async () => t.runtime.deps.notifications.count(PAYMENT_STATUS_CHANNEL) === 0, 5000, 'subscribers freed after disconnect');
    const c = await openStream(paymentId);
    expect(c.status).toBe(200);
    expect((await c.next(() => true)).data.status).toBe('awaiting_verification');
    c.close();
    await eventually(async () => t.runtime.deps.notifications.count() === 0, 5000, 'all subscribers freed');
  });

  it('tells an expiry, by the expiry job or by the clock alone, as terminal', async () => {
    // The job: the deadline passed unnoticed, then the sweep expires the payment and notifies.
    const { paymentId } = await awaitingPayment();
    const s = await openStream(paymentId);
    expect((await s.next(() => true)).data.status).toBe('awaiting_verification');
    await t.sql(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE uuid = $1`, [paymentId]);
    expect(await expireDueIntents(t.runtime.deps.db)).toBeGreaterThanOrEqual(1);
    expect((await s.next((e) => e.data.status !== 'awaiting_verification', 2000)).data).toEqual({ status: 'expired', terminal: true, checking_phone: false });
    await s.ended;

    // The clock: nothing in the database changes when the deadline passes; the stream looks again then.
    const { payment_id: soon } = await createPayment(t, brand.apiKey);
    await t.sql(`UPDATE payment_intents SET expires_at = now() + interval '600 milliseconds' WHERE uuid = $1`, [soon]);
    const c = await openStream(soon);
    expect((await c.next(() => true)).data.status).toBe('pending');
    expect((await c.next((e) => e.data.status !== 'pending', 3000)).data).toEqual({ status: 'expired', terminal: true, checking_phone: false });
    await c.ended;
  });

  it('survives the loss of the listening connection: it reconnects, listens again and the stream still gets the completion', async () => {
    const { paymentId, trxId, amountToSend } = await awaitingPayment();
    const s = await openStream(paymentId);
    await s.next(() => true);
    const listener = async () =>
      (await t.sql<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'paycollect-listen' AND datname = current_database()`)).map((r) => r.pid);
    const [before] = await listener();
    expect(before).toBeDefined();
    await t.sql('SELECT pg_terminate_backend($1)', [before]);
    await eventually(async () => {
      const now = await listener();
      return now.length === 1 && now[0] !== before;
    }, 10_000, 'listener reconnected');
    // The re-LISTEN runs right after the connection is back.
    await new Promise((r) => setTimeout(r, 200));
    await deviceRequest(t, phone, 'POST', '/sms/messages', {
      messages: [{ device_message_id: `re-${trxId}`, sender: 'bKash', body: bkashSms(amountToSend, trxId), received_at: new Date().toISOString() }],
    });
    expect((await s.next((e) => e.data.status === 'completed', 3000)).data.terminal).toBe(true);
  });

  // Last: it shuts the streams down for this server.
  it('at shutdown ends every open stream (so the HTTP server can close) and refuses new ones with 503', async () => {
    const { paymentId } = await awaitingPayment();
    const s = await openStream(paymentId);
    await s.next(() => true);
    // What main.ts does on SIGTERM before closing the HTTP server.
    t.runtime.deps.state.shuttingDown = true;
    t.runtime.deps.notifications.closeSubscribers();
    await s.ended;
    expect(s.events.map((e) => e.data.status)).toEqual(['awaiting_verification']);
    expectEnvelope(await t.request('GET', streamPath(paymentId)), 503, 'SERVICE_UNAVAILABLE');
    expect(t.runtime.deps.notifications.count()).toBe(0);
  });
});

describe('the notification hub (one listening connection, bounded subscribers)', () => {
  it('bounds subscribers per key and per process, fans a NOTIFY out to its key only, and frees places', async () => {
    const hub = createNotificationHub({ url: t.config.DATABASE_URL!, logger: t.runtime.deps.logger, limits: { total: 3, perKey: 2 } });
    try {
      const hits: string[] = [];
      const closed: string[] = [];
      const sub = (key: string, name: string) => hub.subscribe('hub_test', key, { onNotify: () => hits.push(name), onClose: () => closed.push(name) });
      const a1 = await sub('1', 'a1');
      await sub('1', 'a2');
      await expect(sub('1', 'a3')).rejects.toMatchObject({ scope: 'perKey' });
      await sub('2', 'b1');
      const refused = await sub('3', 'c1').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SubscriberLimitError);
      expect((refused as SubscriberLimitError).scope).toBe('total');
      expect(hub.count()).toBe(3);

      // A NOTIFY committed by anyone reaches exactly the subscribers of its payload.
      await t.sql(`SELECT pg_notify('hub_test', '1')`);
      await eventually(async () => hits.length >= 2, 5000, 'notified');
      await new Promise((r) => setTimeout(r, 100));
      expect(hits.sort()).toEqual(['a1', 'a2']);
      // Not delivered when the transaction that sent it rolls back.
      await t.sql(`DO $$ BEGIN PERFORM pg_notify('hub_test', '2'); RAISE EXCEPTION 'rolled back'; END $$`).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
      expect(hits).not.toContain('b1');

      a1.unsubscribe();
      a1.unsubscribe();
      expect(hub.count('hub_test', '1')).toBe(1);
      await sub('3', 'c1');
      hub.closeSubscribers();
      expect(closed.sort()).toEqual(['a2', 'b1', 'c1']);
      expect(hub.count()).toBe(0);
      await expect(sub('4', 'd1')).rejects.toThrow(/closed/);
    } finally {
      await hub.close();
    }
  });
});
