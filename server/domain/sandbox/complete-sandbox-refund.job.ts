import { z } from 'zod';
import type { Job, Queue } from 'pg-boss';
import { AppError } from '../../../contract/common/errors.ts';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { completeRefund } from '../refunds/service.ts';
import { COMPLETE_SANDBOX_REFUND_QUEUE } from './refunds.ts';

const payloadSchema = z.object({ refundId: z.number().int().positive() });
type Payload = z.infer<typeof payloadSchema>;

const completeSandboxRefundQueue: Queue = {
  name: COMPLETE_SANDBOX_REFUND_QUEUE,
  retryLimit: 5,
  retryDelay: 5,
  retryBackoff: true,
  expireInSeconds: 60,
  deleteAfterSeconds: 7 * 24 * 60 * 60,
  notify: true,
};

/** The sandbox always pays refunds back. One an admin already settled is left as it is. */
/** What the refund worker touches: the refunds, the job queue and the log. */
export type CompleteSandboxRefundDeps = Pick<AppDeps, 'db' | 'boss' | 'logger'>;

async function completeSandboxRefund(deps: Omit<CompleteSandboxRefundDeps, 'boss'>, payload: Payload): Promise<void> {
  const { refundId } = payloadSchema.parse(payload);
  try {
    const { changed } = await completeRefund(deps.db, refundId);
    deps.logger.info({ refund_id: refundId, changed }, 'sandbox refund completed');
  } catch (err) {
    if (err instanceof AppError && (err.code === 'INVALID_STATE' || err.code === 'REFUND_NOT_FOUND')) {
      deps.logger.warn({ refund_id: refundId, code: err.code }, 'sandbox refund not completed: already settled');
      return;
    }
    throw err;
  }
}

async function start(deps: CompleteSandboxRefundDeps): Promise<{ stop(): Promise<void> }> {
  await deps.boss.work<Payload>(COMPLETE_SANDBOX_REFUND_QUEUE, { pollingIntervalSeconds: 5 }, async (jobs: Job<Payload>[]) => {
    for (const job of jobs) await completeSandboxRefund(deps, job.data);
  });
  return { stop: () => deps.boss.offWork(COMPLETE_SANDBOX_REFUND_QUEUE, { wait: true }) };
}

export function completeSandboxRefundRegistration(): JobRegistration<CompleteSandboxRefundDeps> {
  return { queue: completeSandboxRefundQueue, start };
}
