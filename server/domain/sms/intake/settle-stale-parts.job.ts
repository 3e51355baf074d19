import type { AppDeps } from '../../../deps.ts';
import type { MinuteSweep } from '../../../infra/jobs/scheduled.ts';
import { getFilterRules } from '../../filter-rules/service.ts';
import { settleStaleParts } from './parts.ts';

export const SETTLE_STALE_PARTS_SWEEP = 'sms-stale-parts';

/**
 * Long SMS whose parts never all arrived within 24 hours: stored as one
 * `no_match` record (`incomplete_parts`), never parsed; joined parts' tombstones
 * removed (parts.ts). Runs every minute with the other minute sweeps.
 */
export async function runStalePartsSweep(deps: Pick<AppDeps, 'db' | 'logger' | 'crypto'>, now?: Date) {
  const r = await settleStaleParts(deps.db, { cipher: deps.crypto.pii, hashKey: deps.crypto.blindIndexKey }, getFilterRules, now);
  if (r.settled || r.removed) deps.logger.info(r, 'Long SMS parts sweep');
  return r;
}

export const stalePartsSweep: MinuteSweep<Pick<AppDeps, 'db' | 'logger' | 'crypto'>> = { name: SETTLE_STALE_PARTS_SWEEP, run: (deps) => runStalePartsSweep(deps) };
