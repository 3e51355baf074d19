import type { Mode } from '../../../../contract/vocabulary.ts';
import { prepared } from '../../db.ts';

/**
 * docs/matching.md, rule 9: once an SMS about a trx id contradicted its
 * balance chain (`balance_mismatch` status, whatever the chain reason) or a
 * person refused it (dismissed it: it proves no payment), every later SMS
 * about that id goes to a person: a failed forgery cannot be retried without
 * its balance. A rejected payment refuses the claim, not the SMS: the SMS may
 * still prove the genuine payment.
 */
export interface ContradictedQuery {
  brandId: number;
  mode: Mode;
  /** The SMS being decided: never its own evidence. */
  recordId: number;
  trxIds: readonly string[];
}

/** The statement, compiled once (db.ts `prepared`), for one brand and mode and any number of ids. */
export const contradictedStatement = prepared((k, $: { brandId: number; mode: Mode; recordIds: number[]; trxIds: string[] }) =>
  k
    .selectFrom('sms_records')
    .select('parsed_trx_id')
    .distinct()
    .where('brand_id', '=', $.brandId)
    .where('mode', '=', $.mode)
    .where('parsed_trx_id', '=', (eb) => eb.fn.any(eb.val($.trxIds)))
    .where((eb) => eb.not(eb('id', '=', eb.fn.any(eb.val($.recordIds)))))
    .where((eb) => eb.or([eb('match_status', '=', 'balance_mismatch'), eb('resolution', '=', 'dismissed')])),
);
