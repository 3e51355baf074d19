import { randomUUID } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { getBrand } from '../brands/service.ts';
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
  em: EntityManager,
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
  const rows = await em.execute<Array<{ id: string; expires_at: Date }>>(
    `INSERT INTO pairing_codes (brand_id, mode, code_hash, expires_at)
     VALUES (?, ?, ?, now() + make_interval(mins => ?))
     RETURNING id, expires_at`,
    [brand.id, mode, hashPairingCode(normalizePairingCode(code)!), ttlMinutes],
  );
  return { id: Number(rows[0]!.id), code, expiresAt: new Date(rows[0]!.expires_at), mode };
}

export interface PairInput {
  code: string | null;
  fingerprint: string;
  name: string;
  appVersion?: string | null;
}

/**
 * Exchanges a pairing code for a new device and its token pair. The code is
 * consumed by one conditional UPDATE (unused AND unexpired), so when two phones
 * race for one code the database picks exactly one winner; the loser, like a
 * wrong, used or expired code, gets INVALID_PAIRING_CODE and nothing changes.
 */
export async function pairDevice(em: EntityManager, keys: DeviceTokenKeys, input: PairInput, now: Date = new Date()): Promise<TokenPair> {
  const normalized = input.code === null ? null : normalizePairingCode(input.code);
  if (!normalized) throw new AppError('INVALID_PAIRING_CODE');
  const fingerprintHash = hashFingerprint(input.fingerprint);
  return em.transactional(async (tx) => {
    const consumed = await tx.execute<Array<{ id: string; brand_id: string; mode: Mode }>>(
      `UPDATE pairing_codes pc SET used_at = now()
         FROM brands b
        WHERE pc.code_hash = ? AND pc.used_at IS NULL AND pc.expires_at > now()
          AND b.id = pc.brand_id AND b.status = 'active'
        RETURNING pc.id, pc.brand_id, pc.mode`,
      [hashPairingCode(normalized)],
    );
    const code = consumed[0];
    if (!code) throw new AppError('INVALID_PAIRING_CODE');
    const brandId = Number(code.brand_id);
    // The same phone pairing again replaces its old registration, so the
    // abandoned row neither keeps working nor reports itself offline forever.
    await tx.execute(
      `UPDATE devices SET status = 'revoked', revoked_at = now(), revoked_reason = 're_paired', refresh_jti = NULL, updated_at = now()
        WHERE brand_id = ? AND fingerprint_hash = ? AND status = 'active'`,
      [brandId, fingerprintHash],
    );
    const uuid = randomUUID();
    const { pair, refreshJti } = tokenPairFor(keys, uuid, now);
    const inserted = await tx.execute<Array<{ id: string }>>(
      `INSERT INTO devices (uuid, brand_id, mode, name, fingerprint_hash, app_version, last_seen_at, refresh_jti)
       VALUES (?, ?, ?, ?, ?, ?, now(), ?) RETURNING id`,
      [uuid, brandId, code.mode, input.name, fingerprintHash, input.appVersion ?? null, refreshJti],
    );
    await tx.execute('UPDATE pairing_codes SET used_by_device_id = ? WHERE id = ?', [inserted[0]!.id, code.id]);
    return pair;
  });
}
