import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { enqueueOutboundSmsAudited } from '../../../domain/devices/admin.ts';
import { adminActor } from './actor.ts';

const s = initServer();

export function adminOutboundSmsHandlers(deps: AppDeps) {
  return s.router(contract.admin.outboundSms, {
    enqueue: async ({ req, params, body }) => {
      const queued = await enqueueOutboundSmsAudited(req.db, deps.crypto.pii, adminActor(req), params.brand_id, {
        phone: body.phone,
        message: body.message,
        deviceId: body.device_id,
        ttlMinutes: body.ttl_minutes,
      });
      return { status: 201, body: { success: true, data: queued } };
    },
  });
}
