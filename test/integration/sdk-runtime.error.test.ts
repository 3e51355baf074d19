import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PaycollectError,
  RateLimitError,
  TimeoutError,
} from '../../clients/shared/errors.ts';
import { fail, hang, html502, reset, startFlakyServer, testClient, type FlakyServer } from '../support/sdk-flaky-server.ts';

let s: FlakyServer;
beforeAll(async () => {
  s = await startFlakyServer();
});
afterAll(() => s?.close());
beforeEach(() => s.reset());

async function caught(p: Promise<unknown>): Promise<PaycollectError> {
  try {
    await p;
  } catch (err) {
    return err as PaycollectError;
  }
  throw new Error('expected the call to fail');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('retries on a flaky server', () => {
  it('a GET that fails twice with 5xx succeeds on the third attempt, waiting longer each time', async () => {
    s.script(fail(503, 'SERVICE_UNAVAILABLE'), fail(500, 'INTERNAL_ERROR'));
    const thing = await testClient({ baseUrl: s.baseUrl, retryDelay: { initialMs: 60, maxMs: 1000 } }).get(5);
    expect(thing).toEqual({ id: 7, name: '5' });
    expect(s.requests.map((r) => r.url)).toEqual(['/api/test/things/5', '/api/test/things/5', '/api/test/things/5']);
    const [a, b, c] = s.requests.map((r) => r.at);
    // Jitter keeps each wait in [half, full] of its step: 60 ms then 120 ms.
    expect(b! - a!).toBeGreaterThanOrEqual(28);
    expect(c! - b!).toBeGreaterThanOrEqual(58);
  });

  it('gives up after maxRetries and throws the last error, typed', async () => {
    s.script(fail(500, 'INTERNAL_ERROR'), fail(500, 'INTERNAL_ERROR'), fail(500, 'INTERNAL_ERROR'), fail(500, 'INTERNAL_ERROR'));
    const err = await caught(testClient({ baseUrl: s.baseUrl, maxRetries: 2 }).get(1));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('INTERNAL_ERROR');
    expect(err.status).toBe(500);
    expect(err.requestId).toBe('req_internal_error');
    expect(s.requests).toHaveLength(3);
  });

  it('maxRetries: 0 turns retries off, also per call', async () => {
    s.script(fail(503, 'SERVICE_UNAVAILABLE'), fail(503, 'SERVICE_UNAVAILABLE'));
    await expect(testClient({ baseUrl: s.baseUrl, maxRetries: 0 }).get(1)).rejects.toBeInstanceOf(ApiError);
    expect(s.requests).toHaveLength(1);
    s.reset();
    s.script(fail(503, 'SERVICE_UNAVAILABLE'), fail(503, 'SERVICE_UNAVAILABLE'));
    await expect(testClient({ baseUrl: s.baseUrl }).get(1, { maxRetries: 0 })).rejects.toBeInstanceOf(ApiError);
    expect(s.requests).toHaveLength(1);
  });

  it('a dropped connection is retried for a safe call', async () => {
    s.script(reset, reset);
    expect(await testClient({ baseUrl: s.baseUrl }).get(2)).toEqual({ id: 7, name: '2' });
    expect(s.requests).toHaveLength(3);
  });

  it('a proxy’s HTML 502 is an ApiError with UNEXPECTED_RESPONSE, retried like any 5xx', async () => {
    s.script(html502, html502, html502);
    const err = await caught(testClient({ baseUrl: s.baseUrl }).get(3));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('UNEXPECTED_RESPONSE');
    expect(err.status).toBe(502);
    expect(err.body).toBe('<html><body>Bad gateway</body></html>');
    expect(s.requests).toHaveLength(3);
  });
});

describe('idempotency keys', () => {
  it('every POST gets a UUID key, the same one on every retry of the call', async () => {
    s.script(fail(500, 'INTERNAL_ERROR'), reset, fail(503, 'SERVICE_UNAVAILABLE'));
    const created = await testClient({ baseUrl: s.baseUrl, maxRetries: 3 }).create({ name: 'widget' });
    expect(created).toEqual({ id: 99, name: 'widget' });
    const keys = s.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys)).toEqual(new Set([keys[0]]));
    expect(s.requests.every((r) => r.body === '{"name":"widget"}')).toBe(true);
  });

  it('two calls get two different keys; a caller’s key is sent verbatim', async () => {
    const client = testClient({ baseUrl: s.baseUrl });
    await client.create({ name: 'a' });
    await client.create({ name: 'b' });
    await client.create({ name: 'c' }, { idempotencyKey: 'order-1234' });
    const [k1, k2, k3] = s.requests.map((r) => r.headers['idempotency-key']);
    expect(k1).toMatch(UUID);
    expect(k2).toMatch(UUID);
    expect(k1).not.toBe(k2);
    expect(k3).toBe('order-1234');
  });

  it('GET carries no idempotency key', async () => {
    await testClient({ baseUrl: s.baseUrl }).get(1);
    expect(s.requests[0]!.headers['idempotency-key']).toBeUndefined();
  });

  it('a POST whose route does not honour keys is not repeated after a 5xx, a reset or a timeout', async () => {
    const client = testClient({ baseUrl: s.baseUrl, timeoutMs: 150 });
    s.script(fail(500, 'INTERNAL_ERROR'));
    await expect(client.fire(1)).rejects.toBeInstanceOf(ApiError);
    s.script(reset);
    await expect(client.fire(1)).rejects.toBeInstanceOf(ConnectionError);
    s.script(hang);
    await expect(client.fire(1)).rejects.toBeInstanceOf(TimeoutError);
    expect(s.requests).toHaveLength(3);
  });

  it('…but it is repeated after a 429 (nothing was done) or when the caller gives the key', async () => {
    const client = testClient({ baseUrl: s.baseUrl });
    s.script(fail(429, 'RATE_LIMITED'));
    expect(await client.fire(1)).toEqual({ fired: true });
    expect(s.requests).toHaveLength(2);
    s.reset();
    s.script(fail(500, 'INTERNAL_ERROR'));
    expect(await client.fire(1, { idempotencyKey: 'fire-1' })).toEqual({ fired: true });
    expect(s.requests.map((r) => r.headers['idempotency-key'])).toEqual(['fire-1', 'fire-1']);
    s.reset();
    s.script(fail(500, 'INTERNAL_ERROR'));
    expect(await client.fire(2, { headers: { 'Idempotency-Key': 'fire-2' } })).toEqual({ fired: true });
    expect(s.requests.map((r) => r.headers['idempotency-key'])).toEqual(['fire-2', 'fire-2']);
  });

  it('409 IDEMPOTENCY_REQUEST_IN_PROGRESS is waited out; IDEMPOTENCY_KEY_REUSED is thrown at once', async () => {
    const client = testClient({ baseUrl: s.baseUrl });
    s.script(fail(409, 'IDEMPOTENCY_REQUEST_IN_PROGRESS'));
    expect(await client.create({ name: 'x' })).toEqual({ id: 99, name: 'x' });
    expect(s.requests).toHaveLength(2);
    s.reset();
    s.script(fail(409, 'IDEMPOTENCY_KEY_REUSED'));
    const err = await caught(client.create({ name: 'x' }, { idempotencyKey: 'k1' }));
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(s.requests).toHaveLength(1);
  });
});

describe('rate limits', () => {
  it('honours Retry-After before retrying', async () => {
    s.script(fail(429, 'RATE_LIMITED', { 'retry-after': '1' }));
    await testClient({ baseUrl: s.baseUrl }).get(1);
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(980);
  });

  it('a Retry-After longer than the SDK will wait ends the retries with a RateLimitError', async () => {
    s.script(fail(429, 'RATE_LIMITED', { 'retry-after': '3600' }));
    const err = await caught(testClient({ baseUrl: s.baseUrl }).get(1));
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(3_600_000);
    expect(s.requests).toHaveLength(1);
  });
});

describe('timeouts, cancellation, unreachable servers', () => {
  it('times out each attempt and retries a safe call, then throws TimeoutError', async () => {
    s.script(hang, hang);
    const err = await caught(testClient({ baseUrl: s.baseUrl, timeoutMs: 100, maxRetries: 1 }).get(1));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.code).toBe('TIMEOUT');
    expect(err.status).toBeNull();
    expect(err.message).toBe('Request timed out after 100 ms');
    expect(s.requests).toHaveLength(2);
  });

  it('a per-call timeout overrides the client’s', async () => {
    s.script(hang);
    const err = await caught(testClient({ baseUrl: s.baseUrl, timeoutMs: 10_000 }).get(1, { timeoutMs: 80, maxRetries: 0 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toBe('Request timed out after 80 ms');
  });

  it('an aborted signal rejects with its reason and stops retrying', async () => {
    s.script(hang, hang, hang);
    const controller = new AbortController();
    const reason = new Error('user navigated away');
    setTimeout(() => controller.abort(reason), 50);
    await expect(testClient({ baseUrl: s.baseUrl }).get(1, { signal: controller.signal })).rejects.toBe(reason);
    expect(s.requests).toHaveLength(1);
  });

  it('without AbortSignal.any (React Native) cancellation and timeouts still work', async () => {
    const any = AbortSignal.any;
    (AbortSignal as { any?: unknown }).any = undefined;
    try {
      s.script(hang, hang);
      const controller = new AbortController();
      const reason = new Error('gone');
      setTimeout(() => controller.abort(reason), 50);
      await expect(testClient({ baseUrl: s.baseUrl }).get(1, { signal: controller.signal })).rejects.toBe(reason);
      const timedOut = await caught(testClient({ baseUrl: s.baseUrl, timeoutMs: 60, maxRetries: 0 }).get(1, { signal: new AbortController().signal }));
      expect(timedOut).toBeInstanceOf(TimeoutError);
    } finally {
      AbortSignal.any = any;
    }
  });

  it('a refused connection is a ConnectionError, retried even for an unsafe POST (nothing was sent)', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    let calls = 0;
    const client = testClient({
      baseUrl: `http://127.0.0.1:${port}`,
      fetch: (url, init) => {
        calls++;
        return fetch(url, init);
      },
    });
    const err = await caught(client.fire(1));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.code).toBe('CONNECTION_ERROR');
    expect(err.message).toContain('ECONNREFUSED');
    expect(calls).toBe(3);
  });
});

describe('error typing from the envelope', () => {
  it('404 → NotFoundError with code, message, items, status, request id and headers', async () => {
    s.script(fail(404, 'PAYMENT_NOT_FOUND', { 'x-custom': 'yes' }));
    const err = await caught(testClient({ baseUrl: s.baseUrl }).get(1));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({
      name: 'NotFoundError',
      code: 'PAYMENT_NOT_FOUND',
      message: 'PAYMENT_NOT_FOUND happened',
      status: 404,
      requestId: 'req_payment_not_found',
      errors: [{ code: 'PAYMENT_NOT_FOUND', message: 'PAYMENT_NOT_FOUND happened', field: null }],
    });
    expect(err.headers.get('x-custom')).toBe('yes');
    expect(s.requests).toHaveLength(1);
  });

  it('400 → InvalidRequestError naming the field, not retried', async () => {
    s.script(fail(400, 'VALIDATION_ERROR', {}, 'name'));
    const err = await caught(testClient({ baseUrl: s.baseUrl }).create({ name: '' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.field).toBe('name');
    expect(s.requests).toHaveLength(1);
  });

  it('bad arguments are refused before any request', async () => {
    const client = testClient({ baseUrl: s.baseUrl });
    await expect(client.get('')).rejects.toThrow(new TypeError('get: argument 1 (id) must be a non-empty string or number'));
    // @ts-expect-error a body must be an object
    await expect(client.create('name')).rejects.toThrow(new TypeError('create: body must be an object'));
    expect(s.requests).toHaveLength(0);
    expect(() => testClient({ baseUrl: 'ftp://x' })).toThrow('baseUrl must be an http(s) URL');
    expect(() => testClient({ baseUrl: s.baseUrl, maxRetries: -1 })).toThrow('maxRetries must be a whole number >= 0');
  });
});
