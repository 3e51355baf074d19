import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, prepared, transaction, type Db } from '../../server/domain/db.ts';
import { databasePool } from '../../server/infra/database/database.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { waitFor } from '../support/wait.ts';

/**
 * The data layer (server/infra/database/database.ts, server/domain/db.ts): Kysely
 * over a pg pool of the application's own. Values come back as the entities type
 * them, jsonb values go as JSON, transactions nest as savepoints, statements
 * compiled once go by name, and a connection lost mid-transaction costs no pool slot.
 */
let t: TestContext;
let brandId: number;
let url: string;
const own: Db[] = [];
const open = (opts: { poolMax: number; namedStatements?: boolean }) => {
  const db = openDatabase({ url, ...opts });
  own.push(db);
  return db;
};

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ brandId } = await t.createBrand('Data layer'));
  url = t.runtime.deps.config.DATABASE_URL!;
});
afterAll(async () => {
  for (const db of own) await db.destroy();
  await t?.close();
});

describe('values', () => {
  it('come back as the entities type them: Date, number ids, decimal strings, parsed JSON, arrays', async () => {
    const db = t.runtime.deps.db;
    const row = await db.selectFrom('brands').select(['id', 'created_at']).where('id', '=', brandId).executeTakeFirstOrThrow();
    expect(row.id).toBe(brandId);
    expect(row.created_at).toBeInstanceOf(Date);
    const { rows } = await sql<{ n: unknown; money: unknown; j: unknown; a: unknown }>`SELECT 9007199254740991::bigint AS n, 12.50::numeric(12,2) AS money, '{"x":[1]}'::jsonb AS j, ARRAY['a','b']::text[] AS a`.execute(db);
    expect(rows[0]).toEqual({ n: 9007199254740991, money: '12.50', j: { x: [1] }, a: ['a', 'b'] });
  });

  it('written to a jsonb column go as JSON, arrays and strings included, in INSERT, UPDATE and ON CONFLICT', async () => {
    const db = t.runtime.deps.db;
    const key = `json-probe-${Date.now()}`;
    await db.insertInto('settings').values({ key, value: ['a', 1] }).execute();
    expect((await t.sql<{ value: unknown }>('SELECT value FROM settings WHERE key = $1', [key]))[0]!.value).toEqual(['a', 1]);
    await db.updateTable('settings').set({ value: 'plain text' }).where('key', '=', key).execute();
    expect((await t.sql<{ t: string }>('SELECT jsonb_typeof(value) AS t FROM settings WHERE key = $1', [key]))[0]!.t).toBe('string');
    await db
      .insertInto('settings')
      .values({ key, value: 1 })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: [{ nested: true }] }))
      .execute();
    expect((await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow()).value).toEqual([{ nested: true }]);
    await db.deleteFrom('settings').where('key', '=', key).execute();
  });

  it('of a prepared statement are bound at their place, jsonb parameters as JSON', async () => {
    const db = t.runtime.deps.db;
    const put = prepared((k, $: { key: string; value: unknown }) => k.insertInto('settings').values({ key: $.key, value: $.value }).returning(['key', 'value']));
    const key = `prepared-${Date.now()}`;
    expect(await put.executeTakeFirst(db, { key, value: ['x'] })).toEqual({ key, value: ['x'] });
    const read = prepared((k, $: { key: string }) => k.selectFrom('settings').select('value').where('key', '=', $.key));
    expect(await read.executeTakeFirst(db, { key })).toEqual({ value: ['x'] });
    expect(await read.executeTakeFirst(db, { key: `${key}-none` })).toBeUndefined();
    await db.deleteFrom('settings').where('key', '=', key).execute();
  });
});

describe('transaction()', () => {
  const count = async (key: string) => (await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM settings WHERE key LIKE $1', [`${key}%`]))[0]!.n;

  it('commits, rolls back on a throw, and nests as a savepoint the caller may recover from', async () => {
    const db = t.runtime.deps.db;
    const key = `tx-${Date.now()}`;
    await transaction(db, (tx) => tx.insertInto('settings').values({ key: `${key}-a`, value: 1 }).execute());
    await expect(
      transaction(db, async (tx) => {
        await tx.insertInto('settings').values({ key: `${key}-b`, value: 1 }).execute();
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await count(key)).toBe(1);
    await transaction(db, async (tx) => {
      await tx.insertInto('settings').values({ key: `${key}-c`, value: 1 }).execute();
      // The inner one fails at the database (a duplicate key): only its savepoint is rolled back.
      await expect(transaction(tx, (inner) => inner.insertInto('settings').values({ key: `${key}-a`, value: 2 }).execute())).rejects.toThrow(/duplicate key/);
      await tx.insertInto('settings').values({ key: `${key}-d`, value: 1 }).execute();
    });
    expect(await count(key)).toBe(3);
    // A transaction that runs nothing commits.
    await expect(transaction(db, async () => 'nothing')).resolves.toBe('nothing');
    await t.sql('DELETE FROM settings WHERE key LIKE $1', [`${key}%`]);
  });
});

describe('the pool', () => {
  it('sends statements compiled once by name, once parsed per connection; unnamed when turned off', async () => {
    const probe = prepared((k, $: { id: number }) => k.selectFrom('brands').select('name').where('id', '=', $.id));
    const named = async (db: Db) =>
      transaction(db, async (tx) => {
        await probe.execute(tx, { id: brandId });
        await probe.execute(tx, { id: brandId });
        const { rows } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE statement LIKE '%"brands"%'`.execute(tx);
        return rows.map((r) => r.name);
      });
    const on = await named(open({ poolMax: 1 }));
    expect(on).toHaveLength(1);
    expect(on[0]).toMatch(/^pc_[0-9a-f]{20}$/);
    expect(await named(open({ poolMax: 1, namedStatements: false }))).toEqual([]);
  });

  it('gets back the slot of a connection lost mid-transaction, and serves the next request', async () => {
    const db = open({ poolMax: 2 });
    const pool = databasePool(db);
    for (let i = 0; i < 3; i++) {
      await expect(
        transaction(db, async (tx) => {
          const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx);
          await t.sql('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
          await sql`SELECT 1`.execute(tx);
        }),
      ).rejects.toThrow();
    }
    await waitFor(async () => pool.totalCount, (n) => n === pool.idleCount, 5000);
    expect(pool.waitingCount).toBe(0);
    const answers = await Promise.all([1, 2, 3, 4].map((n) => sql<{ n: number }>`SELECT ${n}::int AS n`.execute(db)));
    expect(answers.map((a) => a.rows[0]!.n)).toEqual([1, 2, 3, 4]);
  });
});
