import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Orm } from '../../server/infra/database/orm.ts';
import { databaseMigratedTo, type MigrationDatabase } from '../support/migration.ts';

/**
 * Migration 0017 on a database that already holds a brand's single endpoint and
 * its deliveries: the endpoint keeps receiving both modes (mode NULL), health
 * starts clean, the deliveries keep their endpoint, and a second endpoint per
 * brand becomes possible.
 */

let m: MigrationDatabase;
let orm: Orm;
let db: pg.Client;
let one: MigrationDatabase['one'];

beforeAll(async () => {
  m = await databaseMigratedTo('0014-sms-presets');
  ({ orm, db, one } = m);
});
afterAll(() => m?.close());

describe('migration 0017 on existing data', () => {
  it('keeps the single endpoint receiving both modes and its deliveries attached', async () => {
    const { id: brandId } = await one<{ id: string }>("INSERT INTO brands (uuid, name) VALUES (gen_random_uuid(), 'Old') RETURNING id");
    const { id: endpointId } = await one<{ id: string }>(
      "INSERT INTO webhook_endpoints (brand_id, url, events, secret_encrypted) VALUES ($1, 'https://example.com/h', '{payment.completed}', 'v1:x') RETURNING id",
      [brandId],
    );
    // Before: one endpoint per brand.
    await expect(
      db.query("INSERT INTO webhook_endpoints (brand_id, url, events, secret_encrypted) VALUES ($1, 'https://example.com/2', '{payment.completed}', 'v1:y')", [brandId]),
    ).rejects.toThrow(/webhook_endpoints_brand_id_key/);
    const { id: eventId } = await one<{ id: string }>(
      "INSERT INTO webhook_events (public_id, brand_id, event, payload, created_at) VALUES ('evt_old', $1, 'payment.completed', '{}', now()) RETURNING id",
      [brandId],
    );
    const { id: deliveryId } = await one<{ id: string }>(
      "INSERT INTO webhook_deliveries (event_id, endpoint_id, brand_id, url, status) VALUES ($1, $2, $3, 'https://example.com/h', 'success') RETURNING id",
      [eventId, endpointId, brandId],
    );

    await orm.migrator.up({ to: '0017-webhook-endpoints' });

    expect(await one('SELECT mode, description, consecutive_failures, last_failure_at FROM webhook_endpoints WHERE id = $1', [endpointId])).toEqual({
      mode: null,
      description: '',
      consecutive_failures: 0,
      last_failure_at: null,
    });
    expect(await one('SELECT endpoint_id FROM webhook_deliveries WHERE id = $1', [deliveryId])).toEqual({ endpoint_id: endpointId });
    await db.query("INSERT INTO webhook_endpoints (brand_id, mode, url, events, secret_encrypted) VALUES ($1, 'test', 'https://example.com/2', '{payment.completed}', 'v1:y')", [brandId]);
    await expect(db.query("UPDATE webhook_endpoints SET mode = 'staging' WHERE id = $1", [endpointId])).rejects.toThrow(/check/);
    // Deleting an endpoint keeps its log.
    await db.query('DELETE FROM webhook_endpoints WHERE id = $1', [endpointId]);
    expect(await one('SELECT endpoint_id, status FROM webhook_deliveries WHERE id = $1', [deliveryId])).toEqual({ endpoint_id: null, status: 'success' });
  });
});
