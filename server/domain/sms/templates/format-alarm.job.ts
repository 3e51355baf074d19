import type { AppDeps } from '../../../deps.ts';
import type { JobRegistration } from '../../../infra/jobs/workers.ts';
import { scheduledSweep } from '../../../infra/jobs/scheduled.ts';
import { runFormatAlarm } from './format-alarm.ts';

const SMS_FORMAT_ALARM_QUEUE = 'sms-format-alarm-sweep';

async function runFormatAlarmSweep(deps: Pick<AppDeps, 'db' | 'logger' | 'crypto'>): Promise<void> {
  const { raised, cleared } = await runFormatAlarm(deps.db, deps.crypto.pii);
  if (raised || cleared) deps.logger.warn({ raised, cleared }, 'sms format alarm');
}

/** Every five minutes: the window is an hour by default, so a change shows within minutes of its first messages. */
export function smsFormatAlarmRegistration(): JobRegistration<Pick<AppDeps, 'db' | 'logger' | 'crypto' | 'boss'>> {
  return scheduledSweep(SMS_FORMAT_ALARM_QUEUE, { cron: '*/5 * * * *', pollingIntervalSeconds: 60, run: runFormatAlarmSweep });
}
