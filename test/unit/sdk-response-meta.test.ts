import { describe, expect, it } from 'vitest';
import { parseRateLimit, responseMeta } from '../../clients/shared/response-meta.ts';
import { rateLimitHeaders } from '../../server/domain/rate-limit/policy.ts';

describe('response metadata', () => {
  it('reads the rate-limit headers the service sends, tightest quota first', () => {
    const sent = rateLimitHeaders([
      { quota: 'api-key', key: 'k1', failuresOnly: false, limit: 100, hits: 10, windowSeconds: 60, resetSeconds: 42 },
      { quota: 'checkout', key: 'k2', failuresOnly: false, limit: 10, hits: 7, windowSeconds: 1, resetSeconds: 1 },
    ]);
    const info = parseRateLimit(new Headers(sent));
    expect(info).toEqual({
      remaining: 3,
      resetSeconds: 1,
      limit: 10,
      quotas: [
        { name: 'api-key', limit: 100, windowSeconds: 60, remaining: 90, resetSeconds: 42 },
        { name: 'checkout', limit: 10, windowSeconds: 1, remaining: 3, resetSeconds: 1 },
      ],
    });
  });

  it('null without rate-limit headers; malformed items are skipped, not guessed', () => {
    expect(parseRateLimit(new Headers())).toBeNull();
    expect(parseRateLimit(new Headers({ RateLimit: '"a";r=x;t=1, garbage' }))).toBeNull();
    expect(parseRateLimit(new Headers({ RateLimit: '"a";r=5;t=9' }))).toEqual({
      remaining: 5,
      resetSeconds: 9,
      limit: null,
      quotas: [{ name: 'a', limit: null, windowSeconds: null, remaining: 5, resetSeconds: 9 }],
    });
  });

  it('request id, idempotent replay and the key sent', () => {
    const meta = responseMeta(201, new Headers({ 'X-Request-Id': 'req_1', 'Idempotent-Replayed': 'true' }), 'order-1');
    expect(meta).toMatchObject({ status: 201, requestId: 'req_1', idempotentReplayed: true, idempotencyKey: 'order-1', rateLimit: null });
    expect(meta.headers['x-request-id']).toBe('req_1');
    expect(responseMeta(200, new Headers(), null)).toMatchObject({ requestId: null, idempotentReplayed: false, idempotencyKey: null });
  });
});
