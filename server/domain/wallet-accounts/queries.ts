import { sql, type Insertable, type Selectable, type UpdateObject } from 'kysely';
import { type DB, type Db } from '../db.ts';

/** The `wallet_accounts` table, and the checkout's choice of account per payment and gateway (`checkout_account_assignments`). */

export type WalletAccountRow = Selectable<DB['wallet_accounts']> & { gateway_code: string; used_today: string };

/**
 * What was assigned to the account today (the amounts to send of its transactions, open or completed, started
 * since midnight of the brand's time zone): what its daily limit is compared with.
 */
const usedToday = sql<string>`(SELECT COALESCE(sum(t.sms_amount), 0)::numeric(14,2)::text FROM transactions t JOIN brands b ON b.id = t.brand_id
   WHERE t.wallet_account_id = a.id AND t.status IN ('pending', 'awaiting_verification', 'completed')
     AND t.created_at >= (date_trunc('day', now() AT TIME ZONE b.timezone) AT TIME ZONE b.timezone))`;

function accounts(db: Db) {
  return db
    .selectFrom('wallet_accounts as a')
    .innerJoin('gateways as g', 'g.id', 'a.gateway_id')
    .selectAll('a')
    .select(['g.code as gateway_code', usedToday.as('used_today')]);
}

/** A brand's accounts, by gateway display order then id; `gatewayCode` narrows to one gateway. */
export async function accountsOfBrand(db: Db, brandId: number, gatewayCode?: string): Promise<WalletAccountRow[]> {
  return accounts(db)
    .where('a.brand_id', '=', brandId)
    .$if(gatewayCode !== undefined, (q) => q.where('g.code', '=', gatewayCode!))
    .orderBy('g.sort_order')
    .orderBy('g.id')
    .orderBy('a.id')
    .execute();
}

export async function accountById(db: Db, accountId: number, opts: { forUpdate?: boolean } = {}): Promise<WalletAccountRow | undefined> {
  return accounts(db)
    .where('a.id', '=', accountId)
    .$if(opts.forUpdate === true, (q) => q.forUpdate('a'))
    .executeTakeFirst();
}

export async function insertAccount(db: Db, values: Insertable<DB['wallet_accounts']>): Promise<number> {
  return (await db.insertInto('wallet_accounts').values(values).returning('id').executeTakeFirstOrThrow()).id;
}

export async function updateAccount(db: Db, accountId: number, set: UpdateObject<DB, 'wallet_accounts'>): Promise<void> {
  await db.updateTable('wallet_accounts').set({ ...set, updated_at: sql<Date>`now()` }).where('id', '=', accountId).execute();
}

export async function deleteAccount(db: Db, accountId: number): Promise<void> {
  await db.deleteFrom('wallet_accounts').where('id', '=', accountId).execute();
}

/** Whether any transaction was paid into the account (then it can be disabled, never deleted: its payments name it). */
export async function accountHasTransactions(db: Db, accountId: number): Promise<boolean> {
  return (await db.selectFrom('transactions').select('id').where('wallet_account_id', '=', accountId).limit(1).executeTakeFirst()) !== undefined;
}

/** The device's brand and status, to bind an account to it. */
export async function deviceForBinding(db: Db, deviceId: number): Promise<{ brand_id: number; status: string } | undefined> {
  return db.selectFrom('devices').select(['brand_id', 'status']).where('id', '=', deviceId).executeTakeFirst();
}

/** Every brand account of these gateways, with today's use, and the account already shown for the payment on each (if any). */
export async function assignmentChoices(db: Db, q: { brandId: number; intentId: number; gatewayIds: readonly number[] }) {
  if (q.gatewayIds.length === 0) return [];
  return accounts(db)
    .leftJoin('checkout_account_assignments as x', (j) => j.onRef('x.account_id', '=', 'a.id').on('x.intent_id', '=', q.intentId))
    .select(sql<boolean>`x.account_id IS NOT NULL`.as('assigned'))
    .where('a.brand_id', '=', q.brandId)
    .where('a.gateway_id', 'in', [...q.gatewayIds])
    .orderBy('a.id')
    .execute();
}

/** Records the choice of `accountId` for the payment and gateway unless one was made meanwhile; true when this one counts. */
export async function insertAssignment(db: Db, a: { intentId: number; gatewayId: number; accountId: number }): Promise<boolean> {
  const row = await db
    .insertInto('checkout_account_assignments')
    .values({ intent_id: a.intentId, gateway_id: a.gatewayId, account_id: a.accountId })
    .onConflict((oc) => oc.columns(['intent_id', 'gateway_id']).doNothing())
    .returning('account_id')
    .executeTakeFirst();
  if (row) await db.updateTable('wallet_accounts').set({ last_assigned_at: sql<Date>`now()` }).where('id', '=', a.accountId).execute();
  return row !== undefined;
}
