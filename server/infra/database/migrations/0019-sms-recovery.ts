import { Migration } from '@mikro-orm/migrations';

/**
 * Nothing missed: an SMS the phone never forwarded can be pasted by an
 * operator (`entry`, `entered_by`, `operator_name` on the record) or re-sent by
 * the phone on request (`backfill_requests`: a window of its inbox the device
 * polls as a command, retried with backoff and reported when unanswered).
 */
export class Migration0019SmsRecovery extends Migration {
  override name = '0019-sms-recovery';

  override up(): void {
    this.addSql("ALTER TABLE sms_records ADD COLUMN entry varchar(16) NOT NULL DEFAULT 'forwarded' CHECK (entry IN ('forwarded', 'pasted', 'backfill'))");
    this.addSql('ALTER TABLE sms_records ADD COLUMN entered_by varchar(120) NULL');
    this.addSql('ALTER TABLE sms_records ADD COLUMN operator_name varchar(100) NULL');
    this.addSql(`CREATE TABLE backfill_requests (
      id bigserial PRIMARY KEY,
      brand_id bigint NOT NULL REFERENCES brands(id),
      device_id bigint NOT NULL REFERENCES devices(id),
      window_from timestamptz NOT NULL,
      window_to timestamptz NOT NULL CHECK (window_to > window_from),
      reason varchar(32) NOT NULL CHECK (reason IN ('manual', 'offline', 'heartbeat_gap', 'balance_chain_break')),
      status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'answered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      requested_by varchar(120) NULL,
      resent_count integer NULL,
      delivered_at timestamptz NULL,
      answered_at timestamptz NULL,
      failed_at timestamptz NULL,
      reported_at timestamptz NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    this.addSql("CREATE INDEX backfill_requests_open ON backfill_requests (device_id, next_attempt_at) WHERE status IN ('pending', 'delivered')");
    this.addSql('CREATE INDEX backfill_requests_brand ON backfill_requests (brand_id, created_at DESC)');
    // Failed requests not yet picked up by an operator alert (the alerting side marks reported_at).
    this.addSql("CREATE INDEX backfill_requests_unreported ON backfill_requests (failed_at) WHERE status = 'failed' AND reported_at IS NULL");
  }

  override down(): void {
    this.addSql('DROP TABLE backfill_requests');
    this.addSql('ALTER TABLE sms_records DROP COLUMN operator_name, DROP COLUMN entered_by, DROP COLUMN entry');
  }
}
