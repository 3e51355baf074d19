import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newFingerprint, newPairingCode, tokenKeys } from '../support/device.ts';
import {
  AuthenticationError,
  InvalidRequestError,
  NotFoundError,
  PaycollectDevice,
  PaycollectError,
  PairingRequiredError,
  type DeviceTokens,
  type FetchLike,
} from '../../clients/device/index.ts';
import { signDeviceToken } from '../../server/domain/devices/tokens.ts';

let t: TestContext;
let brandId: number;

beforeAll(async () => {
  t = await startTestServer();
  ({ brandId } = await t.createBrand('Device SDK Errors'));
});
afterAll(() => t?.close());

async function caught(p: Promise<unknown>): Promise<PaycollectError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(PaycollectError);
    return err as PaycollectError;
  }
  throw new Error('expected the call to fail');
}

function setup(fingerprint = newFingerprint()) {
  const saved: DeviceTokens[] = [];
  const paths: string[] = [];
  const f: FetchLike = (url, init) => {
    paths.push(new URL(url).pathname);
    return fetch(url, init);
  };
  const device = new PaycollectDevice({ baseUrl: t.baseUrl, fingerprint, onTokens: (p) => void saved.push(p), fetch: f });
  return { device, saved, paths, fingerprint };
}

function expireAccessToken(device: PaycollectDevice) {
  const { accessToken, refreshToken } = device.getTokens()!;
  const sub = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sub;
  device.setTokens({ accessToken: signDeviceToken(tokenKeys(t), 'access', sub, new Date(0)).token, refreshToken });
}

describe('device SDK failures', () => {
  it('a device without tokens is told to pair, without a request', async () => {
    const { device, paths } = setup();
    const err = await caught(device.devices.heartbeat());
    expect(err).toBeInstanceOf(PairingRequiredError);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ code: 'PAIRING_REQUIRED', status: null });
    expect(paths).toEqual([]);
  });

  it('a used pairing code: INVALID_PAIRING_CODE, nothing stored', async () => {
    const code = await newPairingCode(t, brandId);
    await setup().device.pair(code, { device_name: 'first' });
    const { device, saved } = setup();
    const err = await caught(device.pair(code, { device_name: 'second' }));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ code: 'INVALID_PAIRING_CODE', status: 401, message: 'Invalid pairing code' });
    expect(saved).toEqual([]);
    expect(device.getTokens()).toBeNull();
  });

  it('a refresh token that was already used: the device is revoked and every waiting call gets PairingRequiredError', async () => {
    const { device, saved, paths } = setup();
    await device.pair(await newPairingCode(t, brandId), { device_name: 'stolen' });
    const stale = device.getTokens()!;
    // Someone else (a stolen copy) rotates first; the SDK still holds the old refresh token.
    const thief = await t.request('POST', '/api/mobile/v1/devices/token-refreshes', { body: { refresh_token: stale.refreshToken, fingerprint: device.fingerprint } });
    expect(thief.status).toBe(200);
    expireAccessToken(device);
    paths.length = 0;

    const errors = await Promise.all([device.devices.heartbeat(), device.filterRules.get(), device.notifications.listUnread()].map(caught));
    for (const err of errors) {
      expect(err).toBeInstanceOf(PairingRequiredError);
      expect(err).toMatchObject({ code: 'INVALID_PAIRING_CODE', status: 401 });
      expect(err.message).toMatch(/^The device must be paired again/);
      expect(err.requestId).toMatch(/^req_/);
    }
    expect(paths).toEqual(['/api/mobile/v1/devices/token-refreshes']);
    expect(device.getTokens()).toBeNull();
    expect(saved).toHaveLength(1);

    // From now on the app is told at once, and the service refuses the device everywhere.
    const next = await caught(device.dashboard.get());
    expect(next).toBeInstanceOf(PairingRequiredError);
    expect(paths).toHaveLength(1);
    const [row] = await t.sql<{ status: string }>('SELECT status FROM devices WHERE uuid = $1', [thief.body.data.device_id]);
    expect(row!.status).toBe('revoked');
  });

  it('a refresh from another phone (wrong fingerprint) is refused: PairingRequiredError', async () => {
    const original = setup();
    await original.device.pair(await newPairingCode(t, brandId), { device_name: 'real' });
    const clone = setup(newFingerprint());
    clone.device.setTokens(original.device.getTokens());
    expireAccessToken(clone.device);
    const err = await caught(clone.device.devices.heartbeat());
    expect(err).toBeInstanceOf(PairingRequiredError);
    expect(err.code).toBe('INVALID_PAIRING_CODE');
    expect(clone.saved).toEqual([]);
  });

  it('route errors are typed: a field-named 400 and a 404 on another device’s queue item', async () => {
    const { device } = setup();
    await device.pair(await newPairingCode(t, brandId), { device_name: 'p' });
    const bad = await caught(device.notifications.acknowledge({ ids: [] }));
    expect(bad).toBeInstanceOf(InvalidRequestError);
    expect(bad.field).toBe('ids');
    const missing = await caught(device.smsQueue.report(987654, { status: 'sent' }));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.code).toBe('SMS_QUEUE_ITEM_NOT_FOUND');
  });

  it('an onTokens that fails (storage full) fails the call, and the rotated pair stays in memory for the next one', async () => {
    let failStorage = false;
    const device = new PaycollectDevice({
      baseUrl: t.baseUrl,
      fingerprint: newFingerprint(),
      onTokens: () => {
        if (failStorage) throw new Error('disk full');
      },
    });
    await device.pair(await newPairingCode(t, brandId), { device_name: 'p' });
    const before = device.getTokens()!;
    expireAccessToken(device);
    failStorage = true;
    await expect(device.devices.heartbeat()).rejects.toThrow('disk full');
    const after = device.getTokens()!;
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(Date.parse((await device.devices.heartbeat()).server_time)).toBeGreaterThan(0);
  });

  it('the constructor wants a fingerprint', () => {
    expect(() => new PaycollectDevice({ baseUrl: t.baseUrl, fingerprint: ' ' })).toThrow('fingerprint is required');
  });
});
