import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { deviceDevicesHandlers } from './devices.ts';
import { deviceFilterRulesHandlers } from './filter-rules.ts';

const s = initServer();

/** Handlers of the device surface; one file per resource, mirroring contract/device/. */
export function deviceHandlers(deps: AppDeps) {
  return s.router(contract.device, {
    devices: deviceDevicesHandlers(deps),
    filterRules: deviceFilterRulesHandlers,
  });
}
