import type { SmsRecordStatus } from './entities.ts';
import type { Db } from '../../db.ts';

/**
 * Where SMS matching (docs/matching.md) plugs into intake. Intake stores forwarded SMS
 * with `match_status` `pending` and, when an implementation is passed in, calls
 * it after the intake transaction has committed, with the ids of the records
 * that are new and not duplicates. The implementation runs its own
 * transaction(s) and updates the records (match_status, parsed_*, transaction_id,
 * confidence, candidate_ids, reason, matched_at); intake then answers with the
 * records' state as the implementation reports it (MatchedRecordState) or, for
 * the records it does not report, as intake reads it. If it throws, the records
 * stay `pending` (the error is reported, the batch still succeeds) for a later
 * sweep to pick up.
 */
export type MatchSmsRecords = (em: Db, recordIds: number[]) => Promise<ReadonlyMap<number, MatchedRecordState> | void>;

/**
 * What a record's matching transaction committed, as the intake answers it.
 * An implementation may return it for the records it decided, so that intake
 * need not read them back (one round trip per request, BENCHMARKS.md); intake
 * reads every other record.
 */
export interface MatchedRecordState {
  matchStatus: SmsRecordStatus;
  /** The service trx id of the transaction the record completed (`matched`), else null. */
  trxId: string | null;
}
