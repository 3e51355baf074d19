import { defineEntity, p } from '@mikro-orm/core';
import { modes, brandStatuses, apiKeyDialects } from '../../../contract/vocabulary.ts';

export const Brand = defineEntity({
  name: 'Brand',
  tableName: 'brands',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    uuid: p.uuid().unique('brands_uuid_key'),
    name: p.string().length(200),
    /** IANA time zone used for "today" on the device dashboard. */
    timezone: p.string().length(64).default('UTC'),
    status: p.enum(brandStatuses).default('active'),
    /** Customers get a receipt e-mail for payments and refunds completed since `receiptsEnabledAt` (receipts/). */
    receiptsEnabled: p.boolean().default(false),
    receiptsEnabledAt: p.datetime().nullable(),
    /** The checkout's primary colour, `#rrggbb` (lower case); null: the service's own blue. */
    primaryColor: p.string().length(7).nullable(),
    /** Shown to paying customers on the checkout pages; both optional. */
    supportPhone: p.string().length(32).nullable(),
    supportEmail: p.string().length(254).nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  indexes: [{ name: 'api_keys_brand_id_idx', properties: ['brand'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).foreignKeyName('api_keys_brand_id_fkey').deleteRule('cascade'),
    name: p.string().length(200),
    /** First characters of the key, shown in lists so a person can tell keys apart. */
    prefix: p.string().length(32),
    /** SHA-256 of the whole key; the key itself is never stored. */
    keyHash: p.string().length(64).unique('api_keys_key_hash_key'),
    /** Which objects the key sees and creates (see contract/vocabulary.ts); never changes (a trigger says so). */
    mode: p.enum(modes).default('live'),
    /** Which API shapes the key speaks (contract/vocabulary.ts); its spelling says the same (`op_…` for ownpay). */
    dialect: p.enum(apiKeyDialects).default('native'),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    /** What the key may do (contract/vocabulary.ts apiKeyScopes); null: everything (keys made before scopes existed, and keys made without). */
    scopes: p.array().nullable(),
    /** After it the key is refused like a revoked one; null: never. */
    expiresAt: p.datetime().nullable(),
  },
});


/**
 * A brand's checkout logo, one per brand, kept apart from `brands` so reading a
 * brand never drags the image along. The bytes live in PostgreSQL: the service
 * has no shared file store (server/infra/private-file.ts writes secrets to one
 * host's disk), a logo is small (256 KB at most) and must reach every instance
 * and every backup together with the brand it belongs to.
 */
export const BrandLogo = defineEntity({
  name: 'BrandLogo',
  tableName: 'brand_logos',
  properties: {
    brand: () => p.oneToOne(Brand).primary().owner().foreignKeyName('brand_logos_brand_id_fkey').deleteRule('cascade'),
    /** `image/png`, `image/jpeg` or `image/webp`, from the file's own first bytes. */
    contentType: p.string().length(32),
    content: p.blob(),
    /** SHA-256 of the content, hex: part of the logo's URL, so a new logo is a new URL and the old one may be cached for good. */
    sha256: p.string().length(64),
    width: p.integer(),
    height: p.integer(),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
