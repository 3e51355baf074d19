import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';

const s = initServer();

/** Handlers of the checkout surface; one file per resource, mirroring contract/checkout/. */
export function checkoutHandlers(_deps: AppDeps) {
  return s.router(contract.checkout, {});
}
