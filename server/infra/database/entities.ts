import { ApiKey, Brand } from '../../domain/brands/entities.ts';
import { Device, DeviceRefreshTokenRotation, PairingCode } from '../../domain/devices/entities.ts';
import { SmsFilterRules } from '../../domain/filter-rules/entities.ts';
import { Notification } from '../../domain/notifications/entities.ts';
import { OutboundSms } from '../../domain/outbound-sms/entities.ts';
import { SmsRecord } from '../../domain/sms-intake/entities.ts';

/** Every entity the ORM knows; each domain area adds its own here. */
export const entities = [Brand, ApiKey, Device, DeviceRefreshTokenRotation, PairingCode, SmsFilterRules, Notification, OutboundSms, SmsRecord];
