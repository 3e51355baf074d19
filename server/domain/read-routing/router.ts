import { sql } from 'kysely';
import type { Logger } from '../../infra/logger.ts';
import { prepared, rawStatement, type Db } from '../db.ts';

/**
 * Where the reads that tolerate lag go (docs/read-replicas.md): to the read
 * replica when one is configured (DATABASE_READ_URL), else to the primary.
 * Which reads tolerate lag is chosen per use case by the caller (`read`): the
 * merchant and console lists and the overview. Everything else (writes,
 * transactions, matching, completion, key and session lookups, idempotency,
 * rate limits, single-object reads) takes the primary handle as before.
 *
 * Read-your-writes: after a write by a client (`wrote`, called before the
 * write's answer is sent), the primary's current WAL position is kept in
 * `read_your_writes` for that client. Its next lag-tolerant read goes to the
 * replica only if the replica has replayed past that position
 * (`pg_last_wal_replay_lsn()`), else to the primary. The position lives in the
 * database, so every API process sees it.
 *
 * A replica that fails (cannot be reached, shuts down, runs out of
 * connections) is left alone for `retryAfterMs`: its reads go to the primary, with
 * one warning when that starts and one line when the replica answers again.
 */
export interface ReadRouter {
  /** The replica's handle, or null when none is configured. */
  readonly replica: Db | null;
  /** Runs a read that tolerates lag for `principal` (null: a caller that writes nothing, e.g. no client). */
  read<T>(principal: string | null, run: (db: Db) => Promise<T>): Promise<T>;
  /** Records a write by `principal`; a no-op without a replica. */
  wrote(principal: string): Promise<void>;
  /** Whether reads go to the primary because the replica failed recently. */
  readonly fallingBack: boolean;
}

export interface ReadRouterOptions {
  primary: Db;
  replica: Db | null;
  logger: Logger;
  /** How long a failed replica is left alone before it is tried again. */
  retryAfterMs?: number;
}

const lastWrite = prepared((k, $: { principal: string }) => k.selectFrom('read_your_writes').select('wal_lsn').where('principal', '=', $.principal));

// Raw: the builder has no pg_lsn type or cast. On a server that is not a
// standby (a promoted replica, or the primary itself given as the replica)
// pg_last_wal_replay_lsn() is null: everything committed there is visible.
const replayedPast = rawStatement<{ replayed: boolean }>('SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, NOT pg_is_in_recovery()) AS replayed');

/**
 * The insert position, not the flush position: it is past every commit the
 * client's request made, flushed or not (synchronous_commit off). GREATEST keeps
 * the later of two concurrent writes by one client.
 */
const recordWrite = prepared((k, $: { principal: string }) =>
  k
    .insertInto('read_your_writes')
    .values({ principal: $.principal, wal_lsn: sql<string>`pg_current_wal_insert_lsn()::text`, written_at: sql<Date>`now()` })
    .onConflict((oc) =>
      oc.column('principal').doUpdateSet({
        wal_lsn: sql<string>`greatest(read_your_writes.wal_lsn::pg_lsn, excluded.wal_lsn::pg_lsn)::text`,
        written_at: sql<Date>`excluded.written_at`,
      }),
    ),
);

/**
 * A standby cancels a query whose rows its replay must remove (a conflict with
 * recovery, SQLSTATE 40001; see max_standby_streaming_delay): that read is
 * answered by the primary, the replica stays in use.
 */
function isRecoveryConflict(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '40001';
}

/** A failure of the replica itself, which the primary can answer instead (not a bug in the query). */
export function isReplicaFailure(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  // 08: connection; 57P: shut down / cannot connect now; 53: out of resources.
  if (/^(08|57P|53)/.test(code)) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return true;
  const msg = typeof e?.message === 'string' ? e.message : '';
  if (/Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(msg)) return true;
  return e?.cause ? isReplicaFailure(e.cause) : false;
}

export function createReadRouter(opts: ReadRouterOptions): ReadRouter {
  const { primary, replica, logger } = opts;
  const retryAfterMs = opts.retryAfterMs ?? 5000;
  let downUntil = 0;
  let down = false;

  const failed = (err: unknown) => {
    downUntil = Date.now() + retryAfterMs;
    if (!down) {
      down = true;
      // Only the message: driver errors can carry the connection string.
      const message = err instanceof Error ? err.message.replace(/postgres(ql)?:\/\/\S+/g, '[url]') : String(err);
      logger.warn({ err: { message: message.slice(0, 200) }, retry_after_ms: retryAfterMs }, 'read replica failed; lag-tolerant reads go to the primary');
    }
  };
  const answered = () => {
    if (down) {
      down = false;
      logger.info('read replica answers again; lag-tolerant reads go to it');
    }
  };

  return {
    replica,
    get fallingBack() {
      return replica !== null && down;
    },
    async read(principal, run) {
      if (!replica || Date.now() < downUntil) return run(primary);
      const since = principal === null ? undefined : await lastWrite.executeTakeFirst(primary, { principal });
      try {
        const caughtUp = since === undefined || (await replayedPast(replica, [since.wal_lsn]))[0]?.replayed === true;
        if (caughtUp) {
          const result = await run(replica);
          answered();
          return result;
        }
        answered();
      } catch (err) {
        if (isRecoveryConflict(err)) return run(primary);
        if (!isReplicaFailure(err)) throw err;
        failed(err);
      }
      return run(primary);
    },
    async wrote(principal) {
      if (!replica) return;
      await recordWrite.execute(primary, { principal });
    },
  };
}
