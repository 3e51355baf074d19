import type { AppDeps } from '../../deps.ts';
import type { MinuteSweep } from '../../infra/jobs/scheduled.ts';
import { expireOutboundSms, reapExpiredLeases } from './service.ts';

export const OUTBOUND_SMS_SWEEP = 'outbound-sms-sweep';

/** Unreported leases back to `pending` first, so items past their TTL among them expire in the same run. */
async function runOutboundSmsSweep(deps: Pick<AppDeps, 'db' | 'logger'>): Promise<void> {
  const reaped = await reapExpiredLeases(deps.db);
  const expired = await expireOutboundSms(deps.db);
  if (reaped || expired) deps.logger.info({ leases_returned: reaped, expired }, 'outbound SMS sweep');
}

/** Runs every minute with the other minute sweeps (infra/jobs/scheduled.ts). */
export const outboundSmsSweep: MinuteSweep<Pick<AppDeps, 'db' | 'logger'>> = { name: OUTBOUND_SMS_SWEEP, run: runOutboundSmsSweep };
