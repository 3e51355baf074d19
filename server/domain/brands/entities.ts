import { defineEntity, p } from '@mikro-orm/core';
import { modes } from '../../../contract/common/mode.ts';
import { brandStatuses } from '../../../contract/admin/brands.ts';

export const Brand = defineEntity({
  name: 'Brand',
  tableName: 'brands',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique(),
    name: p.string().length(200),
    /** IANA time zone used for "today" on the device dashboard. */
    timezone: p.string().length(64).default('UTC'),
    status: p.enum(brandStatuses).default('active'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand),
    name: p.string().length(200),
    /** First characters of the key, shown in lists so a person can tell keys apart. */
    prefix: p.string().length(32),
    /** SHA-256 of the whole key; the key itself is never stored. */
    keyHash: p.string().length(64).unique(),
    /** Which objects the key sees and creates (see contract/common/mode.ts). */
    mode: p.enum(modes),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});

export type BrandEntity = InstanceType<typeof Brand.class>;
export type ApiKeyEntity = InstanceType<typeof ApiKey.class>;
