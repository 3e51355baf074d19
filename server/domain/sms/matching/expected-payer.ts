import type { PiiCipher } from '../../../infra/crypto/pii-cipher.ts';
import type { Db } from '../../db.ts';
import { customerPhoneRowsOfIntents } from './queries/candidates.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../../customers/service.ts';

/**
 * The customer's phone of each payment (intent), in clear: the number an SMS's
 * payer number is compared with when the customer declared none at checkout
 * (docs/matching.md, "Sender number"). Read only for claimers without a
 * declared number, so most SMS pay nothing for it.
 */
export async function customerPhonesOfIntents(
  tx: Db,
  cipher: PiiCipher,
  intentIds: readonly number[],
): Promise<Map<number, string>> {
  const phones = new Map<number, string>();
  if (intentIds.length === 0) return phones;
  const rows = await customerPhoneRowsOfIntents(tx, [...new Set(intentIds)]);
  for (const r of rows) phones.set(r.id, customerPhoneOf(cipher, { brandId: r.brand_id, uuid: r.uuid, token: r.phone_encrypted! }));
  return phones;
}

/** A customer's phone as stored: its PII token and what it is bound to. */
export interface StoredCustomerPhone {
  brandId: number;
  uuid: string;
  token: string;
}

function customerPhoneOf(cipher: PiiCipher, p: StoredCustomerPhone): string {
  return cipher.decrypt(p.token, CUSTOMER_CONTEXT.phone, customerBinding(p.brandId, p.uuid));
}

/**
 * customerPhonesOfIntents for candidates, by intent id: a candidate as locked
 * (lockOpenCandidates) brought its customer's phone with its lock, so only the
 * others (not open any more) are read, in one statement, none when all were locked.
 */
export async function customerPhonesOfCandidates(
  tx: Db,
  cipher: PiiCipher,
  rows: ReadonlyArray<{ intentId: number; customerPhone?: StoredCustomerPhone | null }>,
): Promise<Map<number, string>> {
  const phones = await customerPhonesOfIntents(tx, cipher, rows.filter((r) => r.customerPhone === undefined).map((r) => r.intentId));
  for (const r of rows) if (r.customerPhone && !phones.has(r.intentId)) phones.set(r.intentId, customerPhoneOf(cipher, r.customerPhone));
  return phones;
}
