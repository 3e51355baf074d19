import { Migration } from '@mikro-orm/migrations';

/**
 * What SMS matching needs to decide only on certain evidence (docs/matching.md):
 * - sms_records: direction and kind of the movement, the balance and fee it
 *   reports, its place in the balance chain, the reason code and the ranked
 *   suggestions left for review, and the two new statuses (`balance_mismatch`,
 *   `money_out`).
 * - sms_balance_chains: one row per device and wallet, locked while a record
 *   of that chain is decided, so concurrent batches check balances in turn.
 * - devices: the phone's clock offset (smoothed), applied to its SMS times.
 * - gateways: `review_above`, an amount above which a match always goes to review.
 */
export class Migration0013SmsEvidence extends Migration {
  override name = '0013-sms-evidence';

  override up(): void {
    this.addSql(`
      ALTER TABLE sms_records
        DROP CONSTRAINT IF EXISTS sms_records_match_status_check,
        ADD CONSTRAINT sms_records_match_status_check
          CHECK (match_status IN ('pending', 'matched', 'no_match', 'no_candidate', 'low_confidence', 'duplicate', 'balance_mismatch', 'money_out')),
        ADD COLUMN direction text NULL CHECK (direction IN ('in', 'out')),
        ADD COLUMN kind varchar(40) NULL,
        ADD COLUMN parsed_balance numeric(16,2) NULL,
        ADD COLUMN parsed_fee numeric(14,2) NULL,
        ADD COLUMN wallet_key varchar(64) NULL,
        ADD COLUMN sms_time timestamptz NULL,
        ADD COLUMN chain_state text NULL CHECK (chain_state IN ('first', 'follows', 'mismatch', 'impossible', 'unreadable', 'after_break')),
        ADD COLUMN chain_previous_id bigint NULL REFERENCES sms_records(id),
        ADD COLUMN chain_expected_balance numeric(16,2) NULL,
        ADD COLUMN reason_code varchar(40) NULL,
        ADD COLUMN suggestions jsonb NOT NULL DEFAULT '[]'::jsonb`);
    // The previous link of a chain: the latest earlier record with a balance, by SMS time.
    this.addSql('CREATE INDEX sms_records_chain_idx ON sms_records (device_id, wallet_key, sms_time, id) WHERE parsed_balance IS NOT NULL');
    // Balance mismatches wait for a person like the other review statuses (see 0007's sms_records_review_idx).
    this.addSql("CREATE INDEX sms_records_balance_review_idx ON sms_records (brand_id, created_at) WHERE match_status = 'balance_mismatch' AND resolved_at IS NULL");
    this.addSql(`
      CREATE TABLE sms_balance_chains (
        device_id bigint NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
        wallet_key varchar(64) NOT NULL,
        last_record_id bigint NULL REFERENCES sms_records(id),
        last_balance numeric(16,2) NULL,
        last_sms_time timestamptz NULL,
        broken boolean NOT NULL DEFAULT false,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (device_id, wallet_key)
      )`);
    this.addSql(`
      ALTER TABLE devices
        ADD COLUMN clock_offset_ms integer NULL CHECK (clock_offset_ms BETWEEN -86400000 AND 86400000),
        ADD COLUMN clock_offset_at timestamptz NULL`);
    this.addSql('ALTER TABLE gateways ADD COLUMN review_above numeric(14,2) NULL CHECK (review_above > 0)');
  }

  override down(): void {
    this.addSql('ALTER TABLE gateways DROP COLUMN review_above');
    this.addSql('ALTER TABLE devices DROP COLUMN clock_offset_at, DROP COLUMN clock_offset_ms');
    this.addSql('DROP TABLE sms_balance_chains');
    this.addSql('DROP INDEX sms_records_balance_review_idx');
    this.addSql('DROP INDEX sms_records_chain_idx');
    this.addSql(`
      ALTER TABLE sms_records
        DROP COLUMN suggestions, DROP COLUMN reason_code, DROP COLUMN chain_expected_balance, DROP COLUMN chain_previous_id,
        DROP COLUMN chain_state, DROP COLUMN sms_time, DROP COLUMN wallet_key, DROP COLUMN parsed_fee, DROP COLUMN parsed_balance,
        DROP COLUMN kind, DROP COLUMN direction,
        DROP CONSTRAINT sms_records_match_status_check,
        ADD CONSTRAINT sms_records_match_status_check
          CHECK (match_status IN ('pending', 'matched', 'no_match', 'no_candidate', 'low_confidence', 'duplicate'))`);
  }
}
