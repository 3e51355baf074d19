import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretContext } from '../../server/domain/webhooks/endpoints.ts';
import { generateWebhookSecret } from '../../server/domain/webhooks/signature.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { attemptsOf, emitPaymentCompleted, startWebhookTestServer, type WebhookTestServer } from '../support/webhook-worker.ts';
import type { TestContext } from '../support/harness.ts';

// The production default: private addresses are refused.
let server: WebhookTestServer;
let t: TestContext;
let receiver: WebhookReceiver;

beforeAll(async () => {
  server = await startWebhookTestServer(undefined, { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
  t = server.t;
  receiver = await startReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

describe('SSRF guard when private URLs are not allowed', () => {
  const refused: Array<[string, string]> = [
    ['loopback', 'http://127.0.0.1:8080/hooks'],
    ['localhost name', 'http://localhost/hooks'],
    ['private 10/8', 'https://10.0.0.5/hooks'],
    ['private 192.168/16', 'https://192.168.1.10/hooks'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['IPv6 loopback', 'http://[::1]/hooks'],
    ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/hooks'],
    ['unspecified', 'http://0.0.0.0/hooks'],
    ['carrier-grade NAT', 'http://100.64.0.1/hooks'],
  ];
  it.each(refused)('%s URL is refused at configuration (422 WEBHOOK_URL_NOT_ALLOWED) and nothing is stored', async (_name, url) => {
    const { apiKey, brandId } = await t.createBrand();
    const res = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { url, events: ['payment.completed'] } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ code: 'WEBHOOK_URL_NOT_ALLOWED', message: expect.stringMatching(/not a public address/), field: 'url' }]);
    expect(await t.sql('SELECT id FROM webhook_endpoints WHERE brand_id = $1', [brandId])).toEqual([]);
  });

  it('is checked again at delivery: an endpoint whose host now resolves to a private address is never contacted', async () => {
    // As if the name had resolved publicly when it was saved and points at loopback now.
    const { brandId } = await t.createBrand();
    const secret = generateWebhookSecret();
    await t.sql(`INSERT INTO webhook_endpoints (brand_id, url, events, secret_encrypted) VALUES ($1, $2, '{payment.completed}', $3)`, [
      brandId,
      receiver.url,
      t.runtime.deps.crypto.pii.encryptUnbound(secret, secretContext(brandId)),
    ]);
    await emitPaymentCompleted(t, brandId, 1);
    const [delivery] = await eventually(async () => {
      const rows = await t.sql<{ id: string; attempts: number }>(`SELECT id, attempts FROM webhook_deliveries WHERE brand_id = $1 AND status = 'dead_letter'`, [brandId]);
      return rows.length ? rows : null;
    }, 20_000, 'dead letter');
    expect(delivery!.attempts).toBe(4);
    const attempts = await attemptsOf(t, delivery!.id);
    expect(attempts.map((a) => a.error_kind)).toEqual(['ssrf', 'ssrf', 'ssrf', 'ssrf']);
    expect(attempts[0]!.error).toBe('ssrf: 127.0.0.1 is not a public address (loopback).');
    expect(receiver.requests).toHaveLength(0);
  });
});
