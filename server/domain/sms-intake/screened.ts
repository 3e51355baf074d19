import type { BoundStatement } from '../../infra/database/convert-values.ts';
import { pipelined, type Db } from '../db.ts';
import { screenSms, type ScreenResult } from '../filter-rules/screen.ts';
import { readFilterRulesToRemember, rememberedFilterRules, type VersionedFilterRules } from '../filter-rules/service.ts';
import { ingestScreenedSmsBatch, type ForwardedSms, type IntakeDeps, type IntakeResult } from './service.ts';

export type ScreenedSms = { screen: ScreenResult & { forward: false } } | { screen: { forward: true }; result: IntakeResult };

/**
 * A phone's batch, screened with the brand's filter rules (the phone screens
 * before forwarding, but a modified or outdated app may not: the service
 * applies the same rules and keeps nothing of a refused message), the rest
 * stored (ingestSmsBatch). Answers each message in input order.
 *
 * The rules are the ones this process last read for the brand
 * (rememberedFilterRules), not read again for every batch, and the records'
 * INSERT proves them current: it stores nothing when the brand's version
 * changed since (ingestScreenedSmsBatch), and the batch is screened again on a
 * fresh read. A batch those rules keep nothing of has no INSERT to prove them:
 * it is screened again on a fresh read before it is answered as screened out.
 * So every answer is decided on rules current after the batch arrived.
 *
 * `ahead`: statements that must run before the records' INSERT (the phone's
 * clock sample, which the INSERT's SMS times read), sent in its round trip, once.
 */
export async function ingestForwardedBatch(
  em: Db,
  deps: IntakeDeps,
  caller: { brandId: number; deviceId: number },
  batch: readonly ForwardedSms[],
  ahead: ReadonlyArray<BoundStatement<unknown>>,
): Promise<ScreenedSms[]> {
  let rules: VersionedFilterRules | undefined = rememberedFilterRules(em, caller.brandId);
  // Rules read during this call: good for the batch whatever changes after the read, so stored without a proof.
  let fresh = false;
  let unsent = ahead;
  for (;;) {
    if (!rules) {
      rules = await readFilterRulesToRemember(em, caller.brandId);
      fresh = true;
    }
    const screens = batch.map((m) => screenSms(rules!, m));
    const kept = batch.filter((_, i) => screens[i]!.forward);
    let results: IntakeResult[] | null = [];
    if (kept.length > 0) {
      results = await ingestScreenedSmsBatch(em, deps, caller, kept, { rulesVersion: fresh ? null : rules.version, ahead: unsent });
      unsent = [];
    } else if (!fresh) {
      // No INSERT to prove the remembered rules: screened out only on rules read now (rare, a batch of OTPs).
      rules = undefined;
      continue;
    } else if (unsent.length > 0) {
      await pipelined(em, ...unsent);
      unsent = [];
    }
    if (results === null) {
      // The rules changed since this process read them, and nothing of the batch was stored.
      rules = undefined;
      continue;
    }
    let stored = 0;
    return screens.map((screen) => (screen.forward ? { screen, result: results[stored++]! } : { screen }));
  }
}
