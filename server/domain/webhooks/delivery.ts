import { randomUUID } from 'node:crypto';
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
export const LEASE_MARGIN_MS = 5_000;

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

export async function claimDelivery(
  em: EntityManager,
  deliveryId: number,
  opts: { cipher: PiiCipher; settings: WebhookSettings },
): Promise<ClaimResult> {
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

export async function finishAttempt(
  em: EntityManager,
  claim: ClaimedAttempt,
  response: WebhookResponse,
  settings: WebhookSettings,
): Promise<FinishedAttempt> {
  const decision = decideAfterAttempt(response, claim.runAttempt, settings, new Date());
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
    if (decision.status === 'success') {
      await tx.execute('UPDATE webhook_endpoints SET last_success_at = now(), failing_since = NULL WHERE id = ?', [delivery.endpoint_id]);
    } else {
      await tx.execute('UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, now()) WHERE id = ?', [delivery.endpoint_id]);
    }
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
  const rows = await tx.execute(
    `UPDATE webhook_endpoints SET enabled = false, disabled_reason = ?, disabled_at = now(), updated_at = now()
      WHERE id = ? AND enabled AND (?::timestamptz IS NULL OR last_success_at IS NULL OR last_success_at < ?::timestamptz)
      RETURNING id`,
    [reason, endpointId, noSuccessSince, noSuccessSince],
  );
  return rows.length > 0;
}

function cut(body: string | null): string | null {
  return body === null ? null : body.slice(0, RESPONSE_BODY_LIMIT);
}

function errorText(response: WebhookResponse): string | null {
  if (response.error) return `${response.error.kind}: ${response.error.message}`.slice(0, 1000);
  if (!response.ok && response.status !== null) return `receiver answered ${response.status}`;
  return null;
}
