import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { createIntent } from '../../../domain/payments/intents.ts';
import { cancelPayment } from '../../../domain/payments/cancel.ts';
import { listPayments } from '../../../domain/payments/list.ts';
import { getPaymentView } from '../../../domain/payments/view.ts';
import { merchantOf } from '../../context.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export function merchantPaymentHandlers(deps: AppDeps) {
  return s.router(contract.merchant.payments, {
    create: async ({ req, body }) => {
      const created = await createIntent(
        req.db,
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
        { publicBaseUrl: deps.config.PUBLIC_BASE_URL },
      );
      return { status: 201, body: { success: true, data: created } };
    },
    list: async ({ req, query }) => {
      const { brandId, mode } = merchantOf(req);
      const { items, total } = await lagTolerant(req, (db) => listPayments(db, deps.crypto, brandId, mode, {
        page: query.page,
        perPage: query.per_page,
        status: query.status,
        gateway: query.gateway,
        reference: query.reference,
        customerEmail: query.customer_email,
        customerPhone: query.customer_phone,
        from: query.from,
        to: query.to,
      }));
      const meta = { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) };
      return { status: 200, body: { success: true, data: items, meta } };
    },
    cancel: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      const payment = await cancelPayment(req.db, deps.crypto, brandId, mode, params.payment_id);
      return { status: 200, body: { success: true, data: payment } };
    },
    get: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      const payment = await getPaymentView(req.db, deps.crypto, brandId, mode, params.payment_id);
      return { status: 200, body: { success: true, data: payment } };
    },
  });
}
