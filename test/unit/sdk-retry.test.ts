import { describe, expect, it } from 'vitest';
import { backoffDelayMs, DEFAULT_RETRY_DELAY, retryDelayMs, type AttemptOutcome } from '../../clients/shared/retry.ts';
import { parseRetryAfterMs } from '../../clients/shared/errors.ts';

const fixed = (r: number) => () => r;

describe('backoffDelayMs: exponential, capped, jittered into [0.5, 1)', () => {
  it.each([
    // retry, random, expected ms (initial 500, max 8000)
    [0, 0, 250],
    [0, 0.999999, 500],
    [1, 0, 500],
    [1, 0.5, 750],
    [2, 0, 1000],
    [3, 0.999999, 4000],
    [4, 0, 4000],
    [4, 0.999999, 8000],
    [5, 0, 4000], // capped at 8000 before jitter
    [30, 0.999999, 8000],
  ])('retry %i with random %f waits %i ms', (retry, random, expected) => {
    expect(backoffDelayMs(retry, DEFAULT_RETRY_DELAY, fixed(random))).toBe(expected);
  });

  it('never waits less than half nor more than the full step, over many random draws', () => {
    for (let retry = 0; retry < 8; retry++) {
      const step = Math.min(500 * 2 ** retry, 8000);
      for (let i = 0; i < 200; i++) {
        const d = backoffDelayMs(retry);
        expect(d).toBeGreaterThanOrEqual(step / 2);
        expect(d).toBeLessThanOrEqual(step);
      }
    }
  });
});

describe('retryDelayMs: which failures are retried', () => {
  const response = (status: number, code: string | null = null, retryAfterMs: number | null = null): AttemptOutcome => ({
    kind: 'response',
    status,
    code,
    retryAfterMs,
  });
  const base = { retriesSoFar: 0, maxRetries: 2, random: fixed(0) };

  it.each<[string, AttemptOutcome, boolean, number | null]>([
    ['500 on a safe call', response(500, 'INTERNAL_ERROR'), true, 250],
    ['503 on a safe call', response(503, 'SERVICE_UNAVAILABLE'), true, 250],
    ['502 from a proxy on a safe call', response(502), true, 250],
    ['500 on an unsafe POST', response(500, 'INTERNAL_ERROR'), false, null],
    ['501 is never retried', response(501), true, null],
    ['400 is the caller’s to fix', response(400, 'VALIDATION_ERROR'), true, null],
    ['401 is not retried here', response(401, 'UNAUTHORIZED'), true, null],
    ['404', response(404, 'PAYMENT_NOT_FOUND'), true, null],
    ['409 conflict', response(409, 'IDEMPOTENCY_KEY_REUSED'), true, null],
    ['409 key still in progress is retried', response(409, 'IDEMPOTENCY_REQUEST_IN_PROGRESS'), true, 250],
    ['422', response(422, 'REFUND_EXCEEDS_AVAILABLE'), true, null],
    ['429 even on an unsafe POST', response(429, 'RATE_LIMITED'), false, 250],
    ['429 with Retry-After 2 s waits 2 s', response(429, 'RATE_LIMITED', 2000), false, 2000],
    ['503 with a Retry-After shorter than the backoff keeps the backoff', response(503, null, 100), true, 250],
    ['429 with a Retry-After beyond the cap gives up', response(429, 'RATE_LIMITED', 61_000), true, null],
    ['network error on a safe call', { kind: 'network', beforeSend: false }, true, 250],
    ['network error after sending an unsafe POST', { kind: 'network', beforeSend: false }, false, null],
    ['connection refused on an unsafe POST (nothing was sent)', { kind: 'network', beforeSend: true }, false, 250],
    ['timeout on a safe call', { kind: 'timeout' }, true, 250],
    ['timeout on an unsafe POST (the work may have happened)', { kind: 'timeout' }, false, null],
  ])('%s', (_name, outcome, safeToRepeat, expected) => {
    expect(retryDelayMs({ ...base, outcome, safeToRepeat })).toBe(expected);
  });

  it('stops after maxRetries and grows the wait between retries', () => {
    const outcome = response(500);
    const waits = [0, 1, 2, 3].map((retriesSoFar) => retryDelayMs({ outcome, retriesSoFar, maxRetries: 3, safeToRepeat: true, random: fixed(0) }));
    expect(waits).toEqual([250, 500, 1000, null]);
    expect(retryDelayMs({ outcome, retriesSoFar: 0, maxRetries: 0, safeToRepeat: true })).toBeNull();
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-11-21T10:00:00Z');
  it.each<[string | null | undefined, number | null]>([
    ['0', 0],
    ['1', 1000],
    ['120', 120_000],
    [' 3 ', 3000],
    ['Sat, 21 Nov 2026 10:00:30 GMT', 30_000],
    ['Sat, 21 Nov 2026 09:59:00 GMT', 0], // a date in the past means now
    ['-1', null],
    ['1.5', null],
    ['soon', null],
    ['', null],
    [null, null],
    [undefined, null],
  ])('%j → %j', (value, expected) => {
    expect(parseRetryAfterMs(value, now)).toBe(expected);
  });
});
