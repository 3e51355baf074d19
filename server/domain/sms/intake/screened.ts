import { screenSms, type ScreenResult } from '../../filter-rules/screen.ts';
import { getFilterRules } from '../../filter-rules/service.ts';
import { ingestSmsBatch, matchAndAnswer, type ForwardedSms, type IntakeDeps, type IntakeResult } from './service.ts';
import { takeParts, type ForwardedPart, type SmsPartHeader } from './parts.ts';
import type { Db } from '../../db.ts';

/** `awaiting`: a part of a long SMS whose set is not complete yet (parts.ts). */
export type ScreenedSms =
  | { screen: ScreenResult & { forward: false } }
  | { screen: { forward: true }; result: IntakeResult }
  | { screen: { forward: true }; awaiting: true };

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
  batch: readonly (ForwardedSms & { part?: SmsPartHeader | undefined })[],
): Promise<ScreenedSms[]> {
  const rules = await getFilterRules(em, caller.brandId);
  const wholes = batch.filter((m) => !m.part);
  const screens = wholes.map((m) => screenSms(rules, m));
  const kept = wholes.filter((_, i) => screens[i]!.forward);
  const results = kept.length > 0 ? await ingestSmsBatch(em, deps, caller, kept) : [];
  let stored = 0;
  const answers: ScreenedSms[] = screens.map((screen) => (screen.forward ? { screen, result: results[stored++]! } : { screen }));
  const parts = batch.filter((m): m is ForwardedPart => m.part !== undefined);
  if (parts.length === 0) return answers;

  // Parts of long SMS: screened and matched only once joined (parts.ts), after the whole SMS of the batch.
  const outcomes = await takeParts(em, deps, caller, rules, parts);
  const recordIds = outcomes.flatMap((o) => (o.kind === 'record' ? [o.id] : []));
  const fresh = [...new Set(outcomes.flatMap((o) => (o.kind === 'record' && o.fresh ? [o.id] : [])))];
  const states = recordIds.length > 0 ? await matchAndAnswer(em, deps, fresh, recordIds) : new Map();
  let w = 0;
  let p = 0;
  return batch.map((m) => {
    if (!m.part) return answers[w++]!;
    const o = outcomes[p++]!;
    if (o.kind === 'waiting') return { screen: { forward: true }, awaiting: true };
    if (o.kind === 'screened') return { screen: o.screen };
    const r = states.get(o.id)!;
    return { screen: { forward: true }, result: { deviceMessageId: m.deviceMessageId, id: o.id, matchStatus: r.match_status, trxId: r.trx_id, duplicateOf: r.duplicate_of_id } };
  });
}
