import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { raiseAlert } from '../alerts/raise.ts';
import { transaction, type Db } from '../db.ts';
import { pgIdArray } from '../../infra/database/pg-array.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { WebhookResponse } from '../../infra/http/outbound.ts';
import { parseRetryAfter, retryDelaySeconds } from './backoff.ts';
import { signingSecrets } from './endpoints.ts';
import { enqueueDelivery } from './queue.ts';
import type { WebhookSettings } from './settings.ts';

/**
 * One delivery attempt in two short transactions around the HTTP call, so no
 * database connection or row lock is held while a receiver thinks:
 *
 *   claim    lock the row (SKIP LOCKED), check it is due and not leased, take
 *            the next attempt number and a lease (token + expiry), commit;
 *   send     outside any transaction;
 *   finish   record the attempt, move the delivery (only if our lease token
 *            still holds) and schedule the next wake-up, all in one commit.
 *
 * A worker that dies between claim and finish leaves a lease that runs out; the
 * next claim records that attempt as `abandoned` and tries again, so an event is
 * delivered at least once and never lost, and never sent by two workers at once
 * while a lease is live.
 */

/** Time past the attempt timeout a worker has to record the result before its lease lapses. */
const LEASE_MARGIN_MS = 5_000;

export interface ClaimedAttempt {
  deliveryId: number;
  /** Attempt number over the delivery's life (the `attempts` count; replays keep counting). */
  attempt: number;
  /** Attempt number within the current run (the first delivery, or the latest replay): drives backoff and the limit. */
  runAttempt: number;
  /**
   * Database time the attempt started (`last_attempt_at`), recorded as its
   * `requested_at`, as PostgreSQL's text with its microseconds: a Date would cut
   * them, and the run's attempt count compares `requested_at >= first_attempt_at`,
   * both set from the same now(), so a truncated value would drop the run's first
   * attempt from the count and allow one attempt too many.
   */
  startedAt: string;
  leaseToken: string;
  url: string;
  eventId: string;
  event: string;
  payload: string;
  /** A sample sent by `POST /api/v1/webhooks/tests`: delivered with `X-Webhook-Test: true`. */
  test: boolean;
  secrets: string[];
}

export type ClaimResult =
  | { kind: 'claimed'; claim: ClaimedAttempt }
  | { kind: 'later'; at: Date }
  | { kind: 'skipped'; reason: 'busy' | 'final' | 'leased' | 'missing' }
  | { kind: 'dead_letter'; reason: string };

/**
 * The common case in one statement, for a whole batch of wake-ups: first
 * attempts of a run (no attempt of this run yet, so the attempt limit cannot be
 * reached), due, not leased, no unfinished attempt to record, endpoint enabled.
 * Takes the same row locks (SKIP LOCKED) and writes the same claims as the
 * general path in claimDelivery; a delivery missing from the answer is not this
 * case (or another worker holds it), and the general path decides it. Why: the
 * general path is five round trips per delivery (BEGIN, locked read, run count,
 * claim, COMMIT), and round trips and commits were what capped delivery
 * (BENCHMARKS.md, "What the profiles showed", 4).
 */
export async function claimFirstAttempts(em: Db, deliveryIds: readonly number[], opts: { cipher: PiiCipher; settings: WebhookSettings }): Promise<Map<number, ClaimedAttempt>> {
  if (deliveryIds.length === 0) return new Map();
  const leaseMs = opts.settings.webhook_timeout_ms + LEASE_MARGIN_MS;
  const rows = await em
    .updateTable('webhook_deliveries as d')
    .from(['webhook_events as e', 'webhook_endpoints as ep'])
    .set((eb) => ({
      attempts: eb('d.attempts', '+', 1),
      lease_token: sql<string>`gen_random_uuid()`,
      lease_until: sql<Date>`now() + (${leaseMs} * interval '1 millisecond')`,
      last_attempt_at: sql<Date>`now()`,
      first_attempt_at: sql<Date>`now()`,
      url: eb.ref('ep.url'),
      updated_at: sql<Date>`now()`,
    }))
    .where('d.id', 'in', (eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('id')
        // The ids as one array parameter: `id = ANY(array)` is a primary-key lookup whatever the
        // statistics say, where a join to a set-returning function was planned as a scan of every
        // due delivery right after a burst of inserts, before autoanalyze (BENCHMARKS.md, "What the profiles showed", 4).
        .where('id', '=', sql<number>`ANY(${pgIdArray(deliveryIds)}::bigint[])`)
        .where('status', 'in', ['pending', 'retrying'])
        .where('lease_token', 'is', null)
        .where('first_attempt_at', 'is', null)
        .where(sql<boolean>`COALESCE(next_attempt_at <= now(), true)`)
        .forUpdate()
        .skipLocked(),
    )
    .whereRef('e.id', '=', 'd.event_id')
    .whereRef('ep.id', '=', 'd.endpoint_id')
    .where('ep.enabled', '=', true)
    .returning([
      'd.id',
      'd.attempts',
      'd.lease_token',
      // As text under a name no entity has, so it keeps its microseconds (see ClaimedAttempt.startedAt).
      sql<string>`d.last_attempt_at::text`.as('started_at_text'),
      'ep.url as endpoint_url',
      'e.public_id',
      // Aliased: an output column named `event` would be converted as the deliveries' `event` relation.
      'e.event as event_name',
      'e.payload',
      'e.is_test',
      'ep.brand_id',
      'ep.secret_encrypted',
      'ep.previous_secrets',
    ])
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      {
        deliveryId: row.id,
        attempt: row.attempts,
        runAttempt: 1,
        startedAt: row.started_at_text,
        leaseToken: row.lease_token!,
        url: row.endpoint_url,
        eventId: row.public_id,
        event: row.event_name,
        payload: row.payload,
        test: row.is_test,
        secrets: signingSecrets(opts.cipher, row),
      },
    ]),
  );
}

export async function claimDelivery(
  em: Db,
  deliveryId: number,
  opts: { cipher: PiiCipher; settings: WebhookSettings },
): Promise<ClaimResult> {
  const first = (await claimFirstAttempts(em, [deliveryId], opts)).get(deliveryId);
  if (first) return { kind: 'claimed', claim: first };
  return claimGeneral(em, deliveryId, opts);
}

/** Every case: retries, leases that ran out, disabled endpoints, exhausted runs, early wake-ups. */
export async function claimGeneral(em: Db, deliveryId: number, opts: { cipher: PiiCipher; settings: WebhookSettings }): Promise<ClaimResult> {
  return transaction(em, async (tx) => {
    const row = await tx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .innerJoin('webhook_endpoints as ep', 'ep.id', 'd.endpoint_id')
      .select([
        'd.status',
        'd.attempts',
        'd.lease_token',
        // As text under a name no entity has, so it keeps its microseconds (see ClaimedAttempt.startedAt).
        sql<string | null>`d.last_attempt_at::text`.as('last_attempt_text'),
        'd.url',
        'd.next_attempt_at',
        sql<boolean>`COALESCE(d.next_attempt_at <= now(), true)`.as('due'),
        sql<boolean>`d.lease_until IS NOT NULL AND d.lease_until > now()`.as('leased'),
        'e.public_id',
        // Aliased: an output column named `event` would be converted as the deliveries' `event` relation.
        'e.event as event_name',
        'e.payload',
        'e.is_test',
        'ep.brand_id',
        'ep.url as endpoint_url',
        'ep.enabled',
        'ep.disabled_reason',
        'ep.secret_encrypted',
        'ep.previous_secrets',
      ])
      .where('d.id', '=', deliveryId)
      .forUpdate('d')
      .skipLocked()
      .executeTakeFirst();
    if (!row) {
      const exists = await tx.selectFrom('webhook_deliveries').select(sql<number>`1`.as('one')).where('id', '=', deliveryId).executeTakeFirst();
      return { kind: 'skipped', reason: exists ? 'busy' : 'missing' };
    }
    if (row.status !== 'pending' && row.status !== 'retrying') return { kind: 'skipped', reason: 'final' };
    if (row.leased) return { kind: 'skipped', reason: 'leased' };
    if (!row.due) {
      // Woken early (a deduplicated wake-up, or clock skew): make sure one exists for the due time.
      const at = row.next_attempt_at!;
      await enqueueDelivery(tx, deliveryId, at);
      return { kind: 'later', at };
    }
    if (row.lease_token) {
      // The previous attempt was claimed and never finished: its worker died mid-attempt.
      await tx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: deliveryId,
          attempt: row.attempts,
          url: row.url,
          outcome: 'abandoned',
          // PostgreSQL's text, cast back by the column: the microseconds stay (see ClaimedAttempt.startedAt).
          requested_at: (row.last_attempt_text ?? new Date()) as Date,
          error_kind: 'abandoned',
          error: 'the worker stopped before recording a result; the receiver may have got this attempt',
        })
        .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
        .execute();
    }
    if (!row.enabled) {
      const reason = `endpoint disabled (${row.disabled_reason ?? 'merchant'})`;
      await deadLetterWithoutAttempt(tx, deliveryId, reason);
      return { kind: 'dead_letter', reason };
    }
    // Attempts of the current run: those since its first attempt (a replay starts a
    // new run with a full retry schedule, while the attempt count keeps counting).
    const run = await tx
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('a.delivery_id', '=', deliveryId)
      .where('d.first_attempt_at', 'is not', null)
      .whereRef('a.requested_at', '>=', 'd.first_attempt_at')
      .executeTakeFirstOrThrow();
    if (run.n >= opts.settings.webhook_max_attempts) {
      const reason = 'all attempts used; the last one was abandoned by a stopped worker';
      await deadLetterWithoutAttempt(tx, deliveryId, reason);
      return { kind: 'dead_letter', reason };
    }
    const leaseToken = randomUUID();
    const leaseMs = opts.settings.webhook_timeout_ms + LEASE_MARGIN_MS;
    const claimed = await tx
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        lease_token: leaseToken,
        lease_until: sql<Date>`now() + (${leaseMs} * interval '1 millisecond')`,
        last_attempt_at: sql<Date>`now()`,
        first_attempt_at: sql<Date>`COALESCE(first_attempt_at, now())`,
        url: row.endpoint_url,
        updated_at: sql<Date>`now()`,
      }))
      .where('id', '=', deliveryId)
      // As text under a name no entity has, so it keeps its microseconds (see ClaimedAttempt.startedAt).
      .returning(['attempts', sql<string>`last_attempt_at::text`.as('started_at_text')])
      .executeTakeFirstOrThrow();
    return {
      kind: 'claimed',
      claim: {
        deliveryId,
        attempt: claimed.attempts,
        runAttempt: run.n + 1,
        startedAt: claimed.started_at_text,
        leaseToken,
        url: row.endpoint_url,
        eventId: row.public_id,
        event: row.event_name,
        payload: row.payload,
        test: row.is_test,
        secrets: signingSecrets(opts.cipher, row),
      },
    };
  });
}

async function deadLetterWithoutAttempt(tx: Db, deliveryId: number, reason: string): Promise<void> {
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
    .where('id', '=', deliveryId)
    .execute();
}

export type AttemptDecision =
  | { status: 'success' }
  | { status: 'retrying'; delayMs: number }
  | { status: 'dead_letter'; disable: 'gone' | 'failing-if-no-success' | null };

/**
 * What a finished attempt leads to. Pure. Only 2xx succeeds. 410 means the
 * receiver says the endpoint is gone: stop now and disable it. A Retry-After on
 * 429/503 is a floor under the backoff, never a way to retry sooner.
 */
export function decideAfterAttempt(
  response: Pick<WebhookResponse, 'ok' | 'status' | 'retryAfter'>,
  /** Within the current run. */
  attempt: number,
  settings: Pick<WebhookSettings, 'webhook_max_attempts' | 'webhook_retry_base_seconds' | 'webhook_retry_max_seconds'>,
  now: Date,
  random: () => number = Math.random,
): AttemptDecision {
  if (response.ok) return { status: 'success' };
  if (response.status === 410) return { status: 'dead_letter', disable: 'gone' };
  if (attempt >= settings.webhook_max_attempts) return { status: 'dead_letter', disable: 'failing-if-no-success' };
  const base = settings.webhook_retry_base_seconds;
  const backoff = retryDelaySeconds(attempt, { baseSeconds: base, maxSeconds: Math.max(base, settings.webhook_retry_max_seconds) }, random);
  const retryAfter = response.status === 429 || response.status === 503 ? parseRetryAfter(response.retryAfter, now) : null;
  return { status: 'retrying', delayMs: Math.round(Math.max(backoff, retryAfter ?? 0) * 1000) };
}

/** Response bodies are kept for diagnosis only; a few KB say what went wrong. */
export const RESPONSE_BODY_LIMIT = 4096;

export interface FinishedAttempt {
  decision: AttemptDecision;
  /** False when our lease had lapsed and another worker took the delivery over: the attempt is logged, the delivery left to it. */
  applied: boolean;
  endpointDisabled: 'gone' | 'failing' | null;
}

/**
 * Successes in one statement, for any number of attempts: each delivery moves
 * to `success` (only while its lease holds), each attempt is logged either way,
 * and each endpoint's success is noted, as the general path in finishAttempt
 * does in a transaction of five round trips per delivery. Answers, per item,
 * whether its lease still held. The endpoint rows are locked in id order (two
 * groups noting the same endpoints cannot deadlock) and written only when it
 * changes something (a failing endpoint recovered) or the note is over a second
 * old: all deliveries of a merchant share that one row, and a write per
 * delivery made them queue on its lock.
 */
export async function finishSuccesses(em: Db, items: ReadonlyArray<{ claim: ClaimedAttempt; response: WebhookResponse }>): Promise<boolean[]> {
  if (items.length === 0) return [];
  // Raw SQL: the typed builder cannot declare json_to_recordset's column definition list (`AS u(...)`) that types the batch.
  const rows = await em.execute<Array<{ id: string }>>(
    `WITH u AS (
       SELECT * FROM json_to_recordset(?::json)
         AS u(id bigint, token uuid, attempt integer, url text, requested_at timestamptz, duration_ms integer, status integer, body text)
     ), d AS (
       UPDATE webhook_deliveries dd
          SET status = 'success', response_status = u.status, response_body = u.body, last_error = NULL, next_attempt_at = NULL,
              delivered_at = now(), dead_lettered_at = NULL, lease_token = NULL, lease_until = NULL, updated_at = now()
         FROM u WHERE dd.id = ANY(?::bigint[]) AND dd.id = u.id AND dd.lease_token = u.token
        RETURNING dd.id, dd.endpoint_id
     ), logged AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at, duration_ms, response_status, response_body, error_kind, error, next_attempt_at)
       SELECT id, attempt, url, 'success', requested_at, duration_ms, status, body, NULL, NULL, NULL FROM u
       ON CONFLICT (delivery_id, attempt) DO UPDATE SET
         outcome = EXCLUDED.outcome, duration_ms = EXCLUDED.duration_ms, response_status = EXCLUDED.response_status,
         response_body = EXCLUDED.response_body, error_kind = EXCLUDED.error_kind, error = EXCLUDED.error, next_attempt_at = EXCLUDED.next_attempt_at
       WHERE webhook_attempts.outcome = 'abandoned'
     ), due AS (
       SELECT id FROM webhook_endpoints
        WHERE id IN (SELECT endpoint_id FROM d)
          AND (failing_since IS NOT NULL OR last_success_at IS NULL OR last_success_at < now() - interval '1 second')
        ORDER BY id FOR UPDATE
     ), noted AS (
       UPDATE webhook_endpoints SET last_success_at = now(), failing_since = NULL, consecutive_failures = 0 WHERE id IN (SELECT id FROM due)
     )
     SELECT id FROM d`,
    [
      JSON.stringify(
        items.map(({ claim, response }) => ({
          id: claim.deliveryId,
          token: claim.leaseToken,
          attempt: claim.attempt,
          url: claim.url,
          requested_at: claim.startedAt,
          duration_ms: response.durationMs,
          status: response.status,
          body: cut(response.responseBody),
        })),
      ),
      pgIdArray(items.map((i) => i.claim.deliveryId)),
    ],
  );
  const applied = new Set(rows.map((r) => Number(r.id)));
  return items.map(({ claim }) => applied.has(claim.deliveryId));
}

export async function finishAttempt(
  em: Db,
  claim: ClaimedAttempt,
  response: WebhookResponse,
  settings: WebhookSettings,
  /** Where successes go; default one statement of their own (the worker passes a grouped finisher). */
  finishSuccess: (claim: ClaimedAttempt, response: WebhookResponse) => Promise<boolean> = async (c, r) => (await finishSuccesses(em, [{ claim: c, response: r }]))[0]!,
): Promise<FinishedAttempt> {
  const decision = decideAfterAttempt(response, claim.runAttempt, settings, new Date());
  if (decision.status === 'success') return { decision, applied: await finishSuccess(claim, response), endpointDisabled: null };
  return transaction(em, async (tx) => {
    const status = decision.status;
    const delivery = await tx
      .updateTable('webhook_deliveries')
      .set({
        status,
        response_status: response.status,
        response_body: cut(response.responseBody),
        last_error: errorText(response),
        next_attempt_at: sql<Date | null>`CASE WHEN ${status} = 'retrying' THEN now() + (${status === 'retrying' ? decision.delayMs : 0} * interval '1 millisecond') END`,
        delivered_at: sql<Date | null>`CASE WHEN ${status} = 'success' THEN now() ELSE delivered_at END`,
        dead_lettered_at: sql<Date | null>`CASE WHEN ${status} = 'dead_letter' THEN now() END`,
        lease_token: null,
        lease_until: null,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', claim.deliveryId)
      .where('lease_token', '=', claim.leaseToken)
      // The text copies under names no entity has keep their microseconds: next_attempt_at goes into
      // the attempt's row unchanged, first_attempt_at is compared with last_success_at.
      .returning([
        'endpoint_id',
        'next_attempt_at',
        sql<string | null>`next_attempt_at::text`.as('next_attempt_text'),
        sql<string | null>`first_attempt_at::text`.as('first_attempt_text'),
      ])
      .executeTakeFirst();
    await tx
      .insertInto('webhook_attempts')
      .values({
        delivery_id: claim.deliveryId,
        attempt: claim.attempt,
        url: claim.url,
        outcome: response.ok ? 'success' : 'failure',
        // PostgreSQL's text, cast back by the column: the microseconds stay (see ClaimedAttempt.startedAt).
        requested_at: claim.startedAt as unknown as Date,
        duration_ms: response.durationMs,
        response_status: response.status,
        response_body: cut(response.responseBody),
        error_kind: response.error?.kind ?? null,
        error: errorText(response),
        next_attempt_at: (delivery?.next_attempt_text ?? null) as Date | null,
      })
      .onConflict((oc) =>
        oc
          .columns(['delivery_id', 'attempt'])
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
    if (!delivery) return { decision, applied: false, endpointDisabled: null };

    let endpointDisabled: FinishedAttempt['endpointDisabled'] = null;
    // Successes are finished by finishSuccess; this path is a failed attempt.
    const endpointId = delivery.endpoint_id!;
    await tx
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        failing_since: sql<Date>`COALESCE(failing_since, now())`,
        last_failure_at: sql<Date>`now()`,
        consecutive_failures: eb('consecutive_failures', '+', 1),
      }))
      .where('id', '=', endpointId)
      .execute();
    if (decision.status === 'retrying') await enqueueDelivery(tx, claim.deliveryId, delivery.next_attempt_at!);
    if (decision.status === 'dead_letter' && decision.disable === 'gone') {
      endpointDisabled = (await disableEndpoint(tx, endpointId, 'gone', null)) ? 'gone' : null;
    }
    if (decision.status === 'dead_letter' && decision.disable === 'failing-if-no-success') {
      // Every attempt of this delivery failed over its whole retry window (about three
      // days by default); if nothing else reached the endpoint in that time either,
      // it is broken, not picky about one payload.
      endpointDisabled = (await disableEndpoint(tx, endpointId, 'failing', delivery.first_attempt_text)) ? 'failing' : null;
    }
    return { decision, applied: true, endpointDisabled };
  });
}

async function disableEndpoint(tx: Db, endpointId: number, reason: 'gone' | 'failing', noSuccessSince: string | null): Promise<boolean> {
  let update = tx
    .updateTable('webhook_endpoints')
    .set({ enabled: false, disabled_reason: reason, disabled_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('id', '=', endpointId)
    .where('enabled', '=', true);
  if (noSuccessSince) update = update.where((eb) => eb.or([eb('last_success_at', 'is', null), eb('last_success_at', '<', sql<Date>`${noSuccessSince}::timestamptz`)]));
  const row = await update.returning(['id', 'brand_id', 'disabled_at']).executeTakeFirst();
  if (!row) return false;
  // The endpoint's URL stays out of the alert: it can carry the merchant's tokens.
  const at = row.disabled_at!.toISOString();
  await raiseAlert(tx, {
    brandId: Number(row.brand_id),
    type: 'webhook_endpoint_disabled',
    dedupeKey: `endpoint:${row.id}:disabled:${at}`,
    subject: `Webhook endpoint ${row.id} was disabled`,
    details: { endpoint_id: Number(row.id), reason, disabled_at: at },
  });
  return true;
}

function cut(body: string | null): string | null {
  return body === null ? null : body.slice(0, RESPONSE_BODY_LIMIT);
}

function errorText(response: WebhookResponse): string | null {
  if (response.error) return `${response.error.kind}: ${response.error.message}`.slice(0, 1000);
  if (!response.ok && response.status !== null) return `receiver answered ${response.status}`;
  return null;
}
