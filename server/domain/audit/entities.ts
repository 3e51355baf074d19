import { defineEntity, p } from '@mikro-orm/core';

/**
 * One admin change (append-only; see migration 0005). Written with raw SQL by
 * the audit service inside the change's own transaction; mapped here so the
 * ORM knows the table.
 */
export const AuditLog = defineEntity({
  name: 'AuditLog',
  tableName: 'audit_log',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    actor: p.string().length(100),
    action: p.string().length(64),
    targetType: p.string().length(32),
    targetId: p.string().length(64).nullable(),
    brandId: p.bigint('number').nullable(),
    before: p.json<Record<string, unknown>>().nullable(),
    after: p.json<Record<string, unknown>>().nullable(),
    requestId: p.string().length(128).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type AuditLogEntity = InstanceType<typeof AuditLog.class>;
