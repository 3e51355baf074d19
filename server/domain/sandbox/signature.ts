import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signing of the sandbox gateway's callbacks, the way real gateways sign theirs:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "{t}.{raw body}">`. The timestamp is
 * inside the MAC, so a captured callback cannot be replayed later with a fresh
 * `t`; within the tolerance a replay is harmless (applying it twice changes nothing).
 */

export type SignatureRefusal = 'missing' | 'malformed' | 'stale' | 'mismatch';

export function computeSandboxSignature(secret: string, timestamp: number, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(rawBody).digest('hex');
}

export function sandboxSignatureHeader(secret: string, timestamp: number, rawBody: Buffer | string): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new Error('timestamp must be whole unix seconds');
  return `t=${timestamp},v1=${computeSandboxSignature(secret, timestamp, rawBody)}`;
}

/** `t=…,v1=…[,v1=…]`; null when the header is not of that form. */
export function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | null {
  if (header.length > 1024) return null;
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !/^\d{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/i.test(value)) return null;
      signatures.push(value.toLowerCase());
    }
    // Unknown schemes are skipped, so a future v2 can be added alongside v1.
  }
  if (timestamp === null || signatures.length === 0) return null;
  return { timestamp, signatures };
}

/**
 * Pure: checks a callback's signature header against the raw body bytes.
 * Comparisons are constant-time (digests of equal length).
 */
export function verifySandboxSignature(
  header: string | undefined | null,
  rawBody: Buffer | string,
  secret: string,
  nowSeconds: number,
  toleranceSeconds: number,
): { ok: true } | { ok: false; reason: SignatureRefusal } {
  if (!header) return { ok: false, reason: 'missing' };
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: 'malformed' };
  if (Math.abs(nowSeconds - parsed.timestamp) > toleranceSeconds) return { ok: false, reason: 'stale' };
  const expected = Buffer.from(computeSandboxSignature(secret, parsed.timestamp, rawBody), 'hex');
  const match = parsed.signatures.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected));
  return match ? { ok: true } : { ok: false, reason: 'mismatch' };
}

/**
 * The sandbox page token of a transaction: an HMAC of its reference under the
 * sandbox secret (domain-separated from callback signatures). Unguessable without
 * the secret, and derivable again, so the checkout can always hand out the same
 * gateway URL; only its SHA-256 is stored.
 */
export function sandboxSessionToken(secret: string, trxId: string): string {
  return createHmac('sha256', secret).update(`sandbox-session-token:${trxId}`, 'utf8').digest('base64url');
}

export function sandboxTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** 32 bytes as unpadded base64url. */
export const SANDBOX_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
