import { defineEntity, p } from '@mikro-orm/core';
import { modes } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';

/**
 * A brand's shareable payment link (service.ts). A fixed `amount`, or bounds
 * for an amount the customer enters. Mirrors migration 0018.
 */
export const PaymentLink = defineEntity({
  name: 'PaymentLink',
  tableName: 'payment_links',
  properties: {
    // bigserial in the migration (the other tables use identity columns).
    id: p.bigint('number').primary().autoincrement(),
    /** The id in the public URL, and the link's only credential. */
    publicId: p.string().length(40).unique('payment_links_public_id_key'),
    brand: () => p.manyToOne(Brand).foreignKeyName('payment_links_brand_id_fkey').deleteRule('no action').updateRule('no action'),
    mode: p.enum(modes),
    amount: p.decimal().precision(14).scale(2).nullable().check('amount > 0'),
    minAmount: p.decimal().precision(14).scale(2).nullable().check('min_amount > 0'),
    maxAmount: p.decimal().precision(14).scale(2).nullable().check('max_amount > 0'),
    currency: p.string().length(3),
    singleUse: p.boolean().default(false),
    expiresAt: p.datetime().nullable(),
    reference: p.string().length(255).nullable(),
    description: p.string().length(500).nullable(),
    successUrl: p.text().nullable(),
    cancelUrl: p.text().nullable(),
    active: p.boolean().default(true),
    paymentsCreated: p.integer().default(0),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  checks: [
    { name: 'payment_links_check', expression: 'amount IS NULL OR (min_amount IS NULL AND max_amount IS NULL)' },
    { name: 'payment_links_check1', expression: 'min_amount IS NULL OR max_amount IS NULL OR min_amount <= max_amount' },
  ],
  indexes: [{ name: 'payment_links_brand_idx', expression: 'CREATE INDEX payment_links_brand_idx ON payment_links (brand_id, mode, id DESC)' }],
});

