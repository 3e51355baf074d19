import type { Db } from '../db.ts';
import { scopeParam } from '../brands/scope.ts';

/** An audit row as stored (`before`/`after` are jsonb). */
export interface AuditRow {
  id: number;
  actor: string;
  action: string;
  target_type: string;
  target_id: string | null;
  brand_id: number | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string | null;
  created_at: Date;
}

export async function insertAuditRow(
  tx: Db,
  row: { actor: string; action: string; targetType: string; targetId: string | null; brandId: number | null; before: Record<string, unknown> | null; after: Record<string, unknown> | null; requestId: string | null },
): Promise<void> {
  await tx
    .insertInto('audit_log')
    .values({
      actor: row.actor,
      action: row.action,
      target_type: row.targetType,
      target_id: row.targetId,
      brand_id: row.brandId,
      before: row.before,
      after: row.after,
      request_id: row.requestId,
    })
    .execute();
}

export interface AuditRowFilter {
  action?: string;
  targetType?: string;
  targetId?: string;
  brandId?: number;
  /** Only these brands' rows (not service-wide changes); absent or null: every row. */
  brandIds?: number[] | null;
}

/** One page of the filtered rows, newest first, and how many match in all. */
export async function selectAuditPage(db: Db, f: AuditRowFilter, page: { limit: number; offset: number }): Promise<{ rows: AuditRow[]; total: number }> {
  let q = db.selectFrom('audit_log');
  if (f.action) q = q.where('action', '=', f.action);
  if (f.targetType) q = q.where('target_type', '=', f.targetType);
  if (f.targetId) q = q.where('target_id', '=', f.targetId);
  if (f.brandId !== undefined) q = q.where('brand_id', '=', f.brandId);
  if (f.brandIds) q = q.where('brand_id', 'in', scopeParam(f.brandIds));
  const count = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select(['id', 'actor', 'action', 'target_type', 'target_id', 'brand_id', 'before', 'after', 'request_id', 'created_at'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { rows, total: Number(count.n) };
}
