import { ApiKey, Brand, BrandLogo } from './brands/entities.ts';
import { Customer } from './customers/entities.ts';
import { ExchangeRate } from './fx/entities.ts';
import { Gateway } from './gateways/entities.ts';
import { IdempotencyKey } from './idempotency/entities.ts';
import { PaymentIntent, Transaction } from './payments/entities.ts';
import { Refund } from './refunds/entities.ts';
import { PaymentLink } from './payment-links/entities.ts';
import { SandboxSession } from './sandbox/entities.ts';
import { CheckoutAccountAssignment, CheckoutSubmissionCount } from './checkout/entities.ts';
import { WalletAccount } from './wallet-accounts/entities.ts';
import { Device, DevicePresenceChange, DeviceRefreshTokenRotation, PairingCode } from './devices/entities.ts';
import { SmsFilterRules, SmsSenderEpoch } from './filter-rules/entities.ts';
import { Notification } from './notifications/entities.ts';
import { OutboundSms } from './outbound-sms/entities.ts';
import { SmsPart, SmsRecord } from './sms/intake/entities.ts';
import { webhookEntities } from './webhooks/entities.ts';
import { AuditLog } from './audit/entities.ts';
import { SmsBalanceChain, SmsFormatAlarm } from './sms/matching/entities.ts';
import { BackfillRequest, SmsSequenceCounter } from './recovery/entities.ts';
import { RateLimit } from './rate-limit/entities.ts';
import { Operator, OperatorSession } from './operators/entities.ts';
import { Setting } from './settings/entities.ts';
import { Alert, AlertBrandSettings } from './alerts/entities.ts';
import { Receipt } from './receipts/entities.ts';

/** Every entity the ORM knows; each domain area adds its own here. */
export const entities = [Brand, BrandLogo, ApiKey, Gateway, ExchangeRate, Customer, PaymentIntent, Transaction, Refund, PaymentLink, SandboxSession, CheckoutSubmissionCount, WalletAccount, CheckoutAccountAssignment, IdempotencyKey, Device, DeviceRefreshTokenRotation, DevicePresenceChange, PairingCode, SmsFilterRules, SmsSenderEpoch, Notification, OutboundSms, SmsRecord, SmsPart, SmsBalanceChain, SmsFormatAlarm, BackfillRequest, SmsSequenceCounter, RateLimit, ...webhookEntities, AuditLog, Setting, Alert, AlertBrandSettings, Receipt, Operator, OperatorSession];
