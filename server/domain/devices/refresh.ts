import { AppError } from '../../../contract/common/errors.ts';
import { transaction, type Db } from '../db.ts';
import { tokenPairFor, type TokenPair } from './pairing.ts';
import { lockDeviceForRefresh, revokeForTokenReuse, rotateRefreshToken, wasRotated } from './queries/session.ts';
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
    const device = await lockDeviceForRefresh(tx, claims.deviceUuid);
    if (!device || device.status !== 'active' || device.brand_status !== 'active') return { ok: false };

    if (device.refresh_jti !== claims.jti) {
      if (!(await wasRotated(tx, device.id, claims.jti))) return { ok: false };
      await revokeForTokenReuse(tx, device.id);
      return { ok: false, revokedDeviceUuid: claims.deviceUuid };
    }

    // A right token from the wrong phone: refused, but the chain stays intact so
    // the genuine phone is not locked out by someone replaying its token.
    if (!fingerprintMatches(input.fingerprint, device.fingerprint_hash)) return { ok: false };

    const { pair, refreshJti } = tokenPairFor(keys, claims.deviceUuid, now);
    await rotateRefreshToken(tx, device.id, { jti: claims.jti, expiresAt: claims.expiresAt }, refreshJti);
    return { ok: true, pair };
  });

  if (!outcome.ok) {
    if (outcome.revokedDeviceUuid) opts.onReuse?.(outcome.revokedDeviceUuid);
    throw new AppError('INVALID_PAIRING_CODE');
  }
  return outcome.pair;
}
