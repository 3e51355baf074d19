import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { apiSurfaceCodes, meta, nameText, ok, withErrorResponses } from '../common/index.ts';
import { DEVICE_PATH_PREFIX, fingerprintSchema } from '../device/shared.ts';
import { MAX_SMS_BATCH } from '../device/sms-messages.ts';

const c = initContract();

/**
 * The routes OwnPay's Android app (github.com/own-pay/OwnPay-Mobile-App) calls
 * beyond the native device routes it already reaches unchanged (heartbeats,
 * filter rules...): pairing with a one-time code in the body, token refresh,
 * AES-GCM encrypted SMS upload and self-revocation, under the same
 * `/api/mobile/v1` prefix (README "The OwnPay Android app"). Answers carry
 * their fields both at the top level (what the app reads) and under `data`
 * (OwnPay's envelope). Request bodies ignore members they do not know. A
 * device paired here is a normal device marked `protocol: ownpay`.
 */

/** `{success: true, ...fields, data: {...fields}}`. */
function okBoth<T extends z.ZodObject>(schema: T) {
  return schema.extend({ success: z.literal(true), data: schema });
}

export const ownpayPairRequestSchema = z
  .object({
    pairing_code: z.string().trim().min(1, 'pairing_code is required').max(32).describe('The one-time pairing code (the `otp` of the pairing QR).'),
    device_id: fingerprintSchema.describe("The app's stable id of the phone (`<androidId>:<certSha256>`); kept only as a hash and checked again on every token refresh."),
    device_name: nameText(100, 'device_name must not be empty').optional().describe('Name shown to the merchant; "OwnPay app" when absent.'),
    app_version: z.string().trim().min(1).max(32).optional(),
    platform: z.string().trim().min(1).max(32).optional().describe('`android`; accepted and not stored.'),
  })
  .meta({ id: 'OwnPayDevicePairRequest' });

const ownpayTokensSchema = z.object({
  access_token: z.string().describe('Access JWT for `Authorization: Bearer` on every other device route.'),
  refresh_token: z.string().describe('Refresh JWT; single use, as for native devices.'),
  expires_in: z.number().int().describe('Seconds the access token is valid.'),
});

export const ownpayPairedSchema = ownpayTokensSchema
  .extend({
    aes_key: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe("This device's AES-256-GCM key (32 bytes, hex) for `encrypted_payload`. Shown once; stored sealed; a new one on every pairing."),
    device_uuid: z.uuid().describe('UUID of the paired device.'),
  })
  .meta({ id: 'OwnPayDevicePaired' });

export const ownpayRefreshRequestSchema = z
  .object({
    refresh_token: z.string().min(1, 'refresh_token is required').max(2048),
    fingerprint: fingerprintSchema.describe('The `device_id` given at pairing.'),
  })
  .meta({ id: 'OwnPayDeviceRefreshRequest' });

export const ownpaySmsRequestSchema = z
  .object({
    messages: z
      .array(
        z.object({
          local_id: z
            .union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), z.string().regex(/^[0-9]{1,16}$/).transform(Number)])
            .describe("The app's queue id of the message; echoed in `results`. Sending the same id again from the same device stores nothing new."),
          encrypted_payload: z
            .string()
            .min(1)
            .max(16384)
            .describe("base64 of IV (12 bytes) ‖ ciphertext ‖ tag (16 bytes): the SMS body, AES-256-GCM with the device's `aes_key`."),
          sender: z
            .string()
            .min(1)
            .max(64)
            .regex(/^[^\p{Cc}]*$/u, 'sender must not contain control characters')
            .refine((s) => s.trim() !== '', 'sender must not be blank')
            .describe('Sender address exactly as the phone received it.'),
          received_at: z.iso.datetime({ offset: true }).describe('When the phone received it (device clock, not corrected: the app does not report its clock).'),
        }),
      )
      .min(1, 'messages must contain at least one SMS')
      .max(MAX_SMS_BATCH, `At most ${MAX_SMS_BATCH} messages per call`),
  })
  .meta({ id: 'OwnPaySmsUpload' });

export const ownpaySmsResultSchema = z
  .object({
    local_id: z.number().int(),
    status: z
      .enum(['accepted', 'duplicate', 'rejected'])
      .describe(
        "`accepted` stored (and matched by the native matcher); `duplicate` this message (same `local_id`) or the same text from the same sender was stored before; `rejected` nothing stored: the payload does not decrypt and authenticate with this device's key (tampered, or another key), or the brand's filter rules refuse the message.",
      ),
    server_ref: z.string().nullable().describe('`sms_<id>` of the stored SMS record; null when rejected.'),
  })
  .meta({ id: 'OwnPaySmsResult' });

export const ownpayDeviceContract = withErrorResponses(
  c.router(
    {
      pair: {
        method: 'POST',
        path: '/devices',
        summary: 'Pair the OwnPay app',
        description: [
          "OwnPay's pairing: the one-time pairing code (created in the console or `device:pair-code`, the `otp` of the \"OwnPay app\" QR `{\"server_url\",\"otp\"}`) in the body.",
          'Answers 201 with the token pair, the new device uuid and its AES key. As native pairing: a used, expired or unknown code is `INVALID_PAIRING_CODE`, the device takes the mode of the code, and pairing again from the same phone (same `device_id`) replaces its previous registration and key.',
        ].join(' '),
        body: ownpayPairRequestSchema,
        responses: { 201: okBoth(ownpayPairedSchema) },
        metadata: meta({ auth: 'pairing', errors: ['INVALID_PAIRING_CODE'], tag: 'OwnPay app' }),
      },
      refreshTokens: {
        method: 'POST',
        path: '/devices/token-refreshes',
        summary: 'Refresh the token pair (OwnPay app)',
        description:
          "For devices paired by the OwnPay app (a refresh token of a native device is answered by the native route of the same path). Same rules as the native refresh: the refresh token is single use and `fingerprint` must be the pairing's `device_id`; every rejection is `INVALID_PAIRING_CODE`.",
        body: ownpayRefreshRequestSchema,
        responses: { 200: okBoth(ownpayTokensSchema) },
        metadata: meta({ auth: 'device-refresh', errors: ['INVALID_PAIRING_CODE'], tag: 'OwnPay app' }),
      },
      uploadSms: {
        method: 'POST',
        path: '/sms',
        summary: 'Upload encrypted SMS (OwnPay app)',
        description: [
          `Up to ${MAX_SMS_BATCH} SMS, each body AES-256-GCM encrypted with the device's key; one result per message, in input order.`,
          'A decrypted SMS goes through exactly the native intake and matcher (filter rules, duplicates, balance chains, certain-evidence matching).',
          'A payload that does not authenticate is `rejected` and nothing of it is stored.',
        ].join(' '),
        body: ownpaySmsRequestSchema,
        responses: { 200: okBoth(z.object({ results: z.array(ownpaySmsResultSchema) })) },
        metadata: meta({ auth: 'device', tag: 'OwnPay app', errors: ['FORBIDDEN'] }),
      },
      revokeSelf: {
        method: 'DELETE',
        path: '/devices/:id',
        summary: 'Revoke this device (OwnPay app)',
        description:
          'The calling device revokes itself (`id` is its `device_uuid` or `self`); its tokens stop working at once. A phone cannot revoke another device: any other id is `DEVICE_NOT_FOUND` (revoke those in the console).',
        pathParams: z.object({ id: z.string().min(1).max(64).describe('`self` or the calling device\'s uuid.') }),
        body: c.noBody(),
        responses: { 200: ok(z.object({ message: z.string() })) },
        metadata: meta({ auth: 'device', tag: 'OwnPay app', errors: ['DEVICE_NOT_FOUND'] }),
      },
    },
    { pathPrefix: DEVICE_PATH_PREFIX, strictStatusCodes: true },
  ),
  apiSurfaceCodes,
);

export type OwnPayDeviceContract = typeof ownpayDeviceContract;
