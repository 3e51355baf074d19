import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { withAudit, type AuditActor, type AuditState } from '../audit/service.ts';
import { getBrand } from '../brands/service.ts';
import type { Db } from '../db.ts';
import { customersToCsv, parseCustomerCsv } from './csv.ts';
import type { PersonalDataKeys } from './keys.ts';
import { eraseCustomerRow, selectAllCustomers, selectById, selectTakenHashes } from './queries.ts';
import {
  changeCustomerRow, createCustomer, listCustomers, type CustomerListItem, insertNewCustomer, normaliseCustomer, toCustomerView, type CustomerInput, type CustomerPatch, type CustomerView, type Normalised,
} from './service.ts';

/** What the audit log keeps of a customer: which details it has, never the details. */
const state = (c: CustomerView, mode: Mode): AuditState => ({ uuid: c.uuid, mode, has_name: c.name !== null, has_email: c.email !== null, has_phone: c.phone !== null });

/** A brand's customers of a mode, masked; an unknown brand is BRAND_NOT_FOUND. */
export async function adminListCustomers(
  em: Db,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  page: { page: number; perPage: number },
): Promise<{ items: CustomerListItem[]; total: number }> {
  await getBrand(em, brandId);
  return listCustomers(em, keys, brandId, mode, page);
}

/** Creates a customer from the console or the admin API; recorded in the audit log. */
export async function adminCreateCustomer(em: Db, keys: PersonalDataKeys, who: AuditActor, brandId: number, mode: Mode, input: CustomerInput): Promise<CustomerView> {
  await getBrand(em, brandId);
  return withAudit(em, who, async (tx) => {
    const created = await createCustomer(tx, keys, brandId, mode, input);
    return { result: created, audit: { action: 'customer.create', targetType: 'customer', targetId: created.id, brandId, after: state(created, mode) } };
  });
}

/** Changes a customer named by id; recorded (which fields changed, not their values). */
export async function adminUpdateCustomer(em: Db, keys: PersonalDataKeys, who: AuditActor, id: number, patch: CustomerPatch): Promise<CustomerView & { brandId: number; mode: Mode }> {
  return withAudit(em, who, async (tx) => {
    const row = await selectById(tx, id, { forUpdate: true });
    if (!row) throw new AppError('CUSTOMER_NOT_FOUND');
    const { before, after } = await changeCustomerRow(tx, keys, row.mode, row, patch);
    const changed = (['name', 'email', 'phone'] as const).filter((f) => before[f] !== after[f]);
    return {
      result: { ...after, brandId: row.brand_id, mode: row.mode },
      audit: { action: 'customer.update', targetType: 'customer', targetId: id, brandId: row.brand_id, before: state(before, row.mode), after: { ...state(after, row.mode), changed } },
    };
  });
}

/** Erases a customer named by id, as the merchant API's delete does; recorded. */
export async function adminEraseCustomer(em: Db, keys: PersonalDataKeys, who: AuditActor, id: number): Promise<void> {
  await withAudit(em, who, async (tx) => {
    const row = await selectById(tx, id, { forUpdate: true });
    if (!row) throw new AppError('CUSTOMER_NOT_FOUND');
    await eraseCustomerRow(tx, id);
    return { result: undefined, audit: { action: 'customer.erase', targetType: 'customer', targetId: id, brandId: row.brand_id, before: state(toCustomerView(keys, row), row.mode) } };
  });
}

/** Why an import row was refused. */
export type ImportRefusal = 'invalid_email' | 'invalid_phone' | 'missing_contact' | 'duplicate_in_file' | 'duplicate_existing';

export interface ImportReport {
  dryRun: boolean;
  totalRows: number;
  /** Rows that were imported (a dry run: that would be). */
  accepted: number;
  refused: Array<{ line: number; reason: ImportRefusal; field: 'email' | 'phone' | null; message: string }>;
}

/**
 * Imports customers from a CSV file (csv.ts) into one brand and mode. Every row is
 * checked as a create would check it (valid email and phone, one of them given),
 * against the other rows of the file and against the brand's customers. The valid
 * rows are imported and the refused ones reported with their line and reason, all in
 * one transaction: a failure part-way imports nothing. A row whose email or phone
 * exists already is refused, so running the same file again imports nothing twice.
 * `dryRun` checks and reports without writing.
 */
export async function importCustomers(
  em: Db,
  keys: PersonalDataKeys,
  who: AuditActor,
  brandId: number,
  mode: Mode,
  csv: string,
  opts: { dryRun: boolean },
): Promise<ImportReport> {
  await getBrand(em, brandId);
  const rows = parseCustomerCsv(csv);
  const refused: ImportReport['refused'] = [];
  const valid: Array<{ line: number; c: Normalised }> = [];
  const seenEmail = new Map<string, number>();
  const seenPhone = new Map<string, number>();
  for (const row of rows) {
    if (!row.email && !row.phone) {
      refused.push({ line: row.line, reason: 'missing_contact', field: null, message: 'A customer needs an email or a phone number' });
      continue;
    }
    let c: Normalised;
    try {
      c = normaliseCustomer(keys, brandId, row, '');
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const field = err.field === 'phone' ? 'phone' : 'email';
      refused.push({ line: row.line, reason: field === 'phone' ? 'invalid_phone' : 'invalid_email', field, message: err.message });
      continue;
    }
    const firstEmail = c.emailHash ? seenEmail.get(c.emailHash) : undefined;
    const firstPhone = c.phoneHash ? seenPhone.get(c.phoneHash) : undefined;
    if (firstEmail !== undefined || firstPhone !== undefined) {
      const field = firstEmail !== undefined ? 'email' : 'phone';
      refused.push({ line: row.line, reason: 'duplicate_in_file', field, message: `Same ${field} as line ${firstEmail ?? firstPhone}` });
      continue;
    }
    if (c.emailHash) seenEmail.set(c.emailHash, row.line);
    if (c.phoneHash) seenPhone.set(c.phoneHash, row.line);
    valid.push({ line: row.line, c });
  }

  const existingRefusal = (line: number, field: 'email' | 'phone') =>
    refused.push({ line, reason: 'duplicate_existing', field, message: `The brand already has a customer with this ${field}` });

  const accepted = await withAudit(em, who, async (tx) => {
    const taken = await selectTakenHashes(tx, brandId, mode, {
      emailHashes: valid.flatMap((v) => (v.c.emailHash ? [v.c.emailHash] : [])),
      phoneHashes: valid.flatMap((v) => (v.c.phoneHash ? [v.c.phoneHash] : [])),
    });
    let count = 0;
    for (const v of valid) {
      if (v.c.emailHash && taken.email.has(v.c.emailHash)) existingRefusal(v.line, 'email');
      else if (v.c.phoneHash && taken.phone.has(v.c.phoneHash)) existingRefusal(v.line, 'phone');
      else if (opts.dryRun) count++;
      // A customer created since the read above (another request) makes the insert a no-op: refused the same way.
      else if (await insertNewCustomer(tx, keys, brandId, mode, v.c)) count++;
      else existingRefusal(v.line, v.c.emailHash ? 'email' : 'phone');
    }
    return {
      result: count,
      audit: opts.dryRun ? null : { action: 'customer.import', targetType: 'customer', targetId: null, brandId, after: { mode, rows: rows.length, imported: count, refused: rows.length - count } },
    };
  });
  refused.sort((a, b) => a.line - b.line);
  return { dryRun: opts.dryRun, totalRows: rows.length, accepted, refused };
}

/**
 * The brand's customers of the mode as CSV, personal data in clear, for an operator
 * allowed to export (contract/admin/permissions.ts); the export itself is recorded
 * in the audit log (how many, not who).
 */
export async function exportCustomers(em: Db, keys: PersonalDataKeys, who: AuditActor, brandId: number, mode: Mode): Promise<{ csv: string; count: number }> {
  await getBrand(em, brandId);
  return withAudit(em, who, async (tx) => {
    const rows = await selectAllCustomers(tx, brandId, mode);
    const csv = customersToCsv(rows.map((r) => toCustomerView(keys, r)));
    return { result: { csv, count: rows.length }, audit: { action: 'customer.export', targetType: 'customer', targetId: null, brandId, after: { mode, count: rows.length } } };
  });
}


