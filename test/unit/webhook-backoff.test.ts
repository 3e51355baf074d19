import { describe, expect, it } from 'vitest';
import { defaultSchedule, parseRetryAfter, retryDelaySeconds, RETRY_AFTER_MAX_SECONDS } from '../../server/domain/webhooks/backoff.ts';

const low = () => 0;
const high = () => 0.999999999;
const gaps = defaultSchedule.attempts - 1;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const delays = (random: () => number, schedule = defaultSchedule) =>
  Array.from({ length: gaps }, (_, i) => retryDelaySeconds(i + 1, schedule, random));

describe('retryDelaySeconds', () => {
  it('first retry lands within a minute, never sooner than half of it', () => {
    expect(retryDelaySeconds(1, defaultSchedule, low)).toBe(30);
    expect(retryDelaySeconds(1, defaultSchedule, high)).toBeCloseTo(60, 5);
  });

  it('equal jitter: each delay lies in [c/2, c] for c = min(max, base·factor^(n-1))', () => {
    for (let attempt = 1; attempt <= 15; attempt++) {
      const c = Math.min(defaultSchedule.maxSeconds, defaultSchedule.baseSeconds * defaultSchedule.factor ** (attempt - 1));
      for (let i = 0; i < 50; i++) {
        const d = retryDelaySeconds(attempt, defaultSchedule);
        expect(d).toBeGreaterThanOrEqual(c / 2);
        expect(d).toBeLessThanOrEqual(c);
      }
    }
  });

  it('never shrinks before the cap, whatever the dice say; after it, the bounds stay put', () => {
    for (let attempt = 1; attempt < 20; attempt++) {
      const next = { low: retryDelaySeconds(attempt + 1, defaultSchedule, low), high: retryDelaySeconds(attempt + 1, defaultSchedule, high) };
      const prev = { low: retryDelaySeconds(attempt, defaultSchedule, low), high: retryDelaySeconds(attempt, defaultSchedule, high) };
      // Guaranteed while the next ceiling is not clipped below twice this one.
      if (2 * prev.high <= defaultSchedule.maxSeconds) expect(next.low).toBeGreaterThanOrEqual(prev.high);
      expect(next.low).toBeGreaterThanOrEqual(prev.low);
      expect(next.high).toBeGreaterThanOrEqual(prev.high);
    }
  });

  it('is capped at maxSeconds, even for absurd attempt numbers', () => {
    expect(retryDelaySeconds(9, defaultSchedule, high)).toBeLessThanOrEqual(defaultSchedule.maxSeconds);
    expect(retryDelaySeconds(5000, defaultSchedule, high)).toBeLessThanOrEqual(defaultSchedule.maxSeconds);
    expect(retryDelaySeconds(5000, defaultSchedule, low)).toBe(defaultSchedule.maxSeconds / 2);
  });

  it('10 attempts span about three days (2–4 days at the jitter extremes, ~3 on average)', () => {
    const day = 86_400;
    expect(sum(delays(low)) / day).toBeCloseTo(1.97, 2);
    expect(sum(delays(high)) / day).toBeCloseTo(3.95, 2);
    expect(sum(delays(() => 0.5)) / day).toBeCloseTo(2.96, 2);
  });

  it('shrinks with the settings, as tests do', () => {
    const fast = { baseSeconds: 0.01, maxSeconds: 0.1 };
    expect(retryDelaySeconds(1, fast, low)).toBeCloseTo(0.005, 10);
    expect(retryDelaySeconds(10, fast, high)).toBeLessThanOrEqual(0.1);
  });

  it('defaults factor to the default schedule’s when a schedule omits it', () => {
    const noFactor = { baseSeconds: 60, maxSeconds: 86_400 };
    expect(retryDelaySeconds(3, noFactor, high)).toBe(retryDelaySeconds(3, defaultSchedule, high));
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses attempt %s', (attempt) => {
    expect(() => retryDelaySeconds(attempt, defaultSchedule)).toThrow(RangeError);
  });

  it('refuses a nonsensical schedule', () => {
    expect(() => retryDelaySeconds(1, { baseSeconds: 0, maxSeconds: 10 })).toThrow(RangeError);
    expect(() => retryDelaySeconds(1, { baseSeconds: 10, maxSeconds: 5 })).toThrow(RangeError);
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2025-06-15T12:00:00Z');

  it.each<[string | null | undefined, number | null]>([
    [null, null],
    [undefined, null],
    ['', null],
    ['   ', null],
    ['120', 120],
    [' 7 ', 7],
    ['0', 0],
    ['-5', 0],
    ['1.5', null],
    ['soon', null],
    ['12 apples', null],
    ['99999999999999999999', RETRY_AFTER_MAX_SECONDS],
    ['172800', RETRY_AFTER_MAX_SECONDS],
    // The three HTTP-date forms (RFC 9110 §5.6.7).
    ['Sun, 15 Jun 2025 12:02:00 GMT', 120],
    ['Sunday, 15-Jun-25 12:02:00 GMT', 120],
    ['Sun Jun 15 12:02:00 2025', 120],
    ['Sun, 15 Jun 2025 12:00:00 GMT', 0],
    ['Sat, 14 Jun 2025 12:00:00 GMT', 0],
    ['Sun, 15 Jun 2025 12:00:00.500 GMT', 1],
    ['Wed, 15 Jun 2033 12:00:00 GMT', RETRY_AFTER_MAX_SECONDS],
    ['Sun, 99 Foo 2025 12:00:00 GMT', null],
  ])('%j → %j', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});
