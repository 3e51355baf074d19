import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment } from '../support/seed.ts';

/**
 * Every unexpected error is a bare 500: the envelope's fixed message, nothing of
 * the cause; the cause is logged with the request id. Here the cause is a
 * ciphertext whose bytes were altered in the database.
 */

let t: TestContext;
let a: { apiKey: string; brandId: number };

beforeAll(async () => {
  t = await startTestServer();
  a = await t.createBrand('Tamper A');
});
afterAll(() => t?.close());

it('a tampered personal-data ciphertext answers a bare 500, and the log names the request id', async () => {
  await createPayment(t, a.apiKey, { customer: { email: 'tampered@example.com' } });
  const [row] = await t.sql<{ id: string; email_encrypted: string }>('SELECT id, email_encrypted FROM customers WHERE brand_id = $1 AND email_encrypted IS NOT NULL', [a.brandId]);
  // Flip one bit of the ciphertext segment (version.key.iv.ciphertext.tag): still well-formed, no longer authentic.
  const parts = row!.email_encrypted.split('.');
  const bytes = Buffer.from(parts[3]!, 'base64url');
  bytes[0]! ^= 0x01;
  parts[3] = bytes.toString('base64url');
  const tampered = parts.join('.');
  await t.sql('UPDATE customers SET email_encrypted = $1 WHERE id = $2', [tampered, row!.id]);

  const res = await t.request('GET', '/api/v1/customers/tampered%40example.com', { token: a.apiKey });
  expect(res.status).toBe(500);
  expect(res.body).toEqual({
    success: false,
    error: 'Internal server error',
    errors: [{ code: 'INTERNAL_ERROR', message: 'Internal server error', field: null }],
    request_id: expect.any(String),
  });
  const logged = t.logs.filter((l) => l.includes(res.body.request_id) && l.includes('unhandled error'));
  expect(logged.length).toBeGreaterThan(0);
});
