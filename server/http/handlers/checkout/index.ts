import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { checkoutPaymentHandlers } from './payments.ts';
import { checkoutSandboxHandlers } from './sandbox.ts';
import { createSubmissionMatcher } from '../../../domain/sms/index.ts';

const s = initServer();

/** Handlers of the checkout surface; one file per resource, mirroring contract/checkout/. */
export function checkoutHandlers(deps: AppDeps) {
  return s.router(contract.checkout, {
    payments: checkoutPaymentHandlers(deps, createSubmissionMatcher({ cipher: deps.crypto.pii })),
    sandbox: checkoutSandboxHandlers(deps),
  });
}
