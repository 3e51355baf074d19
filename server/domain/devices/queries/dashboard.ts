import { sql } from 'kysely';
import type { Mode, TransactionStatus } from '../../../../contract/vocabulary.ts';
import type { Db } from '../../db.ts';

// The statements of a device's home screen: today's figures in the brand's time zone, and the latest transactions.

/** Today, in the time zone `tz`, as the CTE `bounds` (start_at, end_at). */
function withToday(db: Db, tz: string) {
  // Raw: the day's bounds in the brand's time zone (AT TIME ZONE has no builder form).
  return db.with('bounds', (qb) =>
    qb.selectNoFrom([
      sql<Date>`(date_trunc('day', now() AT TIME ZONE ${tz}) AT TIME ZONE ${tz})`.as('start_at'),
      sql<Date>`((date_trunc('day', now() AT TIME ZONE ${tz}) + interval '1 day') AT TIME ZONE ${tz})`.as('end_at'),
    ]),
  );
}

/** Today's date in `tz`, and how many of the brand's transactions of the mode were created today (all, and those in `pendingStatuses`). */
export async function countToday(db: Db, scope: { brandId: number; mode: Mode }, tz: string, pendingStatuses: readonly TransactionStatus[]) {
  return withToday(db, tz)
    .selectFrom('bounds')
    .leftJoin('transactions as t', (join) =>
      join
        .on('t.brand_id', '=', scope.brandId)
        .on(sql.ref('t.mode'), '=', scope.mode)
        .onRef('t.created_at', '>=', 'bounds.start_at')
        .onRef('t.created_at', '<', 'bounds.end_at'),
    )
    .select((eb) => [
      eb.fn.count<string>('t.id').as('total'),
      eb.fn.count<string>('t.id').filterWhere('t.status', 'in', [...pendingStatuses]).as('pending'),
      sql<string>`to_char(now() AT TIME ZONE ${tz}, 'YYYY-MM-DD')`.as('day'),
    ])
    .executeTakeFirstOrThrow();
}

/** The sums of today's completed transactions per currency, with their counts. */
export async function sumCompletedToday(db: Db, scope: { brandId: number; mode: Mode }, tz: string) {
  return withToday(db, tz)
    .selectFrom(['transactions as t', 'bounds'])
    .select((eb) => ['t.currency', eb.fn.sum<string>('t.amount').as('amount'), eb.fn.countAll<string>().as('n')])
    .where('t.brand_id', '=', scope.brandId)
    .where(sql.ref('t.mode'), '=', scope.mode)
    .where('t.status', '=', 'completed')
    .whereRef('t.completed_at', '>=', 'bounds.start_at')
    .whereRef('t.completed_at', '<', 'bounds.end_at')
    .groupBy('t.currency')
    .execute();
}

/** The brand's latest transactions of the mode, newest first. */
export async function selectRecentTransactions(db: Db, scope: { brandId: number; mode: Mode }, limit: number) {
  return db
    .selectFrom('transactions as t')
    .innerJoin('gateways as g', 'g.id', 't.gateway_id')
    .select(['t.trx_id', 't.amount', 't.currency', 't.status', 'g.code', 't.created_at'])
    .where('t.brand_id', '=', scope.brandId)
    .where(sql.ref('t.mode'), '=', scope.mode)
    .orderBy('t.created_at', 'desc')
    .orderBy('t.id', 'desc')
    .limit(limit)
    .execute();
}
