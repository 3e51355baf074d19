import { AppError } from '../../../contract/common/errors.ts';
import type { AdminInvoiceResource, AdminInvoiceDetailResource } from '../../../contract/admin/invoices.ts';
import type { InvoiceStatus, Mode } from '../../../contract/vocabulary.ts';
import type { AuditActor } from '../audit/service.ts';
import { recordAudit } from '../audit/service.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { transaction, type Db } from '../db.ts';
import { isUuid } from '../../../contract/common/ids.ts';
import { sendInvoice, type InvoiceMailDeps } from './mail.ts';
import { selectInvoiceAnyBrand, selectInvoiceById, type InvoiceRow } from './queries.ts';
import { listInvoicePayments, listInvoices, toInvoiceResource, voidLocked } from './service.ts';

/**
 * The console's side of invoices: every brand in the operator's brand scope
 * (null: all), with the invoice's payments; void and resend are the merchant
 * API's own rules, audited in the same transaction. An invoice of a brand
 * outside the scope is INVOICE_NOT_FOUND, like an unknown one.
 */

function toAdmin(keys: PersonalDataKeys, r: InvoiceRow, base: string): AdminInvoiceResource {
  return { ...toInvoiceResource(keys, r, base), brand_id: r.brand_id, brand_name: r.brand_name, mode: r.mode };
}

async function loadScoped(db: Db, scope: number[] | null, id: string, lock = false): Promise<InvoiceRow> {
  const row = isUuid(id) ? await selectInvoiceAnyBrand(db, id.toLowerCase(), { lock }) : undefined;
  if (!row || (scope !== null && !scope.includes(row.brand_id))) throw new AppError('INVOICE_NOT_FOUND');
  return row;
}

async function detail(db: Db, keys: PersonalDataKeys, r: InvoiceRow, base: string): Promise<AdminInvoiceDetailResource> {
  return { ...toAdmin(keys, r, base), payments: await listInvoicePayments(db, r.id) };
}

export async function listAdminInvoices(
  db: Db,
  keys: PersonalDataKeys,
  q: { page: number; per_page: number; brandId?: number; brandIds: number[] | null; mode?: Mode; status?: InvoiceStatus; customerUuid?: string },
  base: string,
): Promise<{ items: AdminInvoiceResource[]; total: number }> {
  const { rows, total } = await listInvoices(db, keys, { brandId: q.brandId, brandIds: q.brandIds, mode: q.mode, status: q.status, customerUuid: q.customerUuid }, q, base);
  return { items: rows.map((r) => toAdmin(keys, r, base)), total };
}

export async function getAdminInvoice(db: Db, keys: PersonalDataKeys, scope: number[] | null, id: string, base: string): Promise<AdminInvoiceDetailResource> {
  return detail(db, keys, await loadScoped(db, scope, id), base);
}

export async function voidInvoiceAudited(db: Db, keys: PersonalDataKeys, who: AuditActor, scope: number[] | null, id: string, base: string): Promise<AdminInvoiceDetailResource> {
  return transaction(db, async (tx) => {
    const row = await loadScoped(tx, scope, id, true);
    const { row: after, changed } = await voidLocked(tx, row);
    if (changed) {
      await recordAudit(tx, who, { action: 'invoice.void', targetType: 'invoice', targetId: row.uuid, brandId: row.brand_id, before: { status: row.status }, after: { status: after.status } });
    }
    return detail(tx, keys, after, base);
  });
}

export async function resendInvoiceAudited(db: Db, deps: InvoiceMailDeps, who: AuditActor, scope: number[] | null, id: string): Promise<AdminInvoiceDetailResource> {
  const base = deps.config.PUBLIC_BASE_URL;
  return transaction(db, async (tx) => {
    const row = await loadScoped(tx, scope, id, true);
    await sendInvoice(tx, deps, { row }, row.uuid);
    const after = await selectInvoiceById(tx, row.id);
    await recordAudit(tx, who, { action: 'invoice.resend', targetType: 'invoice', targetId: row.uuid, brandId: row.brand_id, before: { status: row.status }, after: { status: after.status } });
    return detail(tx, deps.crypto, after, base);
  });
}
