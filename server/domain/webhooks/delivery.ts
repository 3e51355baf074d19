import type { WebhookSigning } from '../../../contract/vocabulary.ts';
import { raiseAlert } from '../alerts/raise.ts';
import { transaction, type Db } from '../db.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { WebhookResponse } from '../../infra/http/outbound.ts';
import { parseRetryAfter, retryDelaySeconds } from './backoff.ts';
import { signingSecrets } from './endpoints.ts';
import { enqueueDelivery } from './queue.ts';
import type { WebhookSettings } from './settings.ts';
import {
  countRunAttempts,
  deadLetterDeliveries,
  disableEndpointRow,
  finishLeasedDelivery,
  insertAbandonedAttempts,
  leaseDeliveries,
  lockDeliveriesForClaim,
  logAttempt,
  noteEndpointFailure,
  noteEndpointSuccess,
  selectExistingDeliveryIds,
} from './queries/delivery.ts';

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
  /** How the endpoint wants deliveries signed and shaped (ownpay-format.ts for `ownpay`). */
  signing: WebhookSigning;
}

export type ClaimResult =
  | { kind: 'claimed'; claim: ClaimedAttempt }
  | { kind: 'later'; at: Date }
  | { kind: 'skipped'; reason: 'busy' | 'final' | 'leased' | 'missing' }
  | { kind: 'dead_letter'; reason: string };

/** Why a delivery is dead-lettered at claim time when its endpoint is disabled. */
const disabledReason = (reason: string | null) => `endpoint disabled (${reason ?? 'merchant'})`;
const EXHAUSTED_REASON = 'all attempts used; the last one was abandoned by a stopped worker';

/**
 * Claims a batch of wake-ups (a worker fetches them together) in one short
 * transaction, a few statements whatever the batch's size: the rows are locked
 * (SKIP LOCKED) and read with their event and endpoint in one statement, each
 * is decided (below), and the claimable ones take their attempt number and
 * lease in one UPDATE. The usual batch, first attempts of enabled endpoints,
 * is BEGIN, that read, that UPDATE and COMMIT. A single wake-up is a batch of
 * one (`claimDelivery`).
 *
 * Per delivery, in this order:
 *   another worker holds its row lock: `busy` (gone altogether: `missing`);
 *   already success or dead letter: `final`;
 *   under a live lease: `leased`;
 *   woken early (a deduplicated wake-up, or clock skew): `later`, with a
 *   wake-up made sure of for the due time;
 *   a lease that ran out (its worker died mid-attempt): that attempt is
 *   recorded as `abandoned`, then it goes on;
 *   endpoint disabled: dead-lettered without an attempt;
 *   the current run's attempts all used: dead-lettered without an attempt;
 *   otherwise claimed.
 */
export async function claimDeliveries(em: Db, deliveryIds: readonly number[], opts: { cipher: PiiCipher; settings: WebhookSettings }): Promise<Map<number, ClaimResult>> {
  const ids = [...new Set(deliveryIds)];
  const out = new Map<number, ClaimResult>();
  if (ids.length === 0) return out;
  return transaction(em, async (tx) => {
    const rows = await lockDeliveriesForClaim(tx, ids);

    const locked = new Set(rows.map((r) => r.id));
    const unlocked = ids.filter((id) => !locked.has(id));
    if (unlocked.length) {
      const exists = new Set(await selectExistingDeliveryIds(tx, unlocked));
      for (const id of unlocked) out.set(id, { kind: 'skipped', reason: exists.has(id) ? 'busy' : 'missing' });
    }

    const open: typeof rows = [];
    for (const row of rows) {
      if (row.status !== 'pending' && row.status !== 'retrying') out.set(row.id, { kind: 'skipped', reason: 'final' });
      else if (row.leased) out.set(row.id, { kind: 'skipped', reason: 'leased' });
      else if (!row.due) {
        const at = row.next_attempt_at!;
        await enqueueDelivery(tx, row.id, at);
        out.set(row.id, { kind: 'later', at });
      } else open.push(row);
    }

    // The previous attempt was claimed and never finished: its worker died mid-attempt.
    const abandoned = open.filter((r) => r.lease_token !== null);
    if (abandoned.length) {
      await insertAbandonedAttempts(
        tx,
        abandoned.map((row) => ({ deliveryId: row.id, attempt: row.attempts, url: row.url, startedAt: row.last_attempt_text })),
      );
    }

    const deadLetters = new Map<string, number[]>();
    const deadLetter = (id: number, reason: string) => {
      deadLetters.set(reason, [...(deadLetters.get(reason) ?? []), id]);
      out.set(id, { kind: 'dead_letter', reason });
    };
    const enabled: typeof rows = [];
    for (const row of open) {
      if (row.enabled) enabled.push(row);
      else deadLetter(row.id, disabledReason(row.disabled_reason));
    }

    // Attempts of the current run: those since its first attempt (a replay starts a new run
    // with a full retry schedule, while the attempt count keeps counting). Counted after the
    // abandoned attempts above were recorded: they count. A delivery not in a run has none.
    const inRun = enabled.filter((r) => r.in_run).map((r) => r.id);
    const runCounts = new Map<number, number>();
    if (inRun.length) {
      const counts = await countRunAttempts(tx, inRun);
      for (const c of counts) runCounts.set(c.delivery_id, c.n);
    }
    const claimable: typeof rows = [];
    for (const row of enabled) {
      if ((runCounts.get(row.id) ?? 0) >= opts.settings.webhook_max_attempts) deadLetter(row.id, EXHAUSTED_REASON);
      else claimable.push(row);
    }
    for (const [reason, deadIds] of deadLetters) await deadLetterWithoutAttempt(tx, deadIds, reason);

    if (claimable.length) {
      const leaseMs = opts.settings.webhook_timeout_ms + LEASE_MARGIN_MS;
      const claimed = await leaseDeliveries(
        tx,
        claimable.map((r) => r.id),
        leaseMs,
      );
      const byId = new Map(claimed.map((c) => [c.id, c]));
      for (const row of claimable) {
        const c = byId.get(row.id)!;
        out.set(row.id, {
          kind: 'claimed',
          claim: {
            deliveryId: row.id,
            attempt: c.attempts,
            runAttempt: (runCounts.get(row.id) ?? 0) + 1,
            startedAt: c.started_at_text,
            leaseToken: c.lease_token!,
            url: c.endpoint_url,
            eventId: row.public_id,
            event: row.event_name,
            payload: row.payload,
            test: row.is_test,
            secrets: signingSecrets(opts.cipher, row),
            signing: row.signing,
          },
        });
      }
    }
    return out;
  });
}

/** One wake-up's claim: a batch of one. */
export async function claimDelivery(em: Db, deliveryId: number, opts: { cipher: PiiCipher; settings: WebhookSettings }): Promise<ClaimResult> {
  return (await claimDeliveries(em, [deliveryId], opts)).get(deliveryId)!;
}

async function deadLetterWithoutAttempt(tx: Db, deliveryIds: readonly number[], reason: string): Promise<void> {
  await deadLetterDeliveries(tx, deliveryIds, reason);
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
 * Records a sent attempt in one transaction: the delivery moves on (only while
 * our lease token still holds: otherwise another worker took it over after our
 * lease lapsed, and the attempt is logged but the delivery left to it), the
 * attempt is logged either way, the endpoint's health is noted, and a retry's
 * wake-up or an endpoint's auto-disable is written with it.
 */
export async function finishAttempt(
  em: Db,
  claim: ClaimedAttempt,
  response: WebhookResponse,
  settings: WebhookSettings,
): Promise<FinishedAttempt> {
  const decision = decideAfterAttempt(response, claim.runAttempt, settings, new Date());
  return transaction(em, async (tx) => {
    const status = decision.status;
    const delivery = await finishLeasedDelivery(tx, claim.deliveryId, claim.leaseToken, {
      status,
      delayMs: status === 'retrying' ? decision.delayMs : 0,
      responseStatus: response.status,
      responseBody: cut(response.responseBody),
      error: errorText(response),
    });
    await logAttempt(tx, {
      deliveryId: claim.deliveryId,
      attempt: claim.attempt,
      url: claim.url,
      outcome: response.ok ? 'success' : 'failure',
      requestedAt: claim.startedAt,
      durationMs: response.durationMs,
      responseStatus: response.status,
      responseBody: cut(response.responseBody),
      errorKind: response.error?.kind ?? null,
      error: errorText(response),
      nextAttemptAt: delivery?.next_attempt_text ?? null,
    });
    if (!delivery) return { decision, applied: false, endpointDisabled: null };

    let endpointDisabled: FinishedAttempt['endpointDisabled'] = null;
    const endpointId = delivery.endpoint_id!;
    if (decision.status === 'success') {
      // Written only when it changes something (noteEndpointSuccess says when).
      await noteEndpointSuccess(tx, endpointId);
      return { decision, applied: true, endpointDisabled };
    }
    await noteEndpointFailure(tx, endpointId);
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
  const row = await disableEndpointRow(tx, endpointId, reason, noSuccessSince);
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
