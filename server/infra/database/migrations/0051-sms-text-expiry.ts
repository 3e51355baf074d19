import { Migration } from '@mikro-orm/migrations';

/**
 * SMS text expires (domain/retention): the retention job nulls a record's
 * sender and body ciphertext after RETENTION_SMS_TEXT_DAYS and stamps
 * `text_expired_at`, keeping the parsed evidence, the content hash and the
 * match. The check keeps "no text" and "expired" the same thing; the partial
 * index is the job's walk over records that still hold text, oldest first.
 */
export class Migration0051SmsTextExpiry extends Migration {
  override name = '0051-sms-text-expiry';

  override up(): void {
    this.addSql(`alter table "sms_records" add "text_expired_at" timestamptz null;`);
    this.addSql(`alter table "sms_records" alter column "sender" drop not null;`);
    this.addSql(`alter table "sms_records" alter column "body_encrypted" drop not null;`);
    this.addSql(`create index "sms_records_text_kept_idx" on "sms_records" ("created_at") where text_expired_at IS NULL;`);
    this.addSql(`alter table "sms_records" add constraint "sms_records_text_expired_check" check ((text_expired_at IS NULL) = (sender IS NOT NULL AND body_encrypted IS NOT NULL));`);
  }

  override down(): void {
    // Expired records have no text to restore: with any of them, SET NOT NULL fails and nothing is undone.
    this.addSql(`drop index "sms_records_text_kept_idx";`);
    this.addSql(`alter table "sms_records" drop constraint "sms_records_text_expired_check";`);
    this.addSql(`alter table "sms_records" drop column "text_expired_at";`);
    this.addSql(`alter table "sms_records" alter column "sender" set not null;`);
    this.addSql(`alter table "sms_records" alter column "body_encrypted" set not null;`);
  }
}
