import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok } from '../common/index.ts';
import { adminMeta, adminRouterOptions } from './shared.ts';

const c = initContract();

/**
 * Service-wide settings, the one declaration of them: each key's allowed range
 * (here) and default (`settingDefaults`). The settings service stores and reads
 * them with these schemas; a missing or invalid stored value reads as the default.
 */
export const settingFields = {
  intent_expiry_minutes: z.number().int('Must be a whole number of minutes').min(1).max(43_200).describe('Lifetime of a payment intent when the merchant gives none (default 60).'),
  match_threshold: z
    .number()
    .min(0)
    .max(1)
    .describe('Retired, ignored (kept so existing clients stay valid): only certain SMS evidence (trx id and amount agree, timing fits, nothing contradicts) completes a payment by itself; everything else goes to review. See docs/matching.md.'),
  match_clock_grace_seconds: z
    .number()
    .int('Must be a whole number of seconds')
    .min(0)
    .max(3600)
    .describe("Seconds an SMS may look older than its payment (phone clock skew left after the phone's offset is corrected) and still prove it when id and amount agree (default 300)."),
  match_window_minutes: z.number().int('Must be a whole number of minutes').min(1).max(43_200).describe('How long before an SMS a transaction may have been created and still match it (default 1440).'),
  device_offline_minutes: z.number().int('Must be a whole number of minutes').min(1).max(10_080).describe('A device silent for longer is offline and its brand gets `device.offline` (default 60).'),
  battery_low_percent: z.number().int('Must be a whole percentage').min(1).max(99).describe('A heartbeat reporting a battery below this percentage, not charging, raises one `battery_low` operator alert per episode (default 15).'),
  review_waiting_minutes: z.number().int('Must be a whole number of minutes').min(1).max(10_080).describe('A payment awaiting verification longer than this raises one `review_waiting` operator alert (default 30).'),
  sms_alarm_window_minutes: z.number().int('Must be a whole number of minutes').min(5).max(1440).describe("Format-change alarm: the recent window whose share of unparsed official-sender SMS is compared with the day before it (default 60)."),
  sms_alarm_min_messages: z.number().int('Must be a whole number').min(1).max(10_000).describe('Format-change alarm: the fewest official-sender SMS in the recent window before it can raise (default 5).'),
  sms_alarm_rise: z.number().min(0.05).max(1).describe('Format-change alarm: how much the unparsed share must rise over the baseline day to raise `gateway.sms_unparsed` (default 0.5).'),
};

/** The value of each setting while none is stored. */
export const settingDefaults = {
  intent_expiry_minutes: 60,
  match_threshold: 0.8,
  match_clock_grace_seconds: 300,
  match_window_minutes: 1440,
  device_offline_minutes: 60,
  battery_low_percent: 15,
  review_waiting_minutes: 30,
  sms_alarm_window_minutes: 60,
  sms_alarm_min_messages: 5,
  sms_alarm_rise: 0.5,
} as const satisfies { [K in keyof typeof settingFields]: z.output<(typeof settingFields)[K]> };

const fields = settingFields;

export const adminSettingsSchema = z.object(fields).meta({ id: 'AdminSettings' });

export const updateSettingsBodySchema = z
  .strictObject(adminSettingsSchema.partial().shape)
  .refine((b) => Object.keys(b).length > 0, 'Give at least one setting to change')
  .meta({ id: 'AdminUpdateSettingsRequest' });

export const adminSettingsContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/settings',
      summary: 'Service-wide settings',
      description: "Effective values (stored, or the default). A brand's time zone is set on the brand.",
      responses: { 200: ok(adminSettingsSchema) },
      metadata: adminMeta('Settings'),
    },
    update: {
      method: 'PATCH',
      path: '/settings',
      summary: 'Change settings',
      description: 'Changes the given settings only; every process reads them from the database, so no restart is needed. Recorded in the audit log.',
      body: updateSettingsBodySchema,
      responses: { 200: ok(adminSettingsSchema) },
      metadata: adminMeta('Settings'),
    },
  },
  adminRouterOptions,
);
