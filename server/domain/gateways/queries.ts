import type { Insertable, Selectable, UpdateObject } from 'kysely';
import { type DB, type Db } from '../db.ts';

/** The `gateways` table. */

export type GatewayRow = Selectable<DB['gateways']>;

export async function insertGateway(db: Db, values: Insertable<DB['gateways']>): Promise<GatewayRow> {
  return db.insertInto('gateways').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function updateGatewayByCode(db: Db, code: string, set: UpdateObject<DB, 'gateways'>): Promise<GatewayRow | undefined> {
  return db.updateTable('gateways').set(set).where('code', '=', code).returningAll().executeTakeFirst();
}

export async function gatewayByCode(db: Db, code: string): Promise<GatewayRow | undefined> {
  return db.selectFrom('gateways').selectAll().where('code', '=', code).executeTakeFirst();
}

/** Locks the gateway's row to the end of the transaction; false when there is none. */
export async function lockGateway(tx: Db, code: string): Promise<boolean> {
  return (await tx.selectFrom('gateways').select('id').where('code', '=', code).forUpdate().executeTakeFirst()) !== undefined;
}

/** In display order (sort_order, then id). */
export async function gatewaysInOrder(db: Db, opts: { enabledOnly?: boolean } = {}): Promise<GatewayRow[]> {
  return db
    .selectFrom('gateways')
    .selectAll()
    .$if(opts.enabledOnly === true, (q) => q.where('enabled', '=', true))
    .orderBy('sort_order')
    .orderBy('id')
    .execute();
}
