import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { deleteExchangeRateAudited, setExchangeRateAudited } from '../../../domain/gateways/admin.ts';
import { listExchangeRates, type ExchangeRateView } from '../../../domain/fx/service.ts';
import { adminActor } from './actor.ts';

const s = initServer();

const rateBody = (r: ExchangeRateView) => ({ base: r.base, quote: r.quote, rate: r.rate, updated_at: r.updatedAt.toISOString() });

export const adminExchangeRateHandlers = s.router(contract.admin.exchangeRates, {
  set: async ({ req, params, body }) => {
    const rate = await setExchangeRateAudited(req.db, adminActor(req), { base: params.base, quote: params.quote, rate: body.rate });
    return { status: 200, body: { success: true, data: rateBody(rate) } };
  },
  list: async ({ req }) => {
    return { status: 200, body: { success: true, data: (await listExchangeRates(req.db)).map(rateBody) } };
  },
  delete: async ({ req, params }) => {
    const rate = await deleteExchangeRateAudited(req.db, adminActor(req), params.base, params.quote);
    return { status: 200, body: { success: true, data: rateBody(rate) } };
  },
});
