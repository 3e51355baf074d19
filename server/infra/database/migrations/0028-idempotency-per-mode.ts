import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency keys per mode: unique per (brand, mode, key) instead of (brand,
 * key), so a test request can no longer take a live key first (and block it for
 * the key's 24 hours). Stored keys count as live: they expire within a day.
 */
export class Migration0028IdempotencyPerMode extends Migration {
  override name = '0028-idempotency-per-mode';

  override up(): void {
    this.addSql(`alter table "idempotency_keys" add "mode" text check ("mode" in ('live', 'test')) not null default 'live';`);
    this.addSql(`alter table "idempotency_keys" drop constraint "idempotency_keys_brand_key_uniq";`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_brand_mode_key_uniq" unique ("brand_id", "mode", "key");`);
  }

  override down(): void {
    this.addSql(`delete from "idempotency_keys" where "mode" = 'test';`);
    this.addSql(`alter table "idempotency_keys" drop constraint "idempotency_keys_brand_mode_key_uniq";`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_brand_key_uniq" unique ("brand_id", "key");`);
    this.addSql(`alter table "idempotency_keys" drop column "mode";`);
  }
}
