/**
 * Retry timing for webhook deliveries. Pure: randomness and the clock are parameters.
 */

export interface BackoffSchedule {
  /** Ceiling of the first retry's delay. */
  baseSeconds: number;
  /** No single delay exceeds this. */
  maxSeconds: number;
  /** Growth per attempt; 4 when omitted (see defaultSchedule for why not 2). */
  factor?: number;
}

/**
 * Defaults: 10 attempts over about three days, first retry within a minute.
 *
 * Attempt 1 goes out at once, so 10 attempts leave 9 gaps. Gap k is drawn from
 * [c_k / 2, c_k] with c_k = min(max, base · factor^(k-1)):
 *
 *   factor 2 cannot do it with base 60: even uncapped, 60 · (2^9 − 1) = 30,660 s ≈ 8.5 h.
 *   factor 4, cap 24 h:  c = 60, 240, 960, 3,840, 15,360, 61,440, 86,400 ×3
 *     Σc = 81,900 + 259,200 = 341,100 s   (3.95 days, every draw at its top)
 *     Σc/2                  = 170,550 s   (1.97 days, every draw at its bottom)
 *     mean 0.75 · Σc        = 255,825 s   (2.96 days)
 *
 * The 24 h cap matches the longest Retry-After we honour, and the last three gaps
 * being a day apart is what "an endpoint failing for days" means in practice.
 */
export const defaultSchedule = {
  attempts: 10,
  baseSeconds: 60,
  maxSeconds: 24 * 60 * 60,
  factor: 4,
} as const satisfies BackoffSchedule & { attempts: number };

/**
 * Seconds to wait after the failed `attempt` (1-based) before the next one.
 *
 * Equal jitter: half the capped exponential is guaranteed, the other half is random.
 * Full jitter ([0, c]) spreads load best but can retry a struggling endpoint almost
 * at once; equal jitter keeps a floor. With factor ≥ 2 each attempt's floor (c_{k+1}/2)
 * is at least the previous ceiling (c_k), so a wait is never shorter than the one
 * before it until the cap clips c_{k+1} below 2·c_k; from there the bounds stay flat.
 *
 * Returns fractional seconds: tests shrink base to well under a second.
 */
export function retryDelaySeconds(attempt: number, schedule: BackoffSchedule, random: () => number = Math.random): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be an integer ≥ 1, got ${attempt}`);
  const { baseSeconds, maxSeconds } = schedule;
  const factor = schedule.factor ?? defaultSchedule.factor;
  if (!(baseSeconds > 0) || !(maxSeconds >= baseSeconds) || !(factor >= 1)) {
    throw new RangeError('backoff needs baseSeconds > 0, maxSeconds ≥ baseSeconds and factor ≥ 1');
  }
  // factor^(attempt-1) overflows to Infinity for absurd attempts; min() absorbs that.
  const ceiling = Math.min(maxSeconds, baseSeconds * factor ** (attempt - 1));
  const half = ceiling / 2;
  const r = Math.min(Math.max(random(), 0), 1);
  return half + r * half;
}

/** A receiver must not be able to park a delivery for a month. */
export const RETRY_AFTER_MAX_SECONDS = 24 * 60 * 60;

const DELTA_SECONDS = /^-?\d+$/;
// RFC 9110 HTTP-date in any of its three forms all start with a day name; checking
// that first stops Date.parse from reading junk like "12 apples" as a date.
const HTTP_DATE_START = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i;

/**
 * Retry-After as whole seconds from `now`, or null when absent or unreadable.
 * Past dates and negative deltas mean "now" (0); anything longer is capped.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | null {
  if (value == null) return null;
  const v = value.trim();
  if (v === '') return null;
  if (DELTA_SECONDS.test(v)) return clamp(Number(v));
  if (!HTTP_DATE_START.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return clamp(Math.ceil((at - now.getTime()) / 1000));
}

function clamp(seconds: number): number {
  return Math.min(Math.max(seconds, 0), RETRY_AFTER_MAX_SECONDS);
}
