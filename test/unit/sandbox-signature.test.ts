import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  parseSignatureHeader,
  sandboxSessionToken,
  sandboxSignatureHeader,
  SANDBOX_TOKEN_RE,
  verifySandboxSignature,
} from '../../server/domain/sandbox/signature.ts';

const SECRET = 'sandbox-secret-0123456789abcdef0123';
const BODY = '{"outcome":"approved","trx_id":"TRX0123456789ABCDEF","amount":"10.00"}';
const T = 1_800_000_000;
const mac = (secret: string, ts: number, body: string) => createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex');

describe('sandboxSignatureHeader', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "{t}.{body}">', () => {
    expect(sandboxSignatureHeader(SECRET, T, BODY)).toBe(`t=${T},v1=${mac(SECRET, T, BODY)}`);
    expect(sandboxSignatureHeader(SECRET, T, Buffer.from(BODY))).toBe(`t=${T},v1=${mac(SECRET, T, BODY)}`);
  });
  it('refuses a timestamp that is not whole seconds', () => {
    expect(() => sandboxSignatureHeader(SECRET, 1.5, BODY)).toThrow();
    expect(() => sandboxSignatureHeader(SECRET, -1, BODY)).toThrow();
  });
});

describe('verifySandboxSignature', () => {
  const good = `t=${T},v1=${mac(SECRET, T, BODY)}`;
  const cases: Array<[string, string | undefined, string, number, ReturnType<typeof verifySandboxSignature>]> = [
    ['a good signature', good, BODY, T, { ok: true }],
    ['a good one among others (rotation)', `t=${T},v1=${'a'.repeat(64)},v1=${mac(SECRET, T, BODY)}`, BODY, T, { ok: true }],
    ['upper-case hex', `t=${T},v1=${mac(SECRET, T, BODY).toUpperCase()}`, BODY, T, { ok: true }],
    ['an unknown scheme next to v1', `t=${T},v0=zzz,v1=${mac(SECRET, T, BODY)}`, BODY, T, { ok: true }],
    ['300 s late (the edge)', good, BODY, T + 300, { ok: true }],
    ['301 s late', good, BODY, T + 301, { ok: false, reason: 'stale' }],
    ['301 s early', good, BODY, T - 301, { ok: false, reason: 'stale' }],
    ['no header', undefined, BODY, T, { ok: false, reason: 'missing' }],
    ['an empty header', '', BODY, T, { ok: false, reason: 'missing' }],
    ['no timestamp', `v1=${mac(SECRET, T, BODY)}`, BODY, T, { ok: false, reason: 'malformed' }],
    ['no v1', `t=${T}`, BODY, T, { ok: false, reason: 'malformed' }],
    ['two timestamps', `t=${T},t=${T},v1=${mac(SECRET, T, BODY)}`, BODY, T, { ok: false, reason: 'malformed' }],
    ['a non-numeric timestamp', `t=soon,v1=${mac(SECRET, T, BODY)}`, BODY, T, { ok: false, reason: 'malformed' }],
    ['a short digest', `t=${T},v1=abcd`, BODY, T, { ok: false, reason: 'malformed' }],
    ['a part without =', `t=${T},v1`, BODY, T, { ok: false, reason: 'malformed' }],
    ['another secret', `t=${T},v1=${mac('other', T, BODY)}`, BODY, T, { ok: false, reason: 'mismatch' }],
    ['another body', good, BODY.replace('10.00', '1.00'), T, { ok: false, reason: 'mismatch' }],
    ['a body with other spacing', good, JSON.stringify(JSON.parse(BODY), null, 1), T, { ok: false, reason: 'mismatch' }],
    ['an old MAC with a fresh t', `t=${T + 10},v1=${mac(SECRET, T, BODY)}`, BODY, T + 10, { ok: false, reason: 'mismatch' }],
  ];
  it.each(cases)('%s', (_name, header, body, now, expected) => {
    expect(verifySandboxSignature(header, Buffer.from(body), SECRET, now, 300)).toEqual(expected);
  });

  it('parses the parts it knows', () => {
    expect(parseSignatureHeader(`t=${T}, v1=${'A'.repeat(64)}`)).toEqual({ timestamp: T, signatures: ['a'.repeat(64)] });
    expect(parseSignatureHeader('x'.repeat(2000))).toBeNull();
  });
});

describe('sandboxSessionToken', () => {
  it('is a 256-bit HMAC of the reference: stable, secret-dependent, URL-safe', () => {
    const a = sandboxSessionToken(SECRET, 'TRX0000000000000001');
    expect(a).toMatch(SANDBOX_TOKEN_RE);
    expect(sandboxSessionToken(SECRET, 'TRX0000000000000001')).toBe(a);
    expect(sandboxSessionToken(SECRET, 'TRX0000000000000002')).not.toBe(a);
    expect(sandboxSessionToken(`${SECRET}x`, 'TRX0000000000000001')).not.toBe(a);
    // Domain-separated from callback signatures made with the same secret.
    expect(Buffer.from(a, 'base64url').toString('hex')).not.toBe(mac(SECRET, 0, 'TRX0000000000000001'));
  });
});
