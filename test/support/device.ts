import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { createPairingCode } from '../../server/domain/devices/pairing.ts';
import { deviceTokenKeys, type DeviceTokenKeys } from '../../server/domain/devices/tokens.ts';
import type { TestContext } from './harness.ts';

export const DEVICE_API = '/api/mobile/v1';

export interface PairedDevice {
  brandId: number;
  /** Internal id (devices.id). */
  deviceId: number;
  deviceUuid: string;
  fingerprint: string;
  accessToken: string;
  refreshToken: string;
}

/** A fingerprint the way the app sends one: a hex hash. */
export function newFingerprint(): string {
  return randomBytes(32).toString('hex');
}

/** A fresh one-time pairing code for the brand, in clear. */
export async function newPairingCode(t: TestContext, brandId: number, ttlMinutes?: number, mode: 'live' | 'test' = 'live'): Promise<string> {
  const { code } = await createPairingCode(t.runtime.deps.db, brandId, ttlMinutes === undefined ? { mode } : { ttlMinutes, mode });
  return code;
}

/** The JWT keys of the running test server (to forge tokens in security tests). */
export function tokenKeys(t: TestContext): DeviceTokenKeys {
  return deviceTokenKeys(t.runtime.deps.secrets);
}

/**
 * Pairs a new device of the brand through the API (a brand is created when
 * none is given) and returns its tokens.
 */
export async function pairDevice(
  t: TestContext,
  opts: { brandId?: number; fingerprint?: string; name?: string; mode?: 'live' | 'test' } = {},
): Promise<PairedDevice> {
  const brandId = opts.brandId ?? (await t.createBrand('Device Brand')).brandId;
  const fingerprint = opts.fingerprint ?? newFingerprint();
  const code = await newPairingCode(t, brandId, undefined, opts.mode ?? 'live');
  const res = await t.request('POST', `${DEVICE_API}/devices/pairings`, {
    token: code,
    body: { fingerprint, device_name: opts.name ?? 'Test phone', app_version: '1.0.0' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const [row] = await t.sql<{ id: string }>('SELECT id FROM devices WHERE uuid = $1', [res.body.data.device_id]);
  return {
    brandId,
    deviceId: Number(row!.id),
    deviceUuid: res.body.data.device_id,
    fingerprint,
    accessToken: res.body.data.access_token,
    refreshToken: res.body.data.refresh_token,
  };
}

/** GET/POST on the device API with the device's access token. */
export function deviceRequest(t: TestContext, device: Pick<PairedDevice, 'accessToken'>, method: string, path: string, body?: unknown) {
  return t.request(method, `${DEVICE_API}${path}`, { token: device.accessToken, ...(body === undefined ? {} : { body }) });
}

/** Every route that takes the device access token, with a valid body: for "refused everywhere" checks. */
export const DEVICE_ROUTES: ReadonlyArray<{ method: string; path: string; body?: unknown }> = [
  { method: 'POST', path: '/devices/heartbeats' },
  { method: 'GET', path: '/dashboard' },
  { method: 'GET', path: '/config/filter-rules' },
  { method: 'GET', path: '/sms/queues' },
  { method: 'POST', path: '/sms/queues/1/reports', body: { status: 'sent' } },
  { method: 'GET', path: '/notifications' },
  { method: 'POST', path: '/notifications/acknowledgements', body: { ids: [1] } },
  { method: 'GET', path: '/commands' },
  { method: 'POST', path: '/commands/1/complete', body: { resent_count: 0 } },
  {
    method: 'POST',
    path: '/sms/messages',
    body: { messages: [{ device_message_id: 'm-1', sender: 'bKash', body: 'hello', received_at: '2026-01-01T00:00:00Z' }] },
  },
  // OwnPay's Android app (README "The OwnPay Android app").
  { method: 'POST', path: '/sms', body: { messages: [{ local_id: 1, encrypted_payload: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', sender: 'bKash', received_at: '2026-01-01T00:00:00Z' }] } },
  { method: 'DELETE', path: '/devices/self' },
];
