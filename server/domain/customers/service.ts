import { randomUUID } from 'node:crypto';
import type { UpdateObject } from 'kysely';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { blindIndex } from '../../infra/crypto/blind-index.ts';
import type { PiiBinding } from '../../infra/crypto/pii-cipher.ts';
import { type DB, transaction, type Db } from '../db.ts';
import {
  eraseCustomerRow, insertCustomerUnlessTaken, selectByHash, selectByHashes, selectByUuid, selectCustomerPage, updateCustomer, type CustomerRow,
} from './queries.ts';
import type { PersonalDataKeys } from './keys.ts';
import { isEmailIdentifier, isUuidIdentifier, maskEmail, maskPhone, normalizeEmail, normalizePhone } from './normalize.ts';
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

export function toCustomerView(keys: PersonalDataKeys, r: CustomerRow): CustomerView {
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

export interface Normalised {
  name: string | null;
  email: string | null;
  phone: string | null;
  emailHash: string | null;
  phoneHash: string | null;
}

/** A new customer row with its details encrypted under a fresh uuid; undefined when its email or phone is taken (a race lost). */
export async function insertNewCustomer(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, c: Normalised) {
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
export function normaliseCustomer(keys: PersonalDataKeys, brandId: number, input: CustomerInput, fieldPrefix = 'customer'): Normalised {
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
 * By uuid when the identifier is one, by email when it contains `@`, else by phone, through the blind
 * index of the normalised value. An identifier that cannot be normalised cannot
 * match anyone: CUSTOMER_NOT_FOUND, the same answer as an unknown one.
 */
export async function getCustomerByIdentifier(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, identifier: string): Promise<CustomerView> {
  if (isUuidIdentifier(identifier)) return getCustomerByUuid(em, keys, brandId, mode, identifier.toLowerCase());
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

/** The 409 naming the field another customer of the brand already has, or null when neither is taken. */
function takenBy(others: CustomerRow[], c: { emailHash: string | null; phoneHash: string | null }): AppError | null {
  if (c.emailHash && others.some((r) => r.email_hash === c.emailHash)) {
    return new AppError('CUSTOMER_EMAIL_TAKEN', undefined, { field: 'email' });
  }
  if (c.phoneHash && others.some((r) => r.phone_hash === c.phoneHash)) {
    return new AppError('CUSTOMER_PHONE_TAKEN', undefined, { field: 'phone' });
  }
  return null;
}

/** A unique-index violation of the blind indexes (a race lost) as the same 409 a read would have given. */
function takenByViolation(err: unknown): AppError {
  const constraint = String((err as { constraint?: unknown }).constraint ?? '');
  return constraint.includes('phone')
    ? new AppError('CUSTOMER_PHONE_TAKEN', undefined, { field: 'phone' })
    : new AppError('CUSTOMER_EMAIL_TAKEN', undefined, { field: 'email' });
}

/**
 * Creates a customer, refusing one whose email (or phone) the brand already has
 * in this mode: `CUSTOMER_EMAIL_TAKEN` / `CUSTOMER_PHONE_TAKEN` (409, the email
 * checked first). The unique blind indexes decide a race: the loser gets the same 409.
 */
export async function createCustomer(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, input: CustomerInput): Promise<CustomerView> {
  const c = normaliseCustomer(keys, brandId, input, '');
  const taken = takenBy(await selectByHashes(em, brandId, mode, c), c);
  if (taken) throw taken;
  const inserted = await insertNewCustomer(em, keys, brandId, mode, c);
  if (!inserted) throw takenBy(await selectByHashes(em, brandId, mode, c), c) ?? new AppError('CUSTOMER_EMAIL_TAKEN', undefined, { field: 'email' });
  const row = await selectByUuid(em, brandId, mode, inserted.uuid);
  return toCustomerView(keys, row!);
}

/** A customer of the brand in clear by its uuid; an erased or unknown one is CUSTOMER_NOT_FOUND. */
export async function getCustomerByUuid(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, uuid: string): Promise<CustomerView> {
  const row = await selectByUuid(em, brandId, mode, uuid);
  if (!row) throw new AppError('CUSTOMER_NOT_FOUND');
  return toCustomerView(keys, row);
}

/** A change of a customer's details: an absent field stays, null removes it. */
export interface CustomerPatch {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
}

/**
 * Applies a change to a locked customer row: the merged details are normalised as
 * on create (one of email and phone must stay), an email or phone another
 * customer of the brand has in the mode is the create's 409, and every value is
 * encrypted again under the row's binding. Returns the view before and after.
 */
export async function changeCustomerRow(
  tx: Db,
  keys: PersonalDataKeys,
  mode: Mode,
  row: CustomerRow,
  patch: CustomerPatch,
): Promise<{ before: CustomerView; after: CustomerView }> {
  const before = toCustomerView(keys, row);
  const merged = {
    name: patch.name !== undefined ? patch.name : before.name,
    email: patch.email !== undefined ? patch.email : before.email,
    phone: patch.phone !== undefined ? patch.phone : before.phone,
  };
  const c = normaliseCustomer(keys, row.brand_id, merged, '');
  const taken = takenBy((await selectByHashes(tx, row.brand_id, mode, c)).filter((r) => r.id !== row.id), c);
  if (taken) throw taken;
  const b = customerBinding(row.brand_id, row.uuid);
  const set = {
    name_encrypted: c.name ? keys.pii.encrypt(c.name, CTX.name, b) : null,
    email_encrypted: c.email ? keys.pii.encrypt(c.email, CTX.email, b) : null,
    phone_encrypted: c.phone ? keys.pii.encrypt(c.phone, CTX.phone, b) : null,
    email_hash: c.emailHash,
    phone_hash: c.phoneHash,
  };
  try {
    await updateCustomer(tx, row.brand_id, row.id, set);
  } catch (err) {
    if (isUniqueViolation(err)) throw takenByViolation(err);
    throw err;
  }
  return { before, after: { ...before, name: c.name, email: c.email, phone: c.phone } };
}

/** Changes the brand's customer with this uuid (merchant API). */
export async function updateCustomerByUuid(em: Db, keys: PersonalDataKeys, brandId: number, mode: Mode, uuid: string, patch: CustomerPatch): Promise<CustomerView> {
  return transaction(em, async (tx) => {
    const row = await selectByUuid(tx, brandId, mode, uuid, { forUpdate: true });
    if (!row) throw new AppError('CUSTOMER_NOT_FOUND');
    return (await changeCustomerRow(tx, keys, mode, row, patch)).after;
  });
}

/**
 * Deletes the brand's customer with this uuid (merchant API) by erasing it: name,
 * email, phone and their blind indexes are removed for good, the row stays
 * (without personal data) so the payments naming it keep their history and
 * amounts, and the customer is gone from every read. Its email and phone are free
 * for a new customer. Rule stated in README.md (Customers).
 */
export async function eraseCustomerByUuid(em: Db, brandId: number, mode: Mode, uuid: string): Promise<void> {
  await transaction(em, async (tx) => {
    const row = await selectByUuid(tx, brandId, mode, uuid, { forUpdate: true });
    if (!row) throw new AppError('CUSTOMER_NOT_FOUND');
    await eraseCustomerRow(tx, row.id);
  });
}
