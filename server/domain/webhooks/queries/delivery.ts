import { sql } from 'kysely';
import type { Db } from '../../db.ts';

// The statements of one delivery attempt: the claim (lock, abandoned attempts, run counts, lease), the finish, and endpoint health.

/**
 * The deliveries among `ids`, locked (rows another worker holds are skipped),
 * with their event, their endpoint and what the claim decides on. The ids as
 * one array parameter: `id = ANY(array)` is a primary-key lookup whatever the
 * statistics say, where a join to a set-returning function was planned as a
 * scan of every due delivery right after a burst of inserts, before
 * autoanalyze (BENCHMARKS.md, "What the profiles showed", 4).
 */
export async function lockDeliveriesForClaim(tx: Db, ids: readonly number[]) {
  return tx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
    .select([
      'd.id',
      'd.status',
      'd.attempts',
      'd.lease_token',
      // As text under a name no entity has, so it keeps its microseconds (see ClaimedAttempt.startedAt).
      sql<string | null>`d.last_attempt_at::text`.as('last_attempt_text'),
      'd.url',
      'd.next_attempt_at',
      sql<boolean>`d.first_attempt_at IS NOT NULL`.as('in_run'),
      sql<boolean>`COALESCE(d.next_attempt_at <= now(), true)`.as('due'),
      sql<boolean>`d.lease_until IS NOT NULL AND d.lease_until > now()`.as('leased'),
      'e.public_id',
      // Aliased: an output column named `event` would be converted as the deliveries' `event` relation.
      'e.event as event_name',
      'e.payload',
      'e.is_test',
      'ep.brand_id',
      'ep.enabled',
      'ep.signing',
      'ep.disabled_reason',
      'ep.secret_encrypted',
      'ep.previous_secrets',
    ])
    .where('d.id', '=', sql<number>`ANY(${[...ids]}::bigint[])`)
    .forUpdate('d')
    .skipLocked()
    .execute();
}

/** Which of these delivery ids exist. */
export async function selectExistingDeliveryIds(db: Db, ids: readonly number[]): Promise<number[]> {
  const rows = await db.selectFrom('webhook_deliveries').select('id').where('id', '=', sql<number>`ANY(${[...ids]}::bigint[])`).execute();
  return rows.map((r) => r.id);
}

/**
 * Logs attempts a stopped worker never finished as `abandoned` (an attempt
 * already logged stays). `startedAt` is PostgreSQL's text, cast back by the
 * column: the microseconds stay.
 */
export async function insertAbandonedAttempts(tx: Db, rows: ReadonlyArray<{ deliveryId: number; attempt: number; url: string; startedAt: string | null }>): Promise<void> {
  await tx
    .insertInto('webhook_attempts')
    .values(
      rows.map((row) => ({
        delivery_id: row.deliveryId,
        attempt: row.attempt,
        url: row.url,
        outcome: 'abandoned' as const,
        requested_at: (row.startedAt ?? new Date()) as Date,
        error_kind: 'abandoned',
        error: 'the worker stopped before recording a result; the receiver may have got this attempt',
      })),
    )
    .onConflict((oc) => oc.columns(['delivery_id', 'attempt', 'requested_at']).doNothing())
    .execute();
}

/** Per delivery, the attempts of its current run (since its first attempt); deliveries without any are absent. */
export async function countRunAttempts(db: Db, deliveryIds: readonly number[]): Promise<Array<{ delivery_id: number; n: number }>> {
  return db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select(['a.delivery_id', sql<number>`count(*)::int`.as('n')])
    .where('a.delivery_id', '=', sql<number>`ANY(${[...deliveryIds]}::bigint[])`)
    .where('d.first_attempt_at', 'is not', null)
    .whereRef('a.requested_at', '>=', 'd.first_attempt_at')
    .groupBy('a.delivery_id')
    .execute();
}

export async function deadLetterDeliveries(tx: Db, deliveryIds: readonly number[], reason: string): Promise<void> {
  await tx
    .updateTable('webhook_deliveries')
    .set({
      status: 'dead_letter',
      dead_lettered_at: sql<Date>`now()`,
      next_attempt_at: null,
      lease_token: null,
      lease_until: null,
      last_error: reason,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', sql<number>`ANY(${[...deliveryIds]}::bigint[])`)
    .execute();
}

/**
 * Takes the next attempt of each delivery: its number, a fresh lease of
 * `leaseMs` and the endpoint's current URL. The start time comes back as text
 * under a name no entity has, so it keeps its microseconds.
 */
export async function leaseDeliveries(tx: Db, deliveryIds: readonly number[], leaseMs: number) {
  return tx
    .updateTable('webhook_deliveries as d')
    .from('webhook_endpoints as ep')
    .set((eb) => ({
      attempts: eb('d.attempts', '+', 1),
      lease_token: sql<string>`gen_random_uuid()`,
      lease_until: sql<Date>`now() + (${leaseMs} * interval '1 millisecond')`,
      last_attempt_at: sql<Date>`now()`,
      first_attempt_at: sql<Date>`COALESCE(d.first_attempt_at, now())`,
      url: eb.ref('ep.url'),
      updated_at: sql<Date>`now()`,
    }))
    .where('d.id', '=', sql<number>`ANY(${[...deliveryIds]}::bigint[])`)
    .whereRef('ep.id', '=', 'd.endpoint_id')
    .returning(['d.id', 'd.attempts', 'd.lease_token', sql<string>`d.last_attempt_at::text`.as('started_at_text'), 'ep.url as endpoint_url'])
    .execute();
}

/**
 * Moves the delivery after an attempt, only while `leaseToken` still holds it;
 * undefined otherwise. The text copies under names no entity has keep their
 * microseconds: next_attempt_at goes into the attempt's row unchanged,
 * first_attempt_at is compared with last_success_at.
 */
export async function finishLeasedDelivery(
  tx: Db,
  deliveryId: number,
  leaseToken: string,
  outcome: { status: 'success' | 'retrying' | 'dead_letter'; delayMs: number; responseStatus: number | null; responseBody: string | null; error: string | null },
) {
  const status = outcome.status;
  return tx
    .updateTable('webhook_deliveries')
    .set({
      status,
      response_status: outcome.responseStatus,
      response_body: outcome.responseBody,
      last_error: outcome.error,
      next_attempt_at: sql<Date | null>`CASE WHEN ${status} = 'retrying' THEN now() + (${outcome.delayMs} * interval '1 millisecond') END`,
      delivered_at: sql<Date | null>`CASE WHEN ${status} = 'success' THEN now() ELSE delivered_at END`,
      dead_lettered_at: sql<Date | null>`CASE WHEN ${status} = 'dead_letter' THEN now() END`,
      lease_token: null,
      lease_until: null,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', deliveryId)
    .where('lease_token', '=', leaseToken)
    .returning([
      'endpoint_id',
      'next_attempt_at',
      sql<string | null>`next_attempt_at::text`.as('next_attempt_text'),
      sql<string | null>`first_attempt_at::text`.as('first_attempt_text'),
    ])
    .executeTakeFirst();
}

/**
 * Logs a sent attempt; it replaces the same attempt logged as abandoned (its
 * lease had lapsed). `requestedAt` and `nextAttemptAt` are PostgreSQL's text,
 * cast back by the column: the microseconds stay.
 */
export async function logAttempt(
  tx: Db,
  row: {
    deliveryId: number;
    attempt: number;
    url: string;
    outcome: 'success' | 'failure';
    requestedAt: string;
    durationMs: number;
    responseStatus: number | null;
    responseBody: string | null;
    errorKind: string | null;
    error: string | null;
    nextAttemptAt: string | null;
  },
): Promise<void> {
  await tx
    .insertInto('webhook_attempts')
    .values({
      delivery_id: row.deliveryId,
      attempt: row.attempt,
      url: row.url,
      outcome: row.outcome,
      requested_at: row.requestedAt as unknown as Date,
      duration_ms: row.durationMs,
      response_status: row.responseStatus,
      response_body: row.responseBody,
      error_kind: row.errorKind,
      error: row.error,
      next_attempt_at: row.nextAttemptAt as Date | null,
    })
    .onConflict((oc) =>
      oc
        .columns(['delivery_id', 'attempt', 'requested_at'])
        .doUpdateSet((eb) => ({
          outcome: eb.ref('excluded.outcome'),
          duration_ms: eb.ref('excluded.duration_ms'),
          response_status: eb.ref('excluded.response_status'),
          response_body: eb.ref('excluded.response_body'),
          error_kind: eb.ref('excluded.error_kind'),
          error: eb.ref('excluded.error'),
          next_attempt_at: eb.ref('excluded.next_attempt_at'),
        }))
        .where('webhook_attempts.outcome', '=', 'abandoned'),
    )
    .execute();
}

/**
 * Notes a success on the endpoint, only when it changes something (a failing
 * endpoint recovered) or the note is over a second old: all deliveries of a
 * merchant share this one row, and a write per delivery made them queue on its lock.
 */
export async function noteEndpointSuccess(tx: Db, endpointId: number): Promise<void> {
  await tx
    .updateTable('webhook_endpoints')
    .set({ last_success_at: sql<Date>`now()`, failing_since: null, consecutive_failures: 0 })
    .where('id', '=', endpointId)
    .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('last_success_at', 'is', null), eb('last_success_at', '<', sql<Date>`now() - interval '1 second'`)]))
    .execute();
}

export async function noteEndpointFailure(tx: Db, endpointId: number): Promise<void> {
  await tx
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      failing_since: sql<Date>`COALESCE(failing_since, now())`,
      last_failure_at: sql<Date>`now()`,
      consecutive_failures: eb('consecutive_failures', '+', 1),
    }))
    .where('id', '=', endpointId)
    .execute();
}

/**
 * Disables an enabled endpoint (with `noSuccessSince`: only if nothing reached it
 * since then); undefined when nothing changed.
 */
export async function disableEndpointRow(tx: Db, endpointId: number, reason: 'gone' | 'failing', noSuccessSince: string | null) {
  let update = tx
    .updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_reason: reason, disabled_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('id', '=', endpointId)
    .where('enabled', '=', true);
  if (noSuccessSince) update = update.where((eb) => eb.or([eb('last_success_at', 'is', null), eb('last_success_at', '<', sql<Date>`${noSuccessSince}::timestamptz`)]));
  return update.returning(['id', 'brand_id', 'disabled_at']).executeTakeFirst();
}
