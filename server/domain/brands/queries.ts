import { CompiledQuery, sql, type Insertable, type Selectable } from 'kysely';
import { smsReviewStatuses, type BrandStatus, type Mode } from '../../../contract/vocabulary.ts';
import { prepared, rawStatement, type DB, type Db } from '../db.ts';
import { countUpsert } from '../rate-limit/queries.ts';

/**
 * The brand ids of a console operator's scope as one `IN (?)` parameter (the
 * driver expands an array into a list). An empty scope matches no brand: brand
 * ids start at 1, so 0 is never one.
 */
export function scopeParam(brandIds: readonly number[]): number[] {
  return brandIds.length ? [...brandIds] : [0];
}

export type BrandRow = Selectable<DB['brands']>;
export type ApiKeyRow = Selectable<DB['api_keys']>;

/** What the console shows of a brand, and of a key (never its hash). */
const BRAND_COLUMNS = ['id', 'uuid', 'name', 'timezone', 'status', 'receipts_enabled', 'receipts_enabled_at', 'primary_color', 'support_phone', 'support_email', 'created_at', 'updated_at'] as const;
const KEY_COLUMNS = ['id', 'brand_id', 'name', 'prefix', 'mode', 'dialect', 'created_at', 'last_used_at', 'revoked_at', 'scopes', 'expires_at'] as const;
export type ShownBrandRow = Pick<BrandRow, (typeof BRAND_COLUMNS)[number]>;
export type ShownKeyRow = Pick<ApiKeyRow, (typeof KEY_COLUMNS)[number]>;

// Brands

export async function insertBrand(db: Db, row: Insertable<DB['brands']>): Promise<BrandRow> {
  return db.insertInto('brands').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function selectBrand(db: Db, id: number): Promise<BrandRow | undefined> {
  return db.selectFrom('brands').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The brand as the console shows it; `forUpdate` locks the row until the transaction ends. */
export async function selectShownBrand(db: Db, id: number, opts: { forUpdate?: boolean } = {}): Promise<ShownBrandRow | undefined> {
  let q = db.selectFrom('brands').select(BRAND_COLUMNS).where('id', '=', id);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** One page of brands in id order (of the status, among `brandIds` when given), and how many match. */
export async function selectBrandPage(
  db: Db,
  f: { status?: BrandStatus; brandIds?: number[] | null },
  page: { limit: number; offset: number },
): Promise<{ rows: ShownBrandRow[]; total: number }> {
  let q = db.selectFrom('brands');
  if (f.status) q = q.where('status', '=', f.status);
  if (f.brandIds) q = q.where('id', 'in', scopeParam(f.brandIds));
  const { n } = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q.select(BRAND_COLUMNS).orderBy('id').limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}

export async function updateBrandRow(
  tx: Db,
  id: number,
  patch: { name?: string; timezone?: string; status?: BrandStatus; receiptsEnabled?: boolean; primaryColor?: string | null; supportPhone?: string | null; supportEmail?: string | null },
): Promise<ShownBrandRow> {
  return tx
    .updateTable('brands')
    .set({
      ...(patch.name !== undefined && { name: patch.name }),
      ...(patch.timezone !== undefined && { timezone: patch.timezone }),
      ...(patch.status !== undefined && { status: patch.status }),
      // Switching receipts on starts their clock: what completed before is never mailed.
      ...(patch.receiptsEnabled !== undefined && {
        receipts_enabled: patch.receiptsEnabled,
        receipts_enabled_at: patch.receiptsEnabled ? sql<Date>`CASE WHEN receipts_enabled THEN receipts_enabled_at ELSE now() END` : null,
      }),
      ...(patch.primaryColor !== undefined && { primary_color: patch.primaryColor }),
      ...(patch.supportPhone !== undefined && { support_phone: patch.supportPhone }),
      ...(patch.supportEmail !== undefined && { support_email: patch.supportEmail }),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .returning(BRAND_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function countBrands(db: Db): Promise<number> {
  const { n } = await db.selectFrom('brands').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

export async function gatewayCodeExists(db: Db, code: string): Promise<boolean> {
  return (await db.selectFrom('gateways').select('id').where('code', '=', code).executeTakeFirst()) !== undefined;
}

const ownerTables = { wallet_account: 'wallet_accounts', device: 'devices', transaction: 'transactions', refund: 'refunds', delivery: 'webhook_deliveries', sms_record: 'sms_records', statement_upload: 'statement_uploads', customer: 'customers' } as const;

/** The brand of a brand-owned object; undefined when there is no such object. */
export async function selectOwnerBrandId(db: Db, kind: keyof typeof ownerTables, id: number): Promise<number | undefined> {
  const row = await db.selectFrom(ownerTables[kind]).select('brand_id').where('id', '=', id).executeTakeFirst();
  return row ? Number(row.brand_id) : undefined;
}

// API keys

export async function insertApiKey(db: Db, row: Insertable<DB['api_keys']>): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function selectApiKey(db: Db, brandId: number, id: number): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).where('brand_id', '=', brandId).executeTakeFirst();
}

/** The brand's key as the console shows it; `forUpdate` locks it until the transaction ends. */
export async function selectShownKey(db: Db, brandId: number, id: number, opts: { forUpdate?: boolean } = {}): Promise<ShownKeyRow | undefined> {
  let q = db.selectFrom('api_keys').select(KEY_COLUMNS).where('id', '=', id).where('brand_id', '=', brandId);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** The brand's keys as the console shows them, newest first. */
export async function selectShownKeys(db: Db, brandId: number): Promise<ShownKeyRow[]> {
  return db.selectFrom('api_keys').select(KEY_COLUMNS).where('brand_id', '=', brandId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/** Revokes the key if it is not revoked yet; undefined when it was (or does not exist). */
export async function revokeApiKeyRow(db: Db, brandId: number, id: number): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('id', '=', id)
    .where('brand_id', '=', brandId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/**
 * `last_used_at` is written at most this often: the admin list shows it to the
 * minute, and a call that finds it fresh stays one read-only statement.
 */
const API_KEY_LAST_USED_RESOLUTION_SECONDS = 60;

// Staleness on the database's clock, like the write below: the application's may differ.
const staleKey = sql<boolean>`(k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${API_KEY_LAST_USED_RESOLUTION_SECONDS}))`;

/** The lookup of every merchant request, compiled once (db.ts `prepared`; BENCHMARKS.md, "Data layer"). */
const apiKeysByHash = prepared((k, $: { hashes: string[] }) =>
  k
    .selectFrom('api_keys as k')
    .innerJoin('brands as b', 'b.id', 'k.brand_id')
    .select(['k.key_hash', 'k.id', 'k.brand_id', 'k.mode', 'k.scopes', staleKey.as('stale')])
    // One array parameter: one statement shape (and plan) whatever the number of keys.
    .where('k.key_hash', '=', sql<string>`ANY(${$.hashes}::varchar[])`)
    .where('k.revoked_at', 'is', null)
    // An expired key is refused like a revoked one (on the database's clock).
    .where((w) => w.or([w('k.expires_at', 'is', null), w('k.expires_at', '>', sql<Date>`now()`)]))
    .where('b.status', '=', 'active'),
);

/** The live keys (not revoked, brand active) with these hashes, each with whether its `last_used_at` is stale. */
export async function selectLiveKeysByHash(db: Db, hashes: string[]) {
  return apiKeysByHash.execute(db, { hashes });
}

/** Refreshes stale `last_used_at` values; conditional: of many calls racing past the minute mark, one writes. */
export async function touchApiKeys(db: Db, ids: number[]): Promise<void> {
  await db
    .updateTable('api_keys as k')
    .set({ last_used_at: sql<Date>`now()` })
    .where('k.id', '=', sql<number>`ANY(${ids}::bigint[])`)
    .where(staleKey)
    .execute();
}

/** The row of `lookupAndCount`: the key, and its rate-limit count when the key was accepted. */
export interface CountedKeyRow {
  id: number | string;
  brand_id: number | string;
  mode: string;
  scopes: string[] | null;
  stale: boolean;
  hits: number | string | null;
  reset_seconds: number | string | null;
  window_epoch: number | string | null;
}

/**
 * The lookup of `selectLiveKeysByHash` for one key and, in the same statement,
 * the request's count in that key's merchant rate limit (`api-key:<id>` in
 * `rate_limits`, as rate-limit/queries.ts `countHits` keeps it). The count is
 * the limiter's own upsert (the window on the database clock, one atomic
 * `INSERT ... ON CONFLICT`), done only when the lookup accepts the key, as when
 * the limiter ran after authentication.
 *
 * Raw: the increment is countHits' own SQL (rate-limit/queries.ts `countUpsert`),
 * kept one text so the two can never count differently; the typed builder
 * cannot embed it.
 */
const lookupAndCount = rawStatement<CountedKeyRow>(`
WITH found AS (
  SELECT k.id, k.brand_id, k.mode, k.scopes,
         (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => ${API_KEY_LAST_USED_RESOLUTION_SECONDS})) AS stale
    FROM api_keys k JOIN brands b ON b.id = k.brand_id
   WHERE k.key_hash = $1::varchar AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()) AND b.status = 'active'
),
spent AS (
  SELECT 'api-key:' || f.id AS bucket, $2::integer AS w, to_timestamp(floor(extract(epoch FROM now()) / $2::integer) * $2::integer) AS window_start
    FROM found f
),
counted AS (
  ${countUpsert('spent')}
)
SELECT f.id, f.brand_id, f.mode, f.scopes, f.stale, c.hits, c.reset_seconds, c.window_epoch
  FROM found f LEFT JOIN counted c ON c.bucket = 'api-key:' || f.id`);

/** The live key with this hash, counted in its rate-limit window of `windowSeconds`; undefined when there is none. */
export async function selectLiveKeyAndCount(db: Db, hash: string, windowSeconds: number): Promise<CountedKeyRow | undefined> {
  const [row] = await lookupAndCount(db, [hash, windowSeconds]);
  return row;
}

// The console's overview (brands/overview.ts)

/** The brands of the overview (one, or those in scope, or all), in id order. */
export async function selectOverviewBrands(db: Db, f: { brandId?: number; brandIds?: readonly number[] | null }) {
  return db
    .selectFrom('brands')
    .select(['id', 'name', 'status', 'timezone'])
    .$if(f.brandId !== undefined, (q) => q.where('id', '=', f.brandId!))
    .$if(f.brandIds != null, (q) => q.where('id', 'in', scopeParam(f.brandIds!)))
    .orderBy('id')
    .execute();
}

export interface OverviewFiguresRow {
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

/**
 * Per brand (`brandIds[i]` in the time zone `zones[i]`), today's figures in the
 * brand's own day in `mode`, the review queue (and what waits in each mode),
 * devices (online: heard from within `deviceOfflineMinutes`, counting from
 * pairing when it never called) and webhook health.
 */
export async function selectOverviewFigures(
  db: Db,
  f: { brandIds: readonly number[]; zones: readonly string[]; mode: Mode; batteryLowPercent: number; deviceOfflineMinutes: number },
): Promise<OverviewFiguresRow[]> {
  // Raw SQL: one aggregate read over six tables with a per-brand calendar day
  // (unnest of ids and zones, LATERAL day bounds); as a builder it would be the
  // same SQL in fragments. Kept to one round trip, since the console polls it.
  const { rows } = await db.executeQuery<OverviewFiguresRow>(
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
      [...f.brandIds],
      `{${f.zones.map((z) => `"${z.replace(/["\\]/g, '')}"`).join(',')}}`,
      f.mode,
      f.mode,
      f.mode,
      f.mode,
      f.mode,
      `{${smsReviewStatuses.join(',')}}`,
      f.mode,
      f.mode,
      `{${smsReviewStatuses.join(',')}}`,
      f.batteryLowPercent,
      f.deviceOfflineMinutes,
      f.mode,
      f.mode,
    ],
    ),
  );
  return rows;
}

/**
 * What OwnPay's health route reports for a brand and mode, in one statement:
 * its active devices, those with a heartbeat in the last 10 minutes, the
 * enabled gateways and its customers.
 */
export async function selectHealthFigures(db: Db, brandId: number, mode: 'live' | 'test') {
  return db
    .selectNoFrom((eb) => [
      eb.selectFrom('devices').select((e) => e.fn.countAll<string>().as('n')).where('brand_id', '=', brandId).where('mode', '=', mode).where('status', '=', 'active').as('active_devices'),
      eb
        .selectFrom('devices')
        .select((e) => e.fn.countAll<string>().as('n'))
        .where('brand_id', '=', brandId)
        .where('mode', '=', mode)
        .where('status', '=', 'active')
        .where('last_heartbeat_at', '>', sql<Date>`now() - interval '10 minutes'`)
        .as('recent_devices'),
      eb.selectFrom('gateways').select((e) => e.fn.countAll<string>().as('n')).where('enabled', '=', true).as('gateways'),
      eb.selectFrom('customers').select((e) => e.fn.countAll<string>().as('n')).where('brand_id', '=', brandId).where('mode', '=', mode).where('erased_at', 'is', null).as('customers'),
    ])
    .executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------
// The brand's look (look.ts): its logo, stored in PostgreSQL, and what a customer page shows of the brand

/** Locks the brand row (a logo change is serialised per brand); undefined when there is no such brand. */
export function lockBrandUuid(tx: Db, brandId: number) {
  return tx.selectFrom('brands').select(['id', 'uuid']).where('id', '=', brandId).forUpdate().executeTakeFirst();
}

export function selectLogoHash(db: Db, brandId: number) {
  return db.selectFrom('brand_logos').select(['sha256']).where('brand_id', '=', brandId).executeTakeFirst();
}

/** Sets the brand's one logo, replacing any. */
export function upsertBrandLogo(tx: Db, brandId: number, logo: Omit<Insertable<DB['brand_logos']>, 'brand_id'>) {
  return tx
    .insertInto('brand_logos')
    .values({ brand_id: brandId, ...logo })
    .onConflict((oc) => oc.column('brand_id').doUpdateSet({ ...logo, updated_at: sql<Date>`now()` }))
    .returning(['updated_at'])
    .executeTakeFirstOrThrow();
}

/** Removes the brand's logo; undefined when it had none. */
export function deleteBrandLogoRow(tx: Db, brandId: number) {
  return tx.deleteFrom('brand_logos').where('brand_id', '=', brandId).returning(['sha256']).executeTakeFirst();
}

/** The logo's description (not its bytes), with its brand's public id. */
export function selectLogoMeta(db: Db, brandId: number) {
  return db
    .selectFrom('brand_logos as l')
    .innerJoin('brands as b', 'b.id', 'l.brand_id')
    .select(['b.uuid', 'l.sha256', 'l.content_type', 'l.width', 'l.height', 'l.updated_at', sql<number>`octet_length(l.content)`.as('bytes')])
    .where('l.brand_id', '=', brandId)
    .executeTakeFirst();
}

/** The logo of an active brand, by the brand's public id. */
export function selectActiveBrandLogo(db: Db, brandUuid: string) {
  return db
    .selectFrom('brand_logos as l')
    .innerJoin('brands as b', 'b.id', 'l.brand_id')
    .select(['l.content_type', 'l.content', 'l.sha256'])
    .where('b.uuid', '=', brandUuid)
    .where('b.status', '=', 'active')
    .executeTakeFirst();
}

/** What a customer page shows of the brand, with its logo's hash if it has one. */
export function selectPageBrandRow(db: Db, brandId: number) {
  return db
    .selectFrom('brands as b')
    .leftJoin('brand_logos as l', 'l.brand_id', 'b.id')
    .select(['b.name', 'b.uuid', 'b.primary_color', 'b.support_phone', 'b.support_email', 'l.sha256'])
    .where('b.id', '=', brandId)
    .executeTakeFirstOrThrow();
}
