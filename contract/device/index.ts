import { initContract } from '@ts-rest/core';
import { apiSurfaceCodes, withErrorResponses } from '../common/responses.ts';
import { commandsContract } from './commands.ts';
import { dashboardContract } from './dashboard.ts';
import { devicesContract } from './devices.ts';
import { filterRulesContract } from './filter-rules.ts';
import { notificationsContract } from './notifications.ts';
import { smsMessagesContract } from './sms-messages.ts';
import { smsQueueContract } from './sms-queue.ts';

const c = initContract();

/**
 * The companion device API (`/api/mobile/v1`), called by the paired phone with
 * its access JWT. Each resource file sets the `/api/mobile/v1` prefix itself.
 */
export const deviceContract = withErrorResponses(
  c.router({
    devices: devicesContract,
    dashboard: dashboardContract,
    filterRules: filterRulesContract,
    notifications: notificationsContract,
    smsQueue: smsQueueContract,
    smsMessages: smsMessagesContract,
    commands: commandsContract,
  }),
  apiSurfaceCodes,
);
