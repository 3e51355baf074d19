import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { AppError } from '../../../../contract/common/errors.ts';
import type { AppDeps } from '../../../deps.ts';
import { pairDevice, type TokenPair } from '../../../domain/devices/pairing.ts';
import { refreshDeviceTokens } from '../../../domain/devices/refresh.ts';
import { recordDeviceClock } from '../../../domain/devices/clock.ts';
import { recordHeartbeat } from '../../../domain/devices/service.ts';
import { deviceTokenKeys, timingSafeFingerprintEqual } from '../../../domain/devices/tokens.ts';
import { bearerToken } from '../../auth.ts';
import { deviceOf } from '../../context.ts';

const s = initServer();

/** The fingerprint from the body or the header; both given must agree. */
function fingerprintOf(bodyValue: string | undefined, headerValue: string | undefined): string {
  if (bodyValue === undefined && headerValue === undefined) {
    throw new AppError('VALIDATION_ERROR', 'fingerprint is required (in the body or the X-Device-Fingerprint header)', { field: 'fingerprint' });
  }
  if (bodyValue !== undefined && headerValue !== undefined && !timingSafeFingerprintEqual(bodyValue, headerValue)) {
    throw new AppError('INVALID_PAIRING_CODE');
  }
  return (bodyValue ?? headerValue)!;
}

function tokenPairBody(pair: TokenPair) {
  return {
    success: true as const,
    data: {
      access_token: pair.accessToken,
      refresh_token: pair.refreshToken,
      token_type: 'Bearer' as const,
      expires_in: pair.expiresIn,
      refresh_expires_in: pair.refreshExpiresIn,
      device_id: pair.deviceUuid,
      server_time: pair.serverTime.toISOString(),
    },
  };
}

export function deviceDevicesHandlers(deps: AppDeps) {
  const keys = deviceTokenKeys(deps.secrets);
  return s.router(contract.device.devices, {
    pair: async ({ req, body, headers }) => {
      const fingerprint = fingerprintOf(body.fingerprint, headers['x-device-fingerprint']);
      const pair = await pairDevice(req.db, keys, { code: bearerToken(req), fingerprint, name: body.device_name, appVersion: body.app_version ?? null });
      deps.logger.info({ request_id: req.requestId, device_id: pair.deviceUuid }, 'device paired');
      return { status: 201, body: tokenPairBody(pair) };
    },
    refreshTokens: async ({ req, body, headers }) => {
      const fingerprint = fingerprintOf(body.fingerprint, headers['x-device-fingerprint']);
      const pair = await refreshDeviceTokens(req.db, keys, { refreshToken: body.refresh_token, fingerprint }, {
        onReuse: (deviceUuid) => deps.logger.warn({ request_id: req.requestId, device_id: deviceUuid }, 'refresh token reused: device revoked'),
      });
      return { status: 200, body: tokenPairBody(pair) };
    },
    heartbeat: async ({ req, body }) => {
      const { serverTime } = await recordHeartbeat(req.db, deviceOf(req).deviceId, {
        batteryLevel: body?.battery_level,
        isCharging: body?.is_charging,
        network: body?.network,
        appVersion: body?.app_version,
        smsPermission: body?.sms_permission,
        batteryOptimizationIgnored: body?.battery_optimization_ignored,
        lastSmsSeenAt: body?.last_sms_seen_at ? new Date(body.last_sms_seen_at) : undefined,
      });
      if (body?.device_time) await recordDeviceClock(req.db, deviceOf(req).deviceId, new Date(body.device_time));
      return { status: 200, body: { success: true, data: { server_time: serverTime.toISOString() } } };
    },
  });
}
