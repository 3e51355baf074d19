import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { contractRoutes, fillPath, jsonSchemaOf, sampleValid, type ContractRoute } from '../support/contract-walk.ts';
import { changedTables, dbChecksum } from '../support/db-checksum.ts';
import { DEVICE_API, pairDevice } from '../support/device.ts';
import { MAX_SMS_BATCH } from '../../contract/device/sms-messages.ts';

/**
 * Every size limit answers the error envelope: body size, list page size,
 * array and string lengths in bodies (all read from the contract), SMS batch
 * size, header size and malformed HTTP. Other caps are asserted where their
 * feature is: 20 queue items per read (device-sms-queue.happy), 5 recent
 * transactions (device-dashboard.happy), 4 KB of a webhook response body kept
 * (webhooks-delivery.error).
 */
const BODY_LIMIT = 8192;
let t: TestContext;
let auth: Record<string, string>;

beforeAll(async () => {
  t = await startTestServer({ BODY_LIMIT_BYTES: String(BODY_LIMIT), WORKERS_ENABLED: 'false' });
  const { apiKey, brandId } = await t.createBrand('Limits');
  const device = await pairDevice(t, { brandId });
  auth = { merchant: apiKey, device: device.accessToken, admin: t.runtime.deps.secrets.adminToken };
});
afterAll(() => t?.close());

function expectEnvelope(res: { status: number; body: any }, status: number, code: string, field: string | null) {
  expect(res.status).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.errors[0]).toMatchObject({ code, field });
  expect(res.body.error).toBe(res.body.errors[0].message);
}

/** Sends raw bytes and reads the answer until the server closes the connection. */
function rawHttp(payload: string): Promise<{ status: number; headers: string; body: any }> {
  const url = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(payload));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1]), headers: head ?? '', body: JSON.parse(rest.join('\r\n\r\n') || 'null') });
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
  });
}

const pagedRoutes = contractRoutes().filter((r) => r.method === 'GET' && r.query && 'per_page' in ((jsonSchemaOf(r.query).properties as object) ?? {}));

describe('list sizes: every paged route of the contract', () => {
  it('finds the paged routes', () => {
    expect(pagedRoutes.map((r) => r.path)).toEqual(expect.arrayContaining(['/api/v1/refunds', '/api/v1/customers']));
  });

  it.each(pagedRoutes.map((r) => [r.path, r] as const))('%s: per_page 101 and page 0 are 400 naming the parameter; per_page 100 is served', async (_p, route) => {
    const token = auth[route.meta.auth];
    const path = fillPath(route.path, { brand_id: '1' });
    expectEnvelope(await t.request('GET', `${path}?per_page=101`, { token }), 400, 'VALIDATION_ERROR', 'per_page');
    expectEnvelope(await t.request('GET', `${path}?page=0`, { token }), 400, 'VALIDATION_ERROR', 'page');
    const ok = await t.request('GET', `${path}?per_page=100`, { token });
    expect(ok.status).toBe(200);
    expect(ok.body.meta).toMatchObject({ page: 1, per_page: 100 });
  });
});

/** Top-level body fields with a length limit, from each route's JSON Schema. */
interface Limit {
  field: string;
  kind: 'items' | 'chars';
  max: number;
}
function limitedFields(route: ContractRoute): Limit[] {
  const root = jsonSchemaOf(route.body!) as any;
  const s = root.$ref ? root.$defs[root.$ref.replace('#/$defs/', '')] : root;
  return Object.entries((s?.properties ?? {}) as Record<string, any>).flatMap(([field, p]): Limit[] => {
    if (p.type === 'array' && typeof p.maxItems === 'number') return [{ field, kind: 'items', max: p.maxItems }];
    if (p.type === 'string' && typeof p.maxLength === 'number' && p.maxLength <= 2048) return [{ field, kind: 'chars', max: p.maxLength }];
    return [];
  });
}

const bodyLimits = contractRoutes()
  .filter((r) => r.body && r.meta.auth in { merchant: 1, device: 1, admin: 1 })
  .flatMap((r) => limitedFields(r).map((l) => [`${r.method} ${r.path} ${l.field} (${l.kind} ≤ ${l.max})`, r, l] as const));

describe('array and string lengths: every limited body field of the contract', () => {
  it('finds them, the SMS batch and acknowledgement ids among them', () => {
    const names = bodyLimits.map(([n]) => n);
    expect(names).toContain(`POST /api/mobile/v1/sms/messages messages (items ≤ ${MAX_SMS_BATCH})`);
    expect(names).toContain('POST /api/mobile/v1/notifications/acknowledgements ids (items ≤ 100)');
  });

  it.each(bodyLimits)('%s: one over the limit is a 400 naming the field, and changes nothing', async (_n, route, limit) => {
    const sample = sampleValid(route.body!) as Record<string, unknown>;
    expect(sample, 'a valid sample body').toBeDefined();
    const current = sample[limit.field];
    const over =
      limit.kind === 'items'
        ? Array.from({ length: limit.max + 1 }, (_, i) => (Array.isArray(current) && typeof current[0] === 'object' ? { ...current[0], device_message_id: `m-${i}` } : i + 1))
        : 'x'.repeat(limit.max + 1);
    const before = await dbChecksum(t);
    const res = await t.request(route.method, fillPath(route.path, { brand_id: '1', id: '1', device_id: '1', operator_id: '00000000-0000-4000-8000-000000000000' }), {
      token: auth[route.meta.auth],
      body: { ...sample, [limit.field]: over },
    });
    if (res.status === 413) {
      // A limit the body size reaches first is refused all the same.
      expectEnvelope(res, 413, 'PAYLOAD_TOO_LARGE', null);
    } else {
      expectEnvelope(res, 400, 'VALIDATION_ERROR', limit.field);
    }
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);
  });
});

describe('SMS batch size', () => {
  const sms = (i: number) => ({ device_message_id: `batch-${i}`, sender: 'bKash', body: `msg ${i}`, received_at: '2026-01-01T00:00:00Z' });

  it(`${MAX_SMS_BATCH} messages are taken; ${MAX_SMS_BATCH + 1} are a 400 on messages and nothing is stored`, async () => {
    const over = await t.request('POST', `${DEVICE_API}/sms/messages`, { token: auth.device, body: { messages: Array.from({ length: MAX_SMS_BATCH + 1 }, (_, i) => sms(i)) } });
    expectEnvelope(over, 400, 'VALIDATION_ERROR', 'messages');
    expect(over.body.errors[0].message).toBe(`At most ${MAX_SMS_BATCH} messages per call`);
    expect(await t.sql('SELECT 1 FROM sms_records')).toEqual([]);
    const ok = await t.request('POST', `${DEVICE_API}/sms/messages`, { token: auth.device, body: { messages: Array.from({ length: MAX_SMS_BATCH }, (_, i) => sms(i)) } });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(MAX_SMS_BATCH);
  });
});

describe('request body size', () => {
  it(`over BODY_LIMIT_BYTES (${BODY_LIMIT}) is a 413 on every surface, just under is read`, async () => {
    const pad = (n: number) => 'x'.repeat(n);
    expectEnvelope(await t.request('POST', '/api/v1/payments', { token: auth.merchant, body: { amount: '10.00', currency: 'BDT', reference: pad(BODY_LIMIT) } }), 413, 'PAYLOAD_TOO_LARGE', null);
    expectEnvelope(await t.request('POST', `${DEVICE_API}/devices/heartbeats`, { token: auth.device, body: { network: pad(BODY_LIMIT) } }), 413, 'PAYLOAD_TOO_LARGE', null);
    expectEnvelope(await t.request('POST', '/api/admin/v1/brands', { token: auth.admin, body: { name: pad(BODY_LIMIT) } }), 413, 'PAYLOAD_TOO_LARGE', null);
    const under = await t.request('POST', `${DEVICE_API}/sms/messages`, {
      token: auth.device,
      body: { messages: [{ device_message_id: 'big', sender: 'bKash', body: pad(2000), received_at: '2026-01-01T00:00:00Z' }] },
    });
    expect(under.status).toBe(200);
  });

  it('a Content-Length over the limit is refused before the body is read', async () => {
    const res = await rawHttp(
      `POST /api/v1/payments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${auth.merchant}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\nConnection: close\r\n\r\n{"a":`,
    );
    expect(res.status).toBe(413);
    expect(res.body.errors[0].code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('header size (Node maxHeaderSize, 16 KiB)', () => {
  it('headers over the limit: 431 HEADERS_TOO_LARGE in the envelope, with a request id', async () => {
    const res = await rawHttp(`GET /api/v1/brand HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.body).toMatchObject({ success: false, error: 'Request headers are too large', errors: [{ code: 'HEADERS_TOO_LARGE', field: null }] });
    expect(res.headers).toMatch(new RegExp(`X-Request-Id: ${res.body.request_id}`));
    expect(res.headers).toMatch(/Content-Type: application\/json/);
    expect(res.headers).toMatch(/X-Content-Type-Options: nosniff/);
    expect(res.headers).toMatch(/Cache-Control: no-store/);
  });

  it('an Authorization header over the limit is the same answer, and the token is not logged', async () => {
    const token = `pk_live_${'Q'.repeat(17_000)}`;
    const res = await rawHttp(`GET /api/v1/brand HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(t.logs.join('\n')).not.toContain('QQQQQQQQ');
  });

  it('8 KiB of headers is fine', async () => {
    const res = await fetch(`${t.baseUrl}/healthz`, { headers: { 'x-padding': 'a'.repeat(8192) } });
    expect(res.status).toBe(200);
  });

  it('malformed HTTP gets a 400 envelope, not a bare status line', async () => {
    const res = await rawHttp('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', message: 'The request is not valid HTTP' });
  });
});
