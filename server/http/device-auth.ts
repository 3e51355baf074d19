import { AppError } from '../../contract/common/errors.ts';
import { authenticateDevice } from '../domain/devices/service.ts';
import { verifyDeviceToken, type DeviceTokenKeys } from '../domain/devices/tokens.ts';
import type { Authenticator } from './auth.ts';

/**
 * `meta({ auth: 'device' })`: the access JWT (HS256 only, `typ` access, not
 * expired) of an active device of an active brand. The device is looked up on
 * every call, so a revoked device is refused at once; the same lookup refreshes
 * its presence.
 */
export function deviceAuthenticator(keys: DeviceTokenKeys): Authenticator {
  return async (req, token) => {
    if (!token) throw new AppError('UNAUTHORIZED');
    const claims = verifyDeviceToken(keys, 'access', token);
    if (!claims) throw new AppError('UNAUTHORIZED');
    const device = await authenticateDevice(req.db, claims.deviceUuid);
    if (!device) throw new AppError('UNAUTHORIZED');
    return { kind: 'device', deviceId: device.deviceId, deviceUuid: claims.deviceUuid, brandId: device.brandId, mode: device.mode };
  };
}
