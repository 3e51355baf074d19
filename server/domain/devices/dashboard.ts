import type { EntityManager } from '../../infra/database/orm.ts';
import { toMoney } from '../money/decimal.ts';
import { getBrand } from '../brands/service.ts';
import { countUnreadNotifications } from '../notifications/service.ts';

const RECENT_TRANSACTIONS = 5;
/** The dashboard's "pending": everything a payment can wait in. */
const PENDING_STATUSES = ['pending', 'processing', 'awaiting_verification'] as const;

export interface Dashboard {
  today: {
    date: string;
    timezone: string;
    revenue: string;
    currency: string | null;
    revenueByCurrency: Array<{ currency: string; amount: string }>;
    total: number;
    pending: number;
  };
  recentTransactions: Array<{ trxId: string; amount: string; currency: string; status: string; gateway: string; createdAt: Date }>;
  unreadNotifications: number;
  serverTime: Date;
}

/** A time zone both ICU and PostgreSQL understand, or UTC: a bad stored value must not break the dashboard. */
export function effectiveTimeZone(tz: string | null | undefined): string {
  if (!tz) return 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return tz;
  } catch {
    return 'UTC';
  }
}

/**
 * The currency `revenue` is given in when today's completed payments used more
 * than one: the one with the most payments (ties: alphabetical). Adding amounts
 * of different currencies would be meaningless, so every currency's sum is also
 * listed.
 */
export function headlineCurrency(rows: ReadonlyArray<{ currency: string; count: number }>): string | null {
  const sorted = [...rows].sort((a, b) => b.count - a.count || (a.currency < b.currency ? -1 : 1));
  return sorted[0]?.currency ?? null;
}

/**
 * The device's home screen. "Today" is the calendar day in the brand's time
 * zone (brands.timezone, UTC by default): revenue counts payments completed
 * today, `total` and `pending` count transactions created today (pending =
 * still pending, processing or awaiting verification).
 */
export async function getDashboard(em: EntityManager, caller: { brandId: number; deviceId: number; mode: 'live' | 'test' }): Promise<Dashboard> {
  // Figures of the device's own mode only: a test phone shows test payments, a live phone live ones.
  const brand = await getBrand(em, caller.brandId);
  const tz = effectiveTimeZone(brand.timezone);
  const bounds = `WITH bounds AS (
      SELECT (date_trunc('day', now() AT TIME ZONE ?) AT TIME ZONE ?) AS start_at,
             ((date_trunc('day', now() AT TIME ZONE ?) + interval '1 day') AT TIME ZONE ?) AS end_at
    )`;
  const tzParams = [tz, tz, tz, tz];

  const [counts] = await em.execute<Array<{ total: string; pending: string; day: string }>>(
    `${bounds}
     SELECT count(t.id) AS total,
            count(t.id) FILTER (WHERE t.status = ANY(ARRAY[?]::text[])) AS pending,
            to_char(now() AT TIME ZONE ?, 'YYYY-MM-DD') AS day
       FROM bounds LEFT JOIN transactions t
         ON t.brand_id = ? AND t.mode = ? AND t.created_at >= bounds.start_at AND t.created_at < bounds.end_at`,
    [...tzParams, [...PENDING_STATUSES], tz, caller.brandId, caller.mode],
  );
  const revenueRows = await em.execute<Array<{ currency: string; amount: string; n: string }>>(
    `${bounds}
     SELECT t.currency, sum(t.amount)::text AS amount, count(*) AS n
       FROM transactions t, bounds
      WHERE t.brand_id = ? AND t.mode = ? AND t.status = 'completed'
        AND t.completed_at >= bounds.start_at AND t.completed_at < bounds.end_at
      GROUP BY t.currency`,
    [...tzParams, caller.brandId, caller.mode],
  );
  const recent = await em.execute<Array<{ trx_id: string; amount: string; currency: string; status: string; gateway: string; created_at: Date }>>(
    `SELECT t.trx_id, t.amount::text AS amount, t.currency, t.status, g.code AS gateway, t.created_at
       FROM transactions t JOIN gateways g ON g.id = t.gateway_id
      WHERE t.brand_id = ? AND t.mode = ?
      ORDER BY t.created_at DESC, t.id DESC
      LIMIT ?`,
    [caller.brandId, caller.mode, RECENT_TRANSACTIONS],
  );

  const byCurrency = revenueRows
    .map((r) => ({ currency: r.currency, amount: toMoney(r.amount), count: Number(r.n) }))
    .sort((a, b) => (a.currency < b.currency ? -1 : 1));
  const currency = headlineCurrency(byCurrency);
  return {
    today: {
      date: counts!.day,
      timezone: tz,
      revenue: byCurrency.find((r) => r.currency === currency)?.amount ?? '0.00',
      currency,
      revenueByCurrency: byCurrency.map(({ currency: c, amount }) => ({ currency: c, amount })),
      total: Number(counts!.total),
      pending: Number(counts!.pending),
    },
    recentTransactions: recent.map((r) => ({
      trxId: r.trx_id,
      amount: toMoney(r.amount),
      currency: r.currency,
      status: r.status,
      gateway: r.gateway,
      createdAt: new Date(r.created_at),
    })),
    unreadNotifications: await countUnreadNotifications(em, caller.deviceId),
    serverTime: new Date(),
  };
}
