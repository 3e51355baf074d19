import { Migration } from '@mikro-orm/migrations';

/**
 * OwnPay's plugins and SDKs (README "Coming from OwnPay"): an API key's
 * `dialect` (`op_…` keys speak OwnPay's shapes), an endpoint's `signing`
 * (OwnPay's headers and body), a payment's own `callback_url`, and on an event
 * why that URL got no delivery (`callback_note`).
 */
export class Migration0035OwnpayDialect extends Migration {
  override name = '0035-ownpay-dialect';

  override up(): void {
    this.addSql(`alter table "api_keys" add "dialect" text not null default 'native';`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_dialect_check" check ("dialect" in ('native', 'ownpay'));`);
    this.addSql(`alter table "payment_intents" add "callback_url" varchar(2048) null;`);
    this.addSql(`alter table "webhook_endpoints" add "signing" text not null default 'paycollect';`);
    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_signing_check" check ("signing" in ('paycollect', 'ownpay'));`);
    this.addSql(`alter table "webhook_events" add "callback_note" text null;`);
  }

  override down(): void {
    this.addSql(`alter table "webhook_events" drop column "callback_note";`);
    this.addSql(`alter table "webhook_endpoints" drop column "signing";`);
    this.addSql(`alter table "payment_intents" drop column "callback_url";`);
    this.addSql(`alter table "api_keys" drop column "dialect";`);
  }
}
