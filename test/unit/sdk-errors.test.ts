import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  PaycollectError,
  PermissionError,
  RateLimitError,
  errorFromResponse,
} from '../../clients/shared/errors.ts';
import { nextPageNumber } from '../../clients/shared/pagination.ts';
import { pathParamNames, schemaKeys, unwrapEnvelope } from '../../clients/shared/resources.ts';
import { encodeQuery, randomId } from '../../clients/shared/http.ts';
import { isTokenExpired, jwtExpiryMs, tokensFromData } from '../../clients/device/tokens.ts';
import { rewriteDeclarationImports } from '../../scripts/build-sdks.ts';
import * as merchantVersion from '../../clients/merchant/version.ts';
import * as deviceVersion from '../../clients/device/version.ts';
import { z } from 'zod';

const envelope = (code: string, message: string, field: string | null = null) => ({
  success: false,
  error: message,
  errors: [{ code, message, field }],
  request_id: 'req_0123456789abcdef0123456789abcdef',
});

describe('errorFromResponse: status families become typed errors', () => {
  it.each<[number, string, typeof PaycollectError]>([
    [400, 'VALIDATION_ERROR', InvalidRequestError],
    [401, 'UNAUTHORIZED', AuthenticationError],
    [401, 'INVALID_PAIRING_CODE', AuthenticationError],
    [403, 'FORBIDDEN', PermissionError],
    [404, 'PAYMENT_NOT_FOUND', NotFoundError],
    [409, 'IDEMPOTENCY_KEY_REUSED', ConflictError],
    [410, 'PAYMENT_EXPIRED', InvalidRequestError],
    [413, 'PAYLOAD_TOO_LARGE', InvalidRequestError],
    [415, 'UNSUPPORTED_MEDIA_TYPE', InvalidRequestError],
    [422, 'REFUND_EXCEEDS_AVAILABLE', InvalidRequestError],
    [429, 'RATE_LIMITED', RateLimitError],
    [500, 'INTERNAL_ERROR', ApiError],
    [503, 'SERVICE_UNAVAILABLE', ApiError],
  ])('%i %s', (status, code, Class) => {
    const err = errorFromResponse(status, new Headers(), envelope(code, `msg ${code}`));
    expect(err).toBeInstanceOf(Class);
    expect(err).toBeInstanceOf(PaycollectError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe(Class.name);
    expect(err.code).toBe(code);
    expect(err.status).toBe(status);
    expect(err.message).toBe(`msg ${code}`);
    expect(err.requestId).toBe('req_0123456789abcdef0123456789abcdef');
  });

  it('keeps every item with its field, and exposes the first field', () => {
    const body = {
      success: false,
      error: 'Amount must be greater than zero',
      errors: [
        { code: 'VALIDATION_ERROR', message: 'Amount must be greater than zero', field: 'amount' },
        { code: 'VALIDATION_ERROR', message: 'Unknown field `colour`', field: 'colour' },
        { code: 'VALIDATION_ERROR', message: 'Something general', field: null },
      ],
      request_id: 'req_x1234567',
    };
    const headers = new Headers({ 'x-request-id': 'req_x1234567', 'x-extra': '1' });
    const err = errorFromResponse(400, headers, body);
    expect(err.errors).toEqual(body.errors);
    expect(err.field).toBe('amount');
    expect(err.headers.get('x-extra')).toBe('1');
    expect(err.body).toBe(body);
  });

  it('reads the request id from the header when the body has none, and codes a newer server invented', () => {
    const err = errorFromResponse(418, new Headers({ 'x-request-id': 'req_from_header' }), {
      errors: [{ code: 'TEAPOT_BUSY', message: 'I am a teapot' }],
    });
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.code).toBe('TEAPOT_BUSY');
    expect(err.message).toBe('I am a teapot');
    expect(err.errors).toEqual([{ code: 'TEAPOT_BUSY', message: 'I am a teapot', field: null }]);
    expect(err.requestId).toBe('req_from_header');
  });

  it.each<[number, unknown, typeof PaycollectError]>([
    [502, '<html>Bad gateway</html>', ApiError],
    [504, undefined, ApiError],
    [404, { message: 'not the envelope' }, NotFoundError],
    [200, { data: 1 }, ApiError],
  ])('a %i without the envelope is UNEXPECTED_RESPONSE', (status, body, Class) => {
    const err = errorFromResponse(status, new Headers(), body);
    expect(err).toBeInstanceOf(Class);
    expect(err.code).toBe('UNEXPECTED_RESPONSE');
    expect(err.message).toBe(`Unexpected response from the API (HTTP ${status})`);
    expect(err.requestId).toBeNull();
  });

  it('RateLimitError exposes Retry-After', () => {
    const err = errorFromResponse(429, new Headers({ 'retry-after': '7' }), envelope('RATE_LIMITED', 'Too many requests'));
    expect((err as RateLimitError).retryAfterMs).toBe(7000);
  });
});

describe('envelopes, paths and queries', () => {
  it.each<[unknown, unknown]>([
    [{ success: true, data: { id: 1 } }, { id: 1 }],
    [{ success: true, data: [1, 2], meta: { page: 1 } }, { data: [1, 2], meta: { page: 1 } }],
    [{ success: true, data: null }, null],
    [undefined, undefined],
  ])('unwrapEnvelope(%j)', (body, expected) => {
    expect(unwrapEnvelope(body)).toEqual(expected);
  });

  it.each<[string, string[]]>([
    ['/api/v1/payments', []],
    ['/api/v1/payments/:payment_id', ['payment_id']],
    ['/api/mobile/v1/sms/queues/:id/reports', ['id']],
    ['/a/:parent/b/:child', ['parent', 'child']],
  ])('pathParamNames(%s)', (path, names) => {
    expect(pathParamNames(path)).toEqual(names);
  });

  it.each<[Record<string, unknown> | undefined, string]>([
    [undefined, ''],
    [{}, ''],
    [{ page: 2, per_page: 50 }, '?page=2&per_page=50'],
    [{ status: 'completed', trx_id: undefined, to: null }, '?status=completed'],
    [{ q: 'a b&c=d' }, '?q=a+b%26c%3Dd'],
    [{ ids: [1, 2] }, '?ids=1&ids=2'],
    [{ flag: false }, '?flag=false'],
  ])('encodeQuery(%j) = %j', (query, expected) => {
    expect(encodeQuery(query)).toBe(expected);
  });

  it('schemaKeys sees through optional and default wrappers', () => {
    expect(schemaKeys(z.object({ a: z.string(), b: z.number() }))).toEqual(['a', 'b']);
    expect(schemaKeys(z.strictObject({ fingerprint: z.string() }).optional())).toEqual(['fingerprint']);
    expect(schemaKeys(z.string())).toEqual([]);
    expect(schemaKeys(undefined)).toEqual([]);
  });
});

describe('nextPageNumber', () => {
  it.each<[unknown, number, number | null]>([
    [{ page: 1, per_page: 20, total: 45, total_pages: 3 }, 20, 2],
    [{ page: 3, per_page: 20, total: 45, total_pages: 3 }, 5, null],
    [{ page: 1, per_page: 20, total: 40 }, 20, 2], // customers: no total_pages
    [{ page: 2, per_page: 20, total: 40 }, 20, null],
    [{ page: 1, per_page: 20, total: 0, total_pages: 0 }, 0, null],
    [{ page: 9, per_page: 20, total: 45, total_pages: 3 }, 0, null], // past the end: empty
    [{ page: 1, per_page: 2 }, 2, 2], // no totals: a full page may have more
    [{ page: 1, per_page: 2 }, 1, null],
    [undefined, 3, null],
  ])('%j with %i items → %j', (meta, count, expected) => {
    expect(nextPageNumber(meta, count)).toBe(expected);
  });
});

describe('device tokens', () => {
  const jwt = (claims: object) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

  it.each<[string, number | null]>([
    [jwt({ exp: 1_800_000_000, sub: 'd' }), 1_800_000_000_000],
    [jwt({ sub: 'no exp' }), null],
    [jwt({ exp: '1800000000' }), null],
    ['not-a-jwt', null],
    ['a.%%%.c', null],
    ['', null],
  ])('jwtExpiryMs(%s)', (token, expected) => {
    expect(jwtExpiryMs(token)).toBe(expected);
  });

  it('decodes payloads that need base64url padding and UTF-8', () => {
    expect(jwtExpiryMs(jwt({ exp: 1, name: 'মোবাইল' }))).toBe(1000);
  });

  it.each<[string, number, number, number, boolean]>([
    // exp at 1 000 000 ms
    ['fresh', 900_000, 0, 0, false],
    ['past exp', 1_000_001, 0, 0, true],
    ['exactly at exp', 1_000_000, 0, 0, true],
    ['inside the margin', 950_000, 0, 60_000, true],
    ['device clock behind, server already past exp', 900_000, 200_000, 0, true],
    ['device clock ahead, server still before exp', 1_100_000, -200_000, 0, false],
  ])('isTokenExpired: %s', (_name, now, offset, margin, expected) => {
    expect(isTokenExpired(jwt({ exp: 1000 }), now, offset, margin)).toBe(expected);
  });

  it('never calls an unreadable token expired (the service decides)', () => {
    expect(isTokenExpired('opaque', Number.MAX_SAFE_INTEGER, 0, 0)).toBe(false);
  });

  it('tokensFromData reads the pair and the server time', () => {
    expect(tokensFromData({ access_token: 'a', refresh_token: 'r', server_time: '2026-11-21T10:00:00.000Z' })).toEqual({
      tokens: { accessToken: 'a', refreshToken: 'r' },
      serverTime: Date.parse('2026-11-21T10:00:00.000Z'),
    });
    expect(tokensFromData({ access_token: 'a' })).toBeNull();
    expect(tokensFromData(null)).toBeNull();
  });
});

describe('packaging', () => {
  it('rewrites relative .ts imports in declarations and nothing else', () => {
    const input = [
      "import { a } from './a.ts';",
      "export * from '../../contract/common/errors.ts';",
      "export type { X } from \"../shared/http.ts\";",
      "type T = import('./t.ts').T;",
      "import type { AppRoute } from '@ts-rest/core';",
      "const s = 'not/an/import.ts';",
    ].join('\n');
    expect(rewriteDeclarationImports(input)).toBe(
      [
        "import { a } from './a.js';",
        "export * from '../../contract/common/errors.js';",
        "export type { X } from \"../shared/http.js\";",
        "type T = import('./t.js').T;",
        "import type { AppRoute } from '@ts-rest/core';",
        "const s = 'not/an/import.ts';",
      ].join('\n'),
    );
  });

  it.each([
    ['merchant', merchantVersion],
    ['device', deviceVersion],
  ])('%s: version.ts matches package.json, and dependencies pin the repo versions', (name, v) => {
    const pkg = JSON.parse(readFileSync(new URL(`../../clients/${name}/package.json`, import.meta.url), 'utf8'));
    const rootPkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(v.SDK_NAME).toBe(pkg.name);
    expect(v.SDK_VERSION).toBe(pkg.version);
    expect(pkg.dependencies).toEqual({ '@ts-rest/core': rootPkg.dependencies['@ts-rest/core'] });
    // A peer range starting at the zod release the repository tests with, so an app's own zod 4 is shared.
    const [major, minor] = String(rootPkg.dependencies.zod).split('.');
    expect(pkg.peerDependencies).toEqual({ zod: `^${major}.${minor}.0` });
  });
});

describe('randomId (idempotency keys)', () => {
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const webCrypto = globalThis.crypto;
  afterEach(() => vi.unstubAllGlobals());

  it('is a v4 UUID, different every time', () => {
    const ids = new Set(Array.from({ length: 100 }, randomId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(UUID_V4);
  });

  it('falls back to getRandomValues where randomUUID is missing (React Native polyfills)', () => {
    vi.stubGlobal('crypto', { getRandomValues: (a: Uint8Array) => webCrypto.getRandomValues(a) });
    const a = randomId();
    expect(a).toMatch(UUID_V4);
    expect(randomId()).not.toBe(a);
  });

  it('says what to install when there is no Web Crypto at all', () => {
    vi.stubGlobal('crypto', undefined);
    expect(() => randomId()).toThrow('No Web Crypto: install a crypto.getRandomValues polyfill');
  });
});
