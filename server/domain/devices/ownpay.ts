import { createDecipheriv, randomBytes } from 'node:crypto';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { Db } from '../db.ts';
import { pairDevice, type TokenPair } from './pairing.ts';
import { selectDeviceProtocol, selectSealedAesKey } from './queries/ownpay.ts';
import { verifyDeviceToken, type DeviceTokenKeys } from './tokens.ts';

/**
 * Devices paired by OwnPay's Android app (README "The OwnPay Android app").
 * Such a device is a normal device (brand, mode of its pairing code, presence,
 * revocation, console) marked `protocol = 'ownpay'`, with one difference: the
 * app encrypts each SMS body with a per-device AES-256-GCM key issued at
 * pairing. The key is stored sealed with the service key like other secrets
 * (context below, bound to the brand and the device's uuid), a new one is made
 * on every pairing (re-pairing the phone revokes the old row and its key), and
 * it is cleared when the device is revoked.
 */

/** Cipher context of `devices.aes_key_encrypted`; the binding's row is the device uuid. */
export const DEVICE_AES_KEY_CONTEXT = 'device.aes_key';

/** Layout of the app's envelope: base64 of IV (12 bytes) ‖ ciphertext ‖ GCM tag (16 bytes). */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

export interface OwnpayPairInput {
  code: string;
  /** The app's `device_id` (stable per install); kept only as its hash, like a native fingerprint. */
  deviceId: string;
  name: string;
  appVersion: string | null;
}

/** Pairs an OwnPay app: the native pairing (one-time code, mode, re-pair) plus a fresh AES key, returned once in hex. */
export async function pairOwnpayDevice(
  em: Db,
  keys: DeviceTokenKeys,
  cipher: PiiCipher,
  input: OwnpayPairInput,
  now: Date = new Date(),
): Promise<{ pair: TokenPair; aesKeyHex: string }> {
  const aesKeyHex = randomBytes(KEY_BYTES).toString('hex');
  const pair = await pairDevice(
    em,
    keys,
    {
      code: input.code,
      fingerprint: input.deviceId,
      name: input.name,
      appVersion: input.appVersion,
      protocol: 'ownpay',
      sealAesKey: (binding) => cipher.encrypt(aesKeyHex, DEVICE_AES_KEY_CONTEXT, binding),
    },
    now,
  );
  return { pair, aesKeyHex };
}

/** True when the refresh token is valid and names a device paired by the OwnPay app (which route answers it). */
export async function isOwnpayRefreshToken(em: Db, keys: DeviceTokenKeys, refreshToken: unknown): Promise<boolean> {
  if (typeof refreshToken !== 'string' || refreshToken.length > 2048) return false;
  const claims = verifyDeviceToken(keys, 'refresh', refreshToken);
  if (!claims) return false;
  const row = await selectDeviceProtocol(em, claims.deviceUuid);
  return row?.protocol === 'ownpay';
}

/** The device's AES key, or null when the device is not an active OwnPay device of the brand. */
export async function ownpayDeviceKey(em: Db, cipher: PiiCipher, device: { deviceId: number; brandId: number }): Promise<Buffer | null> {
  const row = await selectSealedAesKey(em, device.deviceId, device.brandId);
  if (!row?.aes_key_encrypted) return null;
  const hex = cipher.decrypt(row.aes_key_encrypted, DEVICE_AES_KEY_CONTEXT, { brandId: device.brandId, row: row.uuid });
  return Buffer.from(hex, 'hex');
}

/**
 * Opens one `encrypted_payload`: the SMS body in clear, or null when it is not
 * a well-formed envelope, does not authenticate under this key (tampered, or
 * sealed with another device's key) or is not UTF-8 text.
 */
export function openOwnpayPayload(key: Buffer, payload: string): string | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(payload)) return null;
  const bytes = Buffer.from(payload, 'base64');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const clear = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
    return new TextDecoder('utf-8', { fatal: true }).decode(clear);
  } catch {
    return null;
  }
}
