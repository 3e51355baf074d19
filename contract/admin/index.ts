import { initContract } from '@ts-rest/core';
import { apiSurfaceCodes, withErrorResponses } from '../common/responses.ts';
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
import { adminPaymentsContract } from './payments.ts';
import { adminRefundsContract } from './refunds.ts';
import { adminInvoicesContract } from './invoices.ts';
import { adminSettingsContract } from './settings.ts';
import { adminSmsRecordsContract } from './sms-records.ts';
import { adminTransactionsContract } from './transactions.ts';
import { adminWebhookDeliveriesContract } from './webhook-deliveries.ts';
import { adminSessionContract } from './session.ts';
import { adminSmsCompletenessContract } from './sms-completeness.ts';
import { adminOperatorsContract } from './operators.ts';
import { adminWalletAccountsContract } from './wallet-accounts.ts';
import { adminCustomersContract } from './customers.ts';
import { adminReconciliationContract } from './reconciliation.ts';
import { adminPermissions, withPermissions } from './permissions.ts';

const c = initContract();

/**
 * The admin API (`/api/admin/v1`), called by the console (session cookie) and the
 * CLI (admin token). Every route carries the permission the caller's role needs
 * (set before the error responses are built, which read it for `FORBIDDEN`).
 */
export const adminContract = withErrorResponses(
  c.router(
    withPermissions(
      {
        overview: adminOverviewContract,
        brands: adminBrandsContract,
        gateways: adminGatewaysContract,
        walletAccounts: adminWalletAccountsContract,
        customers: adminCustomersContract,
        exchangeRates: adminExchangeRatesContract,
        filterRules: adminFilterRulesContract,
        devices: adminDevicesContract,
        pairingCodes: adminPairingCodesContract,
        notifications: adminNotificationsContract,
        outboundSms: adminOutboundSmsContract,
        transactions: adminTransactionsContract,
        smsRecords: adminSmsRecordsContract,
        payments: adminPaymentsContract,
        refunds: adminRefundsContract,
        invoices: adminInvoicesContract,
        webhookDeliveries: adminWebhookDeliveriesContract,
        settings: adminSettingsContract,
        auditLog: adminAuditLogContract,
        recovery: adminRecoveryContract,
        alerts: adminAlertsContract,
        session: adminSessionContract,
        operators: adminOperatorsContract,
        smsCompleteness: adminSmsCompletenessContract,
        reconciliation: adminReconciliationContract,
      },
      adminPermissions,
    ),
  ),
  apiSurfaceCodes,
);
