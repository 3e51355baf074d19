import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { sendNotificationAudited } from '../../../domain/devices/admin.ts';
import { adminActor } from './actor.ts';

const s = initServer();

export function adminNotificationHandlers(deps: AppDeps) {
  return s.router(contract.admin.notifications, {
    send: async ({ req, params, body }) => {
      const n = await sendNotificationAudited(req.db, deps.crypto.pii, adminActor(req), params.device_id, body);
      return {
        status: 201,
        body: { success: true, data: { id: n.id, device_id: n.deviceId, title: n.title, body: n.body, created_at: n.createdAt.toISOString() } },
      };
    },
  });
}
