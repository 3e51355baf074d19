import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { merchantBrandHandlers } from './brand.ts';

const s = initServer();

/** Handlers of the merchant API; one file per resource, mirroring contract/merchant/. */
export function merchantHandlers(_deps: AppDeps) {
  return s.router(contract.merchant, {
    brand: merchantBrandHandlers,
  });
}
