import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { signatureHeader } from '../../server/domain/webhooks/signature.ts';
import { constructEvent } from '../../clients/shared/webhook-verify.ts';

/**
 * The published reference against the running service: its create-payment
 * example works when sent as is, the document is served compressed, and the
 * PHP and Python verification snippets it shows accept what the service signs.
 */

type Json = Record<string, any>;
const committedText = readFileSync(path.resolve('openapi/openapi.json'), 'utf8');
const committed = JSON.parse(committedText) as Json;
const committedBytes = Buffer.byteLength(committedText);

let t: TestContext;
beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

function raw(p: string, acceptEncoding?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.get(t.baseUrl + p, { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

describe('the create-payment example', () => {
  it('creates a payment when sent as it is published, and the answer matches the published schema', async () => {
    const { apiKey } = await t.createBrand('Docs Example Shop', { mode: 'test' });
    await seedGateway(t, 'bkash');
    const op = committed.paths['/api/v1/payments'].post;
    const example = op.requestBody.content['application/json'].example;
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: example, headers: { 'idempotency-key': 'order-1001' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ amount: example.amount, currency: example.currency, reference: example.reference });

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'https://paycollect.test/openapi.json', components: committed.components });
    const schema = JSON.parse(JSON.stringify(op.responses['201'].content['application/json'].schema).replaceAll('"#/components/', '"https://paycollect.test/openapi.json#/components/'));
    const validate = ajv.compile(schema);
    expect(validate(res.body) ? [] : validate.errors).toEqual([]);

    // The checkout example (the demo gateway `bkash` and its method) is one the service takes:
    // it pays a payment made from the example (live: a test payment is offered only the sandbox).
    await seedGateway(t, 'bkash', { code: 'bkash' });
    const live = await t.createBrand('Docs Example Live Shop', { mode: 'live' });
    const livePayment = await t.request('POST', '/api/v1/payments', { token: live.apiKey, body: example });
    expect(livePayment.status, JSON.stringify(livePayment.body)).toBe(201);
    const start = committed.paths['/api/checkout/v1/payments/{payment_id}/transactions'].post.requestBody.content['application/json'].example;
    const paid = await t.request('POST', `/api/checkout/v1/payments/${livePayment.body.data.payment_id}/transactions`, { body: start });
    expect(paid.status, JSON.stringify(paid.body)).toBeLessThan(300);
    expect(paid.body.data).toMatchObject({ gateway: start.gateway, method: start.method, status: 'awaiting_verification' });
  });
});

describe('/openapi.json', () => {
  it('is the committed document with a server relative to wherever it is served', async () => {
    const res = await raw('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(res.body.toString('utf8'))).toEqual(committed);
    expect(committed.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  it.each([
    ['br', 'br', brotliDecompressSync],
    ['gzip, deflate', 'gzip', gunzipSync],
    ['gzip;q=1, br;q=0', 'gzip', gunzipSync],
  ] as const)('Accept-Encoding %s is answered %s, and decodes to the document', async (accept, encoding, decode) => {
    const res = await raw('/openapi.json', accept);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(encoding);
    expect(res.headers.vary).toMatch(/accept-encoding/i);
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    // Compressed to well under a tenth of the document (1.5 MB raw; a fixed byte bound broke as the API grew).
    expect(res.body.length).toBeLessThan(committedBytes / 10);
    expect(JSON.parse(decode(res.body).toString('utf8'))).toEqual(committed);
  });

  it('compresses the renderer too, and keeps the docs headers', async () => {
    const plain = await raw('/docs/assets/scalar.js', 'identity');
    const br = await raw('/docs/assets/scalar.js', 'br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.body.length).toBeLessThan(plain.body.length / 3);
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    expect(br.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(br.headers['x-content-type-options']).toBe('nosniff');
  });

  it('leaves API routes uncompressed', async () => {
    const res = await raw('/healthz', 'br, gzip');
    expect(res.headers['content-encoding']).toBeUndefined();
  });
});

describe('webhook verification snippets', () => {
  const secret = 'whsec_docsSnippetSecret0123456789abcdefABCDEF';
  const body = JSON.stringify({ id: 'evt_docs_1', event: 'payment.completed', created_at: '2026-11-21T10:15:30.000Z', data: { payment_id: 'p1', amount: '1250.00' } });
  const now = Math.floor(Date.now() / 1000);
  const header = signatureHeader(['whsec_old_secret_value', secret], now, body);
  const dir = path.resolve('docs/webhook-verification');

  it('the Node SDK accepts the signed delivery (same input as the snippets below)', () => {
    expect(constructEvent(body, { 'x-webhook-signature': header }, secret).id).toBe('evt_docs_1');
  });

  const python = (b: string, h: string) =>
    execFileSync('python3', ['-c', 'import sys,os; sys.path.insert(0, sys.argv[1]); from verify_webhook import verify_webhook; print(verify_webhook(sys.stdin.buffer.read(), os.environ["SIG"], os.environ["SECRET"])["id"])', dir], {
      input: b,
      env: { ...process.env, SIG: h, SECRET: secret },
      stdio: ['pipe', 'pipe', 'pipe'],
    }).toString().trim();

  it('Python accepts what the service signs and refuses a changed body or an old timestamp', () => {
    expect(python(body, header)).toBe('evt_docs_1');
    expect(() => python(body.replace('1250.00', '9250.00'), header)).toThrow(/no matching signature/);
    expect(() => python(body, signatureHeader([secret], now - 3600, body))).toThrow(/tolerance/);
  });

  const php = (b: string, h: string) =>
    execFileSync('php', ['-r', 'require getenv("DIR") . "/verify_webhook.php"; echo verify_webhook(file_get_contents("php://stdin"), getenv("SIG"), getenv("SECRET"))["id"];'], {
      input: b,
      env: { ...process.env, DIR: dir, SIG: h, SECRET: secret },
      stdio: ['pipe', 'pipe', 'pipe'],
    }).toString().trim();
  let hasPhp = true;
  try {
    execFileSync('php', ['--version'], { stdio: 'ignore' });
  } catch {
    hasPhp = false;
  }

  it.skipIf(!hasPhp)('PHP accepts what the service signs and refuses a changed body or an old timestamp', () => {
    expect(php(body, header)).toBe('evt_docs_1');
    expect(() => php(body.replace('1250.00', '9250.00'), header)).toThrow(/no matching signature/);
    expect(() => php(body, signatureHeader([secret], now - 3600, body))).toThrow(/tolerance/);
  });

  it('the published document shows exactly these snippets', () => {
    const webhooksTag = (committed.tags as Json[]).find((x) => x.name === 'Webhooks')!;
    expect(webhooksTag.description).toContain(readFileSync(path.join(dir, 'verify_webhook.py'), 'utf8').trimEnd());
    expect(webhooksTag.description).toContain(readFileSync(path.join(dir, 'verify_webhook.php'), 'utf8').trimEnd());
  });
});
