import { z } from 'zod';
import type { Job } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { enqueueManyInTransaction } from '../../infra/jobs/workers.ts';
import type { MinuteSweep } from '../../infra/jobs/scheduled.ts';
import { mailFailureReason, sendMail } from '../../infra/mail.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../customers/service.ts';
import { transaction } from '../db.ts';
import { renderReceipt, type ReceiptContent } from './mail.ts';
import { finishReceipt, insertDueReceipts, receiptToSend, startReceiptAttempt } from './queries.ts';

/**
 * Receipts (README, "Receipts"): a customer whose payment or refund completed
 * gets an e-mail saying so, when the brand switched receipts on. The minute
 * sweep makes a receipt for each new `payment.completed` / `refund.completed`
 * event and queues its sending in the same transaction; the send job reads the
 * address from the payment's customer when it sends (nothing personal is kept
 * on the receipt), and retries with backoff like alert mails.
 */

export const SEND_RECEIPT_QUEUE = 'receipt-send';
/** Attempts before a receipt is marked failed. */
const RECEIPT_MAX_ATTEMPTS = 6;
/** Receipts made per sweep run; the rest wait for the next minute. */
const RECEIPTS_PER_SWEEP = 500;

const payloadSchema = z.object({ receiptId: z.number().int().positive() });

export type ReceiptDeps = Pick<AppDeps, 'db' | 'config' | 'crypto' | 'logger'>;

export const receiptsSweep: MinuteSweep<Pick<AppDeps, 'db'>> = {
  name: 'receipts',
  async run(deps) {
    return transaction(deps.db, async (tx) => {
      const ids = await insertDueReceipts(tx, RECEIPTS_PER_SWEEP);
      await enqueueManyInTransaction(tx, SEND_RECEIPT_QUEUE, ids.map((id) => ({ data: { receiptId: id }, singletonKey: `receipt:${id}` })));
      return { queued: ids.length };
    });
  },
};

/** The event's body as the receipt reads it (contract/events.ts: payment and refund data). */
const eventSchema = z.object({
  livemode: z.boolean(),
  data: z.looseObject({
    trx_id: z.string(),
    gateway_trx_id: z.string().nullable().optional(),
    amount: z.string(),
    currency: z.string().optional(),
    reference: z.string().nullable().optional(),
    completed_at: z.string().nullable().optional(),
    processed_at: z.string().nullable().optional(),
  }),
});

async function sendReceipt(deps: ReceiptDeps, data: unknown): Promise<void> {
  const { receiptId } = payloadSchema.parse(data);
  const attempt = await startReceiptAttempt(deps.db, receiptId);
  if (attempt === null) return;
  const row = (await receiptToSend(deps.db, receiptId))!;
  const log = { receipt_id: receiptId, kind: row.kind, attempt };
  if (row.email_encrypted === null || row.customer_uuid === null) {
    await finishReceipt(deps.db, receiptId, { status: 'skipped', error: 'the payment names no customer e-mail' });
    return;
  }
  const { SMTP_URL, RECEIPT_EMAIL_FROM, PUBLIC_BASE_URL } = deps.config;
  if (!SMTP_URL) {
    await finishReceipt(deps.db, receiptId, { status: 'failed', error: 'no SMTP server configured (SMTP_URL)' });
    deps.logger.warn(log, 'receipt not sent: no SMTP server configured');
    return;
  }
  const event = eventSchema.parse(typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload);
  const to = deps.crypto.pii.decrypt(row.email_encrypted, CUSTOMER_CONTEXT.email, customerBinding(row.brand_id, row.customer_uuid));
  const content: ReceiptContent = {
    kind: row.kind,
    test: !event.livemode,
    brandName: row.brand_name,
    timeZone: row.timezone,
    amount: event.data.amount,
    currency: event.data.currency ?? row.transaction_currency,
    trxId: event.data.trx_id,
    gatewayTrxId: event.data.gateway_trx_id ?? null,
    gateway: row.gateway_name,
    reference: event.data.reference ?? null,
    at: new Date(event.data.completed_at ?? event.data.processed_at ?? row.event_at),
    paymentUrl: row.payment_id ? `${PUBLIC_BASE_URL}/checkout/${row.payment_id}` : null,
  };
  try {
    const { subject, text } = renderReceipt(content);
    await sendMail({ smtpUrl: SMTP_URL, from: { name: row.brand_name, address: RECEIPT_EMAIL_FROM }, to: [to], subject, text });
  } catch (err) {
    // The SMTP reply code only: never the address or the URL.
    const reason = mailFailureReason(err);
    const last = attempt >= RECEIPT_MAX_ATTEMPTS;
    await finishReceipt(deps.db, receiptId, { status: last ? 'failed' : 'pending', error: reason });
    deps.logger.warn({ ...log, error: reason, final: last }, 'receipt not sent');
    if (last) return;
    throw new Error(`receipt not sent: ${reason}`, { cause: err });
  }
  await finishReceipt(deps.db, receiptId, { status: 'sent' });
  deps.logger.info(log, 'receipt sent');
}

export function sendReceiptRegistration(): JobRegistration<ReceiptDeps & Pick<AppDeps, 'boss'>> {
  return {
    queue: {
      name: SEND_RECEIPT_QUEUE,
      policy: 'short',
      retryLimit: RECEIPT_MAX_ATTEMPTS - 1,
      retryDelay: 5,
      retryBackoff: true,
      expireInSeconds: 120,
      deleteAfterSeconds: 7 * 24 * 60 * 60,
      notify: true,
    },
    async start(deps) {
      await deps.boss.work(SEND_RECEIPT_QUEUE, { pollingIntervalSeconds: 2, notifyPollingIntervalSeconds: 2 }, async (jobs: Job<unknown>[]) => {
        for (const job of jobs) await sendReceipt(deps, job.data);
      });
      return { stop: () => deps.boss.offWork(SEND_RECEIPT_QUEUE, { wait: true }) };
    },
  };
}
