import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { recordEvent } from '../../server/domain/webhooks/outbox.ts';
import { transaction } from '../../server/domain/db.ts';

let t: TestContext;
let brandId: number;
let otherBrandId: number;

// Workers off: these tests look at the queued job rows before anything consumes them.
beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ brandId } = await t.createBrand('Outbox Brand'));
  ({ brandId: otherBrandId } = await t.createBrand('Quiet Brand'));
  await t.sql(
    `INSERT INTO webhook_endpoints (brand_id, url, events, secret_encrypted) VALUES ($1, 'https://merchant.example/hooks', $2, 'x')`,
    [brandId, ['payment.completed', 'refund.completed']],
  );
});
afterAll(() => t?.close());

const paymentData = {
  payment_id: '5b0e6f0c-1a55-4b8e-9a57-0d6a3c1f2e11',
  transaction_id: 42,
  trx_id: 'TRX-0001',
  amount: '1250.00',
  currency: 'BDT',
  status: 'completed',
};

const em = () => t.runtime.deps.db;

async function rowsFor(brand: number) {
  const events = await t.sql<{ id: string; public_id: string; event: string; transaction_id: string | null; payload: string }>(
    'SELECT id, public_id, event, transaction_id, payload FROM webhook_events WHERE brand_id = $1 ORDER BY id',
    [brand],
  );
  const deliveries = await t.sql<{ id: string; event_id: string; url: string; status: string; attempts: number }>(
    'SELECT id, event_id, url, status, attempts FROM webhook_deliveries WHERE brand_id = $1 ORDER BY id',
    [brand],
  );
  const jobs = await t.sql<{ singleton_key: string; data: { deliveryId: number }; state: string }>(
    `SELECT singleton_key, data, state FROM pgboss.job WHERE name = 'webhook-deliver' ORDER BY created_on`,
  );
  return { events, deliveries, jobs };
}

describe('recordEvent', () => {
  it('records the event, one pending delivery and its job in the caller transaction', async () => {
    await transaction(em(), async (tx) => {
      await recordEvent(tx, { brandId, mode: 'live', event: 'payment.completed', data: paymentData, transactionId: 42 });
    });
    const { events, deliveries, jobs } = await rowsFor(brandId);
    expect(events).toHaveLength(1);
    expect(events[0]!.event).toBe('payment.completed');
    expect(events[0]!.transaction_id).toBe('42');
    expect(events[0]!.public_id).toMatch(/^evt_[0-9a-f]{32}$/);
    const body = JSON.parse(events[0]!.payload);
    expect(body).toEqual({ id: events[0]!.public_id, event: 'payment.completed', created_at: expect.stringMatching(/Z$/), livemode: true, data: paymentData });
    expect(deliveries).toEqual([{ id: expect.any(String), event_id: events[0]!.id, url: 'https://merchant.example/hooks', status: 'pending', attempts: 0 }]);
    expect(jobs).toEqual([{ singleton_key: `delivery:${deliveries[0]!.id}`, data: { deliveryId: Number(deliveries[0]!.id) }, state: 'created' }]);
  });

  it('rolls back with the caller: no event, delivery or job survives a failed transaction', async () => {
    const before = await rowsFor(brandId);
    await expect(
      transaction(em(), async (tx) => {
        await recordEvent(tx, { brandId, mode: 'live', event: 'refund.completed', data: refundData, transactionId: 42 });
        throw new Error('state change failed after the event');
      }),
    ).rejects.toThrow('state change failed after the event');
    const after = await rowsFor(brandId);
    expect(after.events).toHaveLength(before.events.length);
    expect(after.deliveries).toHaveLength(before.deliveries.length);
    expect(after.jobs).toHaveLength(before.jobs.length);
  });

  it('keeps the event but creates no delivery when the endpoint is not subscribed, disabled or missing', async () => {
    await transaction(em(), async (tx) => {
      await recordEvent(tx, { brandId, mode: 'live', event: 'device.offline', data: deviceData });
      await recordEvent(tx, { brandId: otherBrandId, mode: 'live', event: 'payment.completed', data: paymentData, transactionId: 7 });
    });
    await t.sql('UPDATE webhook_endpoints SET enabled = false WHERE brand_id = $1', [brandId]);
    try {
      await transaction(em(), (tx) => recordEvent(tx, { brandId, mode: 'live', event: 'payment.completed', data: paymentData }));
    } finally {
      await t.sql('UPDATE webhook_endpoints SET enabled = true WHERE brand_id = $1', [brandId]);
    }
    const mine = await rowsFor(brandId);
    expect(mine.events.map((e) => e.event)).toEqual(['payment.completed', 'device.offline', 'payment.completed']);
    expect(mine.deliveries).toHaveLength(1);
    const other = await rowsFor(otherBrandId);
    expect(other.events.map((e) => e.event)).toEqual(['payment.completed']);
    expect(other.deliveries).toHaveLength(0);
    expect(mine.jobs).toHaveLength(1);
  });

  it('refuses data that breaks the event contract, and calls outside a transaction', async () => {
    await expect(
      transaction(em(), (tx) => recordEvent(tx, { brandId, mode: 'live', event: 'payment.completed', data: { ...paymentData, amount: 1250 } })),
    ).rejects.toThrow(/payment\.completed data does not match contract\/events\.ts \(data\.amount: /);
    await expect(recordEvent(em(), { brandId, mode: 'live', event: 'payment.completed', data: paymentData })).rejects.toThrow(
      'recordEvent must run inside a transaction',
    );
    const { events } = await rowsFor(brandId);
    expect(events).toHaveLength(3);
  });
});

const refundData = {
  id: 3,
  uuid: '0f8e2d7c-4c1b-4a39-8f6e-2b7d9e1c3a50',
  transaction_id: 42,
  trx_id: 'TRX-0001',
  amount: '100.00',
  status: 'completed',
};

const deviceData = {
  device_uuid: '7c9d4b1e-2f3a-4e5b-8c6d-9e0f1a2b3c4d',
  status: 'offline',
  last_seen_at: '2026-11-21T10:00:00.000Z',
};
