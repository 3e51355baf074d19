import { sql } from 'kysely';
import { type Db } from '../db.ts';

/**
 * Called in the same transaction as any change to which senders the enabled
 * gateways have (a gateway created, enabled, disabled, or its senders changed):
 * every brand's filter-rules version goes up with it, so phones fetch the new
 * allowed senders.
 */
export async function bumpSenderEpoch(em: Db): Promise<void> {
  await em.updateTable('sms_sender_epoch').set({ version: sql<number>`version + 1`, updated_at: sql<Date>`now()` }).where('id', '=', true).execute();
}
