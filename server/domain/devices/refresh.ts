import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
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
  em: EntityManager,
  keys: DeviceTokenKeys,
  input: RefreshInput,
  opts: { now?: Date; onReuse?: (deviceUuid: string) => void } = {},
): Promise<TokenPair> {
  const now = opts.now ?? new Date();
  const claims = verifyDeviceToken(keys, 'refresh', input.refreshToken, now);
  if (!claims) throw new AppError('INVALID_PAIRING_CODE');

  const outcome = await em.transactional(async (tx): Promise<Outcome> => {
    const rows = await tx.execute<Array<{ id: string; status: string; fingerprint_hash: string; refresh_jti: string | null; brand_status: string }>>(
      `SELECT d.id, d.status, d.fingerprint_hash, d.refresh_jti, b.status AS brand_status
         FROM devices d JOIN brands b ON b.id = d.brand_id
        WHERE d.uuid = ?
        FOR UPDATE OF d`,
      [claims.deviceUuid],
    );
    const device = rows[0];
    if (!device || device.status !== 'active' || device.brand_status !== 'active') return { ok: false };

    if (device.refresh_jti !== claims.jti) {
      const rotated = await tx.execute('SELECT 1 FROM device_refresh_token_rotations WHERE jti = ? AND device_id = ?', [claims.jti, device.id]);
      if (rotated.length === 0) return { ok: false };
      await tx.execute(
        `UPDATE devices SET status = 'revoked', revoked_at = now(), revoked_reason = 'refresh_token_reuse', refresh_jti = NULL, updated_at = now()
          WHERE id = ?`,
        [device.id],
      );
      return { ok: false, revokedDeviceUuid: claims.deviceUuid };
    }

    // A right token from the wrong phone: refused, but the chain stays intact so
    // the genuine phone is not locked out by someone replaying its token.
    if (!fingerprintMatches(input.fingerprint, device.fingerprint_hash)) return { ok: false };

    const { pair, refreshJti } = tokenPairFor(keys, claims.deviceUuid, now);
    await tx.execute('INSERT INTO device_refresh_token_rotations (jti, device_id, expires_at) VALUES (?, ?, ?)', [claims.jti, device.id, claims.expiresAt]);
    await tx.execute('UPDATE devices SET refresh_jti = ?, last_seen_at = now(), updated_at = now() WHERE id = ?', [refreshJti, device.id]);
    return { ok: true, pair };
  });

  if (!outcome.ok) {
    if (outcome.revokedDeviceUuid) opts.onReuse?.(outcome.revokedDeviceUuid);
    throw new AppError('INVALID_PAIRING_CODE');
  }
  return outcome.pair;
}
