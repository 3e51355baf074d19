import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { eventually } from '../support/wait.ts';

/**
 * One client cannot hold every status-stream place of a process: open streams
 * are bounded per client address (CHECKOUT_STREAMS_PER_ADDRESS), over real
 * HTTP streams; closing one frees its place.
 */

const PER_ADDRESS = 3;
let t: TestContext;
let apiKey: string;

beforeAll(async () => {
  // TRUST_PROXY (one hop) lets the test speak from several client addresses through X-Forwarded-For.
  t = await startTestServer({ TRUST_PROXY: '1', CHECKOUT_STREAMS_PER_ADDRESS: String(PER_ADDRESS), WORKERS_ENABLED: 'false' });
  await seedGateway(t, 'bkash');
  ({ apiKey } = await t.createBrand('Stream Hog Shop'));
});
afterAll(() => t?.close());

interface Stream {
  status: number;
  body: string;
  close(): void;
}

/** Opens a status stream from `address`; an open one is read until its first status event arrives. */
async function open(paymentId: string, address: string): Promise<Stream> {
  const abort = new AbortController();
  const res = await fetch(`${t.baseUrl}/api/checkout/v1/payments/${paymentId}/status-stream`, { headers: { accept: 'text/event-stream', 'x-forwarded-for': address }, signal: abort.signal });
  if (res.status !== 200) return { status: res.status, body: await res.text(), close: () => undefined };
  const reader = res.body!.getReader();
  let body = '';
  while (!body.includes('event: status')) {
    const { value, done } = await reader.read();
    if (done) break;
    body += new TextDecoder().decode(value);
  }
  return { status: 200, body, close: () => abort.abort() };
}

const newPayment = async () => (await createPayment(t, apiKey, { amount: '100.00' })).payment_id;

describe('status streams per client address', () => {
  it('past the cap a client gets 429 RATE_LIMITED; other addresses are not affected; closing a stream frees its place', async () => {
    const payments = await Promise.all(Array.from({ length: PER_ADDRESS + 2 }, newPayment));
    const hog = '198.51.100.7';
    const held: Stream[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) {
      const s = await open(payments[i]!, hog);
      expect(s.status).toBe(200);
      held.push(s);
    }
    // A fresh payment (its own per-payment count is 0): refused for the address alone.
    const refused = await open(payments[PER_ADDRESS]!, hog);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ success: false, errors: [{ code: 'RATE_LIMITED', field: null }] });

    // Another address is not affected.
    const other = await open(payments[PER_ADDRESS]!, '198.51.100.8');
    expect(other.status).toBe(200);
    other.close();

    held.shift()!.close();
    await eventually(
      async () => {
        const again = await open(payments[PER_ADDRESS + 1]!, hog);
        if (again.status === 200) held.push(again);
        return again.status === 200;
      },
      5000,
      'a closed stream frees its place',
    );
    expect((await open(payments[0]!, hog)).status).toBe(429);
    for (const s of held) s.close();
  });

  it('an IPv6 client is bucketed per /64', async () => {
    const payments = await Promise.all(Array.from({ length: PER_ADDRESS + 1 }, newPayment));
    const held: Stream[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) {
      const s = await open(payments[i]!, `2001:db8:1:2::${i + 1}`);
      expect(s.status).toBe(200);
      held.push(s);
    }
    expect((await open(payments[PER_ADDRESS]!, '2001:db8:1:2:ffff::9')).status).toBe(429);
    for (const s of held) s.close();
  });
});
