import { startTestServer, type TestContext } from './harness.ts';
import { startWorkers } from '../../server/infra/jobs/workers.ts';
import { jobRegistrations } from '../../server/domain/jobs.ts';
import { recordEvent, type WebhookEventName } from '../../server/domain/webhooks/outbox.ts';
import type { WebhookSettings } from '../../server/domain/webhooks/settings.ts';
import { transaction } from '../../server/domain/db.ts';

/** Small numbers so a whole retry schedule runs in seconds. */
export const fastSettings: Partial<WebhookSettings> = {
  webhook_max_attempts: 4,
  webhook_retry_base_seconds: 0.3,
  webhook_retry_max_seconds: 1,
  webhook_timeout_ms: 1000,
  webhook_poll_interval_seconds: 0.5,
  webhook_sweep_interval_seconds: 1,
};

export async function writeSettings(t: TestContext, settings: Partial<WebhookSettings>): Promise<void> {
  for (const [key, value] of Object.entries(settings)) {
    await t.sql(
      `INSERT INTO settings (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [key, JSON.stringify(value)],
    );
  }
}

export interface WebhookTestServer {
  t: TestContext;
  stopWorkers(): Promise<void>;
  /** Starts them again (after stopWorkers), reading the settings anew. */
  startWorkers(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A test server whose workers start after the settings are written (worker
 * shape settings are read at start). Loopback receivers need private URLs allowed.
 */
export async function startWebhookTestServer(settings: Partial<WebhookSettings> = fastSettings, env: Record<string, string> = {}): Promise<WebhookTestServer> {
  const t = await startTestServer({ WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...env });
  await writeSettings(t, settings);
  let workers: { stop(): Promise<void> } | null = await startWorkers(t.runtime.deps, jobRegistrations());
  const stopWorkers = async () => {
    await workers?.stop();
    workers = null;
  };
  return {
    t,
    stopWorkers,
    async startWorkers() {
      workers ??= await startWorkers(t.runtime.deps, jobRegistrations());
    },
    async close() {
      await stopWorkers();
      await t.close();
    },
  };
}

export const samplePayment = (n: number) => ({
  payment_id: `5b0e6f0c-1a55-4b8e-9a57-${String(n).padStart(12, '0')}`,
  transaction_id: n,
  trx_id: `TRX-${String(n).padStart(6, '0')}`,
  amount: '1250.00',
  currency: 'BDT',
  status: 'completed',
});

/** What a state change does: record the event in its own transaction. */
export async function emitPaymentCompleted(t: TestContext, brandId: number, n: number, event: WebhookEventName = 'payment.completed'): Promise<void> {
  await transaction(t.runtime.deps.db, (tx) =>
    recordEvent(tx, { brandId, mode: 'live', event, data: { ...samplePayment(n), status: event.split('.')[1]! }, transactionId: n }),
  );
}

export interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
  response_status: number | null;
  last_error: string | null;
}

export async function deliveriesOf(t: TestContext, brandId: number): Promise<DeliveryRow[]> {
  return t.sql<DeliveryRow>('SELECT id, status, attempts, response_status, last_error FROM webhook_deliveries WHERE brand_id = $1 ORDER BY id', [brandId]);
}

export interface AttemptRow {
  attempt: number;
  outcome: string;
  response_status: number | null;
  error_kind: string | null;
  error: string | null;
  duration_ms: number | null;
  requested_at: Date;
  next_attempt_at: Date | null;
}

export async function attemptsOf(t: TestContext, deliveryId: string | number): Promise<AttemptRow[]> {
  return t.sql<AttemptRow>(
    'SELECT attempt, outcome, response_status, error_kind, error, duration_ms, requested_at, next_attempt_at FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
    [deliveryId],
  );
}
