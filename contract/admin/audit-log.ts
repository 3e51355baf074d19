import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, brandFilter } from './shared.ts';

const c = initContract();

const auditValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.union([z.string(), z.number(), z.boolean(), z.null()]))]);

export const auditEntrySchema = z
  .object({
    id: z.number().int(),
    actor: z.string().describe('`admin`, or `admin:<label>` from the `X-Admin-Actor` header.'),
    action: z.string().describe('`<target type>.<verb>`, e.g. `transaction.verify`, `refund.complete`, `api_key.revoke`.'),
    target_type: z.string(),
    target_id: z.string().nullable(),
    brand_id: z.number().int().nullable(),
    before: z.record(z.string(), auditValue).nullable().describe('State before the change: ids, statuses and amounts only.'),
    after: z.record(z.string(), auditValue).nullable().describe('State after the change: ids, statuses and amounts only.'),
    request_id: z.string().nullable().describe('The admin request that made the change.'),
    created_at: timestampSchema,
  })
  .meta({ id: 'AdminAuditEntry' });

export const adminAuditLogContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/audit-log',
      summary: 'Audit log',
      description:
        'Every admin change to money, verification state, credentials and configuration, newest first. Each entry was written in the same database transaction as its change, so the log has an entry exactly for the changes that happened.',
      query: z.strictObject({
        ...pageQuerySchema.shape,
        brand_id: brandFilter,
        action: z.string().min(1).max(64).optional().describe('Only this action, e.g. `transaction.verify`.'),
        target_type: z.string().min(1).max(32).optional().describe('Only this target type, e.g. `refund`.'),
        target_id: z.string().min(1).max(64).optional().describe('Only this target (with `target_type`).'),
      }),
      responses: { 200: okList(auditEntrySchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Audit log'),
    },
  },
  adminRouterOptions,
);
