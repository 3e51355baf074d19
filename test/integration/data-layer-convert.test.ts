import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, prepared, type DB } from '../../server/domain/db.ts';
import type { EntityManager } from '../../server/infra/database/orm.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';

/**
 * db(em) converts values with ConvertValuesPlugin (server/infra/database/convert-values.ts)
 * instead of MikroORM's own plugin, and hot paths run prepared statements: both must hand
 * back exactly what `em.getKysely({ convertValues: true })` does, and convert parameters
 * the same way.
 */
let t: TestContext;
let brandId: number;
const em = (): EntityManager => t.runtime.deps.orm.em.fork();
const mikro = (e: EntityManager) => e.getKysely({ convertValues: true }) as unknown as Kysely<DB>;

beforeAll(async () => {
  t = await startTestServer();
  let apiKey: string;
  ({ apiKey, brandId } = await t.createBrand('Convert Shop'));
  await seedGateway(t, 'bkash');
  await createPayment(t, apiKey, { customer: { name: 'Jane Doe', email: 'jane@example.com' }, metadata: { order: 'A-1', channel: 'web' } });
  await createPayment(t, apiKey, {});
});
afterAll(() => t?.close());

/** A join of four entities with a lateral subquery, aliased columns, timestamps, bigint ids, numeric and jsonb. */
const joined = (k: Kysely<DB>) =>
  k
    .selectFrom('payment_intents as intent')
    .leftJoinLateral(
      (eb) => eb.selectFrom('transactions as tt').selectAll('tt').whereRef('tt.intent_id', '=', 'intent.id').orderBy('tt.id', 'desc').limit(1).as('t'),
      (join) => join.onTrue(),
    )
    .leftJoin('gateways as g', 'g.id', 't.gateway_id')
    .leftJoin('customers as customer', 'customer.id', 'intent.customer_id')
    .select(['intent.id as intent_id', 'intent.brand_id', 'intent.amount', 'intent.metadata', 'intent.expires_at', 'intent.created_at as intent_created_at'])
    .select(['t.id as transaction_id', 't.created_at', 'g.code', 'customer.id as customer_id', 'customer.created_at as customer_created_at'])
    .where('intent.brand_id', '=', brandId)
    .orderBy('intent.id');

describe('db(em) value conversion', () => {
  it('returns the same rows as MikroORM’s convertValues plugin', async () => {
    const ours = await joined(db(em())).execute();
    const theirs = await joined(mikro(em())).execute();
    expect(ours).toHaveLength(2);
    expect(ours).toEqual(theirs);
    expect(ours[0]!.expires_at).toBeInstanceOf(Date);
    expect(ours[0]!.intent_created_at).toBeInstanceOf(Date);
    expect(typeof ours[0]!.intent_id).toBe('number');
    expect(ours[0]!.metadata).toEqual({ order: 'A-1', channel: 'web' });

    const all = (k: Kysely<DB>) => k.selectFrom('customers').selectAll().where('brand_id', '=', brandId).execute();
    expect(await all(db(em()))).toEqual(await all(mikro(em())));
    // The second run takes the remembered field map and lookups: still the same.
    expect(await joined(db(em())).execute()).toEqual(theirs);
  });

  it('converts Date and JSON parameters as MikroORM does, in writes and comparisons', async () => {
    const when = new Date('2030-01-02T03:04:05.678Z');
    const insert = (k: Kysely<DB>, key: string) =>
      k
        .insertInto('idempotency_keys')
        .values({ brand_id: brandId, key, request_hash: 'h', response_status: 201, response_body: { a: [1, 'x'] }, created_at: when, completed_at: when })
        .returning(['id', 'created_at', 'response_body'])
        .executeTakeFirstOrThrow();
    const ours = await insert(db(em()), 'ours');
    const theirs = await insert(mikro(em()), 'theirs');
    expect({ ...ours, id: 0 }).toEqual({ ...theirs, id: 0 });
    expect(ours.created_at).toEqual(when);
    const found = await db(em()).selectFrom('idempotency_keys').select('key').where('brand_id', '=', brandId).where('created_at', '=', when).orderBy('key').execute();
    expect(found.map((r) => r.key)).toEqual(['ours', 'theirs']);
  });
});

describe('prepared statements', () => {
  const byBrand = prepared((k, $: { brandId: number; after: Date }) => joined(k).where('intent.brand_id', '=', $.brandId).where('intent.created_at', '>', $.after));

  it('return what the builder returns, with parameters converted at their place', async () => {
    const expected = await joined(mikro(em())).execute();
    const rows = await byBrand.execute(em(), { brandId, after: new Date(0) });
    expect(rows).toEqual(expected);
    // Compiled once: the second run, with other values, uses the same statement.
    expect(await byBrand.execute(em(), { brandId, after: new Date(Date.now() + 3600_000) })).toEqual([]);
    expect(await byBrand.executeTakeFirst(em(), { brandId: brandId + 1000, after: new Date(0) })).toBeUndefined();
  });

  it('convert JSON and Date values of an INSERT and run on the caller’s transaction', async () => {
    const insert = prepared((k, $: { brandId: number; key: string; body: unknown; at: Date }) =>
      k
        .insertInto('idempotency_keys')
        .values({ brand_id: $.brandId, key: $.key, request_hash: 'h', response_status: 200, response_body: $.body, created_at: $.at, completed_at: sql<Date>`now()` })
        .returning(['key', 'response_body', 'created_at']),
    );
    const at = new Date('2031-05-06T07:08:09.010Z');
    const e = em();
    await e.begin();
    try {
      const row = await insert.executeTakeFirst(e, { brandId, key: 'prepared', body: { nested: { x: 1 } }, at });
      expect(row).toEqual({ key: 'prepared', response_body: { nested: { x: 1 } }, created_at: at });
    } finally {
      await e.rollback();
    }
    expect(await t.sql('SELECT 1 FROM idempotency_keys WHERE key = $1', ['prepared'])).toEqual([]);

    await insert.execute(em(), { brandId, key: 'kept', body: [1, 2], at });
    expect(await t.sql(`SELECT response_body, created_at FROM idempotency_keys WHERE key = 'kept'`)).toEqual([{ response_body: [1, 2], created_at: at }]);
  });
});
