import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseMigratedTo, type MigrationDatabase } from '../support/migration.ts';

/**
 * Migrations 0051 and 0052 on existing data: SMS records keep their text (none
 * is marked expired); the webhook attempts table becomes partitioned with
 * every existing row kept, as it was, in the default partition, and the ids go
 * on from the highest.
 */

let m: MigrationDatabase;
let one: MigrationDatabase['one'];

beforeAll(async () => {
  m = await databaseMigratedTo('0045-wallet-account-index');
  ({ one } = m);
});
afterAll(() => m?.close());

describe('migrations 0051 and 0052 on existing data', () => {
  it('keeps every SMS text and every webhook attempt, the attempts in the default partition, and new ids after the old', async () => {
    const brand = (await one<{ id: string }>("INSERT INTO brands (uuid, name) VALUES (gen_random_uuid(), 'Old data') RETURNING id")).id;
    const device = (await one<{ id: string }>(
      "INSERT INTO devices (uuid, brand_id, name, fingerprint_hash) VALUES (gen_random_uuid(), $1, 'Old phone', repeat('a', 64)) RETURNING id",
      [brand],
    )).id;
    const sms = (await one<{ id: string }>(
      "INSERT INTO sms_records (brand_id, device_id, device_message_id, content_hash, sender, body_encrypted, received_at, match_status) VALUES ($1, $2, 'm1', repeat('b', 64), 'sender-token', 'body-token', now(), 'no_match') RETURNING id",
      [brand, device],
    )).id;
    const event = (await one<{ id: string }>("INSERT INTO webhook_events (public_id, brand_id, event, payload, created_at) VALUES ('evt_old', $1, 'payment.completed', '{}', now()) RETURNING id", [brand])).id;
    const delivery = (await one<{ id: string }>("INSERT INTO webhook_deliveries (event_id, brand_id, url, status) VALUES ($1, $2, 'https://example.test', 'retrying') RETURNING id", [event, brand])).id;
    for (let attempt = 1; attempt <= 3; attempt++) {
      await m.db.query("INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at, response_body) VALUES ($1, $2, 'https://example.test', 'failure', now() - make_interval(days => $3), 'busy')", [delivery, attempt, 200 - attempt]);
    }
    const before = (await m.db.query('SELECT * FROM webhook_attempts ORDER BY id')).rows;

    await m.migrateTo('0052-webhook-attempts-partitioned');

    expect(await one('SELECT sender, body_encrypted, text_expired_at FROM sms_records WHERE id = $1', [sms])).toEqual({ sender: 'sender-token', body_encrypted: 'body-token', text_expired_at: null });
    expect(await one("SELECT relkind FROM pg_class WHERE oid = 'webhook_attempts'::regclass")).toEqual({ relkind: 'p' });
    const after = (await m.db.query('SELECT *, tableoid::regclass::text AS part FROM webhook_attempts ORDER BY id')).rows;
    expect(after.map(({ part: _part, ...row }) => row)).toEqual(before);
    expect(new Set(after.map((r) => r.part))).toEqual(new Set(['webhook_attempts_default']));

    // The identity goes on after the old rows; the same attempt at the same start is still one row.
    const next = await one<{ id: string }>("INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at) VALUES ($1, 4, 'https://example.test', 'failure', now()) RETURNING id", [delivery]);
    expect(BigInt(next.id)).toBeGreaterThan(BigInt(before.at(-1)!.id));
    await expect(
      m.db.query("INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at) SELECT delivery_id, 1, 'x', 'failure', requested_at FROM webhook_attempts WHERE delivery_id = $1 AND attempt = 1", [delivery]),
    ).rejects.toThrow(/duplicate key/);
    // Removing a delivery still removes its attempts.
    await m.db.query('DELETE FROM webhook_deliveries WHERE id = $1', [delivery]);
    expect(await one('SELECT count(*)::int AS n FROM webhook_attempts')).toEqual({ n: 0 });
  });

  it('0052 goes back down to one table', async () => {
    await m.orm.migrator.down({ to: '0051-sms-text-expiry' });
    expect(await one("SELECT relkind FROM pg_class WHERE oid = 'webhook_attempts'::regclass")).toEqual({ relkind: 'r' });
    await m.migrateTo('0052-webhook-attempts-partitioned');
    expect(await one("SELECT relkind FROM pg_class WHERE oid = 'webhook_attempts'::regclass")).toEqual({ relkind: 'p' });
  });
});
