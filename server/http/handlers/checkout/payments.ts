import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import type { MatchSubmittedTransaction } from '../../../domain/checkout/manual-submission-seam.ts';
import { startCheckoutTransaction } from '../../../domain/checkout/pay.ts';
import { replaceCheckoutSubmission } from '../../../domain/checkout/replace.ts';
import { cancelCheckout, loadCheckout, type CheckoutLinks } from '../../../domain/checkout/view.ts';

const s = initServer();

function checkoutLinks(deps: AppDeps): CheckoutLinks {
  return { publicBaseUrl: deps.config.PUBLIC_BASE_URL, sandboxSecret: deps.secrets.sandboxCallbackSecret };
}

/** `matchSubmittedTransaction`: the SMS matching implementation, once it exists (see manual-submission-seam.ts). */
export function checkoutPaymentHandlers(deps: AppDeps, matchSubmittedTransaction?: MatchSubmittedTransaction) {
  const links = checkoutLinks(deps);
  return s.router(contract.checkout.payments, {
    get: async ({ req, params }) => {
      const { view } = await loadCheckout(req.em, params.payment_id, links);
      return { status: 200, body: { success: true, data: view } };
    },
    startTransaction: async ({ req, params, body }) => {
      const transaction = await startCheckoutTransaction(
        req.em,
        { keys: deps.crypto, links, logger: deps.logger, matchSubmittedTransaction },
        params.payment_id,
        { gateway: body.gateway, method: body.method, gatewayTrxId: body.gateway_trx_id, senderNumber: body.sender_number },
      );
      return { status: 201, body: { success: true, data: transaction } };
    },
    replaceSubmission: async ({ req, params, body }) => {
      const transaction = await replaceCheckoutSubmission(
        req.em,
        { keys: deps.crypto, links, logger: deps.logger, matchSubmittedTransaction },
        params.payment_id,
        { gatewayTrxId: body.gateway_trx_id, senderNumber: body.sender_number, requestId: req.requestId },
      );
      return { status: 200, body: { success: true, data: transaction } };
    },
    cancel: async ({ req, params }) => {
      const { cancelUrl } = await cancelCheckout(req.em, params.payment_id, links);
      return { status: 200, body: { success: true, data: { cancel_url: cancelUrl } } };
    },
  });
}
