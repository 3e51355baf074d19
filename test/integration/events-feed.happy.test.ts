import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaycollectMerchant } from '../../clients/merchant/index.ts';
import type { Mode } from '../../contract/vocabulary.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import { recordEvent, type WebhookEventName } from '../../server/domain/webhooks/outbox.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { samplePayment } from '../support/webhook-worker.ts';
import { transaction } from '../../server/domain/db.ts';

/** GET /api/v1/events: the brand's events of the key's mode, by cursor, with a long-poll. */

let t: TestContext;
let brandId: number;
let live: PaycollectMerchant;
let test: PaycollectMerchant;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  let apiKey: string;
  ({ brandId, apiKey } = await t.createBrand('Feed'));
  live = new PaycollectMerchant({ apiKey, baseUrl: t.baseUrl, maxRetries: 0 });
  const testKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'test', mode: 'test' })).key;
  test = new PaycollectMerchant({ apiKey: testKey, baseUrl: t.baseUrl, maxRetries: 0 });
});
afterAll(() => t?.close());

let n = 100;
async function emit(mode: Mode, event: WebhookEventName = 'payment.completed', brand = brandId): Promise<string> {
  n += 1;
  const { eventId } = await transaction(t.runtime.deps.db, (tx) =>
    recordEvent(tx, { brandId: brand, mode, event, data: { ...samplePayment(n), status: event.split('.')[1]! }, transactionId: null }),
  );
  const [row] = await t.sql<{ public_id: string }>('SELECT public_id FROM webhook_events WHERE id = $1', [eventId]);
  return row!.public_id;
}

describe('GET /api/v1/events', () => {
  it('starts at the newest event, then pages forward by cursor, oldest first, the exact delivered bodies', async () => {
    const empty = await live.events.list();
    expect(empty.data).toEqual([]);
    expect(empty.meta.next_cursor).toBe('0');

    const first = await emit('live');
    const newest = await live.events.list({ limit: 1 });
    expect(newest.data.map((e) => e.id)).toEqual([first]);
    const [row] = await t.sql<{ payload: string }>('SELECT payload FROM webhook_events WHERE public_id = $1', [first]);
    expect(newest.data[0]).toMatchObject({ event: 'payment.completed', livemode: true, test: false, payload: row!.payload });

    const ids = [await emit('live'), await emit('live', 'payment.failed'), await emit('live')];
    const page1 = await live.events.list({ after: newest.meta.next_cursor, limit: 2 });
    expect(page1.data.map((e) => e.id)).toEqual(ids.slice(0, 2));
    const page2 = await live.events.list({ after: page1.meta.next_cursor });
    expect(page2.data.map((e) => e.id)).toEqual(ids.slice(2));
    const page3 = await live.events.list({ after: page2.meta.next_cursor });
    expect(page3).toMatchObject({ data: [], meta: { next_cursor: page2.meta.next_cursor } });

    // Filtered by type.
    const failed = await live.events.list({ after: newest.meta.next_cursor, types: 'payment.failed,refund.failed' });
    expect(failed.data.map((e) => e.id)).toEqual([ids[1]]);
  });

  it("lists only the key's mode and brand", async () => {
    const start = { live: (await live.events.list({ limit: 1 })).meta.next_cursor, test: (await test.events.list({ limit: 1 })).meta.next_cursor };
    const liveId = await emit('live');
    const testId = await emit('test');
    const other = await t.createBrand('Other Feed');
    await emit('live', 'payment.completed', other.brandId);
    expect((await live.events.list({ after: start.live })).data.map((e) => e.id)).toEqual([liveId]);
    const seenByTest = (await test.events.list({ after: start.test })).data;
    expect(seenByTest.map((e) => e.id)).toEqual([testId]);
    expect(seenByTest[0]!.livemode).toBe(false);
  });

  it('with wait, holds the request until an event arrives', async () => {
    const { meta } = await live.events.list({ limit: 1 });
    const started = Date.now();
    const waiting = live.events.list({ after: meta.next_cursor, wait: 10 });
    await new Promise((r) => setTimeout(r, 600));
    const id = await emit('live', 'payment.expired');
    const got = await waiting;
    expect(got.data.map((e) => e.id)).toEqual([id]);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(550);
    // The event woke it: it answered before its 10 s wait ran out.
    expect(took).toBeLessThan(10_000);
  });

  it('with wait and nothing new, answers empty with the same cursor after the wait', async () => {
    const { meta } = await live.events.list({ limit: 1 });
    const started = Date.now();
    const got = await live.events.list({ after: meta.next_cursor, wait: 1 });
    expect(got).toEqual({ data: [], meta: { next_cursor: meta.next_cursor } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });
});
