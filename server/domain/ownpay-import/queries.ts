import { sql } from 'kysely';
import type { Db } from '../db.ts';

// The statements of the OwnPay import (ownpay-import/service.ts).

/** Our brand carrying this OwnPay merchant's uuid, inserted when missing; `created` tells which. */
export async function upsertBrandByUuid(tx: Db, row: { uuid: string; name: string; timezone: string; status: 'active' | 'disabled' }): Promise<{ id: number; created: boolean }> {
  const inserted = await tx
    .insertInto('brands')
    .values({ uuid: row.uuid, name: row.name, timezone: row.timezone, status: row.status, created_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .onConflict((oc) => oc.column('uuid').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return { id: inserted.id, created: true };
  const found = await tx.selectFrom('brands').select('id').where('uuid', '=', row.uuid).executeTakeFirstOrThrow();
  return { id: found.id, created: false };
}

/** Inserts the key unless its hash is already stored (a re-run); true when inserted. */
export async function insertApiKeyByHash(
  tx: Db,
  row: { brandId: number; name: string; prefix: string; keyHash: string; revoked: boolean; createdAt: Date | null; lastUsedAt: Date | null },
): Promise<boolean> {
  const inserted = await tx
    .insertInto('api_keys')
    .values({
      brand_id: row.brandId,
      name: row.name,
      prefix: row.prefix,
      key_hash: row.keyHash,
      mode: 'live',
      // OwnPay's keys are spelled `op_…`: they speak its dialect here (README, Coming from OwnPay).
      dialect: 'ownpay',
      created_at: row.createdAt ?? sql<Date>`now()`,
      last_used_at: row.lastUsedAt,
      revoked_at: row.revoked ? sql<Date>`now()` : null,
    })
    .onConflict((oc) => oc.column('key_hash').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}
