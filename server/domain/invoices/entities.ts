import { defineEntity, p } from '@mikro-orm/core';
import { invoiceStatuses, modes } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
import { Customer } from '../customers/entities.ts';

/** One invoice line as stored: what the merchant sent and its amount, computed once at write time (totals.ts). */
export interface StoredInvoiceLine {
  description: string;
  quantity: string;
  unit_price: string;
  amount: string;
}

/** An optional discount or tax line as stored, with its computed amount. */
export interface StoredAdjustment {
  description: string;
  /** Tax: a percentage of (subtotal - discount); discount: null (fixed amount). */
  rate: string | null;
  amount: string;
}

/**
 * A brand's invoice to one of its customers, per mode (server/domain/invoices).
 * Lines and adjustments are a snapshot (jsonb) whose totals are computed by
 * totals.ts when written and stored as numeric columns; `amountPaid` grows as
 * the payments made from its hosted page complete (settle.ts).
 */
export const Invoice = defineEntity({
  name: 'Invoice',
  tableName: 'invoices',
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    uuid: p.uuid().unique('invoices_uuid_key'),
    /** The hosted page's credential (`/invoices/<token>`): 128 random bits. */
    token: p.string().length(40).unique('invoices_token_key'),
    brand: () => p.manyToOne(Brand).foreignKeyName('invoices_brand_id_fkey').deleteRule('no action').updateRule('no action'),
    mode: p.enum(modes),
    /** Per brand and mode, gap-free from 1 (invoice_counters); shown as INV-0001. */
    number: p.integer(),
    customer: () => p.manyToOne(Customer).foreignKeyName('invoices_customer_id_fkey').deleteRule('no action').updateRule('no action'),
    status: p.enum(invoiceStatuses).default('draft'),
    currency: p.string().length(3).check("currency ~ '^[A-Z]{3}$'"),
    lines: p.json<StoredInvoiceLine[]>(),
    discount: p.json<StoredAdjustment>().nullable(),
    tax: p.json<StoredAdjustment>().nullable(),
    subtotal: p.decimal().precision(14).scale(2),
    total: p.decimal().precision(14).scale(2).check('total > 0'),
    amountPaid: p.decimal().precision(14).scale(2).default('0.00'),
    dueDate: p.date(),
    memo: p.string().length(1000).nullable(),
    finalizedAt: p.datetime().nullable(),
    paidAt: p.datetime().nullable(),
    voidedAt: p.datetime().nullable(),
    overdueAt: p.datetime().nullable(),
    lastSentAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  uniques: [{ name: 'invoices_brand_mode_number_key', properties: ['brand', 'mode', 'number'] }],
  indexes: [
    { name: 'invoices_brand_mode_idx', expression: 'CREATE INDEX invoices_brand_mode_idx ON invoices (brand_id, mode, id DESC)' },
    { name: 'invoices_customer_idx', properties: ['customer'] },
    // The overdue sweep reads only open invoices.
    { name: 'invoices_open_due_idx', properties: ['dueDate'], where: "status = 'open'" },
  ],
});

/** The last invoice number given per brand and mode: its row lock makes numbers gap-free under concurrency. */
export const InvoiceCounter = defineEntity({
  name: 'InvoiceCounter',
  tableName: 'invoice_counters',
  properties: {
    brand: () => p.manyToOne(Brand).primary().foreignKeyName('invoice_counters_brand_id_fkey').deleteRule('cascade'),
    mode: p.enum(modes).primary(),
    lastNumber: p.integer(),
  },
});
