import type { EntityManager } from '../../infra/database/orm.ts';
import { scopeParam } from '../brands/scope.ts';

interface AlertListRow {
  id: string;
  brand_id: string;
  type: string;
  subject: string;
  details: Record<string, string | number | boolean | null>;
  status: string;
  attempts: number;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

export async function listAlerts(em: EntityManager, f: { page: number; perPage: number; brandId?: number; brandIds?: number[] | null; type?: string; status?: string }) {
  const where: string[] = [];
  const params: unknown[] = [];
  if (f.brandIds) {
    where.push('brand_id IN (?)');
    params.push(scopeParam(f.brandIds));
  }
  for (const [col, v] of [['brand_id', f.brandId], ['type', f.type], ['status', f.status]] as const) {
    if (v === undefined) continue;
    where.push(`${col} = ?`);
    params.push(v);
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const [count] = await em.execute<Array<{ n: string }>>(`SELECT count(*) AS n FROM alerts ${clause}`, params);
  const rows = await em.execute<AlertListRow[]>(
    `SELECT id, brand_id, type, subject, details, status, attempts, last_error, delivered_at, created_at
       FROM alerts ${clause} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
    [...params, f.perPage, (f.page - 1) * f.perPage],
  );
  return { total: Number(count!.n), rows };
}
