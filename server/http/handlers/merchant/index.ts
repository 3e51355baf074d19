import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { merchantBrandHandlers } from './brand.ts';
import { merchantCustomerHandlers } from './customers.ts';
import { merchantEventHandlers } from './events.ts';
import { merchantPaymentHandlers } from './payments.ts';
import { merchantInvoiceHandlers } from './invoices.ts';
import { merchantPaymentLinkHandlers } from './payment-links.ts';
import { merchantRefundHandlers } from './refunds.ts';
import { merchantWebhookEndpointHandlers } from './webhook-endpoints.ts';
import { merchantWebhookHandlers } from './webhooks.ts';

const s = initServer();

/** Handlers of the merchant API; one file per resource, mirroring contract/merchant/. */
export function merchantHandlers(deps: AppDeps) {
  return s.router(contract.merchant, {
    brand: merchantBrandHandlers,
    payments: merchantPaymentHandlers(deps),
    refunds: merchantRefundHandlers,
    customers: merchantCustomerHandlers(deps),
    webhooks: merchantWebhookHandlers(deps),
    paymentLinks: merchantPaymentLinkHandlers(deps),
    invoices: merchantInvoiceHandlers(deps),
    webhookEndpoints: merchantWebhookEndpointHandlers(deps),
    events: merchantEventHandlers,
  });
}
