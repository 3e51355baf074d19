import { createCipheriv, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { adminRequest } from './admin-support.ts';
import { DEVICE_API, deviceRequest, newPairingCode, pairDevice } from '../support/device.ts';
import { eventsOf, newGatewayTrxId, seedPayment, smsBodies, smsScene, transactionRow } from '../support/sms-matching.ts';

/**
 * OwnPay's Android app against this service, through HTTP (README "The OwnPay Android app").
 * The wire formats come from the app's public source (github.com/own-pay/OwnPay-Mobile-App), read for them only:
 * - pairing request and response, token refresh body, self-revocation (`DELETE /devices/{uuid}`):
 *   lib/features/pairing/data/device_repository.dart, docs/API_CONTRACT.md §3 (1)(2)
 * - the pairing QR `{"server_url","otp"}`: lib/features/pairing/presentation/qr_scan_screen.dart
 * - `Authorization: Bearer <access>` on later calls, one refresh on 401: lib/core/network/auth_interceptor.dart
 * - the app reads answers' fields at the top level (`value['access_token']`, `body['results']`):
 *   lib/features/pairing/data/device_repository.dart, lib/features/sync/data/sync_worker.dart
 * - the SMS upload `{messages:[{local_id, encrypted_payload, sender, received_at}]}` and its results:
 *   lib/features/sync/domain/queued_sms.dart (`toApi`), lib/features/sync/data/sync_worker.dart
 * - the payload: base64(IV 12 ‖ ciphertext ‖ tag 16), AES-256-GCM of the SMS body (UTF-8) with the hex key:
 *   lib/core/crypto/aes_gcm_cipher.dart, lib/features/sms_capture/data/sms_ingest_coordinator.dart
 * And OwnPay's server for the routes: src/Controller/Api/Mobile/DeviceController.php, SmsController.php (own-pay/OwnPay).
 * The encryption below is our own, written from that description.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off' });
});
afterAll(() => t?.close());

/** What the app sends as `device_id`: `<androidId>:<certSha256>`. */
const appDeviceId = () => `${randomBytes(8).toString('hex')}:${randomBytes(32).toString('hex')}`;

/** The app's envelope: base64(IV ‖ ciphertext ‖ tag), AES-256-GCM with the 32-byte key given in hex. */
function seal(keyHex: string, text: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
  const ct = Buffer.concat([c.update(text, 'utf8'), c.final()]);
  return Buffer.concat([iv, ct, c.getAuthTag()]).toString('base64');
}

interface AppSession {
  brandId: number;
  deviceId: string;
  deviceUuid: string;
  accessToken: string;
  refreshToken: string;
  aesKey: string;
}

const pairBody = (code: string, deviceId = appDeviceId()) => ({ pairing_code: code, device_name: 'Galaxy A54', device_id: deviceId, app_version: '1.0.0', platform: 'android' });

async function pairApp(brandId: number, opts: { deviceId?: string; mode?: 'live' | 'test' } = {}): Promise<AppSession> {
  const deviceId = opts.deviceId ?? appDeviceId();
  const code = await newPairingCode(t, brandId, undefined, opts.mode ?? 'live');
  const res = await t.request('POST', `${DEVICE_API}/devices`, { body: pairBody(code, deviceId) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { brandId, deviceId, deviceUuid: res.body.device_uuid, accessToken: res.body.access_token, refreshToken: res.body.refresh_token, aesKey: res.body.aes_key };
}

const upload = (s: Pick<AppSession, 'accessToken'>, messages: unknown[]) => deviceRequest(t, s, 'POST', '/sms', { messages });
let localId = 0;
const message = (s: AppSession, body: string, overrides: Record<string, unknown> = {}) => ({
  local_id: ++localId,
  encrypted_payload: seal(s.aesKey, body),
  sender: 'bKash',
  received_at: new Date().toISOString(),
  ...overrides,
});
const smsCount = async (brandId: number) => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records WHERE brand_id = $1', [brandId]))[0]!.n);

describe('POST /api/mobile/v1/devices: pairing the OwnPay app', () => {
  it('answers the token pair, the device uuid and a 32-byte hex AES key, top level and under data; the device is a normal device marked ownpay', async () => {
    const { brandId } = await t.createBrand('OwnPay app');
    const code = await newPairingCode(t, brandId, undefined, 'test');
    const res = await t.request('POST', `${DEVICE_API}/devices`, { body: { ...pairBody(code), extra_field_from_a_newer_app: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ success: true, access_token: expect.any(String), refresh_token: expect.any(String), expires_in: expect.any(Number), device_uuid: expect.any(String) });
    expect(res.body.aes_key).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.data).toEqual({ access_token: res.body.access_token, refresh_token: res.body.refresh_token, expires_in: res.body.expires_in, aes_key: res.body.aes_key, device_uuid: res.body.device_uuid });

    const [row] = await t.sql<any>('SELECT * FROM devices WHERE uuid = $1', [res.body.device_uuid]);
    expect(row).toMatchObject({ brand_id: String(brandId), protocol: 'ownpay', mode: 'test', status: 'active', name: 'Galaxy A54', app_version: '1.0.0' });
    // The key is stored sealed, never in clear.
    expect(row.aes_key_encrypted).toMatch(/^v2\./);
    expect(row.aes_key_encrypted).not.toContain(res.body.aes_key);

    // The access token works on the native routes the app also calls (heartbeat with an empty body).
    const beat = await deviceRequest(t, { accessToken: res.body.access_token }, 'POST', '/devices/heartbeats', {});
    expect(beat.status).toBe(200);
    // The console lists it as any device.
    const list = await adminRequest(t, 'GET', `/devices?brand_id=${brandId}`);
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ status: 'active', mode: 'test', name: 'Galaxy A54', protocol: 'ownpay' });
  });

  it('an expired code: 401 INVALID_PAIRING_CODE in our envelope, nothing paired', async () => {
    const { brandId } = await t.createBrand('OwnPay app expired');
    const code = await newPairingCode(t, brandId);
    await t.sql("UPDATE pairing_codes SET created_at = now() - interval '20 minutes', expires_at = now() - interval '1 second' WHERE brand_id = $1", [brandId]);
    const res = await t.request('POST', `${DEVICE_API}/devices`, { body: pairBody(code) });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].code).toBe('INVALID_PAIRING_CODE');
    expect((await t.sql('SELECT 1 FROM devices WHERE brand_id = $1', [brandId])).length).toBe(0);
  });

  it('a code used once already: 401 INVALID_PAIRING_CODE', async () => {
    const { brandId } = await t.createBrand('OwnPay app reused');
    const code = await newPairingCode(t, brandId);
    expect((await t.request('POST', `${DEVICE_API}/devices`, { body: pairBody(code) })).status).toBe(201);
    const again = await t.request('POST', `${DEVICE_API}/devices`, { body: pairBody(code) });
    expect(again.status).toBe(401);
    expect(again.body.errors[0].code).toBe('INVALID_PAIRING_CODE');
  });

  it('a bad body: 400 VALIDATION_ERROR naming the field, in our envelope', async () => {
    const missing = await t.request('POST', `${DEVICE_API}/devices`, { body: { device_name: 'Phone', device_id: appDeviceId() } });
    expect(missing.status).toBe(400);
    expect(missing.body.success).toBe(false);
    expect(missing.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'pairing_code' });
    const shortId = await t.request('POST', `${DEVICE_API}/devices`, { body: { pairing_code: 'ABCDE-FGHJK', device_id: 'short' } });
    expect(shortId.status).toBe(400);
    expect(shortId.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'device_id' });
  });

  it('re-pairing the same phone rotates its key: the old row is revoked and its key cleared', async () => {
    const { brandId } = await t.createBrand('OwnPay app re-pair');
    const first = await pairApp(brandId);
    const second = await pairApp(brandId, { deviceId: first.deviceId });
    expect(second.aesKey).not.toBe(first.aesKey);
    const [old] = await t.sql<any>('SELECT status, revoked_reason, aes_key_encrypted FROM devices WHERE uuid = $1', [first.deviceUuid]);
    expect(old).toEqual({ status: 'revoked', revoked_reason: 're_paired', aes_key_encrypted: null });
    expect((await upload(first, [message(first, 'hello')])).status).toBe(401);
  });
});

describe('POST /api/mobile/v1/devices/token-refreshes for an OwnPay device', () => {
  it('answers the rotated pair at the top level; a native device still gets the native answer on the same path', async () => {
    const { brandId } = await t.createBrand('OwnPay app refresh');
    const app = await pairApp(brandId);
    const res = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: app.refreshToken, fingerprint: app.deviceId } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ success: true, access_token: expect.any(String), refresh_token: expect.any(String), expires_in: expect.any(Number) });
    expect(res.body.refresh_token).not.toBe(app.refreshToken);
    expect(res.body.data.access_token).toBe(res.body.access_token);

    const native = await pairDevice(t, { brandId });
    const n = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: native.refreshToken, fingerprint: native.fingerprint } });
    expect(n.status).toBe(200);
    expect(n.body.access_token).toBeUndefined();
    expect(n.body.data).toMatchObject({ token_type: 'Bearer', device_id: native.deviceUuid });
  });

  it('the wrong fingerprint: 401 INVALID_PAIRING_CODE', async () => {
    const { brandId } = await t.createBrand('OwnPay app refresh bad');
    const app = await pairApp(brandId);
    const res = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: app.refreshToken, fingerprint: appDeviceId() } });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].code).toBe('INVALID_PAIRING_CODE');
  });
});

describe('POST /api/mobile/v1/sms: encrypted SMS through the native intake and matcher', () => {
  it('an encrypted money-received SMS completes the payment it proves', async () => {
    const scene = await smsScene(t);
    const app = await pairApp(scene.brandId);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '1250.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const m = message(app, smsBodies.bkash('1250.00', trxId));
    const res = await upload(app, [m]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results).toEqual([{ local_id: m.local_id, status: 'accepted', server_ref: expect.stringMatching(/^sms_\d+$/) }]);
    expect(res.body.data.results).toEqual(res.body.results);
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
    const id = Number(res.body.results[0].server_ref.slice(4));
    const [row] = await t.sql<any>('SELECT d.uuid, r.match_status, r.device_message_id FROM sms_records r JOIN devices d ON d.id = r.device_id WHERE r.id = $1', [id]);
    expect(row).toEqual({ uuid: app.deviceUuid, match_status: 'matched', device_message_id: `ownpay:${m.local_id}` });
  });

  it('duplicates: the same local_id again stores nothing new; the same text under a new local_id is `duplicate`', async () => {
    const scene = await smsScene(t);
    const app = await pairApp(scene.brandId);
    const body = smsBodies.bkash('77.00', newGatewayTrxId());
    const m = message(app, body);
    const first = await upload(app, [m]);
    expect(first.body.results[0].status).toBe('accepted');
    const retry = await upload(app, [m]);
    expect(retry.body.results[0].server_ref).toBe(first.body.results[0].server_ref);
    const copy = message(app, body);
    const again = await upload(app, [copy]);
    expect(again.body.results).toEqual([{ local_id: copy.local_id, status: 'duplicate', server_ref: expect.stringMatching(/^sms_\d+$/) }]);
    expect(await smsCount(scene.brandId)).toBe(2);
  });

  it('a tampered ciphertext and a payload sealed with another key: `rejected`, nothing stored; the good message of the batch is accepted', async () => {
    const scene = await smsScene(t);
    const app = await pairApp(scene.brandId);
    const other = await pairApp(scene.brandId);
    const good = message(app, smsBodies.bkash('10.00', newGatewayTrxId()));
    const tampered = message(app, smsBodies.bkash('5000.00', newGatewayTrxId()));
    const bytes = Buffer.from(tampered.encrypted_payload, 'base64');
    bytes[14]! ^= 0x01;
    tampered.encrypted_payload = bytes.toString('base64');
    const wrongKey = message(other, smsBodies.bkash('20.00', newGatewayTrxId()));
    const notBase64 = message(app, 'x', { encrypted_payload: '!!!not base64!!!' });
    const before = await smsCount(scene.brandId);
    const res = await upload(app, [tampered, good, wrongKey, notBase64]);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: any) => [r.local_id, r.status, r.server_ref === null])).toEqual([
      [tampered.local_id, 'rejected', true],
      [good.local_id, 'accepted', false],
      [wrongKey.local_id, 'rejected', true],
      [notBase64.local_id, 'rejected', true],
    ]);
    expect(await smsCount(scene.brandId)).toBe(before + 1);
  });

  it('a bad body: 400 in our envelope; a native device: 403', async () => {
    const scene = await smsScene(t);
    const app = await pairApp(scene.brandId);
    const bad = await upload(app, [{ local_id: 1, sender: 'bKash', received_at: new Date().toISOString() }]);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].code).toBe('VALIDATION_ERROR');
    const native = await upload(scene.device, [message(app, 'hello')]);
    expect(native.status).toBe(403);
    expect(native.body.errors[0].code).toBe('FORBIDDEN');
  });
});

describe('the wire details the app relies on', () => {
  it("Dart's UTC timestamps with microseconds and a local_id sent as a string are accepted; without a token the upload is 401", async () => {
    const scene = await smsScene(t);
    const app = await pairApp(scene.brandId);
    const m = message(app, smsBodies.bkash('31.00', newGatewayTrxId()), { received_at: '2026-05-20T04:30:00.000123Z' });
    const res = await upload(app, [{ ...m, local_id: String(m.local_id) }]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results).toEqual([{ local_id: m.local_id, status: 'accepted', server_ref: expect.stringMatching(/^sms_\d+$/) }]);
    const anonymous = await t.request('POST', `${DEVICE_API}/sms`, { body: { messages: [message(app, 'hello')] } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors[0].code).toBe('UNAUTHORIZED');
  });
});

describe('DELETE /api/mobile/v1/devices/{id}: the app revokes itself', () => {
  it('revokes the calling device; its tokens are refused (401) afterwards and its key is cleared', async () => {
    const { brandId } = await t.createBrand('OwnPay app revoke');
    const app = await pairApp(brandId);
    const other = await pairApp(brandId);
    // Another device's id: not found (a phone revokes only itself).
    const notMine = await deviceRequest(t, app, 'DELETE', `/devices/${other.deviceUuid}`);
    expect(notMine.status).toBe(404);
    expect(notMine.body.errors[0].code).toBe('DEVICE_NOT_FOUND');

    const res = await deviceRequest(t, app, 'DELETE', `/devices/${app.deviceUuid}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ success: true, data: { message: 'Device revoked' } });
    const [row] = await t.sql<any>('SELECT status, revoked_reason, aes_key_encrypted FROM devices WHERE uuid = $1', [app.deviceUuid]);
    expect(row).toEqual({ status: 'revoked', revoked_reason: 'self', aes_key_encrypted: null });

    const after = await upload(app, [message(app, 'hello')]);
    expect(after.status).toBe(401);
    const refresh = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: app.refreshToken, fingerprint: app.deviceId } });
    expect(refresh.status).toBe(401);
    // `self` works as the id too.
    expect((await deviceRequest(t, other, 'DELETE', '/devices/self')).status).toBe(200);
  });
});
