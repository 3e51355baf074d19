import { type Db } from '../db.ts';
import { scopeParam } from '../brands/scope.ts';
import type { AlertStatus, AlertType } from '../../../contract/vocabulary.ts';

export async function listAlerts(em: Db, f: { page: number; perPage: number; brandId?: number; brandIds?: number[] | null; type?: AlertType; status?: AlertStatus }) {
  let q = em.selectFrom('alerts');
  if (f.brandId !== undefined) q = q.where('brand_id', '=', f.brandId);
  if (f.brandIds) q = q.where('brand_id', 'in', scopeParam(f.brandIds));
  if (f.type !== undefined) q = q.where('type', '=', f.type);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  const count = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select(['id', 'brand_id', 'type', 'subject', 'details', 'status', 'attempts', 'last_error', 'delivered_at', 'created_at'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(f.perPage)
    .offset((f.page - 1) * f.perPage)
    .execute();
  return { total: Number(count.n), rows };
}
