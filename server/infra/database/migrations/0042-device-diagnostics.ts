import { Migration } from '@mikro-orm/migrations';

/**
 * Phone diagnostics (devices/diagnostics.ts): what the app reports about what
 * breaks forwarding (SMS permission, battery optimisation, the last SMS it saw),
 * and the `device_cannot_receive_sms` alert.
 */
export class Migration0042DeviceDiagnostics extends Migration {
  override name = '0042-device-diagnostics';

  override up(): void {
    this.addSql(`alter table "alerts" drop constraint "alerts_type_check";`);
    this.addSql(`alter table "alerts" add constraint "alerts_type_check" check ("type" in ('device_offline', 'battery_low', 'device_cannot_receive_sms', 'review_waiting', 'webhook_endpoint_disabled', 'sms_format_alarm'));`);

    this.addSql(`alter table "devices" add "sms_permission" boolean null, add "battery_optimization_ignored" boolean null, add "last_sms_seen_at" timestamptz null;`);
  }

  override down(): void {
    this.addSql(`alter table "alerts" drop constraint "alerts_type_check";`);
    this.addSql(`alter table "alerts" add constraint "alerts_type_check" check ("type" in ('device_offline', 'battery_low', 'review_waiting', 'webhook_endpoint_disabled', 'sms_format_alarm'));`);

    this.addSql(`alter table "devices" drop column "sms_permission", drop column "battery_optimization_ignored", drop column "last_sms_seen_at";`);
  }
}
