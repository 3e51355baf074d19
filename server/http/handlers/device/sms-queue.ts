import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { toTimestamp } from '../../../../contract/common/ids.ts';
import type { AppDeps } from '../../../deps.ts';
import { leaseOutboundSms, reportOutboundSms } from '../../../domain/outbound-sms/service.ts';
import { deviceOf } from '../../context.ts';

const s = initServer();

export function deviceSmsQueueHandlers(deps: AppDeps) {
  return s.router(contract.device.smsQueue, {
    lease: async ({ req }) => {
      const items = await leaseOutboundSms(req.db, deps.crypto.pii, deviceOf(req));
      return {
        status: 200,
        body: {
          success: true,
          data: items.map((i) => ({
            id: i.id,
            phone: i.phone,
            message: i.message,
            status: 'pending' as const,
            created_at: i.createdAt.toISOString(),
            lease_expires_at: i.leaseExpiresAt.toISOString(),
            expires_at: i.expiresAt.toISOString(),
          })),
        },
      };
    },
    report: async ({ req, params, body }) => {
      const state = await reportOutboundSms(req.db, deviceOf(req), { id: params.id, status: body.status, reason: body.status === 'failed' ? body.reason : null });
      return {
        status: 200,
        body: {
          success: true,
          data: {
            id: state.id,
            status: state.status,
            sent_at: toTimestamp(state.sentAt),
            delivered_at: toTimestamp(state.deliveredAt),
            failed_at: toTimestamp(state.failedAt),
            failure_reason: state.failureReason,
            updated_at: state.updatedAt.toISOString(),
          },
        },
      };
    },
  });
}
