import { initServer } from '@ts-rest/express';
import { AppError } from '../../../../contract/common/errors.ts';
import { contract } from '../../../../contract/index.ts';
import { getAdminDelivery, listAdminDeliveries, replayDeadLettersAudited, replayDeliveryAudited, sendTestEventAudited } from '../../../domain/webhooks/admin.ts';
import { adminActor, pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const adminWebhookDeliveryHandlers = s.router(contract.admin.webhookDeliveries, {
  list: async ({ req, query }) => {
    const { items, total } = await lagTolerant(req, (db) => listAdminDeliveries(db, {
      page: query.page,
      perPage: query.per_page,
      brandId: query.brand_id,
      brandIds: brandScopeOf(req.principal),
      mode: query.mode,
      status: query.status,
      event: query.event,
      from: query.from,
      to: query.to,
    }));
    return { status: 200, body: { success: true, data: items, meta: pageMeta(query.page, query.per_page, total) } };
  },
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await getAdminDelivery(req.db, params.delivery_id) } };
  },
  replay: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await replayDeliveryAudited(req.db, adminActor(req), params.delivery_id) } };
  },
  sendTest: async ({ req, body }) => {
    const delivery = await sendTestEventAudited(req.db, adminActor(req), { brandId: body.brand_id, event: body.event, mode: body.mode ?? 'test' });
    return { status: 201, body: { success: true, data: delivery } };
  },
  replayDeadLetters: async ({ req, body }) => {
    // Without a brand this replays every brand's dead letters: not for an operator limited to some brands.
    if (brandScopeOf(req.principal) !== null && body.brand_id === undefined) throw new AppError('FORBIDDEN', 'Name the brand (`brand_id`): your access is limited to some brands');
    const result = await replayDeadLettersAudited(req.db, adminActor(req), { since: new Date(body.since), brandId: body.brand_id });
    return { status: 200, body: { success: true, data: result } };
  },
});
