import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { prepared } from '../db.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../customers/service.ts';

/** customerPhonesOfIntents' statement, compiled once (db.ts `prepared`): the intents by one id array. */
const phonesOfIntents = prepared((k, $: { ids: number[] }) =>
  k
    .selectFrom('payment_intents as i')
    .innerJoin('customers as c', 'c.id', 'i.customer_id')
    .select(['i.id', 'c.brand_id', 'c.uuid', 'c.phone_encrypted'])
    .where('i.id', '=', (eb) => eb.fn.any(eb.val($.ids)))
    .where('c.phone_encrypted', 'is not', null),
);

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
  const rows = await phonesOfIntents.execute(tx, { ids: [...new Set(intentIds)] });
  for (const r of rows) {
    phones.set(r.id, cipher.decrypt(r.phone_encrypted!, CUSTOMER_CONTEXT.phone, customerBinding(r.brand_id, r.uuid)));
  }
  return phones;
}
