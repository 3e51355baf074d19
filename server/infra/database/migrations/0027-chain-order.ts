import { Migration } from '@mikro-orm/migrations';

/**
 * Balance chains ordered as the phone received their SMS, and two more chain
 * states (docs/matching.md, "Balance chain"):
 * - `phone_order`: an SMS's place in its forwarding request as the phone
 *   received them; links whose SMS times tie are ordered by their request's
 *   arrival (`server_received_at`) and then by it, before the record id (ids
 *   are assigned in content-hash order, not the phone's). The chain index
 *   orders the same way. Existing records get 0 and keep their id order.
 * - `stated_at`: the time the SMS's own text states (the wallet's, in
 *   Bangladesh time), to the end of its minute: an SMS the wallet dated before
 *   the payment existed is not its evidence.
 * - `chain_balance`: the wallet's balance after the SMS as its chain counts
 *   it; a debit that states no balance (bill pay) is a link too, its balance
 *   derived from the previous one. Links are the records that have one
 *   (existing links: their stated balance).
 * - `chain_state` may now be `missing` (a credit without a readable balance on a
 *   chain that carries balances) and `repaired` (a break a later-arriving SMS
 *   filled).
 */
export class Migration0027ChainOrder extends Migration {
  override name = '0027-chain-order';

  override up(): void {
    this.addSql(`drop index "sms_records_chain_idx";`);
    this.addSql(`alter table "sms_records" drop constraint "sms_records_chain_state_check";`);
    this.addSql(`alter table "sms_records" add "phone_order" smallint not null default 0;`);
    this.addSql(`alter table "sms_records" add "stated_at" timestamptz null;`);
    this.addSql(`alter table "sms_records" add "chain_balance" numeric(16,2) null;`);
    this.addSql(`update "sms_records" set "chain_balance" = "parsed_balance" where "parsed_balance" is not null and "wallet_key" is not null;`);
    this.addSql(`create index "sms_records_chain_idx" on "sms_records" ("device_id", "wallet_key", "sms_time", "server_received_at", "phone_order", "id") where chain_balance IS NOT NULL;`);
    this.addSql(`alter table "sms_records" add constraint "sms_records_chain_state_check" check ("chain_state" in ('first', 'follows', 'mismatch', 'impossible', 'unreadable', 'after_break', 'missing', 'repaired'));`);
  }

  override down(): void {
    this.addSql(`drop index "sms_records_chain_idx";`);
    this.addSql(`alter table "sms_records" drop constraint "sms_records_chain_state_check";`);
    this.addSql(`update "sms_records" set "chain_state" = null where "chain_state" in ('missing', 'repaired');`);
    this.addSql(`alter table "sms_records" drop column "phone_order";`);
    this.addSql(`alter table "sms_records" drop column "stated_at";`);
    this.addSql(`alter table "sms_records" drop column "chain_balance";`);
    this.addSql(`create index "sms_records_chain_idx" on "sms_records" ("device_id", "wallet_key", "sms_time", "id") where parsed_balance IS NOT NULL;`);
    this.addSql(`alter table "sms_records" add constraint "sms_records_chain_state_check" check ("chain_state" in ('first', 'follows', 'mismatch', 'impossible', 'unreadable', 'after_break'));`);
  }
}
