import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';

/**
 * Intent creation remembers the gateways and the expiry setting between requests
 * (intentConfigSource), yet every create is decided on the configuration current
 * when it arrived: changes here are made with plain SQL on a connection of the
 * test's own, as another process (the CLI, a second server) would make them, so
 * nothing in the server is told of them.
 */

let t: TestContext;
let apiKey: string;
let gateway: GatewayView;

const intents = async () => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents'))[0]!.n);
const create = (body: Record<string, unknown>, key?: string) =>
  t.request('POST', '/api/v1/payments', { token: apiKey, body, ...(key ? { headers: { 'Idempotency-Key': key } } : {}) });

/**
 * The statements of the transaction that inserted a payment intent while `fn`
 * ran, first word of each: every query of the in-process server goes through
 * pg's Client, and a transaction holds one client from BEGIN to COMMIT, so
 * statements of other work (background jobs) running meanwhile are left out.
 */
async function createStatements(fn: () => Promise<unknown>): Promise<string[]> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const sent: Array<{ client: unknown; text: string }> = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0];
    sent.push({ client: this, text: typeof q === 'string' ? q : ((q as { text?: string })?.text ?? '') });
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  const insert = sent.findIndex((s) => /^insert into "payment_intents"/i.test(s.text));
  expect(insert, 'no intent was inserted').toBeGreaterThanOrEqual(0);
  const mine = sent.filter((s) => s.client === sent[insert]!.client).map((s) => s.text.trim());
  const at = mine.findIndex((s) => /^insert into "payment_intents"/i.test(s));
  const begin = mine.slice(0, at).map((s) => s.toLowerCase()).lastIndexOf('begin');
  const commit = mine.findIndex((s, i) => i > at && s.toLowerCase() === 'commit');
  return mine.slice(begin, commit + 1);
}
const firstWords = (texts: string[]) => texts.map((s) => s.split(/\s+/)[0]!.toLowerCase());

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey } = await t.createBrand('Remembering Shop'));
  gateway = await seedGateway(t, 'bkash', { min_amount: '10.00', max_amount: '5000.00' });
  // Always enabled, takes at most 50: once `gateway` is gone, 100.00 is refused.
  await seedGateway(t, 'nagad', { min_amount: '10.00', max_amount: '50.00' });
});
afterAll(() => t?.close());

beforeEach(async () => {
  await t.sql('UPDATE gateways SET enabled = true, max_amount = 5000.00 WHERE id = $1', [gateway.id]);
  await t.sql("DELETE FROM settings WHERE key = 'intent_expiry_minutes'");
  // Warm: the server now remembers the configuration above.
  expect((await create({ amount: '100.00', currency: 'BDT' })).status).toBe(201);
});

describe('a remembered configuration is never used once it has changed', () => {
  for (const keyed of [false, true]) {
    const label = keyed ? 'with an Idempotency-Key' : 'without a key';

    it(`${label}: a maximum lowered elsewhere refuses the next create, and no intent is left behind`, async () => {
      await t.sql('UPDATE gateways SET max_amount = 50.00 WHERE id = $1', [gateway.id]);
      const before = await intents();
      const key = keyed ? randomUUID() : undefined;
      const res = await create({ amount: '100.00', currency: 'BDT' }, key);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'AMOUNT_EXCEEDS_MAXIMUM', field: 'amount' });
      expect(await intents()).toBe(before);
      if (key) {
        // The refusal is what the key stores and replays.
        const again = await create({ amount: '100.00', currency: 'BDT' }, key);
        expect(again.status).toBe(422);
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        expect(await intents()).toBe(before);
      }
    });

    it(`${label}: a gateway disabled elsewhere is seen: the one left takes at most 50, so 100.00 is refused`, async () => {
      await t.sql('UPDATE gateways SET enabled = false WHERE id = $1', [gateway.id]);
      const before = await intents();
      const res = await create({ amount: '100.00', currency: 'BDT' }, keyed ? randomUUID() : undefined);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'AMOUNT_EXCEEDS_MAXIMUM', field: 'amount' });
      expect(await intents()).toBe(before);
      // The other gateway still takes what it can.
      expect((await create({ amount: '40.00', currency: 'BDT' }, keyed ? randomUUID() : undefined)).status).toBe(201);
    });

    it(`${label}: an expiry setting changed elsewhere applies to the next create, which is stored once`, async () => {
      await t.sql(`INSERT INTO settings (key, value) VALUES ('intent_expiry_minutes', '7'::jsonb)`);
      const before = await intents();
      const res = await create({ amount: '100.00', currency: 'BDT' }, keyed ? randomUUID() : undefined);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const { created_at, expires_at, payment_id } = res.body.data;
      expect(Date.parse(expires_at) - Date.parse(created_at)).toBe(7 * 60_000);
      expect(await intents()).toBe(before + 1);
      const [row] = await t.sql<{ seconds: string }>('SELECT extract(epoch FROM expires_at - created_at) AS seconds FROM payment_intents WHERE uuid = $1', [payment_id]);
      expect(Number(row!.seconds)).toBe(420);
    });
  }

  it('a raised maximum is seen too: the amount the old one refused is now taken', async () => {
    await t.sql('UPDATE gateways SET max_amount = 50.00 WHERE id = $1', [gateway.id]);
    expect((await create({ amount: '100.00', currency: 'BDT' })).status).toBe(422); // remembers the lower maximum now
    await t.sql('UPDATE gateways SET max_amount = 5000.00 WHERE id = $1', [gateway.id]);
    expect((await create({ amount: '100.00', currency: 'BDT' })).status).toBe(201);
  });
});

describe('round trips', () => {
  it('with the configuration unchanged a create reads no gateway and no setting of its own: one INSERT between BEGIN and COMMIT', async () => {
    expect(firstWords(await createStatements(() => create({ amount: '120.00', currency: 'BDT' })))).toEqual(['begin', 'insert', 'commit']);
  });

  it('after a change elsewhere the create reads the configuration once and inserts once more: the undone insert is deleted in the same transaction', async () => {
    await t.sql('UPDATE gateways SET fee_percent = 1.5 WHERE id = $1', [gateway.id]);
    const sent = await createStatements(() => create({ amount: '120.00', currency: 'BDT' }));
    expect(firstWords(sent)).toEqual(['begin', 'insert', 'delete', 'select', 'insert', 'commit']);
    expect(sent[3]).toMatch(/from "gateways"/);
    expect(firstWords(await createStatements(() => create({ amount: '121.00', currency: 'BDT' })))).toEqual(['begin', 'insert', 'commit']);
  });

  it('a create with a customer reads the configuration before writing its customer', async () => {
    const sent = await createStatements(() => create({ amount: '130.00', currency: 'BDT', customer: { email: 'remember@example.com' } }));
    expect(firstWords(sent).slice(0, 2)).toEqual(['begin', 'select']);
    expect(sent[1]).toMatch(/from "gateways"/);
    expect(sent.findIndex((s) => /^insert into "customers"/i.test(s))).toBeGreaterThan(1);
  });
});
