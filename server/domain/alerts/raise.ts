import { enqueueInTransaction } from '../../infra/jobs/workers.ts';
import type { Db } from '../db.ts';
import { insertAlertUnlessDuplicate, selectDisabledTypes } from './queries.ts';

import type { AlertType } from './entities.ts';

export { ALERT_TYPES, type AlertType } from './entities.ts';

export const DELIVER_ALERT_QUEUE = 'alert-deliver';

/**
 * What an alert says. `details` must hold ids, counts, names and timestamps
 * only: it goes into operators' mail boxes and chats, so never SMS text,
 * customer data or secrets.
 */
export interface AlertInput {
  brandId: number;
  type: AlertType;
  /** One episode: the same key for the same brand and type raises nothing new (e.g. `device:12:since:<iso>`). */
  dedupeKey: string;
  subject: string;
  details: Record<string, string | number | boolean | null>;
}

export type RaiseResult = { raised: true; alertId: number } | { raised: false; reason: 'duplicate' | 'switched_off' };

/**
 * Records an alert and enqueues its delivery inside the caller's transaction
 * (outbox): the alert exists exactly when the change that caused it commits.
 * A type the brand switched off is not recorded at all; a repeat of an episode
 * (same brand, type and dedupe key) is dropped by the unique key, so a flapping
 * source cannot storm the operators.
 */
export async function raiseAlert(tx: Db, input: AlertInput): Promise<RaiseResult> {
  if (!tx.isTransaction) throw new Error('raiseAlert must run inside a transaction');
  if ((await selectDisabledTypes(tx, input.brandId)).includes(input.type)) return { raised: false, reason: 'switched_off' };
  const alertId = await insertAlertUnlessDuplicate(tx, {
    brandId: input.brandId,
    type: input.type,
    dedupeKey: input.dedupeKey.slice(0, 200),
    subject: input.subject.slice(0, 200),
    details: input.details,
  });
  if (alertId === undefined) return { raised: false, reason: 'duplicate' };
  await enqueueInTransaction(tx, DELIVER_ALERT_QUEUE, { alertId }, { singletonKey: `alert:${alertId}` });
  return { raised: true, alertId };
}
