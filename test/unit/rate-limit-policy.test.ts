import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../server/config.ts';
import { bucketsFor, defaultKindFor, isLimited, parseQuota, rateLimitHeaders, type BucketState, type RateLimitSettings } from '../../server/domain/rate-limit/policy.ts';
import { addressKeyer, routeRateLimitKind } from '../../server/http/rate-limit.ts';

const settings: RateLimitSettings = {
  RATE_LIMIT_ENABLED: true,
  RATE_LIMIT_API_KEY: { limit: 600, windowSeconds: 60 },
  RATE_LIMIT_DEVICE: { limit: 120, windowSeconds: 60 },
  RATE_LIMIT_PAIRING: { limit: 10, windowSeconds: 900 },
  RATE_LIMIT_PAIRING_GLOBAL: { limit: 300, windowSeconds: 900 },
  RATE_LIMIT_TOKEN_REFRESH: { limit: 30, windowSeconds: 900 },
  RATE_LIMIT_CHECKOUT: null,
  RATE_LIMIT_LOGIN: { limit: 30, windowSeconds: 900 },
};

describe('parseQuota', () => {
  it.each([
    ['600/60', { limit: 600, windowSeconds: 60 }],
    ['1/1', { limit: 1, windowSeconds: 1 }],
    ['10/86400', { limit: 10, windowSeconds: 86400 }],
    ['off', null],
    ['0/60', undefined],
    ['10/0', undefined],
    ['10/86401', undefined],
    ['10 / 60', undefined],
    ['1.5/60', undefined],
    ['-1/60', undefined],
    ['600', undefined],
    ['OFF', undefined],
    ['', undefined],
  ])('%j → %j', (spec, expected) => {
    expect(parseQuota(spec)).toEqual(expected);
  });
});

describe('configuration', () => {
  it('defaults: 600/60 per key, 120/60 per device, 10/900 pairing per address, 300/900 failed pairings overall, 30/900 refreshes, 120/60 checkout', () => {
    const c = loadConfig({});
    expect(c.RATE_LIMIT_ENABLED).toBe(true);
    expect(c.RATE_LIMIT_API_KEY).toEqual({ limit: 600, windowSeconds: 60 });
    expect(c.RATE_LIMIT_DEVICE).toEqual({ limit: 120, windowSeconds: 60 });
    expect(c.RATE_LIMIT_PAIRING).toEqual({ limit: 10, windowSeconds: 900 });
    expect(c.RATE_LIMIT_PAIRING_GLOBAL).toEqual({ limit: 300, windowSeconds: 900 });
    expect(c.RATE_LIMIT_TOKEN_REFRESH).toEqual({ limit: 30, windowSeconds: 900 });
    expect(c.RATE_LIMIT_CHECKOUT).toEqual({ limit: 120, windowSeconds: 60 });
  });

  it('reads each variable, and off', () => {
    const c = loadConfig({ RATE_LIMIT_ENABLED: 'false', RATE_LIMIT_API_KEY: '5/10', RATE_LIMIT_CHECKOUT: 'off' });
    expect(c.RATE_LIMIT_ENABLED).toBe(false);
    expect(c.RATE_LIMIT_API_KEY).toEqual({ limit: 5, windowSeconds: 10 });
    expect(c.RATE_LIMIT_CHECKOUT).toBeNull();
  });

  it('a malformed quota stops start-up naming the variable', () => {
    expect(() => loadConfig({ RATE_LIMIT_DEVICE: '100 per minute' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_DEVICE: '100 per minute' })).toThrow(/RATE_LIMIT_DEVICE: must be <requests>\/<seconds>/);
    expect(() => loadConfig({ RATE_LIMIT_ENABLED: 'maybe' })).toThrow(/RATE_LIMIT_ENABLED/);
  });
});

describe('which limit a route takes', () => {
  it.each([
    ['merchant', 'api-key'],
    ['device', 'device'],
    ['pairing', 'pairing'],
    ['device-refresh', 'token-refresh'],
    ['checkout', 'checkout'],
    ['admin', null],
    ['none', null],
  ])('auth %s → %s', (auth, kind) => {
    expect(defaultKindFor(auth)).toBe(kind);
    expect(routeRateLimitKind({ auth: auth as never })).toBe(kind);
  });

  it('metadata overrides the default, and false turns it off', () => {
    expect(routeRateLimitKind({ auth: 'none', rateLimit: 'checkout' })).toBe('checkout');
    expect(routeRateLimitKind({ auth: 'merchant', rateLimit: false })).toBeNull();
    expect(routeRateLimitKind(undefined)).toBeNull();
  });
});

describe('bucketsFor', () => {
  const caller = { apiKeyId: 7, deviceId: 9, addressKey: 'abc' };
  it('one bucket per credential', () => {
    expect(bucketsFor('api-key', caller, settings)).toEqual([{ quota: 'api-key', key: 'api-key:7', limit: 600, windowSeconds: 60, failuresOnly: false }]);
    expect(bucketsFor('device', caller, settings)).toEqual([{ quota: 'device', key: 'device:9', limit: 120, windowSeconds: 60, failuresOnly: false }]);
  });

  it('pairing spends the address bucket and the code-space bucket (failures only)', () => {
    expect(bucketsFor('pairing', caller, settings)).toEqual([
      { quota: 'pairing', key: 'pairing:abc', limit: 10, windowSeconds: 900, failuresOnly: false },
      { quota: 'pairing-global', key: 'pairing-global', limit: 300, windowSeconds: 900, failuresOnly: true },
    ]);
  });

  it('a quota set to off, or a missing credential, spends nothing', () => {
    expect(bucketsFor('checkout', caller, settings)).toEqual([]);
    expect(bucketsFor('api-key', { addressKey: 'abc' }, settings)).toEqual([]);
  });
});

describe('headers (draft-ietf-httpapi-ratelimit-headers)', () => {
  const state = (over: Partial<BucketState>): BucketState => ({
    quota: 'api-key',
    key: 'api-key:1',
    limit: 10,
    windowSeconds: 60,
    failuresOnly: false,
    hits: 1,
    resetSeconds: 42,
    ...over,
  });

  it('policy and remaining quota, no Retry-After while allowed', () => {
    const states = [state({ hits: 4 })];
    expect(isLimited(states)).toBe(false);
    expect(rateLimitHeaders(states)).toEqual({ 'RateLimit-Policy': '"api-key";q=10;w=60', RateLimit: '"api-key";r=6;t=42' });
  });

  it('the last allowed request leaves r=0 and is not limited; the next one is', () => {
    expect(isLimited([state({ hits: 10 })])).toBe(false);
    expect(rateLimitHeaders([state({ hits: 10 })]).RateLimit).toBe('"api-key";r=0;t=42');
    expect(isLimited([state({ hits: 11 })])).toBe(true);
    expect(rateLimitHeaders([state({ hits: 11 })])).toEqual({
      'RateLimit-Policy': '"api-key";q=10;w=60',
      RateLimit: '"api-key";r=0;t=42',
      'Retry-After': '42',
    });
  });

  it('several buckets: one list item each; Retry-After is the longest wait among the exhausted ones', () => {
    const states = [
      state({ quota: 'pairing', key: 'pairing:a', limit: 10, windowSeconds: 900, hits: 11, resetSeconds: 100 }),
      state({ quota: 'pairing-global', key: 'pairing-global', limit: 300, windowSeconds: 900, hits: 5, resetSeconds: 800, failuresOnly: true }),
    ];
    expect(rateLimitHeaders(states)).toEqual({
      'RateLimit-Policy': '"pairing";q=10;w=900, "pairing-global";q=300;w=900',
      RateLimit: '"pairing";r=0;t=100, "pairing-global";r=295;t=800',
      'Retry-After': '100',
    });
  });

  it('no buckets, no headers', () => {
    expect(rateLimitHeaders([])).toEqual({});
  });
});

describe('addressKeyer', () => {
  const key = addressKeyer(Buffer.alloc(32, 7));
  it('is a keyed hash: stable, 32 hex characters, never the address', () => {
    expect(key('203.0.113.9')).toMatch(/^[0-9a-f]{32}$/);
    expect(key('203.0.113.9')).toBe(key('203.0.113.9'));
    expect(key('203.0.113.9')).not.toBe(key('203.0.113.10'));
    expect(addressKeyer(Buffer.alloc(32, 8))('203.0.113.9')).not.toBe(key('203.0.113.9'));
  });

  it('IPv4-mapped IPv6 is the IPv4 address', () => {
    expect(key('::ffff:203.0.113.9')).toBe(key('203.0.113.9'));
  });

  it('IPv6 counts per /64: rotating the interface id does not escape the limit', () => {
    expect(key('2001:db8:1:2::1')).toBe(key('2001:db8:1:2:aaaa:bbbb:cccc:dddd'));
    expect(key('2001:db8:1:3::1')).not.toBe(key('2001:db8:1:2::1'));
  });

  it('an unknown address has one shared bucket', () => {
    expect(key(undefined)).toBe(key(undefined));
    expect(key('not an ip')).toMatch(/^[0-9a-f]{32}$/);
  });
});
