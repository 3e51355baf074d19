import type { Db } from '../db.ts';

/**
 * The brand ids of a console operator's scope as one `IN (?)` parameter (the
 * driver expands an array into a list). An empty scope matches no brand: brand
 * ids start at 1, so 0 is never one.
 */
export function scopeParam(brandIds: readonly number[]): number[] {
  return brandIds.length ? [...brandIds] : [0];
}

/** The kinds of brand-owned object an admin route may name by id. */
export type OwnedKind = 'brand' | 'device' | 'transaction' | 'refund' | 'delivery' | 'sms_record';

const ownerTables = { device: 'devices', transaction: 'transactions', refund: 'refunds', delivery: 'webhook_deliveries', sms_record: 'sms_records' } as const;

/** The brand an object belongs to; null when there is no such object. */
export async function brandOfOwned(db: Db, kind: OwnedKind, id: number): Promise<number | null> {
  if (kind === 'brand') return id;
  const row = await db.selectFrom(ownerTables[kind]).select('brand_id').where('id', '=', id).executeTakeFirst();
  return row ? Number(row.brand_id) : null;
}
