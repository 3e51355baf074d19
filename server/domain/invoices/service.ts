import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { AppError } from '../../../contract/common/errors.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import type { CreateInvoiceBody, InvoiceDetailResource, InvoicePaymentResource, InvoiceResource, UpdateInvoiceBody } from '../../../contract/merchant/invoices.ts';
import type { InvoiceStatus, Mode } from '../../../contract/vocabulary.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { decryptNameAndEmail, findOrCreateCustomer } from '../customers/service.ts';
import { intentRefusal, quoteGatewaysOf } from '../gateways/quote.ts';
import { listGateways } from '../gateways/service.ts';
import { gatewaysOfMode } from '../sandbox/gateway.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { transaction, type Db } from '../db.ts';
import {
  allocateInvoiceNumber, insertInvoice, selectCustomerId, selectInvoice, selectInvoiceById, selectInvoicePage, selectInvoicePayments, updateInvoiceRow,
  type InvoiceFilter, type InvoiceRow,
} from './queries.ts';
import { amountRemaining, computeTotals, invoiceNumber } from './totals.ts';

/**
 * Invoices (README, "Invoices"): a brand's bill to one of its customers, per
 * mode, with a gap-free number, totals computed once (totals.ts), a hosted page
 * that pays it through the normal checkout (pay.ts) and a PDF (pdf.ts). Another
 * brand's or mode's invoice is INVOICE_NOT_FOUND, like every merchant object.
 */

export type { InvoiceRow };

/** 128 random bits: the hosted page's only credential. */
function newInvoiceToken(): string {
  return `inv_${randomBytes(16).toString('base64url')}`;
}

const TOKEN_RE = /^inv_[A-Za-z0-9_-]{22}$/;
export const isInvoiceToken = (s: string): boolean => TOKEN_RE.test(s);

export function invoiceUrls(publicBaseUrl: string, token: string): { hosted_url: string; pdf_url: string } {
  const hosted = `${publicBaseUrl.replace(/\/+$/, '')}/invoices/${token}`;
  return { hosted_url: hosted, pdf_url: `${hosted}/pdf` };
}

/** The customer's name and e-mail in clear (the name is shown on the invoice; the e-mail is where `send` mails it). */
export function invoiceCustomer(keys: PersonalDataKeys, r: InvoiceRow): { name: string | null; email: string | null } {
  return decryptNameAndEmail(keys, { brand_id: r.brand_id, uuid: r.customer_uuid, name_encrypted: r.customer_name_encrypted, email_encrypted: r.customer_email_encrypted });
}

export function toInvoiceResource(keys: PersonalDataKeys, r: InvoiceRow, publicBaseUrl: string): InvoiceResource {
  return {
    id: r.uuid,
    number: invoiceNumber(r.number),
    status: r.status,
    customer_id: r.customer_uuid,
    customer_name: invoiceCustomer(keys, r).name,
    currency: r.currency,
    lines: r.lines,
    discount: r.discount,
    tax: r.tax,
    subtotal: r.subtotal,
    total: r.total,
    amount_paid: r.amount_paid,
    amount_remaining: amountRemaining(r.total, r.amount_paid),
    due_date: r.due_day,
    memo: r.memo,
    ...invoiceUrls(publicBaseUrl, r.token),
    finalized_at: r.finalized_at?.toISOString() ?? null,
    paid_at: r.paid_at?.toISOString() ?? null,
    voided_at: r.voided_at?.toISOString() ?? null,
    last_sent_at: r.last_sent_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    livemode: r.mode === 'live',
  };
}

/** The data of an `invoice.*` event: the invoice as it is after the change. */
export function invoiceEventData(r: InvoiceRow): Record<string, unknown> {
  return {
    invoice_id: r.uuid, number: invoiceNumber(r.number), status: r.status, customer_id: r.customer_uuid, currency: r.currency, total: r.total,
    amount_paid: r.amount_paid, amount_remaining: amountRemaining(r.total, r.amount_paid), due_date: r.due_day,
  };
}

/** Refuses a currency no enabled gateway of the mode takes, directly or through an exchange rate (checked before any write). */
async function checkCurrency(db: Db, mode: Mode, currency: string, total: string): Promise<void> {
  const gateways = gatewaysOfMode(await listGateways(db, { enabledOnly: true }), mode);
  if (intentRefusal(await quoteGatewaysOf(db, gateways, total, currency)) === 'CURRENCY_CONVERSION_FAILED') {
    throw new AppError('CURRENCY_NOT_SUPPORTED', `No gateway takes ${currency} and no exchange rate converts it`, { field: 'currency' });
  }
}

function checkDueDate(dueDate: string): void {
  // A due date more than a day in the past is a mistake; yesterday may still be today in the brand's zone.
  if (new Date(`${dueDate}T00:00:00Z`).getTime() < Date.now() - 2 * 86_400_000) {
    throw new AppError('VALIDATION_ERROR', 'The due date must not be in the past', { field: 'due_date' });
  }
}

async function resolveCustomer(tx: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, body: CreateInvoiceBody): Promise<number> {
  if (body.customer_id !== undefined && body.customer !== undefined) {
    throw new AppError('VALIDATION_ERROR', 'Give customer_id or customer, not both', { field: 'customer' });
  }
  if (body.customer_id !== undefined) {
    const id = await selectCustomerId(tx, brandId, mode, body.customer_id.toLowerCase());
    if (id === undefined) throw new AppError('CUSTOMER_NOT_FOUND', undefined, { field: 'customer_id' });
    return id;
  }
  if (body.customer === undefined) throw new AppError('VALIDATION_ERROR', 'An invoice needs customer_id or customer', { field: 'customer_id' });
  return (await findOrCreateCustomer(tx, keys, brandId, mode, body.customer)).id;
}

export async function createInvoice(db: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, body: CreateInvoiceBody, publicBaseUrl: string): Promise<InvoiceResource> {
  const totals = computeTotals(body);
  checkDueDate(body.due_date);
  return transaction(db, async (tx) => {
    await checkCurrency(tx, mode, body.currency, totals.total);
    const customerId = await resolveCustomer(tx, keys, brandId, mode, body);
    const open = body.status === 'open';
    const id = await insertInvoice(tx, {
      uuid: randomUUID(),
      token: newInvoiceToken(),
      brand_id: brandId,
      mode,
      number: await allocateInvoiceNumber(tx, brandId, mode),
      customer_id: customerId,
      status: open ? 'open' : 'draft',
      currency: body.currency,
      lines: totals.lines,
      discount: totals.discount,
      tax: totals.tax,
      subtotal: totals.subtotal,
      total: totals.total,
      due_date: body.due_date,
      memo: body.memo ?? null,
      finalized_at: open ? sql<Date>`now()` : null,
    });
    const row = await selectInvoiceById(tx, id);
    await recordEvent(tx, { brandId, mode, event: 'invoice.created', data: invoiceEventData(row) });
    return toInvoiceResource(keys, row, publicBaseUrl);
  });
}

async function loadOwn(db: Db, brandId: number, mode: Mode, id: string, lock = false): Promise<InvoiceRow> {
  const row = isUuid(id) ? await selectInvoice(db, brandId, mode, id.toLowerCase(), { lock }) : undefined;
  if (!row) throw new AppError('INVOICE_NOT_FOUND');
  return row;
}

export async function getInvoice(db: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, id: string, publicBaseUrl: string): Promise<InvoiceDetailResource> {
  const row = await loadOwn(db, brandId, mode, id);
  return { ...toInvoiceResource(keys, row, publicBaseUrl), payments: await listInvoicePayments(db, row.id) };
}

export async function listInvoices(
  db: Db,
  keys: PersonalDataKeys,
  filter: InvoiceFilter,
  page: { page: number; per_page: number },
  publicBaseUrl: string,
): Promise<{ items: InvoiceResource[]; total: number; rows: InvoiceRow[] }> {
  if (filter.customerUuid !== undefined && !isUuid(filter.customerUuid)) return { items: [], total: 0, rows: [] };
  const { rows, total } = await selectInvoicePage(db, { ...filter, customerUuid: filter.customerUuid?.toLowerCase() }, { limit: page.per_page, offset: (page.page - 1) * page.per_page });
  return { items: rows.map((r) => toInvoiceResource(keys, r, publicBaseUrl)), total, rows };
}

export async function listInvoicePayments(db: Db, invoiceId: number): Promise<InvoicePaymentResource[]> {
  return (await selectInvoicePayments(db, invoiceId)).map((p) => ({
    payment_id: p.uuid,
    amount: p.amount,
    status: p.status,
    created_at: p.created_at.toISOString(),
    completed_at: p.completed_at?.toISOString() ?? null,
  }));
}

function refuseUnlessDraft(status: InvoiceStatus): void {
  if (status === 'void') throw new AppError('INVOICE_VOID');
  if (status !== 'draft') throw new AppError('INVOICE_NOT_DRAFT', `The invoice is ${status}; only a draft can be changed or finalized`);
}

export async function updateInvoice(db: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, id: string, body: UpdateInvoiceBody, publicBaseUrl: string): Promise<InvoiceResource> {
  return transaction(db, async (tx) => {
    const row = await loadOwn(tx, brandId, mode, id, true);
    if (row.status !== 'draft') throw new AppError('INVOICE_NOT_DRAFT', `The invoice is ${row.status}; only a draft can be changed`);
    const lines = body.lines ?? row.lines;
    const discount = body.discount === undefined ? row.discount : body.discount;
    const tax = body.tax === undefined ? row.tax : body.tax && { description: body.tax.description, rate: body.tax.rate };
    const totals = computeTotals({ lines, discount, tax: tax ? { description: tax.description, rate: tax.rate ?? '0' } : null });
    const currency = body.currency ?? row.currency;
    if (body.due_date !== undefined) checkDueDate(body.due_date);
    await checkCurrency(tx, mode, currency, totals.total);
    await updateInvoiceRow(tx, row.id, {
      lines: totals.lines, discount: totals.discount, tax: totals.tax, subtotal: totals.subtotal, total: totals.total, currency,
      ...(body.due_date !== undefined ? { due_date: body.due_date } : {}),
      ...(body.memo !== undefined ? { memo: body.memo } : {}),
    });
    return toInvoiceResource(keys, await selectInvoiceById(tx, row.id), publicBaseUrl);
  });
}

/** draft → open on a locked row; the caller holds the lock. */
export async function finalizeLocked(tx: Db, row: InvoiceRow): Promise<InvoiceRow> {
  refuseUnlessDraft(row.status);
  await updateInvoiceRow(tx, row.id, { status: 'open', finalized_at: sql<Date>`now()` });
  return selectInvoiceById(tx, row.id);
}

export async function finalizeInvoice(db: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, id: string, publicBaseUrl: string): Promise<InvoiceResource> {
  return transaction(db, async (tx) => toInvoiceResource(keys, await finalizeLocked(tx, await loadOwn(tx, brandId, mode, id, true)), publicBaseUrl));
}

/**
 * Voids a locked invoice with its `invoice.voided` event. Already void: nothing
 * changes and no event is sent (`changed: false`). Paid: INVOICE_ALREADY_PAID.
 */
export async function voidLocked(tx: Db, row: InvoiceRow): Promise<{ row: InvoiceRow; changed: boolean }> {
  if (row.status === 'void') return { row, changed: false };
  if (row.status === 'paid') throw new AppError('INVOICE_ALREADY_PAID', 'This invoice is already paid and cannot be voided (refund its payments instead)');
  await updateInvoiceRow(tx, row.id, { status: 'void', voided_at: sql<Date>`now()` });
  const after = await selectInvoiceById(tx, row.id);
  await recordEvent(tx, { brandId: after.brand_id, mode: after.mode, event: 'invoice.voided', data: invoiceEventData(after) });
  return { row: after, changed: true };
}

export async function voidInvoice(db: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, id: string, publicBaseUrl: string): Promise<InvoiceResource> {
  return transaction(db, async (tx) => toInvoiceResource(keys, (await voidLocked(tx, await loadOwn(tx, brandId, mode, id, true))).row, publicBaseUrl));
}

export { loadOwn as loadOwnInvoice };
