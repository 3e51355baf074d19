import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Orm } from '../../server/infra/database/orm.ts';
import { databaseMigratedTo, type MigrationDatabase } from '../support/migration.ts';

/**
 * Migration 0030 on existing data: each brand already paid on a manual gateway
 * with a receiving account gets that number as its own wallet account (bound to
 * no phone); a brand never paid there, and an automatic gateway, get none.
 */

let m: MigrationDatabase;
let orm: Orm;
let one: MigrationDatabase['one'];

beforeAll(async () => {
  m = await databaseMigratedTo('0029-refund-completion-reference');
  ({ orm, one } = m);
});
afterAll(() => m?.close());

describe('migration 0030 on existing data', () => {
  it("gives each brand paid on a manual gateway the gateway's number as its first account", async () => {
    const brand = async (name: string) => (await one<{ id: string }>("INSERT INTO brands (uuid, name) VALUES (gen_random_uuid(), $1) RETURNING id", [name])).id;
    const paid = await brand('Paid');
    const never = await brand('Never paid');
    const gateway = async (code: string, type: string, account: string | null) =>
      (await one<{ id: string }>(
        `INSERT INTO gateways (code, name, type, methods, currencies, receiving_account) VALUES ($1, $2, $3, '{send_money}', '{BDT}', $4) RETURNING id`,
        [code, code.toUpperCase(), type, account],
      )).id;
    const bkash = await gateway('bkash', 'manual', '01700000000');
    const card = await gateway('card', 'automatic', null);
    for (const g of [bkash, bkash, card]) {
      const intent = await one<{ id: string }>(
        "INSERT INTO payment_intents (uuid, brand_id, amount, currency, expires_at) VALUES (gen_random_uuid(), $1, '100.00', 'BDT', now() + interval '1 hour') RETURNING id",
        [paid],
      );
      await one(
        "INSERT INTO transactions (brand_id, intent_id, trx_id, gateway_id, method, amount, currency, sms_amount, status) VALUES ($1, $2::bigint, 'T' || $2::text || '-' || $3::text, $3::bigint, 'send_money', '100.00', 'BDT', '100.00', 'failed') RETURNING id",
        [paid, intent.id, g],
      );
    }

    await orm.migrator.up({ to: '0030-wallet-accounts' });

    const rows = await m.db.query('SELECT brand_id, gateway_id, number, account_type, label, enabled, device_id, sim_slot FROM wallet_accounts ORDER BY id');
    expect(rows.rows).toEqual([
      { brand_id: paid, gateway_id: bkash, number: '01700000000', account_type: 'personal', label: 'BKASH', enabled: true, device_id: null, sim_slot: null },
    ]);
    expect(await one('SELECT count(*)::int AS n FROM wallet_accounts WHERE brand_id = $1', [never])).toEqual({ n: 0 });
    expect(await one('SELECT count(*)::int AS n FROM transactions WHERE wallet_account_id IS NOT NULL')).toEqual({ n: 0 });
  });
});
