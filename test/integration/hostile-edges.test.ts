import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { changedTables, dbChecksum } from '../support/db-checksum.ts';
import { DEVICE_API, pairDevice } from '../support/device.ts';

/**
 * The exact answers for the inputs the generated hostile suites found to
 * break things (each of these was a 500 or a 503, or stored altered text).
 */
let t: TestContext;
let apiKey: string;
let deviceToken: string;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  ({ apiKey } = await t.createBrand('Edges'));
  deviceToken = (await pairDevice(t)).accessToken;
});
afterAll(() => t?.close());

async function raw(method: string, path: string, body: string | Buffer | undefined, headers: Record<string, string>) {
  const res = await fetch(t.baseUrl + path, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : new Uint8Array(body) });
  return { status: res.status, body: (await res.json()) as any };
}

const merchant = () => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' });

describe('text PostgreSQL cannot store as sent', () => {
  it.each([
    ['NUL in a body field', '/api/v1/refunds', { trx_id: 'a\u0000b', amount: '1.00' }, 'trx_id', 'Must not contain NUL characters'],
    ['NUL in metadata (jsonb)', '/api/v1/payments', { amount: '10.00', currency: 'BDT', metadata: { note: 'x\u0000' } }, 'metadata.note', 'Must not contain NUL characters'],
    ['unpaired surrogate', '/api/v1/payments', { amount: '10.00', currency: 'BDT', reference: 'x\ud800' }, 'reference', 'Must be valid Unicode text (no unpaired surrogates)'],
  ])('%s: 400 VALIDATION_ERROR naming the field, nothing stored', async (_name, path, body, field, message) => {
    const before = await dbChecksum(t);
    // JSON.stringify escapes a lone surrogate as \ud800: valid JSON text carrying invalid Unicode.
    const res = await raw('POST', path, JSON.stringify(body), merchant());
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ code: 'VALIDATION_ERROR', message, field }]);
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);
  });

  it('NUL in a query value and in a path parameter', async () => {
    const q = await raw('GET', '/api/v1/refunds?trx_id=a%00b', undefined, merchant());
    expect(q.status).toBe(400);
    expect(q.body.errors).toEqual([{ code: 'VALIDATION_ERROR', message: 'Must not contain NUL characters', field: 'trx_id' }]);
    const p = await raw('GET', '/api/v1/refunds/%00', undefined, merchant());
    expect(p.status).toBe(400);
    expect(p.body.errors).toEqual([{ code: 'VALIDATION_ERROR', message: 'Must not contain NUL characters', field: 'trx_id' }]);
  });

  it('a hundred NUL requests do not cost the pool its connections: the service keeps answering', async () => {
    await Promise.all(Array.from({ length: 100 }, () => raw('POST', `${DEVICE_API}/devices/heartbeats`, '{"network":"\\u0000"}', { authorization: `Bearer ${deviceToken}`, 'content-type': 'application/json' })));
    expect((await raw('GET', '/api/v1/brand', undefined, merchant())).status).toBe(200);
    expect(t.logs.some((l) => l.includes('invalid message format') || l.includes('"database unavailable"'))).toBe(false);
  });
});

describe('bodies that are not UTF-8 JSON', () => {
  it('invalid UTF-8 bytes: 400 MALFORMED_JSON, never decoded into replacement characters', async () => {
    const body = Buffer.concat([Buffer.from('{"amount":"10.00","currency":"BDT","reference":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await raw('POST', '/api/v1/payments', body, merchant());
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ code: 'MALFORMED_JSON', message: 'Request body is not valid UTF-8', field: null }]);
  });

  it('UTF-8 encoded surrogate code points (CESU-8) are not UTF-8 either', async () => {
    const body = Buffer.concat([Buffer.from('{"amount":"10.00","currency":"BDT","reference":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    expect((await raw('POST', '/api/v1/payments', body, merchant())).body.errors[0].code).toBe('MALFORMED_JSON');
  });

  it('a body sent to an operation that takes none is not read: no 413, 415 or MALFORMED_JSON, which such operations do not declare', async () => {
    const send = (method: string, path: string, body: string, contentType: string) =>
      new Promise<{ status: number; code: string | undefined }>((resolve, reject) => {
        const req = httpRequest(t.baseUrl + path, { method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': contentType, 'content-length': Buffer.byteLength(body) } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, code: (JSON.parse(text) as { errors?: Array<{ code: string }> }).errors?.[0]?.code }));
        });
        req.on('error', reject);
        req.end(body);
      });
    expect(await send('GET', '/api/v1/brand', 'amount=1', 'text/plain')).toEqual({ status: 200, code: undefined });
    expect(await send('GET', '/api/v1/brand', '{"amount": ', 'application/json')).toEqual({ status: 200, code: undefined });
    expect(await send('GET', '/api/v1/payments/not-a-payment', 'x'.repeat(200_000), 'application/json')).toEqual({ status: 404, code: 'PAYMENT_NOT_FOUND' });
    // An operation with a body still refuses one it cannot read.
    expect(await send('POST', '/api/v1/payments', 'amount=1', 'text/plain')).toEqual({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('a declared charset other than UTF-8: 415', async () => {
    const body = Buffer.from(JSON.stringify({ amount: '10.00', currency: 'BDT' }), 'utf16le');
    const res = await raw('POST', '/api/v1/payments', body, { ...merchant(), 'content-type': 'application/json; charset=utf-16le' });
    expect(res.status).toBe(415);
    expect(res.body.errors[0].code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('Content-Encoding gzip that is not gzip: 400 MALFORMED_JSON; real gzip is read', async () => {
    const bad = await raw('POST', '/api/v1/payments', '{"amount":"10.00"}', { ...merchant(), 'content-encoding': 'gzip' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ code: 'MALFORMED_JSON', message: 'Request body could not be decompressed', field: null }]);
    const good = await raw('POST', '/api/v1/payments', gzipSync(JSON.stringify({ amount: '10.00', currency: 'BDT' })), { ...merchant(), 'content-encoding': 'gzip' });
    expect(good.status).toBe(201);
  });

  it('a gzip bomb is cut at the body limit after decompression: 413', async () => {
    const bomb = gzipSync(Buffer.from(`{"reference":"${'a'.repeat(50_000_000)}"}`));
    expect(bomb.length).toBeLessThan(100_000);
    const res = await raw('POST', '/api/v1/payments', bomb, { ...merchant(), 'content-encoding': 'gzip' });
    expect(res.status).toBe(413);
    expect(res.body.errors[0].code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('paths that are not valid percent-encoding', () => {
  it.each(['%ff', '%c0%af', '%E0%A4%A', '%'])('%s: 400 VALIDATION_ERROR', async (param) => {
    const res = await raw('GET', `/api/v1/refunds/${param}`, undefined, merchant());
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ code: 'VALIDATION_ERROR', message: 'The path is not valid percent-encoded UTF-8', field: null }]);
  });
});
