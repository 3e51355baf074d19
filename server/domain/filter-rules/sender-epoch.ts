import { type Db } from '../db.ts';
import { incrementSenderEpoch } from './queries.ts';

/**
 * Called in the same transaction as any change to which senders the enabled
 * gateways have (a gateway created, enabled, disabled, or its senders changed):
 * every brand's filter-rules version goes up with it, so phones fetch the new
 * allowed senders.
 */
export async function bumpSenderEpoch(em: Db): Promise<void> {
  await incrementSenderEpoch(em);
}
