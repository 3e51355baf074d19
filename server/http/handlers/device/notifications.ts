import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { acknowledgeNotifications, listUnreadNotifications } from '../../../domain/notifications/service.ts';
import { deviceOf } from '../../context.ts';

const s = initServer();

export const deviceNotificationsHandlers = (deps: AppDeps) => (s.router(contract.device.notifications, {
  listUnread: async ({ req }) => {
    const items = await listUnreadNotifications(req.db, deps.crypto.pii, deviceOf(req).deviceId);
    return {
      status: 200,
      body: { success: true, data: items.map((n) => ({ id: n.id, title: n.title, body: n.body, created_at: n.createdAt.toISOString() })) },
    };
  },
  acknowledge: async ({ req, body }) => {
    const acknowledged = await acknowledgeNotifications(req.db, deviceOf(req).deviceId, body.ids);
    return { status: 200, body: { success: true, data: { acknowledged } } };
  },
}));
