import jwt from 'jsonwebtoken';
import { isUuid } from '../../../contract/common/ids.ts';
import { randomToken, sha256Hex, timingSafeEqualString } from '../../infra/crypto/tokens.ts';
import { secretKeyObject } from '../../infra/crypto/key-object.ts';

/** Access JWT lifetime (the token pair's `expires_in`). */
export const ACCESS_TOKEN_TTL_SECONDS = 86_400;
/** Refresh JWT lifetime: 30 days. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 86_400;

export type DeviceTokenType = 'access' | 'refresh';

/** Separate keys, so an access token can never verify as a refresh token even if the `typ` check were lost. */
export interface DeviceTokenKeys {
  accessSecret: string;
  refreshSecret: string;
}

export interface IssuedToken {
  token: string;
  jti: string;
  expiresAt: Date;
}

export interface DeviceTokenClaims {
  deviceUuid: string;
  jti: string;
  expiresAt: Date;
}

const ALGORITHM = 'HS256';
const ISSUER = 'paycollect';
const AUDIENCE = 'paycollect-device';
/** Far above any token we issue; bounds the work spent on junk credentials. */
const MAX_TOKEN_LENGTH = 2048;
/**
 * Clock difference tolerated between the machines that issue and check tokens
 * (several processes may share one database and one key).
 */
export const TOKEN_CLOCK_SKEW_SECONDS = 60;

const ttl = (typ: DeviceTokenType) => (typ === 'access' ? ACCESS_TOKEN_TTL_SECONDS : REFRESH_TOKEN_TTL_SECONDS);
const secretFor = (keys: DeviceTokenKeys, typ: DeviceTokenType) => (typ === 'access' ? keys.accessSecret : keys.refreshSecret);

export function signDeviceToken(keys: DeviceTokenKeys, typ: DeviceTokenType, deviceUuid: string, now: Date = new Date()): IssuedToken {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + ttl(typ);
  const jti = randomToken(18);
  // iat/exp are set explicitly (not expiresIn) so tests and callers can issue
  // tokens as of any instant.
  const token = jwt.sign({ typ, iat, exp }, secretFor(keys, typ), {
    algorithm: ALGORITHM,
    issuer: ISSUER,
    audience: AUDIENCE,
    subject: deviceUuid,
    jwtid: jti,
  });
  return { token, jti, expiresAt: new Date(exp * 1000) };
}

export function issueTokenPair(keys: DeviceTokenKeys, deviceUuid: string, now: Date = new Date()): { access: IssuedToken; refresh: IssuedToken } {
  return { access: signDeviceToken(keys, 'access', deviceUuid, now), refresh: signDeviceToken(keys, 'refresh', deviceUuid, now) };
}

/**
 * The claims of a valid token of the given type, or null. The algorithm is
 * pinned to HS256 (no `none`, no HS512, no RS256 with the secret as a "public
 * key"), issuer, audience and expiry are checked, and the `typ` claim must be
 * the expected one.
 *
 * The signature only proves the key signed it, not that we did: a leaked or
 * misused key, or a bug in a signer, could mint a token that lives a century or
 * was "issued" next year. So `iat` and `exp` are required, `iat` may not be in
 * the future (beyond the clock skew), and `exp - iat` may not exceed the
 * lifetime we issue for that type (plus the skew).
 */
export function verifyDeviceToken(keys: DeviceTokenKeys, typ: DeviceTokenType, token: string, now: Date = new Date()): DeviceTokenClaims | null {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
  let payload: unknown;
  try {
    // A KeyObject made once per secret: given a string, jsonwebtoken first tries it as a
    // public key and then re-imports it on every verify (37 µs against 7.6 µs; infra/crypto/key-object.ts).
    payload = jwt.verify(token, secretKeyObject(secretFor(keys, typ)), {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: AUDIENCE,
      clockTimestamp: Math.floor(now.getTime() / 1000),
    });
  } catch {
    return null;
  }
  if (!payload || typeof payload !== 'object') return null;
  const { typ: claimedTyp, sub, jti, exp, iat } = payload as Record<string, unknown>;
  if (claimedTyp !== typ) return null;
  if (typeof sub !== 'string' || !isUuid(sub)) return null;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 64) return null;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return null;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return null;
  if (iat > Math.floor(now.getTime() / 1000) + TOKEN_CLOCK_SKEW_SECONDS) return null;
  if (exp - iat > ttl(typ) + TOKEN_CLOCK_SKEW_SECONDS) return null;
  return { deviceUuid: sub, jti, expiresAt: new Date(exp * 1000) };
}

/**
 * The app sends a hardware fingerprint hash; we keep only our own hash of it so
 * the database never holds the value a thief would need to present.
 */
export function hashFingerprint(fingerprint: string): string {
  return sha256Hex(`device-fingerprint:v1:${fingerprint}`);
}

export function fingerprintMatches(fingerprint: string, storedHash: string): boolean {
  return timingSafeEqualString(hashFingerprint(fingerprint), storedHash);
}

/** The two JWT keys from the service's secrets. */
export function deviceTokenKeys(secrets: { jwtAccessSecret: string; jwtRefreshSecret: string }): DeviceTokenKeys {
  return { accessSecret: secrets.jwtAccessSecret, refreshSecret: secrets.jwtRefreshSecret };
}

/** Compares two presented fingerprints (body and header) without a timing side channel. */
export function timingSafeFingerprintEqual(a: string, b: string): boolean {
  return timingSafeEqualString(a, b);
}
