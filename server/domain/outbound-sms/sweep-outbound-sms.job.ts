import type { AppDeps } from '../../deps.ts';
import type { JobRegistration } from '../../infra/jobs/workers.ts';
import { scheduledSweep } from '../../infra/jobs/scheduled.ts';
import { expireOutboundSms, reapExpiredLeases } from './service.ts';

export const SWEEP_OUTBOUND_SMS_QUEUE = 'outbound-sms-sweep';

/** Unreported leases back to `pending` first, so items past their TTL among them expire in the same run. */
async function runOutboundSmsSweep(deps: Pick<AppDeps, 'orm' | 'logger'>): Promise<void> {
  const reaped = await reapExpiredLeases(deps.orm.em.fork());
  const expired = await expireOutboundSms(deps.orm.em.fork());
  if (reaped || expired) deps.logger.info({ leases_returned: reaped, expired }, 'outbound SMS sweep');
}

export function sweepOutboundSmsRegistration(): JobRegistration {
  return scheduledSweep(SWEEP_OUTBOUND_SMS_QUEUE, { cron: '* * * * *', run: runOutboundSmsSweep });
}
