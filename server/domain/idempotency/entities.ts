import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { modes } from '../../../contract/vocabulary.ts';

/**
 * The first response to an `Idempotency-Key`, per brand and mode (a test
 * request never takes, blocks or replays a live key); see service.ts for the
 * protocol. Insert-first: the unique (brand, mode, key) decides which of two
 * concurrent requests runs.
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).foreignKeyName('idempotency_keys_brand_id_fkey').deleteRule('cascade').updateRule('no action'),
    /** The mode of the key that sent it. */
    mode: p.enum(modes).default('live'),
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
  uniques: [{ name: 'idempotency_keys_brand_mode_key_uniq', properties: ['brand', 'mode', 'key'] }],
  // The purge job deletes by age.
  indexes: [{ name: 'idempotency_keys_created_idx', properties: ['createdAt'] }],
});

