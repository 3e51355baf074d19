import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';

/**
 * The first response to an `Idempotency-Key`, per brand; see service.ts for the
 * protocol. Insert-first: the unique (brand, key) decides which of two
 * concurrent requests runs. Mirrors migration 0003.
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).foreignKeyName('idempotency_keys_brand_id_fkey').deleteRule('cascade').updateRule('no action'),
    key: p.string().length(255),
    requestHash: p.string().columnType('char(64)'),
    lockToken: p.uuid().nullable(),
    lockedAt: p.datetime().nullable(),
    responseStatus: p.integer().nullable(),
    responseBody: p.json<unknown>().nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
  checks: [{ name: 'idempotency_keys_check', expression: '(completed_at IS NULL) = (response_status IS NULL)' }],
  uniques: [{ name: 'idempotency_keys_brand_key_uniq', properties: ['brand', 'key'] }],
  // The purge job deletes by age.
  indexes: [{ name: 'idempotency_keys_created_idx', properties: ['createdAt'] }],
});

export type IdempotencyKeyEntity = InstanceType<typeof IdempotencyKey.class>;
