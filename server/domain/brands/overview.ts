import { CompiledQuery } from 'kysely';
import { smsReviewStatuses, type BrandStatus, type Mode } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';
import { effectiveTimeZone } from '../devices/dashboard.ts';
import { getSettings } from '../settings/service.ts';
import { scopeParam } from './scope.ts';

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

interface FiguresRow {
  brand_id: string;
  day: string;
  revenue: Array<{ currency: string; amount: string; count: number }>;
  created: string;
  review_transactions: string;
  review_sms: string;
  oldest_waiting: Date | string | null;
  waiting_live: string;
  waiting_test: string;
  online: string;
  offline: string;
  low_battery: string;
  last_heartbeat_at: Date | string | null;
  dead_letters: string;
  retrying: string;
  delivered_24h: string;
  endpoints_disabled: string;
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

/**
 * The console's overview: per brand, today's figures in the brand's own day,
 * the review queue, devices and webhook health. Presence follows the offline
 * detector's rule (silent longer than `device_offline_minutes`, counting from
 * pairing when it never called), as the device list does.
 */
export async function getOverview(em: Db, f: { brandId?: number; mode: Mode; brandIds?: readonly number[] | null }): Promise<BrandOverview[]> {
  const brands = await em
    .selectFrom('brands')
    .select(['id', 'name', 'status', 'timezone'])
    .$if(f.brandId !== undefined, (q) => q.where('id', '=', f.brandId!))
    .$if(f.brandIds != null, (q) => q.where('id', 'in', scopeParam(f.brandIds!)))
    .orderBy('id')
    .execute();
  if (brands.length === 0) return [];
  const settings = await getSettings(em);
  const zones = brands.map((b) => effectiveTimeZone(b.timezone));
  // Raw SQL: one aggregate read over six tables with a per-brand calendar day
  // (unnest of ids and zones, LATERAL day bounds); as a builder it would be the
  // same SQL in fragments. Kept to one round trip, since the console polls it.
  const { rows } = await em.executeQuery<FiguresRow>(
    CompiledQuery.raw(
    `WITH b AS (
       SELECT u.id, u.tz,
              (date_trunc('day', now() AT TIME ZONE u.tz) AT TIME ZONE u.tz) AS start_at,
              ((date_trunc('day', now() AT TIME ZONE u.tz) + interval '1 day') AT TIME ZONE u.tz) AS end_at,
              to_char(now() AT TIME ZONE u.tz, 'YYYY-MM-DD') AS day
         FROM unnest($1::bigint[], $2::text[]) AS u(id, tz)
     )
     SELECT b.id AS brand_id, b.day,
            (SELECT coalesce(json_agg(json_build_object('currency', r.currency, 'amount', r.amount::text, 'count', r.n) ORDER BY r.currency), '[]'::json)
               FROM (SELECT t.currency, sum(t.amount) AS amount, count(*)::int AS n FROM transactions t
                      WHERE t.brand_id = b.id AND t.mode = $3 AND t.status = 'completed' AND t.completed_at >= b.start_at AND t.completed_at < b.end_at
                      GROUP BY t.currency) r) AS revenue,
            (SELECT count(*) FROM transactions t WHERE t.brand_id = b.id AND t.mode = $4 AND t.created_at >= b.start_at AND t.created_at < b.end_at) AS created,
            w.review_transactions, w.review_sms, w.oldest_waiting, m.waiting_live, m.waiting_test,
            d.online, d.offline, d.low_battery, d.last_heartbeat_at,
            h.dead_letters, h.retrying, h.delivered_24h,
            (SELECT count(*) FROM webhook_endpoints e WHERE e.brand_id = b.id AND (e.mode = $5 OR e.mode IS NULL) AND NOT e.enabled AND e.disabled_reason IN ('failing', 'gone')) AS endpoints_disabled
       FROM b
       CROSS JOIN LATERAL (
         SELECT (SELECT count(*) FROM transactions t WHERE t.brand_id = b.id AND t.mode = $6 AND t.status = 'awaiting_verification') AS review_transactions,
                (SELECT count(*) FROM sms_records s WHERE s.brand_id = b.id AND s.mode = $7 AND s.match_status = ANY($8::text[]) AND s.resolved_at IS NULL) AS review_sms,
                LEAST(
                  (SELECT min(t.updated_at) FROM transactions t WHERE t.brand_id = b.id AND t.mode = $9 AND t.status = 'awaiting_verification'),
                  (SELECT min(s.created_at) FROM sms_records s WHERE s.brand_id = b.id AND s.mode = $10 AND s.match_status = ANY($11::text[]) AND s.resolved_at IS NULL)
                ) AS oldest_waiting
       ) w
       -- Both modes, whatever mode was asked: the console's mode switch shows where work waits.
       CROSS JOIN LATERAL (
         SELECT (SELECT count(*) FROM transactions t WHERE t.brand_id = b.id AND t.mode = 'live' AND t.status = 'awaiting_verification')
              + (SELECT count(*) FROM sms_records s WHERE s.brand_id = b.id AND s.mode = 'live' AND s.match_status = ANY($8::text[]) AND s.resolved_at IS NULL) AS waiting_live,
                (SELECT count(*) FROM transactions t WHERE t.brand_id = b.id AND t.mode = 'test' AND t.status = 'awaiting_verification')
              + (SELECT count(*) FROM sms_records s WHERE s.brand_id = b.id AND s.mode = 'test' AND s.match_status = ANY($8::text[]) AND s.resolved_at IS NULL) AS waiting_test
       ) m
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE x.online) AS online, count(*) FILTER (WHERE NOT x.online) AS offline,
                count(*) FILTER (WHERE x.battery_level IS NOT NULL AND x.battery_level <= $12 AND x.is_charging IS NOT TRUE) AS low_battery,
                max(x.last_heartbeat_at) AS last_heartbeat_at
           FROM (SELECT dv.battery_level, dv.is_charging, dv.last_heartbeat_at,
                        COALESCE(dv.last_seen_at, dv.paired_at) >= now() - make_interval(mins => $13) AS online
                   FROM devices dv WHERE dv.brand_id = b.id AND dv.mode = $14 AND dv.status <> 'revoked') x
       ) d
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE wd.status = 'dead_letter') AS dead_letters,
                count(*) FILTER (WHERE wd.status = 'retrying') AS retrying,
                count(*) FILTER (WHERE wd.status = 'success' AND wd.delivered_at >= now() - interval '24 hours') AS delivered_24h
           FROM webhook_deliveries wd
          WHERE wd.brand_id = b.id AND wd.mode = $15
            AND (wd.status IN ('dead_letter', 'retrying') OR wd.delivered_at >= now() - interval '24 hours')
       ) h`,
    [
      [...brands.map((b) => b.id)],
      `{${zones.map((z) => `"${z.replace(/["\\]/g, '')}"`).join(',')}}`,
      f.mode,
      f.mode,
      f.mode,
      f.mode,
      f.mode,
      `{${smsReviewStatuses.join(',')}}`,
      f.mode,
      f.mode,
      `{${smsReviewStatuses.join(',')}}`,
      settings.battery_low_percent,
      settings.device_offline_minutes,
      f.mode,
      f.mode,
    ],
    ),
  );
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
