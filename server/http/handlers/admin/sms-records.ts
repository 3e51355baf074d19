import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { getAdminSmsRecord, listAdminSmsRecords } from '../../../domain/sms/index.ts';
import { dismissSmsRecordAudited } from '../../../domain/sms/index.ts';
import { adminActor, pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export function adminSmsRecordHandlers(deps: AppDeps) {
  return s.router(contract.admin.smsRecords, {
    list: async ({ req, query }) => {
      const { items, total } = await lagTolerant(req, (db) => listAdminSmsRecords(
        db,
        { page: query.page, perPage: query.per_page, brandId: query.brand_id, brandIds: brandScopeOf(req.principal), mode: query.mode, matchStatus: query.match_status, deviceId: query.device_id, needsReview: query.needs_review === undefined ? undefined : query.needs_review === 'true', from: query.from, to: query.to },
        { includeBody: query.include === 'body', cipher: deps.crypto.pii, who: adminActor(req) },
      ));
      return { status: 200, body: { success: true, data: items, meta: pageMeta(query.page, query.per_page, total) } };
    },
    get: async ({ req, params, query }) => {
      const record = await getAdminSmsRecord(req.db, params.sms_record_id, { includeBody: query.include === 'body', cipher: deps.crypto.pii, who: adminActor(req) });
      return { status: 200, body: { success: true, data: record } };
    },
    dismiss: async ({ req, params, body }) => {
      const who = adminActor(req);
      await dismissSmsRecordAudited(req.db, who, params.sms_record_id, body.reason);
      const record = await getAdminSmsRecord(req.db, params.sms_record_id, { includeBody: false, cipher: deps.crypto.pii, who });
      return { status: 200, body: { success: true, data: record } };
    },
  });
}
