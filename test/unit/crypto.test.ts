import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  generateKeyMaterial,
  isUnboundToken,
  keyIdOf,
  parseKeyMaterial,
  parseKeyring,
  PiiCipher,
  PiiCipherError,
  type PiiCipherFailure,
} from '../../server/infra/crypto/pii-cipher.ts';
import { blindIndex } from '../../server/infra/crypto/blind-index.ts';
import {
  generateApiKey,
  hashApiKey,
  looksLikeApiKey,
  randomToken,
  sha256Hex,
  timingSafeEqualString,
} from '../../server/infra/crypto/tokens.ts';

const K1 = Buffer.alloc(32, 1);
const K2 = Buffer.alloc(32, 2);
const K1_B64 = K1.toString('base64');
const K2_B64 = K2.toString('base64');

function failureOf(fn: () => unknown): { reason: PiiCipherFailure; message: string; code: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof PiiCipherError) return { reason: e.reason, message: e.message, code: e.code };
    throw e;
  }
  throw new Error('expected a PiiCipherError');
}

/** Flips one bit of one base64url part of a token. */
function tamper(token: string, part: number): string {
  const parts = token.split('.');
  const buf = Buffer.from(parts[part]!, 'base64url');
  buf[0]! ^= 0x01;
  parts[part] = buf.toString('base64url');
  return parts.join('.');
}

describe('PiiCipher', () => {
  const B = { brandId: 1, row: 'row-1' };
  const cipher = new PiiCipher({ activeKeyId: 'k1', keys: { k1: K1 } });

  it.each(['alice@example.com', '+8801712345678', 'Rahim Uddin', 'রহিম উদ্দিন', '', 'x'.repeat(5000)])(
    'round-trips %j',
    (plaintext) => {
      const token = cipher.encrypt(plaintext, 'customer.name', B);
      expect(cipher.decrypt(token, 'customer.name', B)).toBe(plaintext);
    },
  );

  it('writes v2.<keyId>.<iv>.<ciphertext>.<tag> with a 12-byte IV and a 16-byte tag', () => {
    const token = cipher.encrypt('alice@example.com', 'customer.email', B);
    expect(token).toMatch(/^v2\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    const [, , iv, ct, tag] = token.split('.');
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(12);
    expect(Buffer.from(ct!, 'base64url')).toHaveLength('alice@example.com'.length);
    expect(Buffer.from(tag!, 'base64url')).toHaveLength(16);
    expect(token).not.toContain('alice');
  });

  it('uses a fresh IV each time, so equal plaintexts give different tokens', () => {
    const a = cipher.encrypt('same', 'customer.email', B);
    const b = cipher.encrypt('same', 'customer.email', B);
    expect(a).not.toBe(b);
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
  });

  it('decrypts data written under an old key after the active key changed', () => {
    const before = new PiiCipher({ activeKeyId: 'k1', keys: { k1: K1 } });
    const oldToken = before.encrypt('+8801712345678', 'customer.phone', B);
    const after = new PiiCipher({ activeKeyId: 'k2', keys: { k2: K2, k1: K1 } });
    const newToken = after.encrypt('+8801712345678', 'customer.phone', B);

    expect(after.decrypt(oldToken, 'customer.phone', B)).toBe('+8801712345678');
    expect(keyIdOf(oldToken)).toBe('k1');
    expect(keyIdOf(newToken)).toBe('k2');
    expect(after.needsRotation(oldToken)).toBe(true);
    expect(after.needsRotation(newToken)).toBe(false);
    expect(failureOf(() => before.decrypt(newToken, 'customer.phone', B))).toMatchObject({
      reason: 'unknown_key',
      message: 'PII key "k2" is not configured; cannot decrypt',
      code: 'INTERNAL_ERROR',
    });
  });

  it.each([
    ['iv', 2],
    ['ciphertext', 3],
    ['tag', 4],
  ])('detects a flipped bit in the %s', (_name, part) => {
    const token = cipher.encrypt('alice@example.com', 'customer.email', B);
    expect(failureOf(() => cipher.decrypt(tamper(token, part), 'customer.email', B))).toEqual({
      reason: 'authentication_failed',
      message: 'Encrypted customer.email failed authentication (tampered, copied from another row, brand or column, or wrong key)',
      code: 'INTERNAL_ERROR',
    });
  });

  it('refuses a value moved to another field (context is bound as AAD)', () => {
    const token = cipher.encrypt('alice@example.com', 'customer.email', B);
    expect(failureOf(() => cipher.decrypt(token, 'customer.phone', B)).reason).toBe('authentication_failed');
  });

  it.each([
    ['another row', { brandId: 1, row: 'row-2' }],
    ['another brand', { brandId: 2, row: 'row-1' }],
    ['a row key that only looks alike', { brandId: '1', row: 'row-1 ' }],
  ])('refuses a value copied to %s (brand and row are bound as AAD)', (_name, other) => {
    const token = cipher.encrypt('alice@example.com', 'customer.email', B);
    expect(failureOf(() => cipher.decrypt(token, 'customer.email', other))).toMatchObject({ reason: 'authentication_failed', code: 'INTERNAL_ERROR' });
    expect(cipher.decrypt(token, 'customer.email', { brandId: '1', row: 'row-1' })).toBe('alice@example.com');
  });

  it('refuses an old unbound v1 token where a bound one is expected, and reads it only through decryptUnbound', () => {
    const old = cipher.encryptUnbound('alice@example.com', 'customer.email');
    expect(old).toMatch(/^v1\.k1\./);
    expect(isUnboundToken(old)).toBe(true);
    expect(isUnboundToken(cipher.encrypt('x', 'customer.email', B))).toBe(false);
    expect(failureOf(() => cipher.decrypt(old, 'customer.email', B))).toMatchObject({ reason: 'unbound', code: 'INTERNAL_ERROR' });
    expect(cipher.decryptUnbound(old, 'customer.email')).toBe('alice@example.com');
    expect(failureOf(() => cipher.decryptUnbound(old, 'customer.phone')).reason).toBe('authentication_failed');
    expect(failureOf(() => cipher.decryptUnbound(cipher.encrypt('x', 'customer.email', B), 'customer.email')).reason).toBe('malformed');
  });

  it('refuses an empty binding', () => {
    expect(failureOf(() => cipher.encrypt('x', 'c', { brandId: 1, row: '' })).reason).toBe('malformed');
    expect(failureOf(() => cipher.encrypt('x', 'c', { brandId: '', row: 1 })).reason).toBe('malformed');
  });

  it('refuses a token relabelled with another configured key id', () => {
    const both = new PiiCipher({ activeKeyId: 'k1', keys: { k1: K1, k2: K1 } });
    const token = both.encrypt('alice@example.com', 'customer.email', B);
    const relabelled = token.replace(/^v2\.k1\./, 'v2.k2.');
    expect(failureOf(() => both.decrypt(relabelled, 'customer.email', B)).reason).toBe('authentication_failed');
  });

  it('refuses the right key id with the wrong key material', () => {
    const token = cipher.encrypt('alice@example.com', 'customer.email', B);
    const impostor = new PiiCipher({ activeKeyId: 'k1', keys: { k1: K2 } });
    expect(failureOf(() => impostor.decrypt(token, 'customer.email', B)).reason).toBe('authentication_failed');
  });

  it.each([
    ['', 'Not a PII token'],
    ['plain text', 'Not a PII token'],
    ['v3.k1.AAAAAAAAAAAAAAAA..AAAAAAAAAAAAAAAAAAAAAA', 'Not a PII token'],
    ['v2.k1.AAAAAAAAAAAAAAAA.AA', 'Not a PII token'],
    ['v2.k1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA.extra', 'Not a PII token'],
    ['v2.k 1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA', 'PII token has an invalid part'],
    ['v2.k1.AAAA+AAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA', 'PII token has an invalid part'],
    ['v2.k1.AAAA.AA.AAAAAAAAAAAAAAAAAAAAAA', 'PII token has a wrong-sized IV or tag'],
    ['v2.k1.AAAAAAAAAAAAAAAA.AA.AAAA', 'PII token has a wrong-sized IV or tag'],
  ])('rejects malformed token %j', (token, message) => {
    expect(failureOf(() => cipher.decrypt(token, 'customer.email', B))).toEqual({ reason: 'malformed', message, code: 'INTERNAL_ERROR' });
  });

  it('rejects an empty context on both sides', () => {
    expect(failureOf(() => cipher.encrypt('x', '', B)).reason).toBe('malformed');
    expect(failureOf(() => cipher.decrypt(cipher.encrypt('x', 'c', B), '', B)).reason).toBe('malformed');
  });

  it.each([
    [{ activeKeyId: 'k3', keys: { k1: K1 } }, 'Active PII key "k3" is not in the keyring'],
    [{ activeKeyId: 'k1', keys: { k1: Buffer.alloc(16) } }, 'PII key k1 must be exactly 32 bytes'],
    [{ activeKeyId: 'k.1', keys: { 'k.1': K1 } }, 'PII key id "k.1" must be 1-32 characters of A-Z a-z 0-9 _ -'],
  ])('refuses a bad keyring %#', (keyring, message) => {
    expect(failureOf(() => new PiiCipher(keyring))).toEqual({ reason: 'bad_keyring', message, code: 'INTERNAL_ERROR' });
  });

  it('keeps its own copy of the keys', () => {
    const key = Buffer.from(K1);
    const c = new PiiCipher({ activeKeyId: 'k1', keys: { k1: key } });
    const token = c.encrypt('alice', 'ctx', B);
    key.fill(0);
    expect(c.decrypt(token, 'ctx', B)).toBe('alice');
  });
});

describe('parseKeyring', () => {
  it('makes the first entry active and keeps the others for decryption', () => {
    const ring = parseKeyring(`k2:${K2_B64}, k1:${K1_B64}`);
    expect(ring.activeKeyId).toBe('k2');
    expect(Object.keys(ring.keys)).toEqual(['k2', 'k1']);
    expect(ring.keys.k1!.equals(K1)).toBe(true);
    expect(ring.keys.k2!.equals(K2)).toBe(true);
  });

  it('accepts base64url key material and a __proto__ key id as plain data', () => {
    const ring = parseKeyring(`__proto__:${K1.toString('base64url')}`);
    expect(ring.activeKeyId).toBe('__proto__');
    expect(Object.hasOwn(ring.keys, '__proto__')).toBe(true);
    expect(new PiiCipher(ring).activeKeyId).toBe('__proto__');
  });

  it.each([
    ['', 'PII keyring is empty or has an empty entry; expected "<keyId>:<base64 32 bytes>,..."'],
    ['   ', 'PII keyring is empty or has an empty entry; expected "<keyId>:<base64 32 bytes>,..."'],
    [`k1:${K1_B64},`, 'PII keyring is empty or has an empty entry; expected "<keyId>:<base64 32 bytes>,..."'],
    [K1_B64, 'PII keyring entry 1 lacks "<keyId>:"'],
    [`:${K1_B64}`, 'PII keyring entry 1: key id must be 1-32 characters of A-Z a-z 0-9 _ -'],
    [`k1:${K1_B64},bad id:${K2_B64}`, 'PII keyring entry 2: key id must be 1-32 characters of A-Z a-z 0-9 _ -'],
    [`k1:${K1_B64},k1:${K2_B64}`, 'PII keyring lists key id "k1" twice'],
    ['k1:not base64!', 'PII key k1 is not base64'],
    [`k1:${Buffer.alloc(16).toString('base64')}`, 'PII key k1 must decode to 32 bytes, got 16'],
    [`k1:${Buffer.alloc(33).toString('base64')}`, 'PII key k1 must decode to 32 bytes, got 33'],
  ])('rejects %j', (spec, message) => {
    expect(failureOf(() => parseKeyring(spec))).toEqual({ reason: 'bad_keyring', message, code: 'INTERNAL_ERROR' });
  });

  it('never echoes key material in its errors', () => {
    const short = Buffer.alloc(31, 7).toString('base64');
    expect(failureOf(() => parseKeyring(`k1:${short}`)).message).not.toContain(short);
  });
});

describe('generateKeyMaterial', () => {
  it('gives distinct 32-byte keys that parseKeyMaterial accepts', () => {
    const a = generateKeyMaterial();
    const b = generateKeyMaterial();
    expect(a).not.toBe(b);
    expect(parseKeyMaterial(a)).toHaveLength(32);
    expect(parseKeyring(`k1:${a}`).keys.k1!.toString('base64')).toBe(a);
  });
});

describe('blindIndex', () => {
  const key = Buffer.alloc(32, 9);

  // Golden vectors: stored indexes depend on this exact input format, so a change
  // here means every customer lookup silently misses until indexes are rebuilt.
  it.each([
    ['email', 'alice@example.com', '3955d93f9bf9946ffeed0950214113404c9514ecef091209696cd56e27976649'],
    ['phone', '+8801712345678', '7f0e1021942eb16dde2b022b697b512630f00f8b7a5bd9576900e7083e59568c'],
  ] as const)('is deterministic for %s %s', (kind, value, hex) => {
    expect(blindIndex(key, 7, kind, value)).toBe(hex);
    expect(blindIndex(key, 7, kind, value)).toBe(hex);
    expect(hex).toBe(createHmac('sha256', key).update(`pc.bidx.v2:7:${kind}:${value}`).digest('hex'));
  });

  it('differs between brands: the same email in two brands gives unrelated indexes', () => {
    expect(blindIndex(key, 7, 'email', 'alice@example.com')).not.toBe(blindIndex(key, 8, 'email', 'alice@example.com'));
    expect(blindIndex(key, 1, 'email', '2:email:x@y.co')).not.toBe(blindIndex(key, 12, 'email', 'x@y.co'));
  });

  it.each([0, -1, 1.5, 'x', ''])('refuses brand %j', (brand) => {
    expect(() => blindIndex(key, brand as number, 'email', 'a@b.co')).toThrow('Blind index brand must be a positive integer id');
  });

  it('separates kinds: the same text as email and as phone never collides', () => {
    expect(blindIndex(key, 7, 'email', '+8801712345678')).not.toBe(blindIndex(key, 7, 'phone', '+8801712345678'));
  });

  it.each([
    ['email', 'alice@example.com', 'bob@example.com'],
    ['phone', '+8801712345678', '+8801712345679'],
    ['email', 'a', 'A'],
  ] as const)('differs for different %s values', (kind, a, b) => {
    expect(blindIndex(key, 7, kind, a)).not.toBe(blindIndex(key, 7, kind, b));
  });

  it('depends on the key', () => {
    expect(blindIndex(key, 7, 'email', 'alice@example.com')).not.toBe(blindIndex(Buffer.alloc(32, 8), 7, 'email', 'alice@example.com'));
  });

  it.each([
    [() => blindIndex(Buffer.alloc(16), 7, 'email', 'a@b.co'), 'Blind index key must be at least 32 bytes'],
    [() => blindIndex(key, 7, 'email', ''), 'Blind index value must not be empty'],
    [() => blindIndex(key, 7, 'name' as 'email', 'x'), 'Unknown blind index kind'],
  ])('refuses misuse %#', (fn, message) => {
    expect(fn).toThrow(message);
  });
});

describe('tokens', () => {
  it.each([
    [16, 22],
    [32, 43],
    [48, 64],
  ])('randomToken(%i) is %i base64url characters', (bytes, length) => {
    const t = randomToken(bytes);
    expect(t).toMatch(new RegExp(`^[A-Za-z0-9_-]{${length}}$`));
    expect(randomToken(bytes)).not.toBe(t);
  });

  it.each([0, 8, 15, 1.5])('randomToken refuses %s bytes', (bytes) => {
    expect(() => randomToken(bytes)).toThrow(RangeError);
  });

  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ])('sha256Hex(%j)', (input, hex) => {
    expect(sha256Hex(input)).toBe(hex);
    expect(sha256Hex(Buffer.from(input))).toBe(hex);
  });

  it.each([
    ['secret', 'secret', true],
    ['secret', 'secreT', false],
    ['secret', 'secret ', false],
    ['', '', true],
    ['', 'x', false],
    ['short', 'a much longer string than the other one', false],
    ['é', 'e\u0301', false],
  ])('timingSafeEqualString(%j, %j) = %s', (a, b, expected) => {
    expect(timingSafeEqualString(a, b)).toBe(expected);
  });
});

describe('API keys', () => {
  it.each(['live', 'test'] as const)('generates a secret %s key (sk_) with prefix and SHA-256 hash', (mode) => {
    const { key, prefix, hash } = generateApiKey(mode);
    expect(key).toMatch(new RegExp(`^sk_${mode}_[0-9A-Za-z]{40}$`));
    expect(prefix).toBe(key.slice(0, 12));
    expect(prefix.startsWith(`sk_${mode}_`)).toBe(true);
    expect(hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toBe(hash);
    expect(looksLikeApiKey(key)).toBe(true);
  });

  it('draws from the whole base62 alphabet and never repeats', () => {
    const keys = Array.from({ length: 200 }, () => generateApiKey('test').key);
    expect(new Set(keys).size).toBe(200);
    const chars = new Set(keys.flatMap((k) => [...k.slice(8)]));
    expect(chars.size).toBe(62);
  });

  it('hashes the exact key text', () => {
    expect(hashApiKey('pk_test_abc')).toBe('ed23209022caa00731fee83f7a58b245a79545c33b2c53d9a61612ff3b037a70');
    expect(hashApiKey('pk_test_abc')).not.toBe(hashApiKey('pk_test_abd'));
  });

  it.each([
    ['pk_live_' + 'a'.repeat(32), true],
    ['pk_test_' + 'Z9'.repeat(20), true],
    ['pk_live_' + 'a'.repeat(64), true],
    ['pk_live_' + 'a'.repeat(31), false],
    ['pk_live_' + 'a'.repeat(65), false],
    ['pk_prod_' + 'a'.repeat(40), false],
    // Secret keys (issued now) and publishable-looking ones issued before both authenticate.
    ['sk_live_' + 'a'.repeat(40), true],
    ['sk_test_' + 'a'.repeat(40), true],
    ['sk_prod_' + 'a'.repeat(40), false],
    ['rk_live_' + 'a'.repeat(40), false],
    ['sk_live_' + 'a'.repeat(31), false],
    ['pk_live_' + 'a'.repeat(39) + '-', false],
    [' pk_live_' + 'a'.repeat(40), false],
    ['pk_live_' + 'a'.repeat(40) + '\n', false],
    ['Bearer pk_live_' + 'a'.repeat(40), false],
    ['', false],
    [undefined, false],
  ])('looksLikeApiKey(%j) = %s', (input, expected) => {
    expect(looksLikeApiKey(input)).toBe(expected);
  });
});
