import { randomUUID } from 'node:crypto';
import { raiseAlert } from '../alerts/raise.ts';
import { pgIdArray } from '../../infra/database/pg-array.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { WebhookResponse } from '../../infra/http/outbound.ts';
import { parseRetryAfter, retryDelaySeconds } from './backoff.ts';
import { signingSecrets, type DisabledReason } from './endpoints.ts';
import { enqueueDelivery } from './queue.ts';
import { toDateStrict } from './rows.ts';
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
  /** Database time the attempt started; recorded as its `requested_at`. */
  startedAt: string;
  leaseToken: string;
  url: string;
  eventId: string;
  event: string;
  payload: string;
  secrets: string[];
}

export type ClaimResult =
  | { kind: 'claimed'; claim: ClaimedAttempt }
  | { kind: 'later'; at: Date }
  | { kind: 'skipped'; reason: 'busy' | 'final' | 'leased' | 'missing' }
  | { kind: 'dead_letter'; reason: string };

interface ClaimRow {
  id: string;
  status: string;
  attempts: number;
  lease_token: string | null;
  last_attempt_at: string | null;
  url: string;
  due: boolean;
  leased: boolean;
  next_attempt_at: string | null;
  public_id: string;
  event: string;
  payload: string;
  brand_id: string;
  endpoint_url: string;
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  secret_encrypted: string;
  previous_secrets: Array<{ secret: string; expires_at: string }>;
}

/** `{1,2,3}`: ids bound as one `?::bigint[]` parameter (em.execute would spread a JS array into a list). */

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
export async function claimFirstAttempts(em: EntityManager, deliveryIds: readonly number[], opts: { cipher: PiiCipher; settings: WebhookSettings }): Promise<Map<number, ClaimedAttempt>> {
  if (deliveryIds.length === 0) return new Map();
  const leaseMs = opts.settings.webhook_timeout_ms + LEASE_MARGIN_MS;
  const rows = await em.execute<Array<Pick<ClaimRow, 'id' | 'public_id' | 'event' | 'payload' | 'brand_id' | 'endpoint_url' | 'secret_encrypted' | 'previous_secrets' | 'attempts' | 'lease_token'> & { last_attempt_at: string }>>(
    `UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, lease_token = gen_random_uuid(), lease_until = now() + (? * interval '1 millisecond'),
            last_attempt_at = now(), first_attempt_at = now(), url = ep.url, updated_at = now()
       FROM webhook_events e, webhook_endpoints ep
      WHERE d.id IN (SELECT id FROM webhook_deliveries
                      WHERE id = ANY(?::bigint[])
                        AND status IN ('pending', 'retrying') AND lease_token IS NULL AND first_attempt_at IS NULL
                        AND COALESCE(next_attempt_at <= now(), true)
                      FOR UPDATE SKIP LOCKED)
        AND e.id = d.event_id AND ep.id = d.endpoint_id AND ep.enabled
      RETURNING d.id, d.attempts, d.lease_token, d.last_attempt_at, ep.url AS endpoint_url, e.public_id, e.event, e.payload,
                ep.brand_id, ep.secret_encrypted, ep.previous_secrets`,
    // The ids as one array parameter: `id = ANY(array)` is a primary-key lookup whatever the
    // statistics say, where a join to a set-returning function was planned as a scan of every
    // due delivery right after a burst of inserts, before autoanalyze (BENCHMARKS.md, "What the profiles showed", 4).
    [leaseMs, pgIdArray(deliveryIds)],
  );
  return new Map(
    rows.map((row) => [
      Number(row.id),
      {
        deliveryId: Number(row.id),
        attempt: row.attempts,
        runAttempt: 1,
        startedAt: row.last_attempt_at,
        leaseToken: row.lease_token!,
        url: row.endpoint_url,
        eventId: row.public_id,
        event: row.event,
        payload: row.payload,
        secrets: signingSecrets(opts.cipher, row),
      },
    ]),
  );
}

export async function claimDelivery(
  em: EntityManager,
  deliveryId: number,
  opts: { cipher: PiiCipher; settings: WebhookSettings },
): Promise<ClaimResult> {
  const first = (await claimFirstAttempts(em, [deliveryId], opts)).get(deliveryId);
  if (first) return { kind: 'claimed', claim: first };
  return claimGeneral(em, deliveryId, opts);
}

/** Every case: retries, leases that ran out, disabled endpoints, exhausted runs, early wake-ups. */
export async function claimGeneral(em: EntityManager, deliveryId: number, opts: { cipher: PiiCipher; settings: WebhookSettings }): Promise<ClaimResult> {
  return em.transactional(async (tx) => {
    const [row] = await tx.execute<ClaimRow[]>(
      `SELECT d.id, d.status, d.attempts, d.lease_token, d.last_attempt_at, d.url, d.next_attempt_at,
              COALESCE(d.next_attempt_at <= now(), true) AS due,
              d.lease_until IS NOT NULL AND d.lease_until > now() AS leased,
              e.public_id, e.event, e.payload, ep.brand_id, ep.url AS endpoint_url, ep.enabled, ep.disabled_reason,
              ep.secret_encrypted, ep.previous_secrets
         FROM webhook_deliveries d
         JOIN webhook_events e ON e.id = d.event_id
         JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
        WHERE d.id = ?
        FOR UPDATE OF d SKIP LOCKED`,
      [deliveryId],
    );
    if (!row) {
      const exists = await tx.execute('SELECT 1 FROM webhook_deliveries WHERE id = ?', [deliveryId]);
      return { kind: 'skipped', reason: exists.length ? 'busy' : 'missing' };
    }
    if (row.status !== 'pending' && row.status !== 'retrying') return { kind: 'skipped', reason: 'final' };
    if (row.leased) return { kind: 'skipped', reason: 'leased' };
    if (!row.due) {
      // Woken early (a deduplicated wake-up, or clock skew): make sure one exists for the due time.
      const at = toDateStrict(row.next_attempt_at);
      await enqueueDelivery(tx, deliveryId, at);
      return { kind: 'later', at };
    }
    if (row.lease_token) {
      // The previous attempt was claimed and never finished: its worker died mid-attempt.
      await tx.execute(
        `INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at, error_kind, error)
         VALUES (?, ?, ?, 'abandoned', ?, 'abandoned', 'the worker stopped before recording a result; the receiver may have got this attempt')
         ON CONFLICT (delivery_id, attempt) DO NOTHING`,
        [deliveryId, row.attempts, row.url, row.last_attempt_at ?? new Date()],
      );
    }
    if (!row.enabled) {
      const reason = `endpoint disabled (${row.disabled_reason ?? 'merchant'})`;
      await deadLetterWithoutAttempt(tx, deliveryId, reason);
      return { kind: 'dead_letter', reason };
    }
    // Attempts of the current run: those since its first attempt (a replay starts a
    // new run with a full retry schedule, while the attempt count keeps counting).
    const [run] = await tx.execute<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE a.delivery_id = ? AND d.first_attempt_at IS NOT NULL AND a.requested_at >= d.first_attempt_at`,
      [deliveryId],
    );
    if (run!.n >= opts.settings.webhook_max_attempts) {
      const reason = 'all attempts used; the last one was abandoned by a stopped worker';
      await deadLetterWithoutAttempt(tx, deliveryId, reason);
      return { kind: 'dead_letter', reason };
    }
    const leaseToken = randomUUID();
    const leaseMs = opts.settings.webhook_timeout_ms + LEASE_MARGIN_MS;
    const [claimed] = await tx.execute<Array<{ attempts: number; last_attempt_at: string }>>(
      `UPDATE webhook_deliveries
          SET attempts = attempts + 1, lease_token = ?, lease_until = now() + (? * interval '1 millisecond'),
              last_attempt_at = now(), first_attempt_at = COALESCE(first_attempt_at, now()), url = ?, updated_at = now()
        WHERE id = ? RETURNING attempts, last_attempt_at`,
      [leaseToken, leaseMs, row.endpoint_url, deliveryId],
    );
    return {
      kind: 'claimed',
      claim: {
        deliveryId,
        attempt: claimed!.attempts,
        runAttempt: run!.n + 1,
        startedAt: claimed!.last_attempt_at,
        leaseToken,
        url: row.endpoint_url,
        eventId: row.public_id,
        event: row.event,
        payload: row.payload,
        secrets: signingSecrets(opts.cipher, row),
      },
    };
  });
}

async function deadLetterWithoutAttempt(tx: EntityManager, deliveryId: number, reason: string): Promise<void> {
  await tx.execute(
    `UPDATE webhook_deliveries
        SET status = 'dead_letter', dead_lettered_at = now(), next_attempt_at = NULL, lease_token = NULL, lease_until = NULL,
            last_error = ?, updated_at = now()
      WHERE id = ?`,
    [reason, deliveryId],
  );
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
export async function finishSuccesses(em: EntityManager, items: ReadonlyArray<{ claim: ClaimedAttempt; response: WebhookResponse }>): Promise<boolean[]> {
  if (items.length === 0) return [];
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
  em: EntityManager,
  claim: ClaimedAttempt,
  response: WebhookResponse,
  settings: WebhookSettings,
  /** Where successes go; default one statement of their own (the worker passes a grouped finisher). */
  finishSuccess: (claim: ClaimedAttempt, response: WebhookResponse) => Promise<boolean> = async (c, r) => (await finishSuccesses(em, [{ claim: c, response: r }]))[0]!,
): Promise<FinishedAttempt> {
  const decision = decideAfterAttempt(response, claim.runAttempt, settings, new Date());
  if (decision.status === 'success') return { decision, applied: await finishSuccess(claim, response), endpointDisabled: null };
  return em.transactional(async (tx) => {
    const [delivery] = await tx.execute<Array<{ endpoint_id: string; first_attempt_at: string; next_attempt_at: string | null }>>(
      `UPDATE webhook_deliveries
          SET status = ?, response_status = ?, response_body = ?, last_error = ?,
              next_attempt_at = CASE WHEN ? = 'retrying' THEN now() + (? * interval '1 millisecond') END,
              delivered_at = CASE WHEN ? = 'success' THEN now() ELSE delivered_at END,
              dead_lettered_at = CASE WHEN ? = 'dead_letter' THEN now() END,
              lease_token = NULL, lease_until = NULL, updated_at = now()
        WHERE id = ? AND lease_token = ?
        RETURNING endpoint_id, first_attempt_at, next_attempt_at`,
      [
        decision.status, response.status, cut(response.responseBody), errorText(response),
        decision.status, decision.status === 'retrying' ? decision.delayMs : 0,
        decision.status, decision.status, claim.deliveryId, claim.leaseToken,
      ],
    );
    await tx.execute(
      `INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at, duration_ms, response_status, response_body, error_kind, error, next_attempt_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (delivery_id, attempt) DO UPDATE SET
         outcome = EXCLUDED.outcome, duration_ms = EXCLUDED.duration_ms, response_status = EXCLUDED.response_status,
         response_body = EXCLUDED.response_body, error_kind = EXCLUDED.error_kind, error = EXCLUDED.error, next_attempt_at = EXCLUDED.next_attempt_at
       WHERE webhook_attempts.outcome = 'abandoned'`,
      [
        claim.deliveryId, claim.attempt, claim.url, response.ok ? 'success' : 'failure', claim.startedAt, response.durationMs,
        response.status, cut(response.responseBody), response.error?.kind ?? null, errorText(response), delivery?.next_attempt_at ?? null,
      ],
    );
    if (!delivery) return { decision, applied: false, endpointDisabled: null };

    let endpointDisabled: FinishedAttempt['endpointDisabled'] = null;
    // Successes are finished by finishSuccess; this path is a failed attempt.
    await tx.execute(
      'UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, now()), last_failure_at = now(), consecutive_failures = consecutive_failures + 1 WHERE id = ?',
      [delivery.endpoint_id],
    );
    if (decision.status === 'retrying') await enqueueDelivery(tx, claim.deliveryId, toDateStrict(delivery.next_attempt_at));
    if (decision.status === 'dead_letter' && decision.disable === 'gone') {
      endpointDisabled = (await disableEndpoint(tx, delivery.endpoint_id, 'gone', null)) ? 'gone' : null;
    }
    if (decision.status === 'dead_letter' && decision.disable === 'failing-if-no-success') {
      // Every attempt of this delivery failed over its whole retry window (about three
      // days by default); if nothing else reached the endpoint in that time either,
      // it is broken, not picky about one payload.
      endpointDisabled = (await disableEndpoint(tx, delivery.endpoint_id, 'failing', delivery.first_attempt_at)) ? 'failing' : null;
    }
    return { decision, applied: true, endpointDisabled };
  });
}

async function disableEndpoint(tx: EntityManager, endpointId: string, reason: 'gone' | 'failing', noSuccessSince: string | null): Promise<boolean> {
  const rows = await tx.execute<Array<{ id: string; brand_id: string; disabled_at: Date }>>(
    `UPDATE webhook_endpoints SET enabled = false, disabled_reason = ?, disabled_at = now(), updated_at = now()
      WHERE id = ? AND enabled AND (?::timestamptz IS NULL OR last_success_at IS NULL OR last_success_at < ?::timestamptz)
      RETURNING id, brand_id, disabled_at`,
    [reason, endpointId, noSuccessSince, noSuccessSince],
  );
  const row = rows[0];
  if (!row) return false;
  // The endpoint's URL stays out of the alert: it can carry the merchant's tokens.
  const at = new Date(row.disabled_at).toISOString();
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
