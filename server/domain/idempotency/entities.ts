import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';

/** The first response to an `Idempotency-Key`, per brand; see service.ts for the protocol. */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand),
    key: p.string().length(255),
    requestHash: p.string().length(64),
    lockToken: p.uuid().nullable(),
    lockedAt: p.datetime().nullable(),
    responseStatus: p.integer().nullable(),
    responseBody: p.json<unknown>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
});

export type IdempotencyKeyEntity = InstanceType<typeof IdempotencyKey.class>;
