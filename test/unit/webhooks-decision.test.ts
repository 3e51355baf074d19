import { describe, expect, it } from 'vitest';
import { decideAfterAttempt } from '../../server/domain/webhooks/delivery.ts';

const settings = { webhook_max_attempts: 10, webhook_retry_base_seconds: 60, webhook_retry_max_seconds: 86_400 };
const now = new Date('2026-11-21T10:00:00.000Z');
const low = () => 0;
const high = () => 1;
const res = (status: number | null, retryAfter: string | null = null) => ({ ok: status !== null && status >= 200 && status < 300, status, retryAfter });

describe('decideAfterAttempt', () => {
  const table: Array<[string, ReturnType<typeof res>, number, () => number, ReturnType<typeof decideAfterAttempt>]> = [
    ['200 succeeds', res(200), 1, low, { status: 'success' }],
    ['204 succeeds', res(204), 7, low, { status: 'success' }],
    ['2xx on the last attempt still succeeds', res(299), 10, low, { status: 'success' }],
    ['500 on attempt 1 retries after 30..60 s (low draw)', res(500), 1, low, { status: 'retrying', delayMs: 30_000 }],
    ['500 on attempt 1 retries after 30..60 s (high draw)', res(500), 1, high, { status: 'retrying', delayMs: 60_000 }],
    ['500 on attempt 2 grows ×4', res(500), 2, low, { status: 'retrying', delayMs: 120_000 }],
    ['delays stop growing at 24 h', res(500), 9, high, { status: 'retrying', delayMs: 86_400_000 }],
    ['no response (timeout, refused) retries', res(null), 3, low, { status: 'retrying', delayMs: 480_000 }],
    ['301 is a failure, retried', res(301), 1, low, { status: 'retrying', delayMs: 30_000 }],
    ['404 is a failure, retried', res(404), 1, low, { status: 'retrying', delayMs: 30_000 }],
    ['failure on the last attempt is a dead letter', res(500), 10, low, { status: 'dead_letter', disable: 'failing-if-no-success' }],
    ['410 stops at once and disables', res(410), 1, low, { status: 'dead_letter', disable: 'gone' }],
    ['429 Retry-After longer than the backoff wins', res(429, '3600'), 1, low, { status: 'retrying', delayMs: 3_600_000 }],
    ['503 Retry-After as an HTTP date', res(503, 'Sat, 21 Nov 2026 12:00:00 GMT'), 1, low, { status: 'retrying', delayMs: 7_200_000 }],
    ['Retry-After shorter than the backoff does not shorten it', res(503, '1'), 1, low, { status: 'retrying', delayMs: 30_000 }],
    ['Retry-After on a 500 is ignored', res(500, '3600'), 1, low, { status: 'retrying', delayMs: 30_000 }],
    ['unreadable Retry-After is ignored', res(429, 'soon'), 1, low, { status: 'retrying', delayMs: 30_000 }],
    ['Retry-After is capped at 24 h', res(429, '999999999'), 1, low, { status: 'retrying', delayMs: 86_400_000 }],
  ];
  it.each(table)('%s', (_name, response, attempt, random, expected) => {
    expect(decideAfterAttempt(response, attempt, settings, now, random)).toEqual(expected);
  });

  it('follows the configured attempt limit and base (tests shrink them)', () => {
    const fast = { webhook_max_attempts: 3, webhook_retry_base_seconds: 0.2, webhook_retry_max_seconds: 1 };
    expect(decideAfterAttempt(res(500), 1, fast, now, low)).toEqual({ status: 'retrying', delayMs: 100 });
    expect(decideAfterAttempt(res(500), 2, fast, now, high)).toEqual({ status: 'retrying', delayMs: 800 });
    expect(decideAfterAttempt(res(500), 3, fast, now, low)).toEqual({ status: 'dead_letter', disable: 'failing-if-no-success' });
  });

  it('a maximum below the base is raised to the base rather than failing', () => {
    expect(decideAfterAttempt(res(500), 1, { webhook_max_attempts: 5, webhook_retry_base_seconds: 10, webhook_retry_max_seconds: 5 }, now, high)).toEqual({
      status: 'retrying',
      delayMs: 10_000,
    });
  });
});
