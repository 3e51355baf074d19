import { initContract } from '@ts-rest/core';
import { adminAuditLogContract } from './audit-log.ts';
import { adminAlertsContract } from './alerts.ts';
import { adminBrandsContract } from './brands.ts';
import { adminDevicesContract } from './devices.ts';
import { adminExchangeRatesContract } from './exchange-rates.ts';
import { adminFilterRulesContract } from './filter-rules.ts';
import { adminGatewaysContract } from './gateways.ts';
import { adminNotificationsContract } from './notifications.ts';
import { adminOutboundSmsContract } from './outbound-sms.ts';
import { adminOverviewContract } from './overview.ts';
import { adminPairingCodesContract } from './pairing-codes.ts';
import { adminRecoveryContract } from './recovery.ts';
import { adminRefundsContract } from './refunds.ts';
import { adminSettingsContract } from './settings.ts';
import { adminSmsRecordsContract } from './sms-records.ts';
import { adminTransactionsContract } from './transactions.ts';
import { adminWebhookDeliveriesContract } from './webhook-deliveries.ts';

const c = initContract();

/** The admin API (`/api/admin/v1`), called by the admin panel and the CLI with the admin token. */
export const adminContract = c.router({
  overview: adminOverviewContract,
  brands: adminBrandsContract,
  gateways: adminGatewaysContract,
  exchangeRates: adminExchangeRatesContract,
  filterRules: adminFilterRulesContract,
  devices: adminDevicesContract,
  pairingCodes: adminPairingCodesContract,
  notifications: adminNotificationsContract,
  outboundSms: adminOutboundSmsContract,
  transactions: adminTransactionsContract,
  smsRecords: adminSmsRecordsContract,
  refunds: adminRefundsContract,
  webhookDeliveries: adminWebhookDeliveriesContract,
  settings: adminSettingsContract,
  auditLog: adminAuditLogContract,
  recovery: adminRecoveryContract,
  alerts: adminAlertsContract,
});
