import type { EntityManager } from '../../infra/database/orm.ts';

/**
 * Called in the same transaction as any change to which senders the enabled
 * gateways have (a gateway created, enabled, disabled, or its senders changed):
 * every brand's filter-rules version goes up with it, so phones fetch the new
 * allowed senders.
 */
export async function bumpSenderEpoch(em: EntityManager): Promise<void> {
  await em.execute('UPDATE sms_sender_epoch SET version = version + 1, updated_at = now() WHERE id');
}
