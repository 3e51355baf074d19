import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { sql, type Kysely } from 'kysely';
import { createDatabase, databasePool } from '../../server/infra/database/database.ts';
import { createTestDatabase } from '../support/harness.ts';
import { waitFor } from '../support/wait.ts';

describe('DATABASE_POOL_MIN', () => {
  it('defaults to DATABASE_POOL_MAX (a fixed pool), takes a smaller number, 0 included', () => {
    expect(loadConfig({}).DATABASE_POOL_MIN).toBe(10);
    expect(loadConfig({ DATABASE_POOL_MAX: '4' }).DATABASE_POOL_MIN).toBe(4);
    expect(loadConfig({ DATABASE_POOL_MAX: '4', DATABASE_POOL_MIN: '2' }).DATABASE_POOL_MIN).toBe(2);
    expect(loadConfig({ DATABASE_POOL_MIN: '0' }).DATABASE_POOL_MIN).toBe(0);
  });

  it.each([
    [{ DATABASE_POOL_MAX: '4', DATABASE_POOL_MIN: '5' }, /DATABASE_POOL_MIN: must be at most DATABASE_POOL_MAX \(4\)/],
    [{ DATABASE_POOL_MIN: '-1' }, /DATABASE_POOL_MIN: must be a whole number of connections/],
    [{ DATABASE_POOL_MIN: 'two' }, /DATABASE_POOL_MIN: must be a whole number of connections/],
  ])('refuses %o with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('the pool keeps DATABASE_POOL_MIN connections open while idle', () => {
  let db: { url: string; drop(): Promise<void> };
  const dbs: Array<Kysely<unknown>> = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const d of dbs) await d.destroy();
    await db?.drop();
  });

  // Five statements at once take five connections (each long enough that none is free for another while the
  // others connect, even on a loaded machine); after a short idle timeout, what is left open is the minimum.
  const openAfterBurst = async (poolMin: number) => {
    const app = createDatabase<unknown>({ url: db.url, poolMax: 5, poolMin, poolIdleTimeoutMs: 100 });
    dbs.push(app);
    const pool = databasePool(app);
    const burst = Promise.all(Array.from({ length: 5 }, () => sql`SELECT pg_sleep(0.3)`.execute(app)));
    // Counted while the five run: once they end, the first to finish may already be past the
    // 100 ms idle timeout (on a loaded machine they do not all end together) and closed.
    const opened = await waitFor(async () => pool.totalCount, (n) => n === 5, 3000);
    await burst;
    expect(opened).toBe(5);
    return waitFor(async () => pool.totalCount, (n) => n <= poolMin, 3000).then(async (n) => {
      // Past several idle timeouts: nothing more closes.
      await new Promise((r) => setTimeout(r, 400));
      return { settled: n, later: pool.totalCount };
    });
  };

  it('two kept of five', async () => {
    expect(await openAfterBurst(2)).toEqual({ settled: 2, later: 2 });
  });

  it('none kept with a minimum of 0', async () => {
    expect(await openAfterBurst(0)).toEqual({ settled: 0, later: 0 });
  });
});
