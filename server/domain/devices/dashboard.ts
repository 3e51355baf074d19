import type { Mode } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';
import { toMoney } from '../money/decimal.ts';
import { getBrand } from '../brands/service.ts';
import { countUnreadNotifications } from '../notifications/service.ts';
import { countToday, selectRecentTransactions, sumCompletedToday } from './queries/dashboard.ts';

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
export async function getDashboard(em: Db, caller: { brandId: number; deviceId: number; mode: Mode }): Promise<Dashboard> {
  // Figures of the device's own mode only: a test phone shows test payments, a live phone live ones.
  const brand = await getBrand(em, caller.brandId);
  const tz = effectiveTimeZone(brand.timezone);
  const counts = await countToday(em, caller, tz, PENDING_STATUSES);
  const revenueRows = await sumCompletedToday(em, caller, tz);
  const recent = await selectRecentTransactions(em, caller, RECENT_TRANSACTIONS);

  const byCurrency = revenueRows
    .map((r) => ({ currency: r.currency, amount: toMoney(r.amount), count: Number(r.n) }))
    .sort((a, b) => (a.currency < b.currency ? -1 : 1));
  const currency = headlineCurrency(byCurrency);
  return {
    today: {
      date: counts.day,
      timezone: tz,
      revenue: byCurrency.find((r) => r.currency === currency)?.amount ?? '0.00',
      currency,
      revenueByCurrency: byCurrency.map(({ currency: c, amount }) => ({ currency: c, amount })),
      total: Number(counts.total),
      pending: Number(counts.pending),
    },
    recentTransactions: recent.map((r) => ({
      trxId: r.trx_id,
      amount: toMoney(r.amount),
      currency: r.currency,
      status: r.status,
      gateway: r.code,
      createdAt: r.created_at,
    })),
    unreadNotifications: await countUnreadNotifications(em, caller.deviceId),
    serverTime: new Date(),
  };
}
