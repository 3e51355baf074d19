import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { pgIdArray } from '../../infra/database/pg-array.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../customers/service.ts';

/**
 * The customer's phone of each payment (intent), in clear: the number an SMS's
 * payer number is compared with when the customer declared none at checkout
 * (docs/matching.md, "Sender number"). Read only for claimers without a
 * declared number, so most SMS pay nothing for it.
 */
export async function customerPhonesOfIntents(
  tx: EntityManager,
  cipher: PiiCipher,
  intentIds: readonly number[],
): Promise<Map<number, string>> {
  const phones = new Map<number, string>();
  if (intentIds.length === 0) return phones;
  const rows = await tx.execute<Array<{ intent_id: string; brand_id: string; uuid: string; phone_encrypted: string }>>(
    `SELECT i.id AS intent_id, c.brand_id, c.uuid, c.phone_encrypted
       FROM payment_intents i JOIN customers c ON c.id = i.customer_id
      WHERE i.id = ANY(?::bigint[]) AND c.phone_encrypted IS NOT NULL`,
    [pgIdArray([...new Set(intentIds)])],
  );
  for (const r of rows) {
    phones.set(Number(r.intent_id), cipher.decrypt(r.phone_encrypted, CUSTOMER_CONTEXT.phone, customerBinding(r.brand_id, r.uuid)));
  }
  return phones;
}
