import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta, nameText, ok, timestampSchema, uuidSchema } from '../common/index.ts';
import { DEVICE_PATH_PREFIX, fingerprintHeaders, fingerprintSchema } from './shared.ts';

const c = initContract();

export const tokenPairSchema = z
  .object({
    access_token: z.string().describe('Access JWT for `Authorization: Bearer` on every other device route.'),
    refresh_token: z
      .string()
      .describe('Refresh JWT (30 days). Single use: each refresh returns a new one, and presenting an already used one revokes the device.'),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().describe('Seconds the access token is valid: 86400.'),
    refresh_expires_in: z.number().int().describe('Seconds the refresh token is valid: 2592000 (30 days).'),
    device_id: uuidSchema.describe('UUID of the paired device (the `sub` of both tokens).'),
    server_time: timestampSchema,
  })
  .meta({ id: 'DeviceTokenPair' });

export const pairingRequestSchema = z
  .strictObject({
    fingerprint: fingerprintSchema.optional(),
    device_name: nameText(100, 'device_name is required').describe('Name shown to the merchant, e.g. "Counter phone".'),
    app_version: z.string().trim().min(1).max(32).optional().describe('Version of the companion app.'),
  })
  .meta({ id: 'DevicePairingRequest' });

export const tokenRefreshRequestSchema = z
  .strictObject({
    refresh_token: z.string().min(1, 'refresh_token is required').max(2048).describe('The newest refresh JWT of this device.'),
    fingerprint: fingerprintSchema.optional(),
  })
  .meta({ id: 'DeviceTokenRefreshRequest' });

export const heartbeatRequestSchema = z
  .strictObject({
    battery_level: z.number().int().min(0).max(100).optional().describe('Battery charge in percent.'),
    is_charging: z.boolean().optional(),
    network: z.string().trim().min(1).max(32).optional().describe('Network the phone is on, as the app names it (`wifi`, `cellular`...).'),
    app_version: z.string().trim().min(1).max(32).optional(),
    sms_permission: z
      .boolean()
      .optional()
      .describe(
        'Whether the app holds the SMS permissions it forwards with (`RECEIVE_SMS`, and `READ_SMS` for backfills): `ContextCompat.checkSelfPermission(...) == PERMISSION_GRANTED`. `false` means the phone cannot forward anything: operators are alerted at once.',
      ),
    battery_optimization_ignored: z
      .boolean()
      .optional()
      .describe(
        "Whether Android's battery optimisation leaves the app alone (`PowerManager.isIgnoringBatteryOptimizations(packageName)`). `false`: Doze and app standby may stop it from forwarding in the background; the console warns.",
      ),
    last_sms_seen_at: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('When the app last saw any SMS from an allowed sender (forwarded or screened out), by its clock: shows operators whether SMS still reach the app.'),
    device_time: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("The phone's clock now. The service estimates the phone's clock offset from it and corrects the SMS times the phone reports."),
  })
  .meta({ id: 'DeviceHeartbeatRequest' });

export const heartbeatSchema = z.object({ server_time: timestampSchema }).meta({ id: 'DeviceHeartbeat' });

export const devicesContract = c.router(
  {
    pair: {
      method: 'POST',
      path: '/devices/pairings',
      summary: 'Pair a device',
      description: [
        'Exchanges a one-time pairing code (created by an admin, valid 15 minutes by default) for a new device and its token pair.',
        'The code goes in `Authorization: Bearer <pairing code>` (case and dashes do not matter).',
        'The fingerprint goes in the body or the `X-Device-Fingerprint` header; later refreshes must present the same one.',
        'A used, expired or unknown code is `INVALID_PAIRING_CODE`; when two phones race for one code exactly one wins.',
        'Pairing again from the same phone (same fingerprint) replaces its previous registration.',
      ].join(' '),
      headers: fingerprintHeaders,
      body: pairingRequestSchema,
      responses: { 201: ok(tokenPairSchema) },
      metadata: meta({ auth: 'pairing', errors: ['INVALID_PAIRING_CODE'], tag: 'Device session' }),
    },
    refreshTokens: {
      method: 'POST',
      path: '/devices/token-refreshes',
      summary: 'Refresh the token pair',
      description: [
        'Exchanges the refresh JWT for a new access token and a new refresh token; the presented refresh token stops working.',
        'The fingerprint (body or `X-Device-Fingerprint` header) must be the one given at pairing.',
        'Presenting a refresh token that was already exchanged revokes the device (a stolen copy is in use): it must be paired again.',
        'Every rejection (expired, malformed or reused token, wrong fingerprint, revoked device) is `INVALID_PAIRING_CODE`.',
        'No `Authorization` header is needed.',
      ].join(' '),
      headers: fingerprintHeaders,
      body: tokenRefreshRequestSchema,
      responses: { 200: ok(tokenPairSchema) },
      metadata: meta({ auth: 'device-refresh', errors: ['INVALID_PAIRING_CODE'], tag: 'Device session' }),
    },
    heartbeat: {
      method: 'POST',
      path: '/devices/heartbeats',
      summary: 'Report that the device is alive',
      description:
        'Stores `last_heartbeat` and whatever the app reports (battery, network, app version); the body is optional and may be empty. Every authenticated call also counts as presence; a device silent for longer than the offline threshold (60 minutes by default) is reported to the brand as `device.offline`.',
      body: heartbeatRequestSchema.optional(),
      responses: { 200: ok(heartbeatSchema) },
      metadata: meta({ auth: 'device', tag: 'Device session' }),
    },
  },
  { pathPrefix: DEVICE_PATH_PREFIX, strictStatusCodes: true },
);
