import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok } from '../common/index.ts';
import { adminMeta, adminRouterOptions } from './shared.ts';

const c = initContract();

const fields = {
  intent_expiry_minutes: z.number().int('Must be a whole number of minutes').min(1).max(43_200).describe('Lifetime of a payment intent when the merchant gives none (default 60).'),
  match_threshold: z.number().min(0).max(1).describe('Confidence (0 to 1) an SMS match needs to complete a payment by itself; below it the SMS waits for manual verification (default 0.8).'),
  match_window_minutes: z.number().int('Must be a whole number of minutes').min(1).max(43_200).describe('How long before an SMS a transaction may have been created and still match it (default 1440).'),
  device_offline_minutes: z.number().int('Must be a whole number of minutes').min(1).max(10_080).describe('A device silent for longer is offline and its brand gets `device.offline` (default 60).'),
};

export const adminSettingsSchema = z.object(fields).meta({ id: 'AdminSettings' });

export const updateSettingsBodySchema = z
  .strictObject({
    intent_expiry_minutes: fields.intent_expiry_minutes.optional(),
    match_threshold: fields.match_threshold.optional(),
    match_window_minutes: fields.match_window_minutes.optional(),
    device_offline_minutes: fields.device_offline_minutes.optional(),
  })
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
