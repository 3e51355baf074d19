import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';

const s = initServer();

/** Handlers of the admin surface; one file per resource, mirroring contract/admin/. */
export function adminHandlers(_deps: AppDeps) {
  return s.router(contract.admin, {});
}
