import { initContract } from '@ts-rest/core';
import { apiSurfaceCodes, withErrorResponses } from '../common/responses.ts';
import { brandContract } from './brand.ts';
import { customersContract } from './customers.ts';
import { paymentLinksContract } from './payment-links.ts';
import { invoicesContract } from './invoices.ts';
import { eventsContract } from './events.ts';
import { paymentsContract } from './payments.ts';
import { refundsContract } from './refunds.ts';
import { webhookEndpointsContract } from './webhook-endpoints.ts';
import { webhooksContract } from './webhooks.ts';

const c = initContract();

/** The merchant API (`/api/v1`), called server to server with a brand API key. */
export const merchantContract = withErrorResponses(
  c.router({
    brand: brandContract,
    payments: paymentsContract,
    refunds: refundsContract,
    customers: customersContract,
    webhooks: webhooksContract,
    paymentLinks: paymentLinksContract,
    invoices: invoicesContract,
    webhookEndpoints: webhookEndpointsContract,
    events: eventsContract,
  }),
  apiSurfaceCodes,
);
