import { randomUUID } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { DeviceProtocol, Mode } from '../../../contract/vocabulary.ts';
import { transaction, type Db } from '../db.ts';
import { getBrand } from '../brands/service.ts';
import { insertDevice, insertPairingCode, revokeRepairedDevices, setCodeDevice, useValidCode } from './queries/pairing.ts';
import { generatePairingCode, hashPairingCode, normalizePairingCode } from './pairing-code.ts';
import { ACCESS_TOKEN_TTL_SECONDS, REFRESH_TOKEN_TTL_SECONDS, hashFingerprint, issueTokenPair, type DeviceTokenKeys } from './tokens.ts';

const DEFAULT_PAIRING_CODE_TTL_MINUTES = 15;
const MAX_PAIRING_CODE_TTL_MINUTES = 7 * 24 * 60;

/** What pairing and refresh hand to the app. */
export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  refreshExpiresIn: number;
  deviceUuid: string;
  serverTime: Date;
}

export function tokenPairFor(keys: DeviceTokenKeys, deviceUuid: string, now: Date): { pair: TokenPair; refreshJti: string; refreshExpiresAt: Date } {
  const { access, refresh } = issueTokenPair(keys, deviceUuid, now);
  return {
    pair: {
      accessToken: access.token,
      refreshToken: refresh.token,
      expiresIn: ACCESS_TOKEN_TTL_SECONDS,
      refreshExpiresIn: REFRESH_TOKEN_TTL_SECONDS,
      deviceUuid,
      serverTime: now,
    },
    refreshJti: refresh.jti,
    refreshExpiresAt: refresh.expiresAt,
  };
}

/**
 * A one-time pairing code for the brand. The clear code is returned once; only
 * its hash is stored. Short-lived by default (15 minutes).
 */
export async function createPairingCode(
  em: Db,
  brandId: number,
  opts: { ttlMinutes?: number; mode?: Mode } = {},
): Promise<{ id: number; code: string; expiresAt: Date; mode: Mode }> {
  const ttlMinutes = opts.ttlMinutes ?? DEFAULT_PAIRING_CODE_TTL_MINUTES;
  if (!Number.isInteger(ttlMinutes) || ttlMinutes < 1 || ttlMinutes > MAX_PAIRING_CODE_TTL_MINUTES) {
    throw new AppError('VALIDATION_ERROR', `ttl_minutes must be a whole number between 1 and ${MAX_PAIRING_CODE_TTL_MINUTES}`, { field: 'ttl_minutes' });
  }
  const brand = await getBrand(em, brandId);
  // Live unless asked: a live device is what pairing meant before modes existed.
  const mode = opts.mode ?? 'live';
  const code = generatePairingCode();
  const row = await insertPairingCode(em, { brandId: brand.id, mode, codeHash: hashPairingCode(normalizePairingCode(code)!), ttlMinutes });
  return { id: row.id, code, expiresAt: row.expires_at, mode };
}

export interface PairInput {
  code: string | null;
  fingerprint: string;
  name: string;
  appVersion?: string | null;
  /** Which app pairs (default `native`). */
  protocol?: DeviceProtocol;
  /** OwnPay devices: seals the device's new AES key for storage, given the brand and the new device's uuid (devices/ownpay.ts). */
  sealAesKey?: (binding: { brandId: number; row: string }) => string;
}

/**
 * Exchanges a pairing code for a new device and its token pair. The code is
 * consumed by one conditional UPDATE (unused AND unexpired), so when two phones
 * race for one code the database picks exactly one winner; the loser, like a
 * wrong, used or expired code, gets INVALID_PAIRING_CODE and nothing changes.
 */
export async function pairDevice(em: Db, keys: DeviceTokenKeys, input: PairInput, now: Date = new Date()): Promise<TokenPair> {
  const normalized = input.code === null ? null : normalizePairingCode(input.code);
  if (!normalized) throw new AppError('INVALID_PAIRING_CODE');
  const fingerprintHash = hashFingerprint(input.fingerprint);
  return transaction(em, async (tx) => {
    const code = await useValidCode(tx, hashPairingCode(normalized));
    if (!code) throw new AppError('INVALID_PAIRING_CODE');
    const brandId = code.brand_id;
    // The same phone pairing again replaces its old registration, so the
    // abandoned row neither keeps working nor reports itself offline forever.
    await revokeRepairedDevices(tx, brandId, fingerprintHash);
    const uuid = randomUUID();
    const { pair, refreshJti } = tokenPairFor(keys, uuid, now);
    const deviceId = await insertDevice(tx, {
      uuid,
      brandId,
      mode: code.mode,
      name: input.name,
      fingerprintHash,
      appVersion: input.appVersion ?? null,
      refreshJti,
      protocol: input.protocol ?? 'native',
      aesKeyEncrypted: input.sealAesKey ? input.sealAesKey({ brandId, row: uuid }) : null,
    });
    await setCodeDevice(tx, code.id, deviceId);
    return pair;
  });
}
