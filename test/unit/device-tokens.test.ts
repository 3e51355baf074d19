import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  REFRESH_TOKEN_TTL_SECONDS,
  fingerprintMatches,
  hashFingerprint,
  issueTokenPair,
  signDeviceToken,
  TOKEN_CLOCK_SKEW_SECONDS,
  verifyDeviceToken,
} from '../../server/domain/devices/tokens.ts';

const keys = { accessSecret: 'a'.repeat(48), refreshSecret: 'r'.repeat(48) };
const uuid = '3f2c1e8a-4b5d-4c6e-8f90-123456789abc';
const t0 = new Date('2026-06-01T12:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

describe('device tokens', () => {
  it('round-trips access and refresh tokens with their lifetimes', () => {
    const { access, refresh } = issueTokenPair(keys, uuid, t0);
    expect(access.expiresAt).toEqual(at(ACCESS_TOKEN_TTL_SECONDS));
    expect(refresh.expiresAt).toEqual(at(REFRESH_TOKEN_TTL_SECONDS));
    expect(ACCESS_TOKEN_TTL_SECONDS).toBe(86_400);
    expect(REFRESH_TOKEN_TTL_SECONDS).toBe(2_592_000);
    expect(verifyDeviceToken(keys, 'access', access.token, t0)).toEqual({ deviceUuid: uuid, jti: access.jti, expiresAt: access.expiresAt });
    expect(verifyDeviceToken(keys, 'refresh', refresh.token, t0)).toEqual({ deviceUuid: uuid, jti: refresh.jti, expiresAt: refresh.expiresAt });
    expect(access.jti).not.toBe(refresh.jti);
  });

  it('expires exactly at exp', () => {
    const { token } = signDeviceToken(keys, 'access', uuid, t0);
    expect(verifyDeviceToken(keys, 'access', token, at(ACCESS_TOKEN_TTL_SECONDS - 1))).not.toBeNull();
    expect(verifyDeviceToken(keys, 'access', token, at(ACCESS_TOKEN_TTL_SECONDS))).toBeNull();
  });

  it('access and refresh are not interchangeable', () => {
    const { access, refresh } = issueTokenPair(keys, uuid, t0);
    expect(verifyDeviceToken(keys, 'refresh', access.token, t0)).toBeNull();
    expect(verifyDeviceToken(keys, 'access', refresh.token, t0)).toBeNull();
    // Even with one shared key, the typ claim keeps them apart.
    const shared = { accessSecret: 's'.repeat(48), refreshSecret: 's'.repeat(48) };
    const a = signDeviceToken(shared, 'access', uuid, t0).token;
    expect(verifyDeviceToken(shared, 'refresh', a, t0)).toBeNull();
    expect(verifyDeviceToken(shared, 'access', a, t0)).not.toBeNull();
  });

  const claims = (extra: object = {}) => ({ typ: 'access', sub: uuid, jti: 'j1', iss: 'paycollect', aud: 'paycollect-device', iat: t0.getTime() / 1000, exp: t0.getTime() / 1000 + 600, ...extra });

  const withoutExp = () => {
    const { exp: _exp, ...rest } = claims();
    return rest;
  };

  /** jsonwebtoken refuses to sign a string iat; a signer elsewhere might not. */
  const handSigned = (payload: object) => {
    const head = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    return `${head}.${createHmac('sha256', keys.accessSecret).update(head).digest('base64url')}`;
  };

  const withoutIat = () => {
    const { iat: _iat, ...rest } = claims();
    return rest;
  };

  it.each([
    ['HS512', jwt.sign(claims(), keys.accessSecret, { algorithm: 'HS512' })],
    ['HS384', jwt.sign(claims(), keys.accessSecret, { algorithm: 'HS384' })],
    ['alg none', `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`],
    ['another key', jwt.sign(claims(), 'x'.repeat(48), { algorithm: 'HS256' })],
    ['another issuer', jwt.sign(claims({ iss: 'evil' }), keys.accessSecret, { algorithm: 'HS256' })],
    ['another audience', jwt.sign(claims({ aud: 'merchant' }), keys.accessSecret, { algorithm: 'HS256' })],
    ['no typ', jwt.sign(claims({ typ: undefined }), keys.accessSecret, { algorithm: 'HS256' })],
    ['sub not a uuid', jwt.sign(claims({ sub: '1' }), keys.accessSecret, { algorithm: 'HS256' })],
    ['no jti', jwt.sign(claims({ jti: undefined }), keys.accessSecret, { algorithm: 'HS256' })],
    ['no exp', jwt.sign(withoutExp(), keys.accessSecret, { algorithm: 'HS256' })],
    ['no iat', jwt.sign(withoutIat(), keys.accessSecret, { algorithm: 'HS256', noTimestamp: true })],
    ['iat a day ahead', jwt.sign(claims({ iat: t0.getTime() / 1000 + 86_400, exp: t0.getTime() / 1000 + 86_400 + 600 }), keys.accessSecret, { algorithm: 'HS256' })],
    ['iat past the skew', jwt.sign(claims({ iat: t0.getTime() / 1000 + TOKEN_CLOCK_SKEW_SECONDS + 1 }), keys.accessSecret, { algorithm: 'HS256' })],
    ['exp a century ahead', jwt.sign(claims({ exp: t0.getTime() / 1000 + 100 * 365 * 86_400 }), keys.accessSecret, { algorithm: 'HS256' })],
    ['a lifetime just over 24 h + skew', jwt.sign(claims({ exp: t0.getTime() / 1000 + ACCESS_TOKEN_TTL_SECONDS + TOKEN_CLOCK_SKEW_SECONDS + 1 }), keys.accessSecret, { algorithm: 'HS256' })],
    ['iat not a number', handSigned(claims({ iat: String(t0.getTime() / 1000) }))],
    ['garbage', 'not.a.jwt'],
    ['empty', ''],
    ['oversized', 'a'.repeat(5000)],
  ])('refuses %s', (_name, token) => {
    expect(verifyDeviceToken(keys, 'access', token, t0)).toBeNull();
  });

  it('accepts the same hand-made claims with HS256 and the right key (control for the table above)', () => {
    expect(verifyDeviceToken(keys, 'access', jwt.sign(claims(), keys.accessSecret, { algorithm: 'HS256' }), t0)).toEqual({
      deviceUuid: uuid,
      jti: 'j1',
      expiresAt: at(600),
    });
  });
});

describe('token lifetime sanity', () => {
  const sign = (typ: 'access' | 'refresh', iat: number, exp: number) =>
    jwt.sign({ typ, sub: uuid, jti: 'j2', iss: 'paycollect', aud: 'paycollect-device', iat, exp }, typ === 'access' ? keys.accessSecret : keys.refreshSecret, { algorithm: 'HS256' });
  const now = t0.getTime() / 1000;

  it('accepts the lifetime we issue plus the skew, and an iat within the skew ahead (clocks differ a little)', () => {
    expect(verifyDeviceToken(keys, 'access', sign('access', now, now + ACCESS_TOKEN_TTL_SECONDS + TOKEN_CLOCK_SKEW_SECONDS), t0)).not.toBeNull();
    expect(verifyDeviceToken(keys, 'access', sign('access', now + TOKEN_CLOCK_SKEW_SECONDS, now + 600), t0)).not.toBeNull();
    expect(verifyDeviceToken(keys, 'refresh', sign('refresh', now, now + REFRESH_TOKEN_TTL_SECONDS), t0)).not.toBeNull();
  });

  it('a refresh token may live 30 days, an access token signed with the same lifetime may not', () => {
    expect(verifyDeviceToken(keys, 'refresh', sign('refresh', now, now + REFRESH_TOKEN_TTL_SECONDS + TOKEN_CLOCK_SKEW_SECONDS + 1), t0)).toBeNull();
    expect(verifyDeviceToken(keys, 'access', sign('access', now, now + REFRESH_TOKEN_TTL_SECONDS), t0)).toBeNull();
  });
});

describe('fingerprints', () => {
  it('are stored as a hash that only the same fingerprint matches', () => {
    const fp = 'f'.repeat(64);
    const stored = hashFingerprint(fp);
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    expect(stored).not.toContain(fp);
    expect(fingerprintMatches(fp, stored)).toBe(true);
    expect(fingerprintMatches(`${fp}0`, stored)).toBe(false);
    expect(fingerprintMatches(fp.toUpperCase(), stored)).toBe(false);
  });
});
