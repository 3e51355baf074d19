import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { checkoutPaymentHandlers } from './payments.ts';
import { checkoutSandboxHandlers } from './sandbox.ts';

const s = initServer();

/** Handlers of the checkout surface; one file per resource, mirroring contract/checkout/. */
export function checkoutHandlers(deps: AppDeps) {
  return s.router(contract.checkout, {
    // SMS matching (issue 6) passes its MatchSubmittedTransaction as the second argument.
    payments: checkoutPaymentHandlers(deps),
    sandbox: checkoutSandboxHandlers(deps),
  });
}
