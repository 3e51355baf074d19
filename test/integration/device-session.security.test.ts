import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeDevice } from '../../server/domain/devices/service.ts';
import { signDeviceToken } from '../../server/domain/devices/tokens.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, DEVICE_ROUTES, deviceRequest, pairDevice, tokenKeys, type PairedDevice } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

function expectCode(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.errors[0].code).toBe(code);
}

const heartbeat = (token: string) => t.request('POST', `${DEVICE_API}/devices/heartbeats`, { token });
const refresh = (refreshToken: string, fingerprint: string) =>
  t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: refreshToken, fingerprint } });

/** Refused on every device route with 401 UNAUTHORIZED. */
async function expectRefusedEverywhere(token: string) {
  for (const r of DEVICE_ROUTES) {
    const res = await t.request(r.method, `${DEVICE_API}${r.path}`, { token, ...(r.body === undefined ? {} : { body: r.body }) });
    expect(res.status, `${r.method} ${r.path}`).toBe(401);
    expect(res.body.errors[0].code, `${r.method} ${r.path}`).toBe('UNAUTHORIZED');
  }
}

function forge(payload: object, key: string | Buffer, options: jwt.SignOptions): string {
  return jwt.sign(payload, key, options);
}

describe('access token checks', () => {
  let d: PairedDevice;
  beforeAll(async () => {
    d = await pairDevice(t);
  });

  it('missing or malformed Authorization: 401 UNAUTHORIZED', async () => {
    expectCode(await t.request('POST', `${DEVICE_API}/devices/heartbeats`), 401, 'UNAUTHORIZED');
    expectCode(await heartbeat('not-a-jwt'), 401, 'UNAUTHORIZED');
    expectCode(await heartbeat(`${d.accessToken}x`), 401, 'UNAUTHORIZED');
  });

  it('an expired access token: 401 UNAUTHORIZED', async () => {
    const issued = signDeviceToken(tokenKeys(t), 'access', d.deviceUuid, new Date(Date.now() - 24 * 3600 * 1000 - 5000));
    expect(issued.expiresAt.getTime()).toBeLessThan(Date.now());
    expectCode(await heartbeat(issued.token), 401, 'UNAUTHORIZED');
    // The same token minted a minute ago is fine: only the expiry differs.
    expect((await heartbeat(signDeviceToken(tokenKeys(t), 'access', d.deviceUuid, new Date(Date.now() - 60_000)).token)).status).toBe(200);
  });

  it('a refresh token is not an access token', async () => {
    expectCode(await heartbeat(d.refreshToken), 401, 'UNAUTHORIZED');
  });

  it('an access token with typ refresh, signed with the access key, is refused', async () => {
    const token = forge({ typ: 'refresh' }, tokenKeys(t).accessSecret, { algorithm: 'HS256', subject: d.deviceUuid, jwtid: 'x1', issuer: 'paycollect', audience: 'paycollect-device', expiresIn: 600 });
    expectCode(await heartbeat(token), 401, 'UNAUTHORIZED');
  });

  it('alg none is refused', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const payload = Buffer.from(
      JSON.stringify({ typ: 'access', sub: d.deviceUuid, jti: 'n1', iss: 'paycollect', aud: 'paycollect-device', iat: now, exp: now + 600 }),
    ).toString('base64url');
    expectCode(await heartbeat(`${header}.${payload}.`), 401, 'UNAUTHORIZED');
    expectCode(await heartbeat(`${header}.${payload}`), 401, 'UNAUTHORIZED');
  });

  it('HS512 with the right key is refused (algorithm pinned to HS256)', async () => {
    const opts = { subject: d.deviceUuid, jwtid: 'h1', issuer: 'paycollect', audience: 'paycollect-device', expiresIn: 600 };
    expectCode(await heartbeat(forge({ typ: 'access' }, tokenKeys(t).accessSecret, { ...opts, algorithm: 'HS512' })), 401, 'UNAUTHORIZED');
    // Control: the same claims with HS256 pass, so the algorithm is what was refused.
    expect((await heartbeat(forge({ typ: 'access' }, tokenKeys(t).accessSecret, { ...opts, algorithm: 'HS256' }))).status).toBe(200);
  });

  it('an RS256-signed token is refused', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const token = forge({ typ: 'access' }, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, {
      algorithm: 'RS256',
      subject: d.deviceUuid,
      jwtid: 'r1',
      issuer: 'paycollect',
      audience: 'paycollect-device',
      expiresIn: 600,
    });
    expectCode(await heartbeat(token), 401, 'UNAUTHORIZED');
  });

  it('a token signed with another key, or for another audience, is refused', async () => {
    const opts = { algorithm: 'HS256' as const, subject: d.deviceUuid, jwtid: 'k1', issuer: 'paycollect', expiresIn: 600 };
    expectCode(await heartbeat(forge({ typ: 'access' }, tokenKeys(t).refreshSecret, { ...opts, audience: 'paycollect-device' })), 401, 'UNAUTHORIZED');
    expectCode(await heartbeat(forge({ typ: 'access' }, 'x'.repeat(64), { ...opts, audience: 'paycollect-device' })), 401, 'UNAUTHORIZED');
    expectCode(await heartbeat(forge({ typ: 'access' }, tokenKeys(t).accessSecret, { ...opts, audience: 'someone-else' })), 401, 'UNAUTHORIZED');
  });

  it('a well-signed token for an unknown device is refused', async () => {
    const token = signDeviceToken(tokenKeys(t), 'access', '00000000-0000-4000-8000-000000000000').token;
    expectCode(await heartbeat(token), 401, 'UNAUTHORIZED');
  });

  it('a device of a disabled brand is refused', async () => {
    const other = await pairDevice(t);
    await t.sql("UPDATE brands SET status = 'disabled' WHERE id = $1", [other.brandId]);
    expectCode(await heartbeat(other.accessToken), 401, 'UNAUTHORIZED');
    expectCode(await refresh(other.refreshToken, other.fingerprint), 401, 'INVALID_PAIRING_CODE');
  });
});

describe('tokens signed with the real key but with impossible times', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const signed = (typ: 'access' | 'refresh', deviceUuid: string, jti: string, times: { iat?: number; exp: number }) =>
    forge({ typ, ...times }, typ === 'access' ? tokenKeys(t).accessSecret : tokenKeys(t).refreshSecret, {
      algorithm: 'HS256', subject: deviceUuid, jwtid: jti, issuer: 'paycollect', audience: 'paycollect-device', noTimestamp: times.iat === undefined,
    });

  it('an access token valid for a century, issued in the future, or without iat: 401 UNAUTHORIZED', async () => {
    const d = await pairDevice(t);
    expectCode(await heartbeat(signed('access', d.deviceUuid, 'c1', { iat: now(), exp: now() + 100 * 365 * 86_400 })), 401, 'UNAUTHORIZED');
    expectCode(await heartbeat(signed('access', d.deviceUuid, 'c2', { iat: now() + 3600, exp: now() + 7200 })), 401, 'UNAUTHORIZED');
    expectCode(await heartbeat(signed('access', d.deviceUuid, 'c3', { exp: now() + 600 })), 401, 'UNAUTHORIZED');
    // Control: the same forge with sane times works, so the refusals above are about the times.
    expect((await heartbeat(signed('access', d.deviceUuid, 'c4', { iat: now(), exp: now() + 600 }))).status).toBe(200);
  });

  it('a refresh token valid for a century or issued in the future: 401 INVALID_PAIRING_CODE, and the chain is intact', async () => {
    const d = await pairDevice(t);
    const century = signed('refresh', d.deviceUuid, 'r1', { iat: now(), exp: now() + 100 * 365 * 86_400 });
    const future = signed('refresh', d.deviceUuid, 'r2', { iat: now() + 86_400, exp: now() + 2 * 86_400 });
    for (const [jti, token] of [['r1', century], ['r2', future]] as const) {
      // The device's current refresh id is the forged one, so only the times can refuse it.
      await t.sql('UPDATE devices SET refresh_jti = $1 WHERE id = $2', [jti, d.deviceId]);
      expectCode(await refresh(token, d.fingerprint), 401, 'INVALID_PAIRING_CODE');
    }
    const [row] = await t.sql<any>('SELECT status FROM devices WHERE id = $1', [d.deviceId]);
    expect(row.status).toBe('active');
    await t.sql('UPDATE devices SET refresh_jti = $1 WHERE id = $2', ['r3', d.deviceId]);
    expect((await refresh(signed('refresh', d.deviceUuid, 'r3', { iat: now(), exp: now() + 600 }), d.fingerprint)).status).toBe(200);
  });
});

describe('refresh token checks', () => {
  it('an access token is not a refresh token', async () => {
    const d = await pairDevice(t);
    expectCode(await refresh(d.accessToken, d.fingerprint), 401, 'INVALID_PAIRING_CODE');
    // Nothing was revoked by the attempt.
    expect((await refresh(d.refreshToken, d.fingerprint)).status).toBe(200);
  });

  it('the wrong fingerprint: 401 INVALID_PAIRING_CODE, and the real phone is not locked out', async () => {
    const d = await pairDevice(t);
    expectCode(await refresh(d.refreshToken, 'f'.repeat(64)), 401, 'INVALID_PAIRING_CODE');
    const viaHeader = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, {
      headers: { 'X-Device-Fingerprint': 'e'.repeat(64) },
      body: { refresh_token: d.refreshToken },
    });
    expectCode(viaHeader, 401, 'INVALID_PAIRING_CODE');
    const [row] = await t.sql<any>('SELECT status FROM devices WHERE id = $1', [d.deviceId]);
    expect(row.status).toBe('active');
    expect((await refresh(d.refreshToken, d.fingerprint)).status).toBe(200);
  });

  it('body and header fingerprints that disagree: 401 INVALID_PAIRING_CODE', async () => {
    const d = await pairDevice(t);
    const res = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, {
      headers: { 'X-Device-Fingerprint': 'e'.repeat(64) },
      body: { refresh_token: d.refreshToken, fingerprint: d.fingerprint },
    });
    expectCode(res, 401, 'INVALID_PAIRING_CODE');
  });

  it('an expired refresh token: 401 INVALID_PAIRING_CODE', async () => {
    const d = await pairDevice(t);
    const old = signDeviceToken(tokenKeys(t), 'refresh', d.deviceUuid, new Date(Date.now() - 31 * 86400 * 1000));
    await t.sql('UPDATE devices SET refresh_jti = $1 WHERE id = $2', [old.jti, d.deviceId]);
    expectCode(await refresh(old.token, d.fingerprint), 401, 'INVALID_PAIRING_CODE');
  });

  it('a malformed or foreign-signed refresh token: 401 INVALID_PAIRING_CODE', async () => {
    const d = await pairDevice(t);
    expectCode(await refresh('abc.def.ghi', d.fingerprint), 401, 'INVALID_PAIRING_CODE');
    const foreign = forge({ typ: 'refresh' }, tokenKeys(t).accessSecret, {
      algorithm: 'HS256', subject: d.deviceUuid, jwtid: 'z', issuer: 'paycollect', audience: 'paycollect-device', expiresIn: 600,
    });
    expectCode(await refresh(foreign, d.fingerprint), 401, 'INVALID_PAIRING_CODE');
  });

  it('missing fields: 400 VALIDATION_ERROR naming them', async () => {
    const noToken = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { fingerprint: 'a'.repeat(64) } });
    expectCode(noToken, 400, 'VALIDATION_ERROR');
    expect(noToken.body.errors[0].field).toBe('refresh_token');
    const d = await pairDevice(t);
    const noFingerprint = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: d.refreshToken } });
    expectCode(noFingerprint, 400, 'VALIDATION_ERROR');
    expect(noFingerprint.body.errors[0].field).toBe('fingerprint');
    const extra = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: d.refreshToken, fingerprint: d.fingerprint, device: 1 } });
    expectCode(extra, 400, 'VALIDATION_ERROR');
    expect(extra.body.errors[0].field).toBe('device');
  });
});

describe('refresh token reuse', () => {
  it('revokes the device: its new tokens and its access token are refused everywhere', async () => {
    const d = await pairDevice(t);
    const first = await refresh(d.refreshToken, d.fingerprint);
    expect(first.status).toBe(200);
    const newPair = first.body.data;

    // The old refresh token again: someone else holds a copy.
    expectCode(await refresh(d.refreshToken, d.fingerprint), 401, 'INVALID_PAIRING_CODE');
    const [row] = await t.sql<any>('SELECT status, revoked_reason, refresh_jti FROM devices WHERE id = $1', [d.deviceId]);
    expect(row).toEqual({ status: 'revoked', revoked_reason: 'refresh_token_reuse', refresh_jti: null });

    // The legitimate newest refresh token is dead too: the device must pair again.
    expectCode(await refresh(newPair.refresh_token, d.fingerprint), 401, 'INVALID_PAIRING_CODE');
    await expectRefusedEverywhere(d.accessToken);
    await expectRefusedEverywhere(newPair.access_token);
    expect(t.logs.some((l) => l.includes('refresh token reused: device revoked') && l.includes(d.deviceUuid))).toBe(true);
  });

  it('two refreshes racing with one token: one wins, the other is a reuse', async () => {
    const d = await pairDevice(t);
    const results = await Promise.all([refresh(d.refreshToken, d.fingerprint), refresh(d.refreshToken, d.fingerprint)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    const [row] = await t.sql<any>('SELECT status FROM devices WHERE id = $1', [d.deviceId]);
    expect(row.status).toBe('revoked');
  });
});

describe('revocation', () => {
  it('a revoked device is refused on every route at once', async () => {
    const d = await pairDevice(t);
    expect((await deviceRequest(t, d, 'GET', '/config/filter-rules')).status).toBe(200);
    await revokeDevice(t.runtime.deps.db, d.brandId, d.deviceId);
    await expectRefusedEverywhere(d.accessToken);
    expectCode(await refresh(d.refreshToken, d.fingerprint), 401, 'INVALID_PAIRING_CODE');
  });

  it("revoking needs the device's own brand", async () => {
    const d = await pairDevice(t);
    const other = await t.createBrand('Other');
    await expect(revokeDevice(t.runtime.deps.db, other.brandId, d.deviceId)).rejects.toMatchObject({ code: 'DEVICE_NOT_FOUND' });
    expect((await heartbeat(d.accessToken)).status).toBe(200);
  });
});

describe('secrets stay secret', () => {
  it('tokens, fingerprints and pairing codes appear neither in the logs nor in the database', async () => {
    const d = await pairDevice(t);
    const r = await refresh(d.refreshToken, d.fingerprint);
    await deviceRequest(t, d, 'POST', '/devices/heartbeats');
    const logs = t.logs.join('\n');
    for (const secret of [d.accessToken, d.refreshToken, r.body.data.access_token, r.body.data.refresh_token, d.fingerprint]) {
      expect(logs).not.toContain(secret);
    }
    const dump = JSON.stringify([
      await t.sql('SELECT * FROM devices'),
      await t.sql('SELECT * FROM pairing_codes'),
      await t.sql('SELECT * FROM device_refresh_token_rotations'),
    ]);
    expect(dump).not.toContain(d.fingerprint);
    expect(dump).not.toContain(d.refreshToken);
    expect(dump).not.toContain(d.accessToken);
  });
});
