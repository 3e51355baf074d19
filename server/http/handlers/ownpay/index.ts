import type { RequestHandler } from 'express';
import { initServer } from '@ts-rest/express';
import { AppError } from '../../../../contract/common/errors.ts';
import { ownpayContract, toOwnpayStatus } from '../../../../contract/ownpay/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { OWNPAY_KEY_RE } from '../../../infra/crypto/tokens.ts';
import { brandHealth } from '../../../domain/brands/health.ts';
import { createCustomer } from '../../../domain/customers/service.ts';
import { createIntent } from '../../../domain/payments/intents.ts';
import { listAdminTransactions, type AdminTransaction } from '../../../domain/payments/admin.ts';
import { getTransaction } from '../../../domain/payments/transactions.ts';
import { getPaymentView } from '../../../domain/payments/view.ts';
import { withQueryParam } from '../../../domain/payments/redirect.ts';
import { subMoney } from '../../../domain/money/decimal.ts';
import { createRefund } from '../../../domain/refunds/service.ts';
import { bearerToken } from '../../auth.ts';
import { merchantOf } from '../../context.ts';

const s = initServer();

/**
 * First of the dialect routes' middleware: a request whose bearer key is not
 * spelled `op_…` goes on to the native route of the same method and path (or
 * the 404), before anything authenticates or counts it. Keys are spelled by
 * their dialect when made (infra/crypto/tokens.ts), so this is the key's dialect.
 */
export const ownpayDialectGate: RequestHandler = (req, _res, next) => (OWNPAY_KEY_RE.test(bearerToken(req) ?? '') ? next() : next('route'));

function toOwnpayTransaction(t: AdminTransaction) {
  return {
    id: t.id,
    trx_id: t.trx_id,
    payment_id: t.payment_id,
    gateway_trx_id: t.gateway_trx_id,
    amount: t.amount,
    currency: t.currency,
    fee: t.fee,
    net_amount: subMoney(t.amount, t.fee),
    status: t.status,
    gateway: t.gateway,
    method: t.method,
    reference: t.reference,
    created_at: t.created_at,
    updated_at: t.completed_at,
  };
}

/** The OwnPay dialect's handlers: each translates OwnPay's shapes to the same service calls the native routes make. */
export function ownpayHandlers(deps: AppDeps) {
  return s.router(ownpayContract, {
    health: async ({ req }) => {
      const { brandId, mode } = merchantOf(req);
      const h = await brandHealth(req.db, brandId, mode);
      const data = {
        status: 'healthy' as const,
        // The API's version (the OpenAPI documents' `info.version`).
        version: '1.0.0',
        db: 'connected' as const,
        mobile: { connected: h.recentDevices > 0, active_devices: h.activeDevices },
        gateways: h.gateways,
        customers: h.customers,
        time: new Date().toISOString(),
      };
      return { status: 200, body: { success: true, data } };
    },
    createPayment: async ({ req, body }) => {
      const { brandId, mode } = merchantOf(req);
      const email = body.customer_email || body.customer_mail || undefined;
      const phone = body.customer_phone || undefined;
      const created = await createIntent(
        req.db,
        deps.crypto,
        brandId,
        mode,
        {
          amount: body.amount,
          currency: body.currency,
          reference: body.reference,
          // A customer is found again by email or phone; a name alone makes none.
          customer: email || phone ? { name: body.customer_name || undefined, email, phone } : undefined,
          metadata: body.metadata,
          // OwnPay's plugins read `payment_id` and `status` on the way back; the payment id is added by the checkout (redirect.ts).
          successUrl: body.redirect_url ? withQueryParam(body.redirect_url, 'status', 'completed') : undefined,
          cancelUrl: body.cancel_url ? withQueryParam(body.cancel_url, 'status', 'cancelled') : undefined,
          callbackUrl: body.callback_url,
        },
        { publicBaseUrl: deps.config.PUBLIC_BASE_URL },
      );
      const data = {
        payment_id: created.payment_id,
        token: created.payment_id,
        checkout_url: created.checkout_url,
        status: created.status,
        amount: created.amount,
        currency: created.currency,
        reference: created.reference,
        expires_at: created.expires_at,
        livemode: created.livemode,
      };
      return { status: 201, body: { success: true, data } };
    },
    getPayment: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      const p = await getPaymentView(req.db, deps.crypto, brandId, mode, params.payment_id);
      const data = {
        id: p.transaction_id,
        payment_id: p.payment_id,
        trx_id: p.trx_id,
        gateway_trx_id: p.gateway_trx_id,
        amount: p.requested_amount,
        currency: p.requested_currency,
        charged_amount: p.amount,
        charged_currency: p.currency,
        fee: p.fee ?? '0.00',
        status: toOwnpayStatus(p.status) as Exclude<typeof p.status, 'canceled'> | 'cancelled',
        gateway: p.gateway,
        method: p.method,
        reference: p.reference,
        metadata: p.metadata,
        created_at: p.created_at,
        completed_at: p.completed_at,
        customer: p.customer,
        livemode: p.livemode,
      };
      return { status: 200, body: { success: true, data } };
    },
    listTransactions: async ({ req, query }) => {
      const { brandId, mode } = merchantOf(req);
      const { items, total } = await listAdminTransactions(req.db, deps.crypto, {
        page: query.page,
        perPage: query.per_page,
        brandId,
        mode,
        status: query.status,
        gateway: query.gateway,
        from: query.from,
        to: query.to,
      });
      const meta = { page: query.page, per_page: query.per_page, total, total_pages: Math.ceil(total / query.per_page) };
      return { status: 200, body: { success: true, data: items.map(toOwnpayTransaction), meta } };
    },
    getTransaction: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      const { items } = await listAdminTransactions(req.db, deps.crypto, { page: 1, perPage: 1, brandId, mode, trxId: params.trx_id });
      if (!items[0]) throw new AppError('TRANSACTION_NOT_FOUND');
      return { status: 200, body: { success: true, data: toOwnpayTransaction(items[0]) } };
    },
    createCustomer: async ({ req, body }) => {
      const { brandId, mode } = merchantOf(req);
      const created = await createCustomer(req.db, deps.crypto, brandId, mode, { name: body.name, email: body.email || undefined, phone: body.phone || undefined }).catch(
        (err: unknown) => {
          // OwnPay answers a taken email or phone with its one CONFLICT code.
          if (err instanceof AppError && (err.code === 'CUSTOMER_EMAIL_TAKEN' || err.code === 'CUSTOMER_PHONE_TAKEN')) {
            throw new AppError('CONFLICT', `A customer with this ${err.field} already exists`, { field: err.field });
          }
          throw err;
        },
      );
      return { status: 201, body: { success: true, data: { id: created.id, uuid: created.uuid } } };
    },
    createRefund: async ({ req, body }) => {
      const { brandId, mode } = merchantOf(req);
      const named = body.trx_id ?? body.transaction_id!;
      const trxId = typeof named === 'number' ? await trxIdOf(req.db, brandId, mode, named) : named;
      const refund = await createRefund(req.db, brandId, mode, { trxId, amount: body.amount, reason: body.reason });
      return { status: 201, body: { success: true, data: { ...refund, livemode: mode === 'live' } } };
    },
  });
}

/** The reference of the brand's transaction with this numeric id in this mode; an unknown one answers as the native refund does. */
async function trxIdOf(db: Parameters<typeof getTransaction>[0], brandId: number, mode: string, id: number): Promise<string> {
  const t = await getTransaction(db, id).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'TRANSACTION_NOT_FOUND') return null;
    throw err;
  });
  if (!t || t.brandId !== brandId || t.mode !== mode) throw new AppError('PAYMENT_NOT_FOUND');
  return t.trxId;
}
