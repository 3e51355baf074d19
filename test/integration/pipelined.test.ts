import { EventEmitter } from 'node:events';
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipelined, rawStatement, sendWithCommit } from '../../server/domain/db.ts';
import { pipelineTransactions } from '../../server/infra/database/client-pipeline.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { countStatements } from '../support/statements.ts';
import { waitForLockWaiters } from '../support/wait.ts';

/**
 * db.ts `pipelined`: statements sent together on one connection (pg's pipeline
 * mode, orm.ts), one round trip for all, run by PostgreSQL in order, each with
 * its own snapshot; the first failure thrown after all have settled.
 */

const backendPid = rawStatement<{ pid: number }>('SELECT pg_backend_pid() AS pid');
const advisoryLock = rawStatement('SELECT pg_advisory_xact_lock($1::bigint)');
const settingValue = rawStatement<{ value: unknown }>('SELECT value FROM settings WHERE key = $1');
const putSetting = rawStatement('INSERT INTO settings (key, value) VALUES ($1, $2::jsonb)');
const failing = rawStatement('SELECT 1 / $1::int AS x');

describe('pipelined statements', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.close());

  it('sends every statement before the first answer: one round trip, one connection, answers in order', async () => {
    const em = t.runtime.deps.orm.em.fork();
    let answers: Array<Array<{ pid: number }>> = [];
    const counted = await countStatements(async () => {
      answers = await pipelined(em, backendPid.bind([]), backendPid.bind([]), backendPid.bind([]));
    });
    expect(counted.n).toBe(3);
    expect(counted.trips).toBe(1);
    // Outside a transaction too: all on the one connection the pool lent.
    expect(new Set(answers.map((rows) => rows[0]!.pid)).size).toBe(1);
  });

  it('leaves in one write to the socket: the statements sent together, and BEGIN with the first statement after it', async () => {
    // Writes are counted per socket, and only those of the connection that ran the statements (found by its
    // backend pid) are compared: the test server's workers write to the database at any moment too.
    const proto = net.Socket.prototype as unknown as Record<'_write' | '_writev', (...a: unknown[]) => unknown>;
    const original = { _write: proto._write, _writev: proto._writev };
    const writes = new Map<net.Socket, number>();
    for (const k of ['_write', '_writev'] as const) {
      proto[k] = function (this: net.Socket, ...a: unknown[]) {
        writes.set(this, (writes.get(this) ?? 0) + 1);
        return original[k].apply(this, a);
      };
    }
    const clientQuery = pg.Client.prototype.query;
    const socketOfPid = new Map<number, net.Socket>();
    pg.Client.prototype.query = function (this: pg.Client & { processID?: number; connection?: { stream?: net.Socket } }, ...a: unknown[]) {
      if (this.processID !== undefined && this.connection?.stream) socketOfPid.set(this.processID, this.connection.stream);
      return (clientQuery as (...x: unknown[]) => unknown).apply(this, a);
    } as typeof clientQuery;
    const written = async (fn: () => Promise<Array<Array<{ pid: number }>>>) => {
      writes.clear();
      const answers = await fn();
      const pid = answers[0]![0]!.pid;
      expect(answers.every((rows) => rows[0]!.pid === pid)).toBe(true);
      return writes.get(socketOfPid.get(pid)!) ?? 0;
    };
    try {
      const em = t.runtime.deps.orm.em.fork();
      expect(await written(() => pipelined(em, backendPid.bind([]), backendPid.bind([]), backendPid.bind([])))).toBe(1);
      // BEGIN and the three, then COMMIT.
      expect(await written(() => em.transactional((tx) => pipelined(tx, backendPid.bind([]), backendPid.bind([]), backendPid.bind([]))))).toBe(2);
    } finally {
      Object.assign(proto, original);
      pg.Client.prototype.query = clientQuery;
    }
  });

  it('a read sent behind a lock sees what the lock holder committed while it waited', async () => {
    const key = `pipeline-probe-${Date.now()}`;
    const lockKey = 7_340_021;
    const holder = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [lockKey]);
      await holder.query('INSERT INTO settings (key, value) VALUES ($1, $2::jsonb)', [key, JSON.stringify('written by the holder')]);
      const em = t.runtime.deps.orm.em.fork();
      const reading = em.transactional((tx) => pipelined(tx, advisoryLock.bind([lockKey]), settingValue.bind([key])));
      // Once the pipeline provably waits on the lock, the holder commits its row and lets go.
      await waitForLockWaiters(holder, 1);
      await holder.query('COMMIT');
      const [, rows] = await reading;
      expect(rows).toEqual([{ value: 'written by the holder' }]);
    } finally {
      await holder.end();
      await t.sql('DELETE FROM settings WHERE key = $1', [key]);
    }
  });

  it('a failing statement fails the call after all have answered, and its transaction keeps nothing', async () => {
    const key = `pipeline-failure-${Date.now()}`;
    const em = t.runtime.deps.orm.em.fork();
    const attempt = em.transactional((tx) => pipelined(tx, putSetting.bind([key, JSON.stringify(1)]), failing.bind([0]), backendPid.bind([])));
    await expect(attempt).rejects.toThrow(/division by zero/);
    expect(await t.sql('SELECT key FROM settings WHERE key = $1', [key])).toEqual([]);
    // Every connection came back usable: the pool still answers, in and out of transactions.
    const [[again]] = await pipelined(t.runtime.deps.orm.em.fork(), backendPid.bind([]));
    expect(again!.pid).toBeGreaterThan(0);
    await em.fork().transactional((tx) => pipelined(tx, putSetting.bind([key, JSON.stringify(2)])));
    expect(await t.sql('SELECT value FROM settings WHERE key = $1', [key])).toEqual([{ value: 2 }]);
    await t.sql('DELETE FROM settings WHERE key = $1', [key]);
  });

  it("a transaction's BEGIN (client-pipeline.ts) goes out with the first statement: BEGIN, one statement and COMMIT in two round trips", async () => {
    const em = t.runtime.deps.orm.em.fork();
    const counted = await countStatements(() => em.transactional((tx) => backendPid(tx, [])));
    expect(counted.texts.map((x) => x.replace(/^\+ /, '').toLowerCase().slice(0, 6))).toEqual(['begin', 'select', 'commit']);
    expect(counted.trips).toBe(2);
  });

  it("a transaction's BEGIN failing fails the statement that followed it", async () => {
    // A pool and client stand-in: BEGIN refused as PostgreSQL refuses it in an aborted transaction.
    const pool = new EventEmitter();
    pipelineTransactions(pool as unknown as pg.Pool);
    const refused = Object.assign(new Error('current transaction is aborted, commands ignored until end of transaction block'), { code: '25P02' });
    const sent: string[] = [];
    const client = {
      query(text: string, _values?: unknown[]) {
        sent.push(text);
        return text === 'begin' ? Promise.reject(refused) : Promise.resolve({ command: 'SELECT', rowCount: 1, oid: 0, rows: [{ x: 1 }], fields: [] });
      },
    };
    pool.emit('connect', client);
    await expect(client.query('begin', [])).resolves.toMatchObject({ command: 'BEGIN' });
    await expect(client.query('select 1 as x', [])).rejects.toBe(refused);
    // Only the statement right after BEGIN carries its answer.
    await expect(client.query('select 1 as x', [])).resolves.toMatchObject({ rows: [{ x: 1 }] });
    expect(sent).toEqual(['begin', 'select 1 as x', 'select 1 as x']);
  });

  describe('sendWithCommit (db.ts): statements sent with their COMMIT', () => {
    const checked = rawStatement('SELECT check_invariant($1::boolean, $2::text) AS ok');

    it('leave with the COMMIT: the writes and COMMIT in one round trip, and they are kept', async () => {
      const key = `commit-rider-${Date.now()}`;
      const em = t.runtime.deps.orm.em.fork();
      const counted = await countStatements(() =>
        em.transactional(async (tx) => {
          await backendPid(tx, []);
          await sendWithCommit(tx, putSetting.bind([key, JSON.stringify('kept')]), checked.bind([true, 'never raised']));
        }),
      );
      expect(counted.texts.map((x) => x.replace(/^\+ /, '').toLowerCase().slice(0, 6))).toEqual(['begin', 'select', 'insert', 'select', 'commit']);
      // BEGIN with the first statement; the two writes with the COMMIT.
      expect(counted.trips).toBe(2);
      expect(await t.sql('SELECT value FROM settings WHERE key = $1', [key])).toEqual([{ value: 'kept' }]);
      await t.sql('DELETE FROM settings WHERE key = $1', [key]);
    });

    it('one failing fails the transaction with its error, though PostgreSQL answers the COMMIT with ROLLBACK; nothing is kept', async () => {
      const key = `commit-rider-failure-${Date.now()}`;
      const em = t.runtime.deps.orm.em.fork();
      const attempt = em.transactional(async (tx) => {
        await putSetting(tx, [`${key}-before`, JSON.stringify(1)]);
        await sendWithCommit(tx, putSetting.bind([key, JSON.stringify(2)]), checked.bind([false, 'SMS batch: the invariant broke']));
      });
      await expect(attempt).rejects.toThrow('SMS batch: the invariant broke');
      expect(await t.sql('SELECT key FROM settings WHERE key = ANY($1::text[])', [[key, `${key}-before`]])).toEqual([]);
      // The connection went back to the pool usable: the next transaction commits.
      await em.fork().transactional((tx) => sendWithCommit(tx, putSetting.bind([key, JSON.stringify(3)])));
      expect(await t.sql('SELECT value FROM settings WHERE key = $1', [key])).toEqual([{ value: 3 }]);
      await t.sql('DELETE FROM settings WHERE key = $1', [key]);
    });

    it('are dropped unsent when the transaction rolls back instead', async () => {
      const key = `commit-rider-rollback-${Date.now()}`;
      const em = t.runtime.deps.orm.em.fork();
      const counted = await countStatements(async () => {
        const attempt = em.transactional(async (tx) => {
          await backendPid(tx, []);
          await sendWithCommit(tx, putSetting.bind([key, JSON.stringify(1)]));
          throw new Error('changed its mind');
        });
        await expect(attempt).rejects.toThrow('changed its mind');
      });
      expect(counted.texts.some((x) => /insert/i.test(x))).toBe(false);
      expect(await t.sql('SELECT key FROM settings WHERE key = $1', [key])).toEqual([]);
    });

    it('go out ahead of any later statement of their transaction, in order', async () => {
      const key = `commit-rider-order-${Date.now()}`;
      const em = t.runtime.deps.orm.em.fork();
      const seen = await em.transactional(async (tx) => {
        await sendWithCommit(tx, putSetting.bind([key, JSON.stringify('first')]));
        return settingValue(tx, [key]);
      });
      expect(seen).toEqual([{ value: 'first' }]);
      await t.sql('DELETE FROM settings WHERE key = $1', [key]);
    });
  });
});
