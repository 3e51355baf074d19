import { initContract } from '@ts-rest/core';
import { apiSurfaceCodes, withErrorResponses } from '../common/responses.ts';
import { checkoutPaymentsContract } from './payments.ts';
import { sandboxContract } from './sandbox.ts';

const c = initContract();

/** JSON calls of the hosted checkout page (`/api/checkout/v1`); the payment id is the capability. */
export const checkoutContract = withErrorResponses(
  c.router({
    payments: checkoutPaymentsContract,
    sandbox: sandboxContract,
  }),
  apiSurfaceCodes,
);
