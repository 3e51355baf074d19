import { type Db } from '../db.ts';
import type { AlertStatus, AlertType } from '../../../contract/vocabulary.ts';
import { selectAlertPage } from './queries.ts';

export async function listAlerts(em: Db, f: { page: number; perPage: number; brandId?: number; brandIds?: number[] | null; type?: AlertType; status?: AlertStatus }) {
  return selectAlertPage(em, f, { limit: f.perPage, offset: (f.page - 1) * f.perPage });
}
