import { z } from 'zod';
import { type Db } from '../db.ts';
import { defaultSchedule } from './backoff.ts';
import { selectSettings } from './queries/events.ts';

/**
 * Delivery settings live in the service-wide `settings` table (key -> jsonb), so
 * an operator changes them without a restart and every worker process sees the
 * same values. A missing or malformed row means the default; nothing here fails.
 *
 * Read on every batch: attempts, backoff and timeout. Read when workers start:
 * batch size, concurrency, polling and sweep intervals (they shape pg-boss workers).
 */
const webhookSettingDefinitions = {
  /** Attempts before a delivery becomes `dead_letter` (first one included). */
  webhook_max_attempts: { schema: z.number().int().min(1).max(50), default: defaultSchedule.attempts },
  /** Ceiling of the first retry's delay; later ones grow ×4 with jitter. */
  webhook_retry_base_seconds: { schema: z.number().positive().max(86_400), default: defaultSchedule.baseSeconds },
  /** No single retry delay exceeds this. */
  webhook_retry_max_seconds: { schema: z.number().positive().max(86_400), default: defaultSchedule.maxSeconds },
  /** One attempt's budget: connect, headers and body together. */
  webhook_timeout_ms: { schema: z.number().int().min(100).max(60_000), default: 10_000 },
  /**
   * Deliveries one worker fetches per poll (pg-boss batchSize). 100 because a batch's
   * first attempts are claimed in one statement and its successes recorded in groups,
   * so a poll cycle costs a handful of round trips whatever its size, and a small
   * batch left the pg-boss fetch/complete cycle capping the drain (figures:
   * BENCHMARKS.md, "What the profiles showed", 4).
   */
  webhook_worker_batch_size: { schema: z.number().int().min(1).max(100), default: 100 },
  /** Independent pollers per process (pg-boss localConcurrency). */
  webhook_worker_concurrency: { schema: z.number().int().min(1).max(16), default: 2 },
  /** Poll interval; deferred retries are picked up within it. */
  webhook_poll_interval_seconds: { schema: z.number().min(0.5).max(60), default: 2 },
  /** How often a worker looks for due deliveries whose wake-up was lost (a worker that died mid-attempt). */
  webhook_sweep_interval_seconds: { schema: z.number().min(0.2).max(3600), default: 30 },
} as const satisfies Record<string, { schema: z.ZodType; default: number }>;

type Key = keyof typeof webhookSettingDefinitions;
export type WebhookSettings = { [K in Key]: number };

const keys = Object.keys(webhookSettingDefinitions) as Key[];

export async function readWebhookSettings(em: Db): Promise<WebhookSettings> {
  const rows = await selectSettings(em, keys);
  const stored = new Map(rows.map((r) => [r.key, r.value]));
  const out = {} as WebhookSettings;
  for (const key of keys) {
    const def = webhookSettingDefinitions[key];
    const parsed = def.schema.safeParse(stored.get(key));
    out[key] = parsed.success ? parsed.data : def.default;
  }
  return out;
}
