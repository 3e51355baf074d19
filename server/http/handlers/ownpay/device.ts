import type { RequestHandler } from 'express';
import { initServer } from '@ts-rest/express';
import { AppError } from '../../../../contract/common/errors.ts';
import { ownpayDeviceContract } from '../../../../contract/ownpay/device.ts';
import type { AppDeps } from '../../../deps.ts';
import { isOwnpayRefreshToken, openOwnpayPayload, ownpayDeviceKey, pairOwnpayDevice } from '../../../domain/devices/ownpay.ts';
import { refreshDeviceTokens } from '../../../domain/devices/refresh.ts';
import type { TokenPair } from '../../../domain/devices/pairing.ts';
import { revokeDevice } from '../../../domain/devices/service.ts';
import { deviceTokenKeys } from '../../../domain/devices/tokens.ts';
import { ingestForwardedBatch, type MatchSmsRecords } from '../../../domain/sms/index.ts';
import { deviceOf } from '../../context.ts';

const s = initServer();

const REFRESH_PATH = ownpayDeviceContract.refreshTokens.path;

/**
 * First middleware of the OwnPay app's routes: the token refresh shares its
 * method and path with the native one, so a refresh token that does not name
 * an OwnPay device goes on to the native route (which answers and refuses it
 * as it always did). The other routes have paths of their own.
 */
export function ownpayDeviceGate(deps: AppDeps): RequestHandler {
  const keys = deviceTokenKeys(deps.secrets);
  return (req, _res, next) => {
    if (req.method !== 'POST' || req.path !== REFRESH_PATH) return next();
    const token = (req.body as { refresh_token?: unknown } | undefined)?.refresh_token;
    isOwnpayRefreshToken(deps.db, keys, token).then(
      (ownpay) => (ownpay ? next() : next('route')),
      next,
    );
  };
}

const tokens = (pair: TokenPair) => ({ access_token: pair.accessToken, refresh_token: pair.refreshToken, expires_in: pair.expiresIn });

/** The OwnPay app's handlers: OwnPay's shapes over the native device services (README "The OwnPay Android app"). */
export function ownpayDeviceHandlers(deps: AppDeps, matchSmsRecords?: MatchSmsRecords) {
  const keys = deviceTokenKeys(deps.secrets);
  return s.router(ownpayDeviceContract, {
    pair: async ({ req, body }) => {
      const { pair, aesKeyHex } = await pairOwnpayDevice(req.db, keys, deps.crypto.pii, {
        code: body.pairing_code,
        deviceId: body.device_id,
        name: body.device_name ?? 'OwnPay app',
        appVersion: body.app_version ?? null,
      });
      deps.logger.info({ request_id: req.requestId, device_id: pair.deviceUuid, protocol: 'ownpay' }, 'device paired');
      const fields = { ...tokens(pair), aes_key: aesKeyHex, device_uuid: pair.deviceUuid };
      return { status: 201, body: { success: true as const, ...fields, data: fields } };
    },
    refreshTokens: async ({ req, body }) => {
      const pair = await refreshDeviceTokens(req.db, keys, { refreshToken: body.refresh_token, fingerprint: body.fingerprint }, {
        onReuse: (deviceUuid) => deps.logger.warn({ request_id: req.requestId, device_id: deviceUuid }, 'refresh token reused: device revoked'),
      });
      const fields = tokens(pair);
      return { status: 200, body: { success: true as const, ...fields, data: fields } };
    },
    uploadSms: async ({ req, body }) => {
      const device = deviceOf(req);
      const key = await ownpayDeviceKey(req.db, deps.crypto.pii, device);
      if (!key) throw new AppError('FORBIDDEN', 'This device was not paired by the OwnPay app: forward SMS with POST /api/mobile/v1/sms/messages');
      // Only what decrypts and authenticates goes on; the rest is answered `rejected` and nothing of it is kept.
      const opened = body.messages.map((m) => openOwnpayPayload(key, m.encrypted_payload));
      const kept = body.messages.flatMap((m, i) => {
        const text = opened[i];
        return text === null || text === undefined || text.length === 0
          ? []
          : [{ deviceMessageId: `ownpay:${m.local_id}`, sender: m.sender, body: text, receivedAt: new Date(m.received_at), simSlot: null, receivingNumber: null }];
      });
      const answers = kept.length === 0
        ? []
        : await ingestForwardedBatch(
            req.db,
            {
              cipher: deps.crypto.pii,
              hashKey: deps.crypto.blindIndexKey,
              match: matchSmsRecords,
              onMatchError: (err) =>
                deps.logger.error({ request_id: req.requestId, err: { message: err instanceof Error ? err.message : String(err) } }, 'SMS matching failed; records left pending'),
            },
            device,
            kept,
          );
      let next = 0;
      const results = body.messages.map((m, i) => {
        const text = opened[i];
        if (text === null || text === undefined || text.length === 0) return { local_id: m.local_id, status: 'rejected' as const, server_ref: null };
        const answer = answers[next++]!;
        if (!('result' in answer)) return { local_id: m.local_id, status: 'rejected' as const, server_ref: null };
        const r = answer.result;
        return { local_id: m.local_id, status: r.matchStatus === 'duplicate' ? ('duplicate' as const) : ('accepted' as const), server_ref: `sms_${r.id}` };
      });
      const rejected = results.filter((r) => r.status === 'rejected').length;
      if (rejected > 0) deps.logger.warn({ request_id: req.requestId, device_id: device.deviceUuid, rejected }, 'OwnPay SMS rejected (payload did not authenticate, or filter rules)');
      return { status: 200, body: { success: true as const, results, data: { results } } };
    },
    revokeSelf: async ({ req, params }) => {
      const device = deviceOf(req);
      if (params.id !== 'self' && params.id.toLowerCase() !== device.deviceUuid.toLowerCase()) throw new AppError('DEVICE_NOT_FOUND');
      await revokeDevice(req.db, device.brandId, device.deviceId, 'self');
      deps.logger.info({ request_id: req.requestId, device_id: device.deviceUuid }, 'device revoked itself');
      return { status: 200, body: { success: true as const, data: { message: 'Device revoked' } } };
    },
  });
}
