import { Migration } from '@mikro-orm/migrations';

/**
 * A customer deleted through the API keeps its row (payments and invoices name it by id) with
 * its personal data and blind indexes erased; `erased_at` says when, and hides it from every read.
 */
export class Migration0048CustomerErasure extends Migration {
  override name = '0048-customer-erasure';

  override up(): void {
    this.addSql(`alter table "customers" add column "erased_at" timestamptz null;`);
    this.addSql(
      `alter table "customers" add constraint "customers_erased_check" check (erased_at IS NULL OR (name_encrypted IS NULL AND email_encrypted IS NULL AND phone_encrypted IS NULL));`,
    );
  }

  override down(): void {
    this.addSql(`alter table "customers" drop constraint "customers_erased_check";`);
    this.addSql(`alter table "customers" drop column "erased_at";`);
  }
}
