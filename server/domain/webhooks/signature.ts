import { createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook signing. The merchant-side counterpart is clients/shared/webhook-verify.ts;
 * it cannot import this file (it ships inside the SDKs), so the two are kept in step
 * by test/unit/webhook-signature.test.ts, which signs here and verifies there.
 *
 * The HMAC key is the whole secret string (prefix included) as UTF-8, so a merchant
 * pastes the secret as shown and never has to strip or decode anything.
 */

const SECRET_PREFIX = 'whsec_';

/** Hex HMAC-SHA256 of `${timestamp}.${rawBody}`: the timestamp is signed so a captured delivery cannot be replayed later with a fresh `t`. */
export function computeSignature(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(rawBody, 'utf8').digest('hex');
}

/**
 * `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`: one `v1` per active secret, so during a
 * rotation receivers holding either the old or the new secret keep verifying.
 */
export function signatureHeader(secrets: readonly string[], timestamp: number, rawBody: string): string {
  if (secrets.length === 0) throw new Error('signatureHeader needs at least one secret');
  if (secrets.some((s) => s.length === 0)) throw new Error('signatureHeader refuses an empty secret');
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new Error('signatureHeader needs a timestamp in whole unix seconds');
  }
  const v1 = [...new Set(secrets)].map((s) => `v1=${computeSignature(s, timestamp, rawBody)}`);
  return [`t=${timestamp}`, ...v1].join(',');
}

/** 32 random bytes (256 bits, the HMAC-SHA256 block-size sweet spot) as base64url. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}
