import { Migration } from '@mikro-orm/migrations';

/**
 * Filter rules follow the gateways: a phone's allowed senders are now the
 * official senders of the enabled gateways plus the admin's additions per
 * brand (server/domain/filter-rules/service.ts). The stored list becomes the
 * additions only; rows still holding the old built-in trio lose it, since those
 * senders now come from the gateways themselves (and disappear when a gateway
 * is disabled). `sms_sender_epoch` counts changes to the gateways' senders; the
 * rules' version is the brand's own counter plus this one, so it only grows.
 */
export class Migration0014SmsPresets extends Migration {
  override name = '0014-sms-presets';

  override up(): void {
    this.addSql('ALTER TABLE sms_filter_rules RENAME COLUMN allowed_senders TO extra_senders');
    this.addSql("UPDATE sms_filter_rules SET extra_senders = '{}' WHERE extra_senders = ARRAY['bKash', 'NAGAD', '16216']::text[]");
    this.addSql(`CREATE TABLE sms_sender_epoch (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      version integer NOT NULL DEFAULT 0 CHECK (version >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    this.addSql('INSERT INTO sms_sender_epoch (id) VALUES (true)');
  }

  override down(): void {
    this.addSql('DROP TABLE sms_sender_epoch');
    this.addSql('ALTER TABLE sms_filter_rules RENAME COLUMN extra_senders TO allowed_senders');
  }
}
