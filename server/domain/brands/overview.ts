import type { BrandStatus, Mode } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';
import { effectiveTimeZone } from '../devices/dashboard.ts';
import { getSettings } from '../settings/service.ts';
import { selectOverviewBrands, selectOverviewFigures } from './queries.ts';

export interface BrandOverview {
  brand_id: number;
  brand_name: string;
  brand_status: BrandStatus;
  timezone: string;
  date: string;
  revenue: Array<{ currency: string; amount: string; count: number }>;
  transactions_created: number;
  review: { transactions: number; sms_records: number; oldest_waiting_since: string | null };
  waiting_by_mode: Record<Mode, number>;
  devices: { online: number; offline: number; low_battery: number; last_heartbeat_at: string | null };
  webhooks: { dead_letters: number; retrying: number; delivered_24h: number; endpoints_disabled: number };
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

/**
 * The console's overview: per brand, today's figures in the brand's own day,
 * the review queue, devices and webhook health. Presence follows the offline
 * detector's rule (silent longer than `device_offline_minutes`, counting from
 * pairing when it never called), as the device list does.
 */
export async function getOverview(em: Db, f: { brandId?: number; mode: Mode; brandIds?: readonly number[] | null }): Promise<BrandOverview[]> {
  const brands = await selectOverviewBrands(em, f);
  if (brands.length === 0) return [];
  const settings = await getSettings(em);
  const zones = brands.map((b) => effectiveTimeZone(b.timezone));
  const rows = await selectOverviewFigures(em, {
    brandIds: brands.map((b) => b.id),
    zones,
    mode: f.mode,
    batteryLowPercent: settings.battery_low_percent,
    deviceOfflineMinutes: settings.device_offline_minutes,
  });
  const byId = new Map(rows.map((r) => [Number(r.brand_id), r]));
  return brands.map((b, i) => {
    const r = byId.get(b.id)!;
    return {
      brand_id: b.id,
      brand_name: b.name,
      brand_status: b.status as BrandStatus,
      timezone: zones[i]!,
      date: r.day,
      revenue: r.revenue.map((x) => ({ currency: x.currency, amount: x.amount, count: Number(x.count) })),
      transactions_created: Number(r.created),
      review: { transactions: Number(r.review_transactions), sms_records: Number(r.review_sms), oldest_waiting_since: iso(r.oldest_waiting) },
      waiting_by_mode: { live: Number(r.waiting_live), test: Number(r.waiting_test) },
      devices: { online: Number(r.online), offline: Number(r.offline), low_battery: Number(r.low_battery), last_heartbeat_at: iso(r.last_heartbeat_at) },
      webhooks: { dead_letters: Number(r.dead_letters), retrying: Number(r.retrying), delivered_24h: Number(r.delivered_24h), endpoints_disabled: Number(r.endpoints_disabled) },
    };
  });
}
