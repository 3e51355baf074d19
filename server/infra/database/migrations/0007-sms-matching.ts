import { Migration } from '@mikro-orm/migrations';

/**
 * SMS matching: the foreign keys migration 0004 left to this work, the
 * guarantees behind "one SMS match per transaction", the look-up the
 * submission direction needs, and who resolved a record left for review.
 */
export class Migration0007SmsMatching extends Migration {
  override name = '0007-sms-matching';

  override up(): void {
    this.addSql(`
      ALTER TABLE sms_records
        ADD COLUMN resolution text NULL CHECK (resolution IN ('verified', 'rejected')),
        ADD COLUMN resolved_by varchar(100) NULL,
        ADD COLUMN resolved_at timestamptz NULL,
        ADD COLUMN resolution_note varchar(500) NULL,
        ADD CONSTRAINT sms_records_gateway_fk FOREIGN KEY (gateway_id) REFERENCES gateways(id),
        ADD CONSTRAINT sms_records_transaction_fk FOREIGN KEY (transaction_id) REFERENCES transactions(id),
        ADD CONSTRAINT sms_records_matched_names_transaction
          CHECK ((match_status = 'matched') = (transaction_id IS NOT NULL) AND (match_status <> 'matched' OR matched_at IS NOT NULL)),
        ADD CONSTRAINT sms_records_resolution_complete
          CHECK ((resolution IS NULL) = (resolved_by IS NULL) AND (resolution IS NULL) = (resolved_at IS NULL))`);
    // However the two directions and admins interleave, a transaction is proved by one SMS at most.
    this.addSql("CREATE UNIQUE INDEX sms_records_one_match_per_transaction ON sms_records (transaction_id) WHERE match_status = 'matched'");
    // A customer's submitted gateway trx id looks for stored SMS carrying it (parsed ids are upper case).
    this.addSql('CREATE INDEX sms_records_parsed_trx_idx ON sms_records (brand_id, parsed_trx_id) WHERE parsed_trx_id IS NOT NULL');
    // The admin's review list: unmatched records nobody resolved yet.
    this.addSql(
      "CREATE INDEX sms_records_review_idx ON sms_records (brand_id, created_at) WHERE match_status IN ('no_candidate', 'low_confidence') AND resolved_at IS NULL",
    );
  }

  override down(): void {
    this.addSql('DROP INDEX sms_records_review_idx');
    this.addSql('DROP INDEX sms_records_parsed_trx_idx');
    this.addSql('DROP INDEX sms_records_one_match_per_transaction');
    this.addSql(`
      ALTER TABLE sms_records
        DROP CONSTRAINT sms_records_resolution_complete,
        DROP CONSTRAINT sms_records_matched_names_transaction,
        DROP CONSTRAINT sms_records_transaction_fk,
        DROP CONSTRAINT sms_records_gateway_fk,
        DROP COLUMN resolution_note,
        DROP COLUMN resolved_at,
        DROP COLUMN resolved_by,
        DROP COLUMN resolution`);
  }
}
