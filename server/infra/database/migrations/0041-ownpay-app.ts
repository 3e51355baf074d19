import { Migration } from '@mikro-orm/migrations';

/**
 * Devices paired by OwnPay's Android app (README "The OwnPay
 * Android app"): `protocol` says which app paired a device (`native` for every
 * existing row), and `aes_key_encrypted` holds an OwnPay device's AES-256-GCM
 * key of its SMS payloads, encrypted with the service key; only OwnPay devices
 * have one.
 */
export class Migration0041OwnpayApp extends Migration {
  override name = '0041-ownpay-app';

  override up(): void {
    this.addSql(`alter table "devices" add "protocol" text not null default 'native', add "aes_key_encrypted" text null;`);
    this.addSql(`alter table "devices" add constraint "devices_aes_key_check" check (aes_key_encrypted IS NULL OR protocol = 'ownpay');`);
    this.addSql(`alter table "devices" add constraint "devices_protocol_check" check ("protocol" in ('native', 'ownpay'));`);
  }

  override down(): void {
    this.addSql(`alter table "devices" drop constraint "devices_aes_key_check";`);
    this.addSql(`alter table "devices" drop constraint "devices_protocol_check";`);
    this.addSql(`alter table "devices" drop column "protocol", drop column "aes_key_encrypted";`);
  }
}
