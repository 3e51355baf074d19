import type { Mode } from '../../../contract/vocabulary.ts';
import type { Db } from '../db.ts';
import { selectHealthFigures } from './queries.ts';

/** The brand's figures for OwnPay's `GET /api/v1/health` (README "Coming from OwnPay"). */
export async function brandHealth(db: Db, brandId: number, mode: Mode): Promise<{ activeDevices: number; recentDevices: number; gateways: number; customers: number }> {
  const r = await selectHealthFigures(db, brandId, mode);
  return { activeDevices: Number(r.active_devices), recentDevices: Number(r.recent_devices), gateways: Number(r.gateways), customers: Number(r.customers) };
}
