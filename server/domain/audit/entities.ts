import { defineEntity, p } from '@mikro-orm/core';

/**
 * One admin change, written by the audit service inside the change's own
 * transaction. Append-only: a trigger (migration 0005) refuses UPDATE and DELETE.
 */
export const AuditLog = defineEntity({
  name: 'AuditLog',
  tableName: 'audit_log',
  indexes: [
    { name: 'audit_log_brand_idx', columns: [{ name: 'brandId' }, { name: 'createdAt', sort: 'DESC' }], where: 'brand_id IS NOT NULL' },
    { name: 'audit_log_created_idx', columns: [{ name: 'createdAt', sort: 'DESC' }, { name: 'id', sort: 'DESC' }] },
    { name: 'audit_log_target_idx', columns: [{ name: 'targetType' }, { name: 'targetId' }, { name: 'createdAt', sort: 'DESC' }] },
  ],
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    actor: p.string().length(100),
    action: p.string().length(64),
    targetType: p.string().length(32),
    targetId: p.string().length(64).nullable(),
    brandId: p.bigint('number').nullable(),
    before: p.json<Record<string, unknown>>().nullable(),
    after: p.json<Record<string, unknown>>().nullable(),
    requestId: p.string().length(128).nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
  },
});

