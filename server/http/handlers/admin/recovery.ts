import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { getAdminSmsRecord } from '../../../domain/sms/index.ts';
import { withAudit } from '../../../domain/audit/service.ts';
import { listBackfillRequests, requestManualBackfill, validateWindow, type BackfillRequestView } from '../../../domain/recovery/backfill.ts';
import { pasteSms } from '../../../domain/recovery/paste.ts';
import { createSmsMatcher } from '../../../domain/sms/index.ts';
import { adminActor } from './actor.ts';
import { brandScopeOf, inScope } from '../../brand-scope.ts';

const s = initServer();

function backfillJson(r: BackfillRequestView) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: r.id,
    brand_id: r.brandId,
    device_id: r.deviceId,
    from: r.from.toISOString(),
    to: r.to.toISOString(),
    reason: r.reason,
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: r.nextAttemptAt.toISOString(),
    requested_by: r.requestedBy,
    senders: r.senders,
    ...(r.sequences ? { sequences: { sim_slot: r.sequences.simSlot, sequence_epoch: r.sequences.epoch, numbers: r.sequences.numbers } } : {}),
    resent_count: r.resentCount,
    delivered_at: iso(r.deliveredAt),
    answered_at: iso(r.answeredAt),
    failed_at: iso(r.failedAt),
    created_at: r.createdAt.toISOString(),
  };
}

export function adminRecoveryHandlers(deps: AppDeps) {
  const match = createSmsMatcher({ cipher: deps.crypto.pii });
  return s.router(contract.admin.recovery, {
    pasteSms: async ({ req, body }) => {
      const who = adminActor(req);
      const operatorName = body.operator_name ?? null;
      const { id } = await pasteSms(req.db, {
        cipher: deps.crypto.pii,
        hashKey: deps.crypto.blindIndexKey,
        match,
        onMatchError: (err) => deps.logger.error({ request_id: req.requestId, err: { message: err instanceof Error ? err.message : String(err) } }, 'SMS matching failed; pasted record left pending'),
      }, who, { deviceId: body.device_id, sender: body.sender, body: body.body, receivedAt: new Date(body.received_at), operatorName });
      const record = await getAdminSmsRecord(req.db, id, { includeBody: false, cipher: deps.crypto.pii, who });
      return { status: 201, body: { success: true, data: { ...record, entry: 'pasted' as const, entered_by: who.actor, operator_name: operatorName } } };
    },
    requestBackfill: async ({ req, params, body }) => {
      const from = new Date(body.from);
      const to = new Date(body.to);
      validateWindow(from, to);
      const who = adminActor(req);
      const created = await withAudit(req.db, who, async (tx) => {
        const r = await requestManualBackfill(tx, { deviceId: Number(params.device_id), from, to, requestedBy: who.actor });
        return { result: r, audit: { action: 'device.backfill_request', targetType: 'device', targetId: r.deviceId, brandId: r.brandId, after: { backfill_request_id: r.id, from: r.from.toISOString(), to: r.to.toISOString() } } };
      });
      return { status: 201, body: { success: true, data: backfillJson(created) } };
    },
    listBackfillRequests: async ({ req, query }) => {
      const items = await listBackfillRequests(req.db, { brandId: query.brand_id, deviceId: query.device_id, status: query.status });
      const scope = brandScopeOf(req.principal);
      return { status: 200, body: { success: true, data: items.filter((r) => inScope(scope, r.brandId)).map(backfillJson) } };
    },
  });
}
