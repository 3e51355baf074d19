import type { Queue } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { expireOutboundSms, reapExpiredLeases } from './service.ts';

export const SWEEP_OUTBOUND_SMS_QUEUE = 'outbound-sms-sweep';

export const sweepOutboundSmsQueue: Queue = {
  name: SWEEP_OUTBOUND_SMS_QUEUE,
  policy: 'exclusive',
  retryLimit: 0,
  expireInSeconds: 300,
  deleteAfterSeconds: 24 * 60 * 60,
  // Woken at once by NOTIFY when a run is sent by hand (CLI, tests), not only by the next poll.
  notify: true,
};

/** Unreported leases back to `pending` first, so items past their TTL among them expire in the same run. */
export async function runOutboundSmsSweep(deps: Pick<AppDeps, 'orm' | 'logger'>): Promise<void> {
  const reaped = await reapExpiredLeases(deps.orm.em.fork());
  const expired = await expireOutboundSms(deps.orm.em.fork());
  if (reaped || expired) deps.logger.info({ leases_returned: reaped, expired }, 'outbound SMS sweep');
}

async function start(deps: AppDeps): Promise<{ stop(): Promise<void> }> {
  await deps.boss.work(SWEEP_OUTBOUND_SMS_QUEUE, { pollingIntervalSeconds: 15 }, async () => {
    await runOutboundSmsSweep(deps);
  });
  await deps.boss.schedule(SWEEP_OUTBOUND_SMS_QUEUE, '* * * * *');
  return { stop: () => deps.boss.offWork(SWEEP_OUTBOUND_SMS_QUEUE, { wait: true }) };
}

export function sweepOutboundSmsRegistration(): JobRegistration {
  return { queue: sweepOutboundSmsQueue, start };
}
