import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema, uuidSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, brandFilter, idParam, modeField, modeFilter } from './shared.ts';
import { devicePresences, deviceProtocols, deviceStatuses, phoneHealthStates, presenceChangeStatuses } from '../vocabulary.ts';

const c = initContract();

export const adminDeviceSchema = z
  .object({
    id: z.number().int(),
    uuid: uuidSchema,
    brand_id: z.number().int(),
    mode: modeField.describe('The mode of the pairing code it paired with: it verifies only payments of this mode.'),
    name: z.string(),
    status: z.enum(deviceStatuses),
    presence: z
      .enum(devicePresences)
      .describe('Now: `online` when the device made an authenticated call within the offline threshold (setting `device_offline_minutes`), `offline` when it has been silent longer, `revoked` when it can no longer call.'),
    last_seen_at: timestampSchema.nullable().describe('Last authenticated call (to the minute).'),
    last_heartbeat_at: timestampSchema.nullable(),
    offline_since: timestampSchema.nullable().describe('When the offline detector last reported it offline (the brand got `device.offline`); null while online.'),
    battery_level: z.number().int().nullable().describe('Percent, as last reported by a heartbeat.'),
    is_charging: z.boolean().nullable(),
    network: z.string().nullable(),
    app_version: z.string().nullable(),
    diagnostics: z
      .object({
        health: z
          .enum(phoneHealthStates)
          .describe('`cannot_receive`: the app has no SMS permission (nothing is forwarded); `at_risk`: battery optimisation is on for the app (Android may stop it in the background); `ok`; `unknown`: the app reports neither.'),
        problems: z.array(z.string()).describe('What is wrong, in words for an operator, with what to do.'),
        sms_permission: z.boolean().nullable().describe('As the last heartbeat reported it; null: never reported.'),
        battery_optimization_ignored: z.boolean().nullable(),
        last_sms_seen_at: timestampSchema.nullable().describe('When the app last saw an SMS from an allowed sender (its clock), as it last reported.'),
      })
      .describe("What breaks forwarding in the field, from the phone's heartbeats (README, Phone diagnostics)."),
    protocol: z.enum(deviceProtocols).describe("The app it paired with: `native` (the companion app) or `ownpay` (OwnPay's Android app, README \"The OwnPay Android app\")."),
    paired_at: timestampSchema,
    revoked_at: timestampSchema.nullable(),
    revoked_reason: z.string().nullable().describe('`admin`, `re_paired` (the phone paired again), `refresh_token_reuse` (a stolen refresh token was presented)...'),
  })
  .meta({ id: 'AdminDevice' });

export const deviceListQuerySchema = z.strictObject({
  ...pageQuerySchema.shape,
  brand_id: brandFilter,
  mode: modeFilter,
  presence: z.enum(devicePresences).optional().describe('Only devices with this presence now.'),
});

const devicePath = z.object({ device_id: idParam('device') });

export const devicePresenceChangeSchema = z
  .object({
    id: z.number().int(),
    status: z.enum(presenceChangeStatuses).describe('What the device became: `offline` after being silent longer than `device_offline_minutes`, `online` when heard from again.'),
    changed_at: timestampSchema.describe('When the presence sweep recorded the change (it runs every minute).'),
    last_seen_at: timestampSchema.nullable().describe('The last authenticated call at that moment (to the minute).'),
    last_heartbeat_at: timestampSchema.nullable(),
    battery_level: z.number().int().nullable().describe('Percent, as last reported by a heartbeat before the change.'),
    is_charging: z.boolean().nullable(),
    network: z.string().nullable().describe('The network (signal) the app last reported: `wifi`, `cellular`...'),
  })
  .meta({ id: 'AdminDevicePresenceChange' });

export const presenceHistoryQuerySchema = z.strictObject({ ...pageQuerySchema.shape });

export const adminDevicesContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/devices',
      summary: 'List devices with their presence',
      description: 'Newest pairing first.',
      query: deviceListQuerySchema,
      responses: { 200: okList(adminDeviceSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Devices'),
    },
    get: {
      method: 'GET',
      path: '/devices/:device_id',
      summary: 'Get a device',
      description: 'One paired device with its presence (last heartbeat, offline since), battery and network, app version, and its revocation if revoked.',
      pathParams: devicePath,
      responses: { 200: ok(adminDeviceSchema) },
      metadata: adminMeta('Devices', ['DEVICE_NOT_FOUND']),
    },
    presenceHistory: {
      method: 'GET',
      path: '/devices/:device_id/presence-history',
      summary: "A device's presence history",
      description:
        'Each time the device went offline or came back online, newest first, with its battery, charging state and network at that moment. Kept for 30 days. Another brand’s device (outside an operator’s brands) is `DEVICE_NOT_FOUND`, like an unknown one.',
      pathParams: devicePath,
      query: presenceHistoryQuerySchema,
      responses: { 200: okList(devicePresenceChangeSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Devices', ['DEVICE_NOT_FOUND']),
    },
    revoke: {
      method: 'POST',
      path: '/devices/:device_id/revocations',
      summary: 'Revoke a device',
      description:
        'Its access token is refused on its next call and its refresh token can no longer be exchanged; the phone must be paired again. Revoking a revoked device changes nothing. Recorded in the audit log.',
      pathParams: devicePath,
      body: z.strictObject({}).optional().describe('No body (an empty object is accepted).'),
      responses: { 200: ok(adminDeviceSchema) },
      metadata: adminMeta('Devices', ['DEVICE_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
