import type { Db } from '../../db.ts';
import { lockTrxIdKeys } from './queries/candidates.ts';

/**
 * Serialises the decisions made by one gateway transaction id: an SMS carrying
 * it being matched, a customer's submission of it being matched against stored
 * SMS, an admin verifying with it. Without it, an SMS decided while the
 * submission is being matched could miss the submitted transaction while the
 * submission's look-up misses the SMS: both commit and nobody matches.
 *
 * Lock order, everywhere in SMS matching: these advisory locks first (sorted),
 * then payment intents, then transactions (each in id order, the order
 * completeTransaction uses), then SMS records. Keyed on the id alone (not the
 * gateway or brand): unrelated ids almost never share a key, and the few that
 * do only wait for each other.
 */
export async function lockGatewayTrxIds(tx: Db, ids: Iterable<string | null | undefined>): Promise<void> {
  if (!tx.isTransaction) throw new Error('lockGatewayTrxIds must run inside a transaction');
  const keys = [...new Set([...ids].filter((id): id is string => !!id && id.trim() !== '').map((id) => id.trim().toUpperCase()))].sort();
  await lockTrxIdKeys(tx, keys);
}
