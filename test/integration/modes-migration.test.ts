import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateApiKeyHashes } from '../../server/domain/brands/service.ts';
import type { Orm } from '../../server/infra/database/orm.ts';
import { openDatabase } from '../../server/domain/db.ts';
import { databaseMigratedTo, type MigrationDatabase } from '../support/migration.ts';

/**
 * Migration 0010 on a database that already holds data: every row gets a mode,
 * test where it is determinable (keys by their prefix, everything of a brand
 * that only ever had test keys, payments paid only on the sandbox), live
 * otherwise. Run on a fresh database migrated up to 0009 with rows written the
 * way the service wrote them before modes existed.
 */

let m: MigrationDatabase;
let orm: Orm;
let db: pg.Client;
let one: MigrationDatabase['one'];

const hash = (c: string) => c.repeat(64);

beforeAll(async () => {
  m = await databaseMigratedTo('0009-sms-candidates-index');
  ({ orm, db, one } = m);
});
afterAll(() => m?.close());

describe('migration 0010 on existing data', () => {
  it('gives every row a mode: test where determinable, live otherwise', async () => {
    const brand = async (n: string) => (await one<{ id: string }>('INSERT INTO brands (uuid, name) VALUES (gen_random_uuid(), $1) RETURNING id', [n])).id;
    const testOnly = await brand('Only test keys');
    const mixed = await brand('Live and test keys');
    const key = (b: string, prefix: string, h: string) => db.query('INSERT INTO api_keys (brand_id, name, prefix, key_hash) VALUES ($1, $2, $3, $4)', [b, prefix, prefix, h]);
    await key(testOnly, 'pk_test_AbCd', hash('a'));
    await key(mixed, 'pk_live_AbCd', hash('b'));
    await key(mixed, 'pk_test_XyZw', hash('c'));
    const gateway = async (code: string, type: string) =>
      (await one<{ id: string }>("INSERT INTO gateways (code, name, type, methods, currencies) VALUES ($1, $1, $2, '{x}', '{BDT}') RETURNING id", [code, type])).id;
    const wallet = await gateway('bkash', 'manual');
    const sandbox = await gateway('sandbox', 'automatic');
    const intent = async (b: string) =>
      one<{ id: string; uuid: string }>("INSERT INTO payment_intents (uuid, brand_id, amount, currency, expires_at) VALUES (gen_random_uuid(), $1, 100, 'BDT', now() + interval '1 hour') RETURNING id, uuid", [b]);
    let n = 0;
    const tx = async (b: string, i: string, g: string, status = 'failed') =>
      (await one<{ id: string }>(
        `INSERT INTO transactions (brand_id, intent_id, trx_id, gateway_id, method, amount, currency, status, completed_at)
         VALUES ($1, $2, $3, $4, 'x', 100, 'BDT', $5, CASE WHEN $5 = 'completed' THEN now() END) RETURNING id`,
        [b, i, `TRXMIG${++n}`, g, status],
      )).id;

    const walletPaid = await intent(mixed);
    const walletTx = await tx(mixed, walletPaid.id, wallet, 'completed');
    const sandboxPaid = await intent(mixed);
    const sandboxTx = await tx(mixed, sandboxPaid.id, sandbox, 'completed');
    const bothTried = await intent(mixed);
    await tx(mixed, bothTried.id, sandbox);
    const bothTx = await tx(mixed, bothTried.id, wallet, 'completed');
    const unpaid = await intent(mixed);
    const testBrandPaid = await intent(testOnly);
    const testBrandTx = await tx(testOnly, testBrandPaid.id, wallet, 'completed');

    const refund = async (t: string, b: string) => (await one<{ id: string }>("INSERT INTO refunds (uuid, brand_id, transaction_id, amount, currency) VALUES (gen_random_uuid(), $1, $2, 1, 'BDT') RETURNING id", [b, t])).id;
    const sandboxRefund = await refund(sandboxTx, mixed);
    const walletRefund = await refund(walletTx, mixed);

    const device = async (b: string) => one<{ id: string; uuid: string }>("INSERT INTO devices (uuid, brand_id, name, fingerprint_hash) VALUES (gen_random_uuid(), $1, 'phone', $2) RETURNING id, uuid", [b, hash('f')]);
    const testPhone = await device(testOnly);
    const livePhone = await device(mixed);
    for (const d of [testPhone, livePhone]) {
      await db.query("INSERT INTO sms_records (brand_id, device_id, device_message_id, content_hash, sender, body_encrypted, received_at) SELECT brand_id, id, 'm1', $2, 'bKash', 'x', now() FROM devices WHERE id = $1", [d.id, hash(d === testPhone ? '1' : '2')]);
      await db.query("INSERT INTO notifications (device_id, title, body) VALUES ($1, 't', 'b')", [d.id]);
    }
    await db.query("INSERT INTO outbound_sms (brand_id, phone_encrypted, message_encrypted, expires_at) VALUES ($1, 'x', 'x', now() + interval '1 day'), ($2, 'x', 'x', now() + interval '1 day')", [testOnly, mixed]);
    await db.query("INSERT INTO pairing_codes (brand_id, code_hash, expires_at) VALUES ($1, $3, now() + interval '1 hour'), ($2, $4, now() + interval '1 hour')", [testOnly, mixed, hash('p'), hash('q')]);
    await db.query("INSERT INTO customers (uuid, brand_id) VALUES (gen_random_uuid(), $1), (gen_random_uuid(), $2)", [testOnly, mixed]);

    const endpoint = (await one<{ id: string }>("INSERT INTO webhook_endpoints (brand_id, url, events, secret_encrypted) VALUES ($1, 'https://m.example/h', '{payment.completed}', 'x') RETURNING id", [mixed])).id;
    const event = async (b: string, ev: string, t: string | null, data: Record<string, unknown>) =>
      (await one<{ id: string }>(
        "INSERT INTO webhook_events (public_id, brand_id, event, transaction_id, payload, created_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING id",
        [`evt_${randomBytes(8).toString('hex')}`, b, ev, t, JSON.stringify({ id: 'evt', event: ev, created_at: 'x', data })],
      )).id;
    const sandboxEvent = await event(mixed, 'payment.completed', sandboxTx, {});
    const walletEvent = await event(mixed, 'payment.completed', walletTx, {});
    const expiredEvent = await event(mixed, 'payment.expired', null, { payment_id: unpaid.uuid });
    const deviceEvent = await event(testOnly, 'device.offline', null, { device_uuid: testPhone.uuid });
    for (const e of [sandboxEvent, walletEvent]) {
      await db.query('INSERT INTO webhook_deliveries (event_id, endpoint_id, brand_id, url) VALUES ($1, $2, $3, $4)', [e, endpoint, mixed, 'https://m.example/h']);
    }

    // Only 0010: later migrations are not what this test is about.
    await orm.migrator.up({ to: '0010-modes' });

    const modeOf = async (table: string, id: string) => (await one<{ mode: string }>(`SELECT mode FROM ${table} WHERE id = $1`, [id])).mode;
    expect((await db.query('SELECT prefix, mode FROM api_keys ORDER BY id')).rows).toEqual([
      { prefix: 'pk_test_AbCd', mode: 'test' },
      { prefix: 'pk_live_AbCd', mode: 'live' },
      { prefix: 'pk_test_XyZw', mode: 'test' },
    ]);
    expect(await modeOf('payment_intents', walletPaid.id)).toBe('live');
    expect(await modeOf('payment_intents', sandboxPaid.id)).toBe('test');
    // A wallet transaction on it may be real money: the intent stays live.
    expect(await modeOf('payment_intents', bothTried.id)).toBe('live');
    expect(await modeOf('transactions', bothTx)).toBe('live');
    expect(await modeOf('payment_intents', unpaid.id)).toBe('live');
    expect(await modeOf('payment_intents', testBrandPaid.id)).toBe('test');
    expect([await modeOf('transactions', walletTx), await modeOf('transactions', sandboxTx), await modeOf('transactions', testBrandTx)]).toEqual(['live', 'test', 'test']);
    expect([await modeOf('refunds', walletRefund), await modeOf('refunds', sandboxRefund)]).toEqual(['live', 'test']);
    expect([await modeOf('devices', livePhone.id), await modeOf('devices', testPhone.id)]).toEqual(['live', 'test']);
    for (const table of ['sms_records', 'notifications']) {
      expect((await db.query(`SELECT d.brand_id, r.mode FROM ${table} r JOIN devices d ON d.id = r.device_id ORDER BY d.brand_id`)).rows.map((r) => r.mode)).toEqual(['test', 'live']);
    }
    for (const table of ['outbound_sms', 'pairing_codes', 'customers']) {
      expect((await db.query(`SELECT mode FROM ${table} ORDER BY brand_id`)).rows.map((r) => r.mode), table).toEqual(['test', 'live']);
    }
    expect([await modeOf('webhook_events', sandboxEvent), await modeOf('webhook_events', walletEvent), await modeOf('webhook_events', expiredEvent), await modeOf('webhook_events', deviceEvent)]).toEqual([
      'test',
      'live',
      'live',
      'test',
    ]);
    expect((await db.query('SELECT e.mode AS event_mode, d.mode FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id')).rows.every((r) => r.mode === r.event_mode)).toBe(true);
    expect((await db.query("SELECT count(*)::int AS n FROM webhook_events WHERE NOT is_test")).rows[0].n).toBe(4);

    // The keys keep authenticating, each in the mode its prefix says (with today's lookup, on today's schema).
    await orm.migrator.up();
    const appDb = openDatabase({ url: orm.config.get('clientUrl')!, poolMax: 1 });
    try {
      const principals = await authenticateApiKeyHashes(appDb, [hash('a'), hash('b'), hash('c')]);
      expect(principals.map((p) => p?.mode)).toEqual(['test', 'live', 'test']);
    } finally {
      await appDb.destroy();
    }
  });
});
