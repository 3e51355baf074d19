import { sql } from 'kysely';
import type { Db } from '../db.ts';

/**
 * The retention job's statements (retention.ts). Each removes or clears at
 * most `limit` rows, oldest first, in its own short statement, so no run holds
 * locks on many rows or for long; rows another transaction holds are skipped
 * and taken on a later run.
 */

const before = (days: number) => sql<Date>`now() - make_interval(days => ${days})`;

/** Nulls the sender and text of up to `limit` records older than `days`, never one matching has not read yet. */
export async function expireSmsTextBatch(db: Db, days: number, limit: number): Promise<number> {
  const res = await db
    .updateTable('sms_records')
    .set({ sender: null, body_encrypted: null, text_expired_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('sms_records')
        .select('id')
        .where('text_expired_at', 'is', null)
        .where('created_at', '<', before(days))
        .where('match_status', '<>', 'pending')
        .orderBy('created_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * Up to `limit` push notifications to phones older than `days` (their title
 * and text are personal data); in id order, which is their age order, so the
 * primary key finds them without an index of their own.
 */
export async function deleteNotificationsBatch(db: Db, days: number, limit: number): Promise<number> {
  const res = await db
    .deleteFrom('notifications')
    .where('id', 'in', (eb) => eb.selectFrom('notifications').select('id').where('created_at', '<', before(days)).orderBy('id').limit(limit).forUpdate().skipLocked())
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Up to `limit` finished outbound SMS (destination and text are personal data) older than `days`; queued or leased ones never. */
export async function deleteFinishedOutboundSmsBatch(db: Db, days: number, limit: number): Promise<number> {
  const res = await db
    .deleteFrom('outbound_sms')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('outbound_sms')
        .select('id')
        .where('status', 'in', ['sent', 'failed', 'delivered', 'expired'])
        .where('created_at', '<', before(days))
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Up to `limit` finished deliveries (delivered or dead-lettered, not replayed since) older than `days`; their attempts go with them. */
export async function deleteFinishedDeliveriesBatch(db: Db, days: number, limit: number): Promise<number> {
  const res = await db
    .deleteFrom('webhook_deliveries')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('status', 'in', ['success', 'dead_letter'])
        .where('created_at', '<', before(days))
        .where((w) => w.or([w('replayed_at', 'is', null), w('replayed_at', '<', before(days))]))
        .orderBy('created_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * Up to `limit` events older than `days` with no delivery still open; their
 * finished deliveries and receipts go with them (the foreign keys cascade).
 */
export async function deleteEventsBatch(db: Db, days: number, limit: number): Promise<number> {
  const res = await db
    .deleteFrom('webhook_events')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('webhook_events as e')
        .select('e.id')
        .where('e.created_at', '<', before(days))
        .where((w) => w.not(w.exists(w.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id').where('d.status', 'in', ['pending', 'retrying']))))
        .orderBy('e.created_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Up to `limit` answered or failed backfill requests older than `days`. */
export async function deleteFinishedBackfillsBatch(db: Db, days: number, limit: number): Promise<number> {
  const res = await db
    .deleteFrom('backfill_requests')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('backfill_requests')
        .select('id')
        .where('status', 'in', ['answered', 'failed'])
        .where('created_at', '<', before(days))
        .orderBy('created_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Up to `limit` phone sequence counters not seen for `days` (a SIM or epoch the phone no longer numbers). */
export async function deleteIdleSequenceCountersBatch(db: Db, days: number, limit: number): Promise<number> {
  const res = await db
    .deleteFrom('sms_sequence_counters')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('sms_sequence_counters')
        .select('id')
        .where('last_seen_at', '<', before(days))
        .orderBy('last_seen_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Audit rows older than `days`: counted, never removed (the service's role cannot, README "Retention"). */
export async function countAuditRowsOlderThan(db: Db, days: number): Promise<number> {
  const row = await db.selectFrom('audit_log').select(sql<number>`count(*)::int`.as('n')).where('created_at', '<', before(days)).executeTakeFirstOrThrow();
  return row.n;
}

// Webhook attempts are partitioned by month (migration 0052): the parent is
// the entity's table; the partitions are tables of their own, which no
// entity describes, so these statements are raw SQL naming them.

export const ATTEMPTS_TABLE = 'webhook_attempts';
export const ATTEMPTS_DEFAULT_PARTITION = 'webhook_attempts_default';

/** The partitions of the attempts table, by name. */
export async function listAttemptPartitions(db: Db): Promise<string[]> {
  // Raw: the catalog's partition list, which the builder does not model.
  const { rows } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = ${ATTEMPTS_TABLE}::regclass ORDER BY c.relname`.execute(db);
  return rows.map((r) => r.name);
}

/** Whether the default partition holds an attempt in [from, to): a month partition cannot be created over it. */
export async function defaultPartitionHoldsRange(db: Db, from: Date, to: Date): Promise<boolean> {
  // Raw: the default partition has no entity (above).
  const { rows } = await sql<{ one: number }>`SELECT 1 AS one FROM ${sql.id(ATTEMPTS_DEFAULT_PARTITION)} WHERE requested_at >= ${from} AND requested_at < ${to} LIMIT 1`.execute(db);
  return rows.length > 0;
}

/**
 * Creates a month's partition. Taking the parent's lock waits at most
 * `lockTimeoutMs` (then throws, and the next run tries again), so the job
 * never makes the webhook workers queue behind it for long.
 */
export async function createAttemptPartition(db: Db, name: string, from: Date, to: Date, lockTimeoutMs: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(tx);
    await sql`CREATE TABLE IF NOT EXISTS ${sql.id(name)} PARTITION OF ${sql.id(ATTEMPTS_TABLE)} FOR VALUES FROM (${sql.lit(from.toISOString())}) TO (${sql.lit(to.toISOString())})`.execute(tx);
  });
}

/** Drops an expired month's partition (detached first, so the parent's lock is taken once, briefly). */
export async function dropAttemptPartition(db: Db, name: string, lockTimeoutMs: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(tx);
    await sql`ALTER TABLE ${sql.id(ATTEMPTS_TABLE)} DETACH PARTITION ${sql.id(name)}`.execute(tx);
    await sql`DROP TABLE ${sql.id(name)}`.execute(tx);
  });
}

/** Up to `limit` attempts older than `days` in the default partition (rows from before partitioning, or of a month created late). */
export async function deleteDefaultPartitionAttemptsBatch(db: Db, days: number, limit: number): Promise<number> {
  // Raw: the default partition has no entity (above); by ctid, as rate_limits' purge does.
  const res = await sql`DELETE FROM ${sql.id(ATTEMPTS_DEFAULT_PARTITION)} WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM ${sql.id(ATTEMPTS_DEFAULT_PARTITION)} WHERE requested_at < ${before(days)} ORDER BY requested_at LIMIT ${limit} FOR UPDATE SKIP LOCKED))`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
