import type { Queue } from 'pg-boss';
import { enqueueInTransaction, enqueueManyInTransaction } from '../../infra/jobs/workers.ts';
import type { Db } from '../db.ts';

export const DELIVER_QUEUE = 'webhook-deliver';

/**
 * A job only wakes a worker for a delivery; the delivery row says what to do. So:
 * - policy `short` with the delivery id as singleton key: at most one queued
 *   wake-up per delivery, however many places ask for one (outbox, retry, replay,
 *   the sweep), while a new one may still start when an old one is stuck active
 *   in a process that died;
 * - pg-boss's own retries only cover the handler throwing (database trouble);
 *   HTTP failures are recorded and rescheduled by the handler itself.
 */
export const deliverQueue: Queue = {
  name: DELIVER_QUEUE,
  policy: 'short',
  retryLimit: 5,
  retryDelay: 5,
  retryBackoff: true,
  expireInSeconds: 300,
  deleteAfterSeconds: 24 * 60 * 60,
  notify: true,
};

/** Enqueues a wake-up for one delivery in the caller's transaction. */
export async function enqueueDelivery(em: Db, deliveryId: number, startAfter?: Date): Promise<void> {
  const { data, singletonKey } = deliveryJob(deliveryId);
  await enqueueInTransaction(em, DELIVER_QUEUE, data, { singletonKey, ...(startAfter ? { startAfter } : {}) });
}

/** enqueueDelivery for several deliveries, in the order given, in one statement (workers.ts `enqueueManyInTransaction`). */
export async function enqueueDeliveries(em: Db, deliveryIds: readonly number[]): Promise<void> {
  await enqueueManyInTransaction(em, DELIVER_QUEUE, deliveryIds.map(deliveryJob));
}

/** A delivery's wake-up: its id, and the singleton key that keeps one queued per delivery (see deliverQueue). */
function deliveryJob(deliveryId: number) {
  return { data: { deliveryId }, singletonKey: `delivery:${deliveryId}` };
}
