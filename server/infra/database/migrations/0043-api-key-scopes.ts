import { Migration } from '@mikro-orm/migrations';

/**
 * API key scopes and expiry (README, "API key scopes"): what a key may do (null:
 * everything, as every key made before could) and when it stops working.
 */
export class Migration0043ApiKeyScopes extends Migration {
  override name = '0043-api-key-scopes';

  override up(): void {
    this.addSql(`alter table "api_keys" add "scopes" text[] null, add "expires_at" timestamptz null;`);
  }

  override down(): void {
    this.addSql(`alter table "api_keys" drop column "scopes", drop column "expires_at";`);
  }
}
