import { AppError } from '../../../contract/common/errors.ts';
import { sql } from 'kysely';
import { transaction, type Db } from '../db.ts';
import { tokenPairFor, type TokenPair } from './pairing.ts';
import { fingerprintMatches, verifyDeviceToken, type DeviceTokenKeys } from './tokens.ts';

export interface RefreshInput {
  refreshToken: string;
  fingerprint: string;
}

type Outcome = { ok: true; pair: TokenPair } | { ok: false; revokedDeviceUuid?: string };

/**
 * Exchanges a refresh JWT for a new pair and rotates the refresh token: only the
 * newest refresh token of a device is valid. Presenting one that was already
 * exchanged means two parties hold the chain (a stolen copy), so the device is
 * revoked at once, and that revocation is committed even though the request
 * fails. Every rejection is INVALID_PAIRING_CODE (contract/common/errors.ts), without
 * saying which check failed.
 *
 * The device row is locked for the exchange, so two refreshes with one token
 * are serialised: the first rotates, the second is a reuse.
 */
export async function refreshDeviceTokens(
  em: Db,
  keys: DeviceTokenKeys,
  input: RefreshInput,
  opts: { now?: Date; onReuse?: (deviceUuid: string) => void } = {},
): Promise<TokenPair> {
  const now = opts.now ?? new Date();
  const claims = verifyDeviceToken(keys, 'refresh', input.refreshToken, now);
  if (!claims) throw new AppError('INVALID_PAIRING_CODE');

  const outcome = await transaction(em, async (tx): Promise<Outcome> => {
    const k = tx;
    const device = await k
      .selectFrom('devices as d')
      .innerJoin('brands as b', 'b.id', 'd.brand_id')
      .select(['d.id', 'd.status', 'd.fingerprint_hash', 'd.refresh_jti', 'b.status as brand_status'])
      .where('d.uuid', '=', claims.deviceUuid)
      .forUpdate('d')
      .executeTakeFirst();
    if (!device || device.status !== 'active' || device.brand_status !== 'active') return { ok: false };

    if (device.refresh_jti !== claims.jti) {
      const rotated = await k.selectFrom('device_refresh_token_rotations').select('jti').where('jti', '=', claims.jti).where('device_id', '=', device.id).execute();
      if (rotated.length === 0) return { ok: false };
      await k
        .updateTable('devices')
        .set({ status: 'revoked', revoked_at: sql<Date>`now()`, revoked_reason: 'refresh_token_reuse', refresh_jti: null, updated_at: sql<Date>`now()` })
        .where('id', '=', device.id)
        .execute();
      return { ok: false, revokedDeviceUuid: claims.deviceUuid };
    }

    // A right token from the wrong phone: refused, but the chain stays intact so
    // the genuine phone is not locked out by someone replaying its token.
    if (!fingerprintMatches(input.fingerprint, device.fingerprint_hash)) return { ok: false };

    const { pair, refreshJti } = tokenPairFor(keys, claims.deviceUuid, now);
    await k.insertInto('device_refresh_token_rotations').values({ jti: claims.jti, device_id: device.id, expires_at: claims.expiresAt }).execute();
    await k.updateTable('devices').set({ refresh_jti: refreshJti, last_seen_at: sql<Date>`now()`, updated_at: sql<Date>`now()` }).where('id', '=', device.id).execute();
    return { ok: true, pair };
  });

  if (!outcome.ok) {
    if (outcome.revokedDeviceUuid) opts.onReuse?.(outcome.revokedDeviceUuid);
    throw new AppError('INVALID_PAIRING_CODE');
  }
  return outcome.pair;
}
