/**
 * When to retry a failed attempt and how long to wait: pure functions, so the
 * schedule is table-tested and the HTTP core only applies it.
 */

export interface RetryDelayConfig {
  /** Delay before the first retry, before jitter. */
  initialMs: number;
  /** Cap of the exponential part. */
  maxMs: number;
  /** Longest `Retry-After` the SDK will sit out; a longer one ends the retries. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_DELAY: RetryDelayConfig = { initialMs: 500, maxMs: 8_000, maxRetryAfterMs: 60_000 };

/**
 * Exponential backoff with jitter, as stripe-node does it: `initial * 2^retry`
 * capped at `max`, then scaled by a random factor in [0.5, 1) so many clients
 * that failed together do not come back together, yet no wait collapses to zero.
 * `retry` counts from 0 (the first retry).
 */
export function backoffDelayMs(retry: number, config: RetryDelayConfig = DEFAULT_RETRY_DELAY, random: () => number = Math.random): number {
  const exponential = Math.min(config.initialMs * 2 ** retry, config.maxMs);
  return Math.round(exponential * (0.5 + random() / 2));
}

/** What happened on one attempt, as far as the retry decision cares. */
export type AttemptOutcome =
  | { kind: 'response'; status: number; code: string | null; retryAfterMs: number | null }
  /** `beforeSend` when the connection was never made (refused, DNS): nothing reached the service. */
  | { kind: 'network'; beforeSend: boolean }
  | { kind: 'timeout' };

export interface RetryInput {
  outcome: AttemptOutcome;
  /** Retries already made for this call. */
  retriesSoFar: number;
  maxRetries: number;
  /**
   * True when repeating the call cannot do the work twice: an idempotent HTTP
   * method, or a POST carrying an `Idempotency-Key` the service honours.
   */
  safeToRepeat: boolean;
  config?: RetryDelayConfig;
  random?: () => number;
}

/** Milliseconds to wait before the next attempt, or null to give up and throw. */
export function retryDelayMs(input: RetryInput): number | null {
  const { outcome, retriesSoFar, maxRetries, safeToRepeat } = input;
  const config = input.config ?? DEFAULT_RETRY_DELAY;
  if (retriesSoFar >= maxRetries) return null;
  const backoff = backoffDelayMs(retriesSoFar, config, input.random);

  if (outcome.kind === 'timeout') return safeToRepeat ? backoff : null;
  // A refused connection never reached the service, so even an unsafe call can go again.
  if (outcome.kind === 'network') return safeToRepeat || outcome.beforeSend ? backoff : null;

  const { status, code, retryAfterMs } = outcome;
  const retryable =
    // Rate limited before any work was done: safe for every call.
    status === 429 ||
    // The first request with this key is still running; asking again later replays its result.
    (status === 409 && code === 'IDEMPOTENCY_REQUEST_IN_PROGRESS') ||
    (status >= 500 && status !== 501 && safeToRepeat);
  if (!retryable) return null;
  if (retryAfterMs !== null) {
    // Coming back sooner than the service asked only earns another refusal.
    if (retryAfterMs > config.maxRetryAfterMs) return null;
    return Math.max(backoff, retryAfterMs);
  }
  return backoff;
}
