import { defineEntity, p } from '@mikro-orm/core';
import { modes, receiptKinds, receiptStatuses } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
import { WebhookEvent } from '../webhooks/entities.ts';

/**
 * A customer's receipt e-mail for one completed payment or refund (its
 * `payment.completed` / `refund.completed` event): at most one per event.
 * Holds no address or text: the send job reads them from the payment when it
 * sends, so nothing personal is kept here.
 */
export const Receipt = defineEntity({
  name: 'Receipt',
  tableName: 'receipts',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).deleteRule('cascade').foreignKeyName('receipts_brand_id_fkey'),
    event: () => p.manyToOne(WebhookEvent).unique('receipts_event_id_key').deleteRule('cascade').foreignKeyName('receipts_event_id_fkey'),
    kind: p.enum(receiptKinds),
    mode: p.enum(modes),
    status: p.enum(receiptStatuses).default('pending'),
    attempts: p.integer().default(0),
    lastError: p.string().length(200).nullable(),
    sentAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'receipts_brand_created_idx', properties: ['brand', 'createdAt'] }],
});
