import type { Db } from '../db.ts';
import { selectOwnerBrandId } from './queries.ts';

/** A console operator's brand scope as one SQL parameter (defined beside the queries that use it). */
export { scopeParam } from './queries.ts';

/** The kinds of brand-owned object an admin route may name by id. */
export type OwnedKind = 'brand' | 'wallet_account' | 'device' | 'transaction' | 'refund' | 'delivery' | 'sms_record' | 'statement_upload' | 'customer';

/** The brand an object belongs to; null when there is no such object. */
export async function brandOfOwned(db: Db, kind: OwnedKind, id: number): Promise<number | null> {
  if (kind === 'brand') return id;
  return (await selectOwnerBrandId(db, kind, id)) ?? null;
}
