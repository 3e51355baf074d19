import { z } from 'zod';
import type { Job, Queue } from 'pg-boss';
import { SANDBOX_CALLBACK_PATH, SANDBOX_SIGNATURE_HEADER, type SandboxCallback } from '../../../contract/checkout/sandbox.ts';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { recordCallbackAttempt } from './queries.ts';
import { getSandboxSession, SEND_SANDBOX_CALLBACK_QUEUE } from './sessions.ts';
import { sandboxSignatureHeader } from './signature.ts';

const sendSandboxCallbackPayload = z.object({ sessionId: z.number().int().positive() });
type Payload = z.infer<typeof sendSandboxCallbackPayload>;

const CALLBACK_TIMEOUT_MS = 10_000;

/**
 * Like a real gateway, the sandbox retries a callback the service did not
 * accept (network error or any non-2xx), with exponential backoff for about
 * half an hour: 2 s, 4 s, 8 s … capped at 10 minutes.
 */
const sendSandboxCallbackQueue: Queue = {
  name: SEND_SANDBOX_CALLBACK_QUEUE,
  retryLimit: 10,
  retryDelay: 2,
  retryBackoff: true,
  retryDelayMax: 600,
  expireInSeconds: 60,
  deleteAfterSeconds: 7 * 24 * 60 * 60,
  notify: true,
};

function callbackUrl(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${SANDBOX_CALLBACK_PATH}`;
}

/**
 * One attempt: POST the signed outcome of a decided session to the service's
 * public callback URL. Throws when the service did not answer 2xx, so pg-boss
 * retries. A session already delivered is not sent again.
 */
/** What the callback worker touches: the sessions, the job queue, the log, the public URL and the sandbox's signing secret. */
export type SendSandboxCallbackDeps = Pick<AppDeps, 'db' | 'boss' | 'logger' | 'config' | 'secrets'>;

async function sendSandboxCallback(deps: Omit<SendSandboxCallbackDeps, 'boss'>, payload: Payload): Promise<void> {
  const { sessionId } = sendSandboxCallbackPayload.parse(payload);
  const em = deps.db;
  const session = await getSandboxSession(em, sessionId);
  if (!session || session.status === 'open' || session.callbackDeliveredAt) return;
  const body: SandboxCallback = {
    outcome: session.status,
    trx_id: session.trxId,
    gateway_trx_id: session.gatewayTrxId!,
    amount: session.amount,
    currency: session.currency,
    reason: session.declineReason,
    decided_at: session.decidedAt!.toISOString(),
  };
  const raw = JSON.stringify(body);
  let status: number | null = null;
  let error: string | null = null;
  try {
    const res = await fetch(callbackUrl(deps.config.PUBLIC_BASE_URL), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Paycollect-Sandbox/1.0',
        [SANDBOX_SIGNATURE_HEADER]: sandboxSignatureHeader(deps.secrets.sandboxCallbackSecret, Math.floor(Date.now() / 1000), raw),
      },
      body: raw,
      redirect: 'manual',
      signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
    });
    status = res.status;
    await res.body?.cancel();
  } catch (err) {
    error = (err as Error).name === 'TimeoutError' ? 'timeout' : 'connection';
  }
  const delivered = status !== null && status >= 200 && status < 300;
  await recordCallbackAttempt(em, sessionId, status, delivered);
  // Ids and codes only: the URL and body are not secrets, but there is no reason to copy them to logs.
  const log = { sandbox_session_id: sessionId, outcome: session.status, attempt: session.callbackAttempts + 1, status, error };
  if (delivered) {
    deps.logger.info(log, 'sandbox callback delivered');
    return;
  }
  deps.logger.warn(log, 'sandbox callback not accepted; will retry');
  throw new Error(`sandbox callback not accepted (${status ?? error})`);
}

async function start(deps: SendSandboxCallbackDeps): Promise<{ stop(): Promise<void> }> {
  // New callbacks wake the worker by NOTIFY; retries are not announced, so the
  // backstop poll stays short (pg-boss would relax it to 30 s) to keep them near their due time.
  await deps.boss.work<Payload>(SEND_SANDBOX_CALLBACK_QUEUE, { pollingIntervalSeconds: 2, notifyPollingIntervalSeconds: 2 }, async (jobs: Job<Payload>[]) => {
    for (const job of jobs) await sendSandboxCallback(deps, job.data);
  });
  return { stop: () => deps.boss.offWork(SEND_SANDBOX_CALLBACK_QUEUE, { wait: true }) };
}

export function sendSandboxCallbackRegistration(): JobRegistration<SendSandboxCallbackDeps> {
  return { queue: sendSandboxCallbackQueue, start };
}
