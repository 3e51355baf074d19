import { z } from 'zod';
import type { Job, JobResult } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import { postWebhook } from '../../infra/http/outbound.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { claimDeliveries, finishAttempt, RESPONSE_BODY_LIMIT, type ClaimResult } from './delivery.ts';
import { transaction } from '../db.ts';
import { enqueueDelivery, deliverQueue, DELIVER_QUEUE } from './queue.ts';
import { readWebhookSettings, type WebhookSettings } from './settings.ts';
import { signatureHeader } from './signature.ts';
import { ownpayBody, ownpayHeaders } from './ownpay-format.ts';
import { selectDueUnleased } from './queries/events.ts';

/** Payload of a delivery wake-up: which delivery row to look at. */
const deliverWebhookPayload = z.object({ deliveryId: z.number().int().positive() });
type Payload = z.infer<typeof deliverWebhookPayload>;

const USER_AGENT = 'Paycollect-Webhooks/1.0';

/** What the delivery workers touch: the database, the job queue, the log, the PII keys (secrets) and the private-address switch. */
export type DeliverWebhookDeps = Pick<AppDeps, 'db' | 'boss' | 'logger' | 'crypto' | 'config'>;

/** One wake-up, claimed with its batch (`claimDeliveries`): send it if claimed, record the outcome. */
async function deliverWebhook(deps: Pick<DeliverWebhookDeps, 'db' | 'logger' | 'config'>, settings: WebhookSettings, deliveryId: number, claimed: ClaimResult): Promise<void> {
  if (claimed.kind !== 'claimed') {
    if (claimed.kind === 'dead_letter') deps.logger.warn({ delivery_id: deliveryId, reason: claimed.reason }, 'webhook delivery dead-lettered without an attempt');
    return;
  }
  const { claim } = claimed;
  const timestamp = Math.floor(Date.now() / 1000);
  const ownpay = claim.signing === 'ownpay' ? ownpayBody(claim.payload) : null;
  const response = await postWebhook({
    url: claim.url,
    body: ownpay ?? claim.payload,
    headers: ownpay !== null ? {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-webhook-id': claim.eventId,
      'x-webhook-attempt': String(claim.attempt),
      ...(claim.test ? { 'x-webhook-test': 'true' } : {}),
      ...ownpayHeaders(claim.secrets[0]!, ownpay, claim.event, timestamp),
    } : {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-webhook-id': claim.eventId,
      'x-webhook-event': claim.event,
      'x-webhook-attempt': String(claim.attempt),
      // A sample event (`test: true` in its body too): a receiver can tell it from a real one before parsing.
      ...(claim.test ? { 'x-webhook-test': 'true' } : {}),
      'x-webhook-signature': signatureHeader(claim.secrets, timestamp, claim.payload),
    },
    timeoutMs: settings.webhook_timeout_ms,
    maxResponseBytes: RESPONSE_BODY_LIMIT,
    allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE_URLS,
  });
  const finished = await finishAttempt(deps.db, claim, response, settings);
  // Ids, codes and timings only: URLs can carry merchant tokens, bodies can carry anything.
  const log = {
    delivery_id: deliveryId,
    event_id: claim.eventId,
    attempt: claim.attempt,
    status: response.status,
    error_kind: response.error?.kind ?? null,
    duration_ms: response.durationMs,
    outcome: finished.decision.status,
    applied: finished.applied,
  };
  if (finished.endpointDisabled) deps.logger.warn({ ...log, endpoint_disabled: finished.endpointDisabled }, 'webhook endpoint disabled');
  else if (finished.decision.status === 'dead_letter') deps.logger.warn(log, 'webhook delivery dead-lettered');
  else deps.logger.info(log, 'webhook attempt');
}

/**
 * Re-enqueues due deliveries that have no live lease and may have lost their
 * wake-up (their worker was killed after fetching the job). The queue keeps one
 * queued wake-up per delivery, so overlapping sweeps from several processes and
 * wake-ups that still exist cost nothing.
 */
async function sweepDueDeliveries(deps: Pick<AppDeps, 'db'>, graceMs: number, limit = 500): Promise<number> {
  return transaction(deps.db, async (tx) => {
    const ids = await selectDueUnleased(tx, graceMs, limit);
    for (const id of ids) await enqueueDelivery(tx, id);
    return ids.length;
  });
}

async function startDeliveryWorkers(deps: DeliverWebhookDeps): Promise<{ stop(): Promise<void> }> {
  const startSettings = await readWebhookSettings(deps.db);
  const poll = startSettings.webhook_poll_interval_seconds;
  await deps.boss.work<Payload, unknown, { batchSize: number; localConcurrency: number; pollingIntervalSeconds: number; notifyPollingIntervalSeconds: number; burstWhenBatchFull: true; perJobResults: true }>(
    DELIVER_QUEUE,
    {
      batchSize: startSettings.webhook_worker_batch_size,
      localConcurrency: startSettings.webhook_worker_concurrency,
      pollingIntervalSeconds: poll,
      // Deferred retries are not announced by NOTIFY; only polling finds them.
      notifyPollingIntervalSeconds: poll,
      // A full batch means a backlog: fetch again at once instead of waiting a poll.
      burstWhenBatchFull: true,
      perJobResults: true,
    },
    async (jobs: Job<Payload>[]): Promise<JobResult[]> => {
      // One settings read per batch: an operator's change applies from the next batch.
      const settings = await readWebhookSettings(deps.db);
      // The whole batch claimed in one transaction; a malformed wake-up fails as its own job.
      const claims = await claimDeliveries(deps.db, jobs.map((j) => deliverWebhookPayload.safeParse(j.data)).flatMap((p) => (p.success ? [p.data.deliveryId] : [])), { cipher: deps.crypto.pii, settings });
      // Two wake-ups of one delivery in a batch: the claim is the first one's; the other finds it busy.
      const taken = new Set<number>();
      // The batch's deliveries go out concurrently; one slow receiver does not hold up the rest.
      return Promise.all(
        jobs.map(async (job): Promise<JobResult> => {
          try {
            const { deliveryId } = deliverWebhookPayload.parse(job.data);
            const claimed: ClaimResult = taken.has(deliveryId) ? { kind: 'skipped', reason: 'busy' } : claims.get(deliveryId)!;
            taken.add(deliveryId);
            await deliverWebhook(deps, settings, deliveryId, claimed);
            return { id: job.id, status: 'completed' };
          } catch (err) {
            deps.logger.error({ delivery_id: job.data?.deliveryId, err: { message: (err as Error).message } }, 'webhook delivery job failed');
            return { id: job.id, status: 'failed', output: { message: (err as Error).message } };
          }
        }),
      );
    },
  );

  const sweepMs = startSettings.webhook_sweep_interval_seconds * 1000;
  let sweeping: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    sweeping = sweepDueDeliveries(deps, sweepMs).catch((err) =>
      deps.logger.error({ err: { message: (err as Error).message } }, 'webhook sweep failed'),
    );
  }, sweepMs);
  timer.unref();

  return {
    async stop() {
      clearInterval(timer);
      await sweeping;
      await deps.boss.offWork(DELIVER_QUEUE, { wait: true });
    },
  };
}

export function deliverWebhookRegistration(): JobRegistration<DeliverWebhookDeps> {
  return { queue: deliverQueue, start: startDeliveryWorkers };
}
