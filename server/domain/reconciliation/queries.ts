import { sql, type Insertable } from 'kysely';
import type { Mode, ReconciliationCategory, StatementFormat } from '../../../contract/vocabulary.ts';
import type { DB, Db } from '../db.ts';

/** The tables `statement_uploads`, `statement_lines` and `reconciliation_items` (docs/reconciliation.md). */

export async function insertUpload(db: Db, values: Insertable<DB['statement_uploads']>): Promise<number> {
  return (await db.insertInto('statement_uploads').values(values).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertLines(db: Db, rows: Array<Insertable<DB['statement_lines']>>): Promise<void> {
  // One statement per 500 rows keeps each under PostgreSQL's bind-parameter limit.
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('statement_lines').values(rows.slice(i, i + 500)).execute();
}

/**
 * The reconciliation rule, once, for one upload (docs/reconciliation.md, "The rule"):
 * the statement's incoming rows of the day against the account's incoming SMS
 * records (same brand, mode and gateway; the account's phone and SIM slot when it
 * is bound to them; not an SMS that proved a payment into another account) and the
 * transactions claiming the same gateway trx id, lined up by trx id only. Amount and
 * time are read only for `hint_transaction_ids`, which nothing acts on.
 *
 * Written as one SQL statement: a full outer comparison of two derived sets with
 * per-row lateral picks, which the query builder would only restate less clearly.
 */
export async function reconcileUpload(db: Db, q: { uploadId: number; accountId: number; mode: Mode; dayStart: Date; dayEnd: Date }): Promise<void> {
  await sql`
    WITH acct AS (
      SELECT a.id, a.brand_id, a.gateway_id, a.device_id, a.sim_slot FROM wallet_accounts a WHERE a.id = ${q.accountId}::bigint
    ),
    lines AS (
      SELECT l.id, l.trx_id, l.amount, l.fee, l.occurred_at FROM statement_lines l WHERE l.upload_id = ${q.uploadId}::bigint AND l.direction = 'in'
    ),
    sms AS (
      SELECT r.id, upper(r.parsed_trx_id) AS trx, r.parsed_amount, r.parsed_fee, COALESCE(r.sms_time, r.received_at) AS at
      FROM sms_records r JOIN acct a ON r.brand_id = a.brand_id AND r.gateway_id = a.gateway_id
      WHERE r.mode = ${q.mode} AND r.parsed_trx_id IS NOT NULL AND r.duplicate_of_id IS NULL
        AND r.direction IS DISTINCT FROM 'out'
        AND (a.device_id IS NULL OR r.device_id = a.device_id)
        AND (a.sim_slot IS NULL OR r.sim_slot IS NULL OR r.sim_slot = a.sim_slot)
        AND NOT EXISTS (SELECT 1 FROM transactions o WHERE o.id = r.transaction_id AND o.wallet_account_id <> a.id)
        -- A row's SMS arrives within minutes of it: a day either side covers a late phone without reading the brand's whole history.
        AND COALESCE(r.sms_time, r.received_at) >= ${q.dayStart}::timestamptz - interval '1 day'
        AND COALESCE(r.sms_time, r.received_at) < ${q.dayEnd}::timestamptz + interval '1 day'
    ),
    txn AS (
      SELECT upper(t.gateway_trx_id) AS trx, t.id, t.status, t.sms_amount
      FROM transactions t JOIN acct a ON t.brand_id = a.brand_id AND t.gateway_id = a.gateway_id
      WHERE t.mode = ${q.mode} AND t.gateway_trx_id IS NOT NULL
        AND upper(t.gateway_trx_id) IN (SELECT trx_id FROM lines UNION SELECT trx FROM sms)
    ),
    from_statement AS (
      SELECT l.id AS line_id, l.trx_id, s.id AS sms_id, x.id AS txn_id,
        CASE
          WHEN s.id IS NULL AND (x.id IS NULL OR x.status <> 'completed') THEN 'statement_only'
          WHEN s.id IS NOT NULL AND s.parsed_amount IS DISTINCT FROM l.amount THEN 'amount_mismatch'
          WHEN s.id IS NULL AND x.sms_amount <> l.amount THEN 'amount_mismatch'
          WHEN s.id IS NOT NULL AND l.fee IS NOT NULL AND s.parsed_fee IS NOT NULL AND s.parsed_fee <> l.fee THEN 'fee_difference'
          ELSE 'matched'
        END AS category,
        l.amount, l.occurred_at
      FROM lines l
      LEFT JOIN LATERAL (SELECT * FROM sms WHERE sms.trx = l.trx_id ORDER BY sms.id LIMIT 1) s ON true
      LEFT JOIN txn x ON x.trx = l.trx_id
      WHERE l.occurred_at >= ${q.dayStart}::timestamptz AND l.occurred_at < ${q.dayEnd}::timestamptz
    )
    INSERT INTO reconciliation_items (upload_id, category, trx_id, statement_line_id, sms_record_id, transaction_id, hint_transaction_ids)
    SELECT ${q.uploadId}::bigint, f.category, f.trx_id, f.line_id, f.sms_id, f.txn_id,
      CASE WHEN f.category = 'statement_only' THEN ARRAY(
        SELECT t.id FROM transactions t JOIN acct a ON t.brand_id = a.brand_id AND t.gateway_id = a.gateway_id
        WHERE t.mode = ${q.mode} AND (t.wallet_account_id = a.id OR t.wallet_account_id IS NULL)
          AND t.status IN ('pending', 'processing', 'awaiting_verification') AND t.sms_amount = f.amount
          AND t.created_at BETWEEN f.occurred_at - interval '2 hours' AND f.occurred_at + interval '10 minutes'
          AND t.id IS DISTINCT FROM f.txn_id
        ORDER BY abs(extract(epoch FROM t.created_at - f.occurred_at)), t.id LIMIT 5
      ) END
    FROM from_statement f
    UNION ALL
    SELECT ${q.uploadId}::bigint, 'sms_only', s.trx, NULL::bigint, s.id, x.id, NULL::bigint[]
    FROM sms s LEFT JOIN txn x ON x.trx = s.trx
    WHERE s.at >= ${q.dayStart}::timestamptz AND s.at < ${q.dayEnd}::timestamptz AND NOT EXISTS (SELECT 1 FROM lines l WHERE l.trx_id = s.trx)
  `.execute(db);
}

export interface UploadRow {
  id: number;
  brand_id: number;
  wallet_account_id: number;
  account_number: string;
  gateway_code: string;
  mode: Mode;
  day: string;
  format: StatementFormat;
  file_name: string | null;
  file_sha256: string;
  row_count: number;
  uploaded_by: string;
  created_at: Date;
  counts: Record<string, number>;
}

function uploads(db: Db) {
  return db
    .selectFrom('statement_uploads as u')
    .innerJoin('wallet_accounts as a', 'a.id', 'u.wallet_account_id')
    .innerJoin('gateways as g', 'g.id', 'a.gateway_id')
    .select([
      'u.id', 'u.brand_id', 'u.wallet_account_id', 'a.number as account_number', 'g.code as gateway_code', 'u.mode',
      sql<string>`to_char(u.day, 'YYYY-MM-DD')`.as('day'),
      'u.format', 'u.file_name', 'u.file_sha256', 'u.row_count', 'u.uploaded_by', 'u.created_at',
      sql<Record<string, number>>`(SELECT COALESCE(jsonb_object_agg(c.category, c.n), '{}'::jsonb) FROM
        (SELECT i.category, count(*)::int AS n FROM reconciliation_items i WHERE i.upload_id = u.id GROUP BY i.category) c)`.as('counts'),
    ]);
}

export async function uploadById(db: Db, id: number): Promise<UploadRow | undefined> {
  return (await uploads(db).where('u.id', '=', id).executeTakeFirst()) as UploadRow | undefined;
}

export async function listUploads(
  db: Db,
  q: { scope: number[] | null; brandId?: number; accountId?: number; day?: string; mode?: Mode; limit: number; offset: number },
): Promise<{ rows: UploadRow[]; total: number }> {
  const filtered = uploads(db)
    .$if(q.scope !== null, (b) => b.where('u.brand_id', 'in', q.scope!.length ? q.scope! : [0]))
    .$if(q.brandId !== undefined, (b) => b.where('u.brand_id', '=', q.brandId!))
    .$if(q.accountId !== undefined, (b) => b.where('u.wallet_account_id', '=', q.accountId!))
    .$if(q.day !== undefined, (b) => b.where('u.day', '=', q.day!))
    .$if(q.mode !== undefined, (b) => b.where('u.mode', '=', q.mode!));
  const rows = (await filtered.orderBy('u.created_at', 'desc').orderBy('u.id', 'desc').limit(q.limit).offset(q.offset).execute()) as UploadRow[];
  const total = await db
    .selectFrom(filtered.as('f'))
    .select((e) => e.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return { rows, total: Number(total.n) };
}

export interface ItemRow {
  id: number;
  category: ReconciliationCategory;
  trx_id: string;
  line: number | null;
  occurred_at: Date | null;
  statement_amount: string | null;
  statement_fee: string | null;
  statement_balance: string | null;
  statement_type: string | null;
  statement_status: string | null;
  counterparty_encrypted: string | null;
  sms_record_id: number | null;
  sms_amount: string | null;
  sms_fee: string | null;
  sms_time: Date | null;
  sms_status: string | null;
  transaction_id: number | null;
  transaction_status: string | null;
  hint_transaction_ids: number[] | null;
}

const CATEGORY_ORDER = sql<number>`array_position(ARRAY['statement_only', 'sms_only', 'amount_mismatch', 'fee_difference', 'matched']::varchar[], i.category)`;

/** The report's findings, those that need a person first, then by time. */
export async function itemsOf(db: Db, uploadId: number): Promise<ItemRow[]> {
  return (await db
    .selectFrom('reconciliation_items as i')
    .leftJoin('statement_lines as l', 'l.id', 'i.statement_line_id')
    .leftJoin('sms_records as r', 'r.id', 'i.sms_record_id')
    .leftJoin('transactions as t', 't.id', 'i.transaction_id')
    .select([
      'i.id', 'i.category', 'i.trx_id', 'l.line', 'l.occurred_at',
      'l.amount as statement_amount', 'l.fee as statement_fee', 'l.balance as statement_balance', 'l.type as statement_type', 'l.status as statement_status',
      'l.counterparty_encrypted',
      'i.sms_record_id', 'r.parsed_amount as sms_amount', 'r.parsed_fee as sms_fee', sql<Date | null>`COALESCE(r.sms_time, r.received_at)`.as('sms_time'),
      'r.match_status as sms_status',
      'i.transaction_id', 't.status as transaction_status', 'i.hint_transaction_ids',
    ])
    .where('i.upload_id', '=', uploadId)
    .orderBy(CATEGORY_ORDER)
    .orderBy(sql`COALESCE(l.occurred_at, r.sms_time, r.received_at)`)
    .orderBy('i.id')
    .execute()) as ItemRow[];
}
