import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { deviceCommandsHandlers } from './commands.ts';
import { deviceDashboardHandlers } from './dashboard.ts';
import { deviceDevicesHandlers } from './devices.ts';
import { deviceFilterRulesHandlers } from './filter-rules.ts';
import { deviceNotificationsHandlers } from './notifications.ts';
import { deviceSmsMessagesHandlers } from './sms-messages.ts';
import { deviceSmsQueueHandlers } from './sms-queue.ts';
import { createSmsMatcher } from '../../../domain/sms/index.ts';

const s = initServer();

/** Handlers of the device surface; one file per resource, mirroring contract/device/. */
export function deviceHandlers(deps: AppDeps) {
  return s.router(contract.device, {
    devices: deviceDevicesHandlers(deps),
    dashboard: deviceDashboardHandlers,
    filterRules: deviceFilterRulesHandlers,
    notifications: deviceNotificationsHandlers(deps),
    smsQueue: deviceSmsQueueHandlers(deps),
    smsMessages: deviceSmsMessagesHandlers(
      deps,
      createSmsMatcher({
        cipher: deps.crypto.pii,
        onBatchError: (err) => deps.logger.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'SMS batch matching failed; matching its records one by one'),
      }),
    ),
    commands: deviceCommandsHandlers,
  });
}
