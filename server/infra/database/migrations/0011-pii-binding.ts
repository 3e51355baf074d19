import { Migration } from '@mikro-orm/migrations';

/** Tables whose rows carry personal data, each with a format marker. */
const TABLES = ['customers', 'sms_records', 'notifications', 'outbound_sms', 'transactions'] as const;

/**
 * Personal data bound to its row and brand (server/infra/crypto/pii-cipher.ts).
 *
 * SQL cannot hold the keys, so this migration only prepares: the SMS sender
 * and the notification title (bounded text in clear until now) become `text`
 * to hold cipher tokens, and every table with personal data gets `pii_v`, the
 * format of its row: 1 for rows written before (unbound `v1` tokens, blind
 * indexes and content hashes without the brand, sender and notification text
 * in clear), 2 for rows written from now on (the column default, so inserts
 * need not name it). The re-encryption that runs right after the SQL
 * migrations, under the same lock (server/domain/pii/reencrypt.ts), rewrites
 * the `pii_v = 1` rows in batches and sets 2; the partial indexes make its
 * "anything left?" check free once nothing is.
 */
export class Migration0011PiiBinding extends Migration {
  override name = '0011-pii-binding';

  override up(): void {
    this.addSql('ALTER TABLE sms_records ALTER COLUMN sender TYPE text');
    this.addSql('ALTER TABLE notifications ALTER COLUMN title TYPE text');
    for (const table of TABLES) {
      // Existing rows get 1 (no table rewrite: a constant default), later inserts 2.
      this.addSql(`ALTER TABLE ${table} ADD COLUMN pii_v smallint NOT NULL DEFAULT 1 CHECK (pii_v IN (1, 2))`);
      this.addSql(`ALTER TABLE ${table} ALTER COLUMN pii_v SET DEFAULT 2`);
      this.addSql(`CREATE INDEX ${table}_pii_v1_idx ON ${table} (id) WHERE pii_v = 1`);
    }
  }

  override down(): void {
    for (const table of TABLES) this.addSql(`ALTER TABLE ${table} DROP COLUMN pii_v`);
    this.addSql('ALTER TABLE notifications ALTER COLUMN title TYPE varchar(200)');
    this.addSql('ALTER TABLE sms_records ALTER COLUMN sender TYPE varchar(64)');
  }
}
