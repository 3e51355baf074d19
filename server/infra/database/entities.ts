import { ApiKey, Brand } from '../../domain/brands/entities.ts';
import { Customer } from '../../domain/customers/entities.ts';
import { ExchangeRate } from '../../domain/fx/entities.ts';
import { Gateway } from '../../domain/gateways/entities.ts';
import { IdempotencyKey } from '../../domain/idempotency/entities.ts';
import { PaymentIntent, Transaction } from '../../domain/payments/entities.ts';
import { Refund } from '../../domain/refunds/entities.ts';
import { Device, DeviceRefreshTokenRotation, PairingCode } from '../../domain/devices/entities.ts';
import { SmsFilterRules, SmsSenderEpoch } from '../../domain/filter-rules/entities.ts';
import { Notification } from '../../domain/notifications/entities.ts';
import { OutboundSms } from '../../domain/outbound-sms/entities.ts';
import { SmsRecord } from '../../domain/sms-intake/entities.ts';
import { webhookEntities } from '../../domain/webhooks/entities.ts';
import { AuditLog } from '../../domain/audit/entities.ts';

/** Every entity the ORM knows; each domain area adds its own here. */
export const entities = [Brand, ApiKey, Gateway, ExchangeRate, Customer, PaymentIntent, Transaction, Refund, IdempotencyKey, Device, DeviceRefreshTokenRotation, PairingCode, SmsFilterRules, SmsSenderEpoch, Notification, OutboundSms, SmsRecord, ...webhookEntities, AuditLog];
