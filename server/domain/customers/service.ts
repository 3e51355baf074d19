import { randomUUID } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { blindIndex } from '../../infra/crypto/blind-index.ts';
import type { PiiBinding } from '../../infra/crypto/pii-cipher.ts';
import { pgDate } from '../../infra/database/pg-date.ts';
import type { PersonalDataKeys } from './keys.ts';
import { isEmailIdentifier, maskEmail, maskPhone, normalizeEmail, normalizePhone } from './normalize.ts';

/** A customer with personal data in clear (single lookups only). */
export interface CustomerView {
  id: number;
  uuid: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  createdAt: Date;
}

/** A customer as lists show it: masked contact details. */
export interface CustomerListItem {
  id: number;
  uuid: string;
  name: string | null;
  emailMasked: string | null;
  phoneMasked: string | null;
  createdAt: Date;
}

export interface CustomerInput {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
}

interface CustomerRow {
  id: string;
  uuid: string;
  brand_id: string | number;
  name_encrypted: string | null;
  email_encrypted: string | null;
  phone_encrypted: string | null;
  email_hash: string | null;
  phone_hash: string | null;
  created_at: string | Date;
}

/**
 * The AAD context binds each token to its column (a name token pasted into the
 * email column fails to decrypt), and the binding to its brand and row. The row
 * is the customer's uuid: made here before the INSERT and never changed, so the
 * values can be encrypted before the row exists (the bigint id is only known
 * after it).
 */
export const CUSTOMER_CONTEXT = { name: 'customer.name', email: 'customer.email', phone: 'customer.phone' } as const;
const CTX = CUSTOMER_CONTEXT;

export function customerBinding(brandId: number | string, uuid: string): PiiBinding {
  return { brandId, row: uuid };
}

function decryptOrNull(keys: PersonalDataKeys, token: string | null, context: string, binding: PiiBinding): string | null {
  return token === null ? null : keys.pii.decrypt(token, context, binding);
}

function toCustomerView(keys: PersonalDataKeys, r: CustomerRow): CustomerView {
  const b = customerBinding(r.brand_id, r.uuid);
  return {
    id: Number(r.id),
    uuid: r.uuid,
    name: decryptOrNull(keys, r.name_encrypted, CTX.name, b),
    email: decryptOrNull(keys, r.email_encrypted, CTX.email, b),
    phone: decryptOrNull(keys, r.phone_encrypted, CTX.phone, b),
    createdAt: pgDate(r.created_at),
  };
}

/** Name and email of a customer row in clear (the payment view joins them into its own query). */
export function decryptNameAndEmail(
  keys: PersonalDataKeys,
  r: Pick<CustomerRow, 'brand_id' | 'uuid' | 'name_encrypted' | 'email_encrypted'>,
): { name: string | null; email: string | null } {
  const b = customerBinding(r.brand_id, r.uuid);
  return { name: decryptOrNull(keys, r.name_encrypted, CTX.name, b), email: decryptOrNull(keys, r.email_encrypted, CTX.email, b) };
}

const COLUMNS = 'id, uuid, brand_id, name_encrypted, email_encrypted, phone_encrypted, email_hash, phone_hash, created_at';

interface Normalised {
  name: string | null;
  email: string | null;
  phone: string | null;
  emailHash: string | null;
  phoneHash: string | null;
}

/**
 * Normalises and hashes the contact details; a bad email or phone is a
 * VALIDATION_ERROR naming `<fieldPrefix>.email` / `.phone`.
 */
function normaliseCustomer(keys: PersonalDataKeys, brandId: number, input: CustomerInput, fieldPrefix = 'customer'): Normalised {
  const name = input.name?.trim() || null;
  let email: string | null = null;
  let phone: string | null = null;
  if (input.email != null) {
    email = normalizeEmail(input.email);
    if (!email) throw new AppError('VALIDATION_ERROR', 'Must be a valid email address', { field: `${fieldPrefix}.email` });
  }
  if (input.phone != null) {
    phone = normalizePhone(input.phone);
    if (!phone) throw new AppError('VALIDATION_ERROR', 'Must be a valid phone number', { field: `${fieldPrefix}.phone` });
  }
  if (!email && !phone) {
    throw new AppError('VALIDATION_ERROR', 'A customer needs an email or a phone number', { field: fieldPrefix });
  }
  return {
    name,
    email,
    phone,
    emailHash: email ? blindIndex(keys.blindIndexKey, brandId, 'email', email) : null,
    phoneHash: phone ? blindIndex(keys.blindIndexKey, brandId, 'phone', phone) : null,
  };
}

async function findByHashes(em: EntityManager, brandId: number, mode: Mode, c: Normalised): Promise<CustomerRow[]> {
  return em.execute<CustomerRow[]>(
    `SELECT ${COLUMNS} FROM customers
      WHERE brand_id = ? AND mode = ? AND (email_hash = ? OR phone_hash = ?)`,
    [brandId, mode, c.emailHash ?? '', c.phoneHash ?? ''],
  );
}

/** Fills a found customer's missing details; never overwrites, never steals another customer's email/phone. */
async function fillMissing(em: EntityManager, keys: PersonalDataKeys, brandId: number, row: CustomerRow, c: Normalised, taken: CustomerRow[]): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [];
  const b = customerBinding(brandId, row.uuid);
  if (c.name && row.name_encrypted === null) {
    sets.push('name_encrypted = ?');
    params.push(keys.pii.encrypt(c.name, CTX.name, b));
  }
  if (c.email && row.email_hash === null && !taken.some((t) => t.email_hash === c.emailHash)) {
    sets.push('email_hash = ?', 'email_encrypted = ?');
    params.push(c.emailHash, keys.pii.encrypt(c.email, CTX.email, b));
  }
  if (c.phone && row.phone_hash === null && !taken.some((t) => t.phone_hash === c.phoneHash)) {
    sets.push('phone_hash = ?', 'phone_encrypted = ?');
    params.push(c.phoneHash, keys.pii.encrypt(c.phone, CTX.phone, b));
  }
  if (sets.length === 0) return;
  try {
    // A savepoint: losing a race for the email/phone must not abort the caller's transaction.
    await em.transactional((tx) => tx.execute(`UPDATE customers SET ${sets.join(', ')}, updated_at = now() WHERE id = ? AND brand_id = ?`, [...params, row.id, brandId]));
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
  }
}

/**
 * The brand's customer with this email or phone (email wins when they point to two
 * different customers), created when neither is known. Safe under concurrency:
 * the unique blind indexes decide, and the loser of an insert race reads the winner.
 */
export async function findOrCreateCustomer(
  em: EntityManager,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  input: CustomerInput,
): Promise<{ id: number; uuid: string; created: boolean }> {
  const c = normaliseCustomer(keys, brandId, input);
  for (let attempt = 0; attempt < 3; attempt++) {
    const rows = await findByHashes(em, brandId, mode, c);
    const match = rows.find((r) => c.emailHash && r.email_hash === c.emailHash) ?? rows[0];
    if (match) {
      await fillMissing(em, keys, brandId, match, c, rows.filter((r) => r.id !== match.id));
      return { id: Number(match.id), uuid: match.uuid, created: false };
    }
    const uuid = randomUUID();
    const b = customerBinding(brandId, uuid);
    const inserted = await em.execute<Array<{ id: string; uuid: string }>>(
      `INSERT INTO customers (uuid, brand_id, mode, name_encrypted, email_encrypted, phone_encrypted, email_hash, phone_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING
       RETURNING id, uuid`,
      [
        uuid,
        brandId,
        mode,
        c.name ? keys.pii.encrypt(c.name, CTX.name, b) : null,
        c.email ? keys.pii.encrypt(c.email, CTX.email, b) : null,
        c.phone ? keys.pii.encrypt(c.phone, CTX.phone, b) : null,
        c.emailHash,
        c.phoneHash,
      ],
    );
    if (inserted.length) return { id: Number(inserted[0]!.id), uuid: inserted[0]!.uuid, created: true };
  }
  throw new Error('customer find-or-create did not settle after 3 attempts');
}

/**
 * By email when the identifier contains `@`, else by phone, through the blind
 * index of the normalised value. An identifier that cannot be normalised cannot
 * match anyone: CUSTOMER_NOT_FOUND, the same answer as an unknown one.
 */
export async function getCustomerByIdentifier(em: EntityManager, keys: PersonalDataKeys, brandId: number, mode: Mode, identifier: string): Promise<CustomerView> {
  const byEmail = isEmailIdentifier(identifier);
  const normalised = byEmail ? normalizeEmail(identifier) : normalizePhone(identifier);
  if (!normalised) throw new AppError('CUSTOMER_NOT_FOUND');
  const hash = blindIndex(keys.blindIndexKey, brandId, byEmail ? 'email' : 'phone', normalised);
  const rows = await em.execute<CustomerRow[]>(
    `SELECT ${COLUMNS} FROM customers WHERE brand_id = ? AND mode = ? AND ${byEmail ? 'email_hash' : 'phone_hash'} = ?`,
    [brandId, mode, hash],
  );
  if (rows.length === 0) throw new AppError('CUSTOMER_NOT_FOUND');
  return toCustomerView(keys, rows[0]!);
}

/** Newest first. */
export async function listCustomers(
  em: EntityManager,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  page: { page: number; perPage: number },
): Promise<{ items: CustomerListItem[]; total: number }> {
  const [{ total }] = await em.execute<Array<{ total: string }>>('SELECT count(*) AS total FROM customers WHERE brand_id = ? AND mode = ?', [brandId, mode]) as [{ total: string }];
  const rows = await em.execute<CustomerRow[]>(
    `SELECT ${COLUMNS} FROM customers WHERE brand_id = ? AND mode = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
    [brandId, mode, page.perPage, (page.page - 1) * page.perPage],
  );
  const items = rows.map((r) => {
    const v = toCustomerView(keys, r);
    return {
      id: v.id,
      uuid: v.uuid,
      name: v.name,
      emailMasked: v.email === null ? null : maskEmail(v.email),
      phoneMasked: v.phone === null ? null : maskPhone(v.phone),
      createdAt: v.createdAt,
    };
  });
  return { items, total: Number(total) };
}
