import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { computeSignature, generateWebhookSecret, signatureHeader } from '../../server/domain/webhooks/signature.ts';
import { constructEvent, WebhookSignatureError, type WebhookSignatureErrorReason } from '../../clients/shared/webhook-verify.ts';

const secret = 'whsec_test_primary';
const rotated = 'whsec_test_rotated';
const now = 1_750_000_000_000;
const t = now / 1000;
// Odd spacing and non-ASCII on purpose: any re-serialisation would change the bytes.
const body = '{"id": "evt_1", "event":"payment.completed","created_at":"2025-06-15T15:06:40Z","data":{"trx_id":"TX1","amount":"10.00","note":"caf\\u00e9 ✓"}}';

function headersFor(value: string): Record<string, string> {
  return { 'x-webhook-signature': value };
}

function reasonOf(fn: () => unknown): WebhookSignatureErrorReason | 'no error' {
  try {
    fn();
    return 'no error';
  } catch (err) {
    if (err instanceof WebhookSignatureError) return err.reason;
    throw err;
  }
}

describe('signatureHeader', () => {
  it('is HMAC-SHA256 over "{t}.{raw body}" keyed by the whole secret string', () => {
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(signatureHeader([secret], t, body)).toBe(`t=${t},v1=${expected}`);
    expect(computeSignature(secret, t, body)).toBe(expected);
  });

  it('carries one v1 per active secret during a rotation', () => {
    const h = signatureHeader([secret, rotated], t, body);
    expect(h.split(',').filter((p) => p.startsWith('v1='))).toHaveLength(2);
  });

  it('refuses no secrets, empty secrets and non-integer timestamps', () => {
    expect(() => signatureHeader([], t, body)).toThrow();
    expect(() => signatureHeader([''], t, body)).toThrow();
    expect(() => signatureHeader([secret], 1.5, body)).toThrow();
  });

  it('generates distinct whsec_ secrets with 256 bits of randomness', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});

describe('constructEvent', () => {
  const header = signatureHeader([secret], t, body);

  it('returns the parsed event for a valid delivery', () => {
    const event = constructEvent(body, headersFor(header), secret, 300, now);
    expect(event).toEqual(JSON.parse(body));
  });

  it('accepts a Uint8Array body with the same bytes', () => {
    const bytes = new TextEncoder().encode(body);
    expect(constructEvent(bytes, headersFor(header), secret, 300, now).id).toBe('evt_1');
  });

  it('reads the header case-insensitively, from a record or a Headers object', () => {
    expect(constructEvent(body, { 'X-Webhook-Signature': header }, secret, 300, now).id).toBe('evt_1');
    expect(constructEvent(body, new Headers({ 'X-WEBHOOK-SIGNATURE': header }), secret, 300, now).id).toBe('evt_1');
    expect(constructEvent(body, { 'x-webhook-signature': [header] }, secret, 300, now).id).toBe('evt_1');
  });

  it('uses a 300 s tolerance by default', () => {
    const fresh = signatureHeader([secret], Math.floor(Date.now() / 1000), body);
    expect(constructEvent(body, headersFor(fresh), secret).id).toBe('evt_1');
    expect(reasonOf(() => constructEvent(body, headersFor(header), secret))).toBe('timestamp_outside_tolerance');
  });

  it('during a rotation, either secret verifies a two-signature header', () => {
    const both = signatureHeader([secret, rotated], t, body);
    expect(constructEvent(body, headersFor(both), secret, 300, now).id).toBe('evt_1');
    expect(constructEvent(body, headersFor(both), rotated, 300, now).id).toBe('evt_1');
    expect(constructEvent(body, headersFor(header), [rotated, secret], 300, now).id).toBe('evt_1');
  });

  it.each<[string, () => unknown, WebhookSignatureErrorReason]>([
    ['a tampered body', () => constructEvent(body.replace('10.00', '99.00'), headersFor(header), secret, 300, now), 'no_matching_signature'],
    ['a body with re-serialised whitespace', () => constructEvent(JSON.stringify(JSON.parse(body)), headersFor(header), secret, 300, now), 'no_matching_signature'],
    ['the wrong secret', () => constructEvent(body, headersFor(header), 'whsec_other', 300, now), 'no_matching_signature'],
    ['a timestamp moved without re-signing', () => constructEvent(body, headersFor(header.replace(`t=${t}`, `t=${t + 1}`)), secret, 300, now), 'no_matching_signature'],
    ['a timestamp 301 s old', () => constructEvent(body, headersFor(signatureHeader([secret], t - 301, body)), secret, 300, now), 'timestamp_outside_tolerance'],
    ['a timestamp 301 s in the future', () => constructEvent(body, headersFor(signatureHeader([secret], t + 301, body)), secret, 300, now), 'timestamp_outside_tolerance'],
    ['a missing header', () => constructEvent(body, { 'content-type': 'application/json' }, secret, 300, now), 'missing_header'],
    ['an empty header', () => constructEvent(body, headersFor(''), secret, 300, now), 'malformed_header'],
    ['a header without v1', () => constructEvent(body, headersFor(`t=${t}`), secret, 300, now), 'malformed_header'],
    ['a header without t', () => constructEvent(body, headersFor(header.replace(`t=${t},`, '')), secret, 300, now), 'malformed_header'],
    ['a non-numeric t', () => constructEvent(body, headersFor(header.replace(`t=${t}`, 't=soon')), secret, 300, now), 'malformed_header'],
    ['a truncated v1', () => constructEvent(body, headersFor(header.slice(0, -2)), secret, 300, now), 'malformed_header'],
    ['two different t values', () => constructEvent(body, headersFor(`t=${t - 1},${header}`), secret, 300, now), 'malformed_header'],
    ['garbage', () => constructEvent(body, headersFor('garbage'), secret, 300, now), 'malformed_header'],
    ['no secret', () => constructEvent(body, headersFor(header), [], 300, now), 'no_secret'],
    ['an empty secret', () => constructEvent(body, headersFor(header), '', 300, now), 'no_secret'],
  ])('rejects %s', (_label, fn, reason) => {
    expect(reasonOf(fn)).toBe(reason);
  });

  it('accepts the edges of the tolerance window in both directions', () => {
    for (const ts of [t - 300, t + 300]) {
      expect(constructEvent(body, headersFor(signatureHeader([secret], ts, body)), secret, 300, now).id).toBe('evt_1');
    }
  });

  it('ignores signature schemes it does not know', () => {
    const withV0 = `${header},v0=${'0'.repeat(64)},v2=whatever`;
    expect(constructEvent(body, headersFor(withV0), secret, 300, now).id).toBe('evt_1');
  });

  it('refuses a parsed object with a hint instead of re-serialising it', () => {
    const err = (() => {
      try {
        constructEvent(JSON.parse(body) as unknown as string, headersFor(header), secret, 300, now);
      } catch (e) {
        return e as WebhookSignatureError;
      }
    })();
    expect(err?.reason).toBe('invalid_payload');
    expect(err?.message).toMatch(/raw request body/);
  });

  it('refuses a correctly signed body that is not an event', () => {
    const notEvent = '[1,2,3]';
    const h = signatureHeader([secret], t, notEvent);
    expect(reasonOf(() => constructEvent(notEvent, headersFor(h), secret, 300, now))).toBe('invalid_payload');
  });

  it('checks the signature before parsing, so a forged body is never parsed', () => {
    expect(reasonOf(() => constructEvent('not json', headersFor(header), secret, 300, now))).toBe('no_matching_signature');
  });
});

describe('the SDK verifier stays shippable', () => {
  it('imports only node: built-ins', async () => {
    const { readFile } = await import('node:fs/promises');
    const source = await readFile(new URL('../../clients/shared/webhook-verify.ts', import.meta.url), 'utf8');
    const specifiers = [...source.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'/g)].map((m) => m[1] ?? m[2]);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.every((s) => s?.startsWith('node:'))).toBe(true);
  });
});
