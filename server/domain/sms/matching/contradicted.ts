import type { Mode } from '../../../../contract/vocabulary.ts';

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
