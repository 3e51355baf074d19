import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { adminBrandHandlers } from './brands.ts';
import { adminAuditLogHandlers } from './audit-log.ts';
import { adminAlertsHandlers } from './alerts.ts';
import { adminFilterRuleHandlers } from './filter-rules.ts';
import { adminSettingHandlers } from './settings.ts';
import { adminDeviceHandlers } from './devices.ts';
import { adminNotificationHandlers } from './notifications.ts';
import { adminOutboundSmsHandlers } from './outbound-sms.ts';
import { adminOverviewHandlers } from './overview.ts';
import { adminPairingCodeHandlers } from './pairing-codes.ts';
import { adminExchangeRateHandlers } from './exchange-rates.ts';
import { adminGatewayHandlers } from './gateways.ts';
import { adminRecoveryHandlers } from './recovery.ts';
import { adminSmsCompletenessHandlers } from './sms-completeness.ts';
import { adminPaymentHandlers } from './payments.ts';
import { adminRefundHandlers } from './refunds.ts';
import { adminInvoiceHandlers } from './invoices.ts';
import { adminSmsRecordHandlers } from './sms-records.ts';
import { adminTransactionHandlers } from './transactions.ts';
import { adminWebhookDeliveryHandlers } from './webhook-deliveries.ts';
import { adminSessionHandlers } from './session.ts';
import { adminOperatorHandlers } from './operators.ts';
import { adminWalletAccountHandlers } from './wallet-accounts.ts';
import { adminCustomerHandlers } from './customers.ts';
import { adminReconciliationHandlers } from './reconciliation.ts';

const s = initServer();

/** Handlers of the admin surface, mirroring contract/admin/. */
export function adminHandlers(deps: AppDeps) {
  return s.router(contract.admin, {
    overview: adminOverviewHandlers,
    brands: adminBrandHandlers,
    gateways: adminGatewayHandlers(deps),
    walletAccounts: adminWalletAccountHandlers,
    customers: adminCustomerHandlers(deps),
    exchangeRates: adminExchangeRateHandlers,
    filterRules: adminFilterRuleHandlers,
    devices: adminDeviceHandlers,
    pairingCodes: adminPairingCodeHandlers,
    notifications: adminNotificationHandlers(deps),
    outboundSms: adminOutboundSmsHandlers(deps),
    transactions: adminTransactionHandlers(deps),
    smsRecords: adminSmsRecordHandlers(deps),
    payments: adminPaymentHandlers,
    refunds: adminRefundHandlers,
    invoices: adminInvoiceHandlers(deps),
    webhookDeliveries: adminWebhookDeliveryHandlers,
    settings: adminSettingHandlers,
    auditLog: adminAuditLogHandlers,
    recovery: adminRecoveryHandlers(deps),
    smsCompleteness: adminSmsCompletenessHandlers,
    reconciliation: adminReconciliationHandlers(deps),
    alerts: adminAlertsHandlers,
    session: adminSessionHandlers(deps),
    operators: adminOperatorHandlers,
  });
}
