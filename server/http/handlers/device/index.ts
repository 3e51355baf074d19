import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';

const s = initServer();

/** Handlers of the device surface; one file per resource, mirroring contract/device/. */
export function deviceHandlers(_deps: AppDeps) {
  return s.router(contract.device, {});
}
