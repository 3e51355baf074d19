import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, newFingerprint } from '../support/device.ts';
import { seedGateway } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { contractRoutes, fillPath } from '../support/contract-walk.ts';
import { bdNow } from '../support/sms-matching.ts';

/**
 * A broad run at LOG_LEVEL=debug (what an operator turns on while
 * investigating): every surface, the happy paths and the failures (bad
 * credentials, malformed and oversize bodies, unknown routes, an unexpected
 * database error, hostile values in every route), with credentials and
 * personal data in headers, paths, queries and bodies. Then everything the
 * server logged is searched for each of them.
 */
let t: TestContext;
let receiver: WebhookReceiver;
/** Every value that must never appear in a log line. */
const secrets = new Map<string, string>();
const remember = (what: string, value: string) => {
  expect(value.length, what).toBeGreaterThan(5);
  secrets.set(what, value);
  return value;
};

const PII = {
  name: 'Zebulon Quixote',
  email: 'zebulon.quixote@example.org',
  phone: '+8801755512345',
  nationalPhone: '01755512345',
  smsText: `You have received Tk 1,234.00 from 01755512345. Ref Birthday gift for Zebulon. Fee Tk 0.00. Balance Tk 9,999.00. TrxID BLOGS12345 at ${bdNow('dmy')}`,
  outboundText: 'Your OTP for the secret vault is 918273',
};

beforeAll(async () => {
  t = await startTestServer({ LOG_LEVEL: 'debug', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  receiver = await startReceiver(() => ({ status: 200, body: 'ok' }));
  for (const [k, v] of Object.entries(PII)) remember(`pii ${k}`, v);
  remember('admin token', t.runtime.deps.secrets.adminToken);
  remember('JWT access secret', t.runtime.deps.secrets.jwtAccessSecret);
  remember('JWT refresh secret', t.runtime.deps.secrets.jwtRefreshSecret);
  remember('blind index key', t.runtime.deps.secrets.blindIndexKey);
  remember('PII key', t.runtime.deps.secrets.piiEncryptionKeys.split(':')[1]!);
  remember('sandbox callback secret', t.runtime.deps.secrets.sandboxCallbackSecret);
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe('a broad run', () => {
  it('exercises every surface with credentials and personal data', async () => {
    const admin = { authorization: `Bearer ${t.runtime.deps.secrets.adminToken}` };
    const brand = await t.request('POST', '/api/admin/v1/brands', { headers: admin, body: { name: 'Logs Brand' } });
    const brandId = brand.body.data.id as number;
    const keyRes = await t.request('POST', `/api/admin/v1/brands/${brandId}/api-keys`, { headers: admin, body: { name: 'logs key' } });
    const apiKey = remember('API key', keyRes.body.data.key);
    const gateway = await seedGateway(t, 'bkash');

    // Merchant: payments with a customer, lookups by email and phone in the path, webhooks with their secret.
    const hook = await t.request('PUT', '/api/v1/webhooks/endpoint', { token: apiKey, body: { url: receiver.url, events: ['payment.completed', 'refund.completed'] } });
    remember('webhook secret', hook.body.data.secret);
    remember('rotated webhook secret', (await t.request('POST', '/api/v1/webhooks/endpoint/secret-rotations', { token: apiKey })).body.data.secret);
    const pay = await t.request('POST', '/api/v1/payments', {
      token: apiKey,
      headers: { 'idempotency-key': 'logs-idem-key-1' },
      body: { amount: '1234.00', currency: 'BDT', customer: { name: PII.name, email: PII.email, phone: PII.nationalPhone }, metadata: { note: 'n' } },
    });
    expect(pay.status).toBe(201);
    const paymentId = pay.body.data.payment_id as string;
    expect((await t.request('GET', `/api/v1/customers/${encodeURIComponent(PII.email)}`, { token: apiKey })).status).toBe(200);
    expect((await t.request('GET', `/api/v1/customers/${encodeURIComponent(PII.phone)}`, { token: apiKey })).status).toBe(200);
    await t.request('GET', `/api/v1/customers?per_page=5`, { token: apiKey });
    await t.request('GET', `/api/v1/payments/${paymentId}`, { token: apiKey });

    // Checkout: the customer pays with a gateway trx id and their phone number.
    const started = await t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, {
      body: { gateway: gateway.code, gateway_trx_id: 'BLOGS12345', sender_number: PII.nationalPhone },
    });
    expect(started.status).toBe(201);

    // Device: pairing code and fingerprint, refresh, SMS forwarding that completes the payment.
    const codeRes = await t.request('POST', `/api/admin/v1/brands/${brandId}/pairing-codes`, { headers: admin, body: {} });
    const code = remember('pairing code', codeRes.body.data.code);
    const fingerprint = remember('fingerprint', newFingerprint());
    const paired = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: code, headers: { 'x-device-fingerprint': fingerprint }, body: { device_name: 'Logs phone' } });
    expect(paired.status).toBe(201);
    remember('access token', paired.body.data.access_token);
    const refreshed = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: remember('refresh token', paired.body.data.refresh_token), fingerprint } });
    const access = remember('second access token', refreshed.body.data.access_token);
    remember('second refresh token', refreshed.body.data.refresh_token);
    const forwarded = await t.request('POST', `${DEVICE_API}/sms/messages`, {
      token: access,
      body: { messages: [{ device_message_id: 'logs-1', sender: 'bKash', body: PII.smsText, received_at: new Date().toISOString() }] },
    });
    expect(forwarded.body.data[0].match_status).toBe('matched');
    await t.request('POST', `${DEVICE_API}/devices/heartbeats`, { token: access, body: { battery_level: 50 } });
    // Presenting the first refresh token again revokes the device (a logged security event).
    await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: paired.body.data.refresh_token, fingerprint } });

    // Admin: outbound SMS text and the stored SMS in clear.
    await t.request('POST', `/api/admin/v1/brands/${brandId}/outbound-sms`, { headers: admin, body: { phone: PII.phone, message: PII.outboundText } });
    await t.request('GET', `/api/admin/v1/sms-records/${forwarded.body.data[0].id}?include=body`, { headers: admin });

    // Refund, completed: a second webhook.
    const trxId = forwarded.body.data[0].trx_id as string;
    await t.request('POST', '/api/v1/refunds', { token: apiKey, body: { trx_id: trxId, amount: '10.00', reason: `Refund for ${PII.email}` } });
    await eventually(async () => receiver.requests.length >= 1, 15_000, 'a webhook delivered');
  });

  it('exercises the failures, with the same values in them', async () => {
    const apiKey = secrets.get('API key')!;
    const wrongKey = `${apiKey.slice(0, -4)}ZZZZ`;
    remember('wrong API key', wrongKey);
    await t.request('GET', '/api/v1/brand', { token: wrongKey });
    await t.request('GET', `${DEVICE_API}/dashboard`, { token: secrets.get('access token')! });
    await t.request('POST', '/api/v1/payments', { token: apiKey, rawBody: `{"customer":{"email":"${PII.email}"`, headers: { 'content-type': 'application/json' } });
    await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: 'x', currency: 'BDT', customer: { email: PII.email, phone: PII.phone, name: 42 } } });
    await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '1.00', currency: 'BDT', reference: PII.email.repeat(5000) } });
    await t.request('GET', `/api/v1/no-such-route/${encodeURIComponent(PII.email)}?phone=${encodeURIComponent(PII.phone)}`, { token: apiKey });
    await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: 'WRONG-CODE1', body: { fingerprint: secrets.get('fingerprint')!, device_name: PII.name } });
    await t.request('GET', `/api/v1/customers/${encodeURIComponent(PII.email)}%00`, { token: apiKey });
    // An unexpected database error while personal data is in flight.
    await t.sql('ALTER TABLE customers RENAME TO customers_gone');
    try {
      const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: { amount: '50.00', currency: 'BDT', customer: { name: PII.name, email: PII.email, phone: PII.phone } } });
      expect(res.status).toBe(500);
    } finally {
      await t.sql('ALTER TABLE customers_gone RENAME TO customers');
    }
    // Every route once more with the values where strings go.
    for (const r of contractRoutes()) {
      const path = fillPath(r.path, Object.fromEntries(r.pathParamNames.map((n) => [n, PII.email])));
      const token = r.meta.auth === 'admin' ? t.runtime.deps.secrets.adminToken : r.meta.auth === 'device' ? secrets.get('second access token')! : apiKey;
      await t.request(r.method, `${path}?q=${encodeURIComponent(PII.phone)}`, {
        token,
        ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { body: { email: PII.email, phone: PII.phone, name: PII.name, body: PII.smsText } }),
      });
    }
    expect(t.logs.some((l) => l.includes('"unhandled error"'))).toBe(true);
  });
});

describe('everything logged', () => {
  it('holds no key, token, secret, code, fingerprint, email, phone number or SMS text', () => {
    const text = t.logs.join('\n');
    expect(t.logs.length).toBeGreaterThan(90);
    const found = [...secrets].filter(([, v]) => text.includes(v)).map(([what]) => what);
    expect(found).toEqual([]);
    // And nothing shaped like one, whatever its value.
    const shapes: Array<[string, RegExp]> = [
      ['email address', /[\w.+-]+@[\w-]+\.[a-z]{2,}/i],
      ['Bangladesh phone number', /(\+?880|\b0)1[3-9]\d{8}\b/],
      ['JWT', /eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/],
      ['API key', /[ps]k_(live|test)_[\w-]{10,}/],
      ['webhook secret', /whsec_[\w-]{10,}/],
      ['Bearer credential', /Bearer [^\s"[]{8,}/],
      ['SMS text', /You have received Tk/],
    ];
    const shaped = shapes.filter(([, re]) => re.test(text)).map(([what, re]) => `${what}: ${text.match(re)![0]}`);
    expect(shaped).toEqual([]);
    // The detectors themselves work: a line carrying one of each is caught by each.
    const planted = `{"msg":"leak","a":"${PII.email}","b":"${PII.phone}","c":"${secrets.get('access token')}","d":"${secrets.get('API key')}","e":"${secrets.get('webhook secret')}","f":"Bearer ${secrets.get('admin token')}","g":"${PII.smsText}"}`;
    expect(shapes.filter(([, re]) => !re.test(planted)).map(([what]) => what)).toEqual([]);
  });
});
