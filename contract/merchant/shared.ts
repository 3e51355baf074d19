import { z } from 'zod';

/**
 * `Idempotency-Key` on POST routes that create something: the same key with the
 * same request replays the first response (with `Idempotent-Replayed: true`); the
 * same key with another request is a 409. Keys are scoped to the brand and kept
 * for at least 24 hours.
 */
export const idempotencyHeadersSchema = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, 'Must be 1 to 255 visible ASCII characters')
    .optional()
    .describe(
      'A unique key per operation (a UUID is a good choice). Retrying with the same key and body returns the first response instead of acting twice; reusing it with another body is a 409 `IDEMPOTENCY_KEY_REUSED`. Kept for at least 24 hours.',
    ),
});
