import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { createIntent, groupedIntentConfig } from '../../../domain/payments/intents.ts';
import { getPaymentView } from '../../../domain/payments/view.ts';
import { merchantOf } from '../../context.ts';

const s = initServer();

export function merchantPaymentHandlers(deps: AppDeps) {
  const intentConfig = groupedIntentConfig();
  return s.router(contract.merchant.payments, {
    create: async ({ req, body }) => {
      const created = await createIntent(
        req.em,
        deps.crypto,
        merchantOf(req).brandId,
        merchantOf(req).mode,
        {
          amount: body.amount,
          currency: body.currency,
          reference: body.reference,
          customer: body.customer,
          metadata: body.metadata,
          expiresIn: body.expires_in,
          expiresAt: body.expires_at ? new Date(body.expires_at) : undefined,
          successUrl: body.success_url,
          cancelUrl: body.cancel_url,
        },
        { publicBaseUrl: deps.config.PUBLIC_BASE_URL, config: intentConfig },
      );
      return { status: 201, body: { success: true, data: created } };
    },
    get: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      const payment = await getPaymentView(req.em, deps.crypto, brandId, mode, params.payment_id);
      return { status: 200, body: { success: true, data: payment } };
    },
  });
}
