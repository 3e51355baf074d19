import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { seedGateway, seedTransaction, type SeedStatus } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';

let t: TestContext;
let bkash: GatewayView;
let sandbox: GatewayView;

beforeAll(async () => {
  t = await startTestServer();
  bkash = await seedGateway(t, 'bkash');
  sandbox = await seedGateway(t, 'sandbox');
});
afterAll(() => t?.close());

const DAY = 86_400_000;

// Test mode: the figures include a sandbox (automatic) payment, which only test mode takes.
async function brandWithDevice(timezone = 'UTC') {
  const brand = await t.createBrand('Dashboard Brand', { mode: 'test' });
  await t.sql('UPDATE brands SET timezone = $1 WHERE id = $2', [timezone, brand.brandId]);
  const device = await pairDevice(t, { brandId: brand.brandId, mode: 'test' });
  return { ...brand, device };
}

async function seed(apiKey: string, status: SeedStatus, amount: string, opts: { gateway?: GatewayView; currency?: string; at?: Date } = {}) {
  return (await seedTransaction(t, { apiKey, gateway: opts.gateway ?? bkash, status, amount, currency: opts.currency, at: opts.at })).transaction;
}

describe('GET dashboard', () => {
  it('an empty brand', async () => {
    const { device } = await brandWithDevice();
    const res = await deviceRequest(t, device, 'GET', '/dashboard');
    expect(res.status).toBe(200);
    const { server_time, ...rest } = res.body.data;
    expect(rest).toEqual({
      today: { date: new Date().toISOString().slice(0, 10), timezone: 'UTC', revenue: '0.00', currency: null, revenue_by_currency: [], total: 0, pending: 0 },
      recent_transactions: [],
      unread_notifications: 0,
    });
    expect(Math.abs(Date.parse(server_time) - Date.now())).toBeLessThan(5000);
  });

  it("today's completed revenue, total and pending counts, and the 5 newest transactions of the brand only", async () => {
    const { apiKey, device } = await brandWithDevice();
    const other = await t.createBrand('Other', { mode: 'test' });
    const a = await seed(apiKey, 'completed', '1250.00');
    const b = await seed(apiKey, 'completed', '100.50');
    const c = await seed(apiKey, 'awaiting_verification', '300.00');
    const p = await seed(apiKey, 'pending', '40.00');
    const f = await seed(apiKey, 'failed', '99.00');
    const pr = await seed(apiKey, 'processing', '75.00', { gateway: sandbox });
    await seed(other.apiKey, 'completed', '5000.00');

    const res = await deviceRequest(t, device, 'GET', '/dashboard');
    expect(res.status).toBe(200);
    const { today, recent_transactions } = res.body.data;
    expect(today).toMatchObject({ revenue: '1350.50', currency: 'BDT', revenue_by_currency: [{ currency: 'BDT', amount: '1350.50' }], total: 6, pending: 3 });
    expect(recent_transactions).toHaveLength(5);
    expect(recent_transactions.map((r: any) => r.trx_id)).toEqual([pr, f, p, c, b].map((x) => x.trxId));
    expect(recent_transactions[0]).toEqual({
      trx_id: pr.trxId,
      amount: '75.00',
      currency: 'BDT',
      status: 'processing',
      gateway: sandbox.code,
      created_at: pr.createdAt.toISOString(),
    });
    expect(recent_transactions[4]).toMatchObject({ trx_id: b.trxId, amount: '100.50', status: 'completed', gateway: bkash.code });
    expect(recent_transactions.map((r: any) => r.trx_id)).not.toContain(a.trxId);
  });

  it('"today" is the calendar day in the brand\'s time zone', async () => {
    // Asia/Dhaka is UTC+6 all year.
    const { apiKey, device } = await brandWithDevice('Asia/Dhaka');
    const offset = 6 * 3600_000;
    const dhakaMidnight = new Date(Math.floor((Date.now() + offset) / DAY) * DAY - offset);
    await seed(apiKey, 'completed', '10.00', { at: new Date(dhakaMidnight.getTime() - 60_000) });
    await seed(apiKey, 'completed', '20.00', { at: new Date(dhakaMidnight.getTime() + 60_000) });
    await seed(apiKey, 'awaiting_verification', '30.00', { at: new Date(dhakaMidnight.getTime() - 60_000) });
    const res = await deviceRequest(t, device, 'GET', '/dashboard');
    expect(res.body.data.today).toMatchObject({
      date: new Date(Date.now() + offset).toISOString().slice(0, 10),
      timezone: 'Asia/Dhaka',
      revenue: '20.00',
      total: 1,
      pending: 0,
    });
    // Yesterday's are still among the recent ones.
    expect(res.body.data.recent_transactions).toHaveLength(3);
  });

  it('revenue in several currencies is never added up: per currency, headline in the most used one', async () => {
    const { apiKey, device } = await brandWithDevice();
    await seed(apiKey, 'completed', '10.00', { gateway: sandbox, currency: 'USD' });
    await seed(apiKey, 'completed', '500.00');
    await seed(apiKey, 'completed', '700.00');
    const res = await deviceRequest(t, device, 'GET', '/dashboard');
    expect(res.body.data.today).toMatchObject({
      revenue: '1200.00',
      currency: 'BDT',
      revenue_by_currency: [
        { currency: 'BDT', amount: '1200.00' },
        { currency: 'USD', amount: '10.00' },
      ],
    });
  });

  it('an unknown stored time zone falls back to UTC instead of failing', async () => {
    const { device } = await brandWithDevice('Mars/Olympus_Mons');
    const res = await deviceRequest(t, device, 'GET', '/dashboard');
    expect(res.status).toBe(200);
    expect(res.body.data.today.timezone).toBe('UTC');
  });
});
