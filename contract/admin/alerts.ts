import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam } from './shared.ts';
import { alertStatuses, alertTypes } from '../vocabulary.ts';

const c = initContract();

export const adminAlertSchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    type: z.enum(alertTypes),
    subject: z.string(),
    details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).describe('Ids, counts, names and timestamps only.'),
    status: z.enum(alertStatuses).describe('`pending` until delivered (retrying after a failed attempt), `failed` after the last attempt or when no channel is configured.'),
    attempts: z.number().int().describe('Delivery attempts made.'),
    last_error: z.string().nullable().describe('The last failed attempt\'s error code (e.g. the SMTP reply code).'),
    delivered_at: timestampSchema.nullable(),
    created_at: timestampSchema,
  })
  .meta({ id: 'AdminAlert' });

export const adminAlertSettingsSchema = z
  .object({
    brand_id: z.number().int(),
    disabled_types: z.array(z.enum(alertTypes)).describe('Alert types switched off for this brand: they are not raised at all.'),
  })
  .meta({ id: 'AdminAlertSettings' });

const brandPath = z.object({ brand_id: idParam('brand') });

export const adminAlertsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/alerts',
      summary: 'Operator alerts',
      description: 'Alerts raised for operators (device offline, battery low, review waiting, webhook endpoint disabled, SMS format alarm) with their delivery state, newest first.',
      query: z.strictObject({
        ...pageQuerySchema.shape,
        brand_id: brandFilter,
        type: z.enum(alertTypes).optional().describe('Only this alert type.'),
        status: z.enum(alertStatuses).optional().describe('Only alerts in this delivery state.'),
      }),
      responses: { 200: okList(adminAlertSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Alerts'),
    },
    getSettings: {
      method: 'GET',
      path: '/brands/:brand_id/alert-settings',
      summary: "A brand's alert switches",
      description: 'The alert types switched off for the brand (an empty list: every alert is raised).',
      pathParams: brandPath,
      responses: { 200: ok(adminAlertSettingsSchema) },
      metadata: adminMeta('Alerts', ['BRAND_NOT_FOUND']),
    },
    putSettings: {
      method: 'PUT',
      path: '/brands/:brand_id/alert-settings',
      summary: "Set a brand's alert switches",
      description: 'Replaces the list of alert types switched off for the brand. Recorded in the audit log.',
      pathParams: brandPath,
      body: z.strictObject({ disabled_types: z.array(z.enum(alertTypes)).max(alertTypes.length) }),
      responses: { 200: ok(adminAlertSettingsSchema) },
      metadata: adminMeta('Alerts', ['BRAND_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
