import { screenSms, type ScreenResult } from '../../filter-rules/screen.ts';
import { getFilterRules } from '../../filter-rules/service.ts';
import { ingestSmsBatch, type ForwardedSms, type IntakeDeps, type IntakeResult } from './service.ts';
import type { Db } from '../../db.ts';

export type ScreenedSms = { screen: ScreenResult & { forward: false } } | { screen: { forward: true }; result: IntakeResult };

/**
 * A phone's batch, screened with the brand's filter rules (the phone screens
 * before forwarding, but a modified or outdated app may not: the service
 * applies the same rules and keeps nothing of a refused message), the rest
 * stored (ingestSmsBatch). Answers each message in input order.
 *
 * The rules are read for every batch (one statement, getFilterRules), after
 * the batch arrived: every answer is decided on the rules as they are then,
 * whoever changed them.
 */
export async function ingestForwardedBatch(
  em: Db,
  deps: IntakeDeps,
  caller: { brandId: number; deviceId: number },
  batch: readonly ForwardedSms[],
): Promise<ScreenedSms[]> {
  const rules = await getFilterRules(em, caller.brandId);
  const screens = batch.map((m) => screenSms(rules, m));
  const kept = batch.filter((_, i) => screens[i]!.forward);
  const results = kept.length > 0 ? await ingestSmsBatch(em, deps, caller, kept) : [];
  let stored = 0;
  return screens.map((screen) => (screen.forward ? { screen, result: results[stored++]! } : { screen }));
}
