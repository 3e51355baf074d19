import { randomUUID } from 'node:crypto';
import type { UpdateObject } from 'kysely';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { blindIndex } from '../../infra/crypto/blind-index.ts';
import type { PiiBinding } from '../../infra/crypto/pii-cipher.ts';
import { type DB, transaction, type Db } from '../db.ts';
import { insertCustomerUnlessTaken, selectByHash, selectByHashes, selectCustomerPage, updateCustomer, type CustomerRow } from './queries.ts';
import type { PersonalDataKeys } from './keys.ts';
import { isEmailIdentifier, maskEmail, maskPhone, normalizeEmail, normalizePhone } from './normalize.ts';
import { isUniqueViolation } from '../../infra/database/database.ts';

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
    id: r.id,
    uuid: r.uuid,
    name: decryptOrNull(keys, r.name_encrypted, CTX.name, b),
    email: decryptOrNull(keys, r.email_encrypted, CTX.email, b),
    phone: decryptOrNull(keys, r.phone_encrypted, CTX.phone, b),
    createdAt: r.created_at,
  };
}

/** Name and email of a customer row in clear (the payment view joins them into its own query). */
export function decryptNameAndEmail(
  keys: PersonalDataKeys,
  r: { brand_id: number; uuid: string; name_encrypted: string | null; email_encrypted: string | null },
): { name: string | null; email: string | null } {
  const b = customerBinding(r.brand_id, r.uuid);
  return { name: decryptOrNull(keys, r.name_encrypted, CTX.name, b), email: decryptOrNull(keys, r.email_encrypted, CTX.email, b) };
}

interface Normalised {
  name: string | null;
  email: string | null;
  phone: string | null;
  emailHash: string | null;
  phoneHash: string | null;
}

/** A new customer row with its details encrypted under a fresh uuid; undefined when its email or phone is taken (a race lost). */
async function insertNewCustomer(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, c: Normalised) {
  const uuid = randomUUID();
  const b = customerBinding(brandId, uuid);
  return insertCustomerUnlessTaken(em, {
    uuid,
    brand_id: brandId,
    mode,
    name_encrypted: c.name ? keys.pii.encrypt(c.name, CTX.name, b) : null,
    email_encrypted: c.email ? keys.pii.encrypt(c.email, CTX.email, b) : null,
    phone_encrypted: c.phone ? keys.pii.encrypt(c.phone, CTX.phone, b) : null,
    email_hash: c.emailHash,
    phone_hash: c.phoneHash,
  });
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
    if (!email) throw new AppError('VALIDATION_ERROR', 'Must be a valid email address', { field: fieldPrefix ? `${fieldPrefix}.email` : 'email' });
  }
  if (input.phone != null) {
    phone = normalizePhone(input.phone);
    if (!phone) throw new AppError('VALIDATION_ERROR', 'Must be a valid phone number', { field: fieldPrefix ? `${fieldPrefix}.phone` : 'phone' });
  }
  if (!email && !phone) {
    throw new AppError('VALIDATION_ERROR', 'A customer needs an email or a phone number', { field: fieldPrefix || 'email' });
  }
  return {
    name,
    email,
    phone,
    emailHash: email ? blindIndex(keys.blindIndexKey, brandId, 'email', email) : null,
    phoneHash: phone ? blindIndex(keys.blindIndexKey, brandId, 'phone', phone) : null,
  };
}

/** Fills a found customer's missing details; never overwrites, never steals another customer's email/phone. */
async function fillMissing(em: Db, keys: PersonalDataKeys, brandId: number, row: CustomerRow, c: Normalised, taken: CustomerRow[]): Promise<void> {
  const set: UpdateObject<DB, 'customers'> = {};
  const b = customerBinding(brandId, row.uuid);
  if (c.name && row.name_encrypted === null) set.name_encrypted = keys.pii.encrypt(c.name, CTX.name, b);
  if (c.email && row.email_hash === null && !taken.some((t) => t.email_hash === c.emailHash)) {
    set.email_hash = c.emailHash;
    set.email_encrypted = keys.pii.encrypt(c.email, CTX.email, b);
  }
  if (c.phone && row.phone_hash === null && !taken.some((t) => t.phone_hash === c.phoneHash)) {
    set.phone_hash = c.phoneHash;
    set.phone_encrypted = keys.pii.encrypt(c.phone, CTX.phone, b);
  }
  if (Object.keys(set).length === 0) return;
  try {
    // A savepoint: losing a race for the email/phone must not abort the caller's transaction.
    await transaction(em, (tx) => updateCustomer(tx, brandId, row.id, set));
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
}

/**
 * The brand's customer with this email or phone (email wins when they point to two
 * different customers), created when neither is known. Safe under concurrency:
 * the unique blind indexes decide, and the loser of an insert race reads the winner.
 */
export async function findOrCreateCustomer(
  em: Db,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  input: CustomerInput,
): Promise<{ id: number; uuid: string; created: boolean }> {
  const c = normaliseCustomer(keys, brandId, input);
  for (let attempt = 0; attempt < 3; attempt++) {
    const rows = await selectByHashes(em, brandId, mode, c);
    const match = rows.find((r) => c.emailHash && r.email_hash === c.emailHash) ?? rows[0];
    if (match) {
      await fillMissing(em, keys, brandId, match, c, rows.filter((r) => r.id !== match.id));
      return { id: match.id, uuid: match.uuid, created: false };
    }
    // The loser of a race for an email or phone inserts nothing and reads the winner on the next attempt.
    const inserted = await insertNewCustomer(em, keys, brandId, mode, c);
    if (inserted) return { id: inserted.id, uuid: inserted.uuid, created: true };
  }
  throw new Error('customer find-or-create did not settle after 3 attempts');
}

/**
 * By email when the identifier contains `@`, else by phone, through the blind
 * index of the normalised value. An identifier that cannot be normalised cannot
 * match anyone: CUSTOMER_NOT_FOUND, the same answer as an unknown one.
 */
export async function getCustomerByIdentifier(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, identifier: string): Promise<CustomerView> {
  const byEmail = isEmailIdentifier(identifier);
  const normalised = byEmail ? normalizeEmail(identifier) : normalizePhone(identifier);
  if (!normalised) throw new AppError('CUSTOMER_NOT_FOUND');
  const hash = blindIndex(keys.blindIndexKey, brandId, byEmail ? 'email' : 'phone', normalised);
  const row = await selectByHash(em, byEmail ? 'email' : 'phone', { brandId, mode, hash });
  if (!row) throw new AppError('CUSTOMER_NOT_FOUND');
  return toCustomerView(keys, row);
}

/** Newest first. */
export async function listCustomers(
  em: Db,
  keys: PersonalDataKeys,
  brandId: number,
  mode: Mode,
  page: { page: number; perPage: number },
): Promise<{ items: CustomerListItem[]; total: number }> {
  const { rows, total } = await selectCustomerPage(em, brandId, mode, { limit: page.perPage, offset: (page.page - 1) * page.perPage });
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
  return { items, total };
}

/**
 * Creates a customer, refusing one whose email (or phone) the brand already has
 * in this mode: `CONFLICT` (409), the answer OwnPay's `POST /customers` gives.
 * The unique blind indexes decide a race: the loser gets the same 409.
 */
export async function createCustomer(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, input: CustomerInput): Promise<{ id: number; uuid: string }> {
  const c = normaliseCustomer(keys, brandId, input, '');
  const exists = () => new AppError('CONFLICT', `A customer with this ${c.emailHash ? 'email' : 'phone'} already exists`, { field: c.emailHash ? 'email' : 'phone' });
  if ((await selectByHashes(em, brandId, mode, c)).length > 0) throw exists();
  const inserted = await insertNewCustomer(em, keys, brandId, mode, c);
  if (!inserted) throw exists();
  return { id: inserted.id, uuid: inserted.uuid };
}
