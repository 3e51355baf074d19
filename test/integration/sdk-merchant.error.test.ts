import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PaycollectError,
  PaycollectMerchant,
} from '../../clients/merchant/index.ts';

let t: TestContext;
let client: PaycollectMerchant;
let other: PaycollectMerchant;

beforeAll(async () => {
  t = await startTestServer();
  client = new PaycollectMerchant({ apiKey: (await t.createBrand('Brand A')).apiKey, baseUrl: t.baseUrl });
  other = new PaycollectMerchant({ apiKey: (await t.createBrand('Brand B')).apiKey, baseUrl: t.baseUrl });
  await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

async function caught(p: Promise<unknown>): Promise<PaycollectError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(PaycollectError);
    return err as PaycollectError;
  }
  throw new Error('expected the call to fail');
}

describe('merchant SDK errors are typed from the service’s envelope', () => {
  it('a wrong API key: AuthenticationError UNAUTHORIZED with the request id', async () => {
    const bad = new PaycollectMerchant({ apiKey: 'pk_not_a_real_key', baseUrl: t.baseUrl });
    const err = await caught(bad.brand.get());
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ code: 'UNAUTHORIZED', status: 401, message: 'Missing or invalid credentials' });
    expect(err.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(err.headers.get('x-request-id')).toBe(err.requestId);
  });

  it('an unknown payment: NotFoundError PAYMENT_NOT_FOUND', async () => {
    const err = await caught(client.payments.get('6f1c3f4e-0000-4000-8000-000000000000'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'PAYMENT_NOT_FOUND', status: 404, message: 'Payment not found' });
  });

  it("another brand's payment is the same NotFoundError as an unknown one", async () => {
    const mine = await client.payments.create({ amount: '10.00', currency: 'BDT' });
    const err = await caught(other.payments.get(mine.payment_id));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.code).toBe('PAYMENT_NOT_FOUND');
  });

  it.each([
    ['0.00', 'Amount must be greater than zero'],
    ['-1.00', 'Amount must be greater than zero'],
  ])('amount %s: InvalidRequestError naming the field', async (amount, message) => {
    const err = await caught(client.payments.create({ amount, currency: 'BDT' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ code: 'VALIDATION_ERROR', status: 400, message });
    expect(err.field).toBe('amount');
    expect(err.errors).toEqual([{ code: 'VALIDATION_ERROR', message, field: 'amount' }]);
  });

  it('an unknown body field is named', async () => {
    const body = { amount: '10.00', currency: 'BDT', colour: 'red' } as unknown as Parameters<PaycollectMerchant['payments']['create']>[0];
    const err = await caught(client.payments.create(body));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.errors).toContainEqual({ code: 'VALIDATION_ERROR', message: 'Unknown field `colour`', field: 'colour' });
  });

  it('a bad list query is named, not clamped', async () => {
    const err = await caught(client.refunds.list({ per_page: 101 }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.field).toBe('per_page');
  });

  it('an Idempotency-Key reused with another body: ConflictError, not retried', async () => {
    await client.payments.create({ amount: '10.00', currency: 'BDT' }, { idempotencyKey: 'reuse-1' });
    let calls = 0;
    const counting = new PaycollectMerchant({
      apiKey: (await t.createBrand('Brand C')).apiKey,
      baseUrl: t.baseUrl,
      fetch: (url, init) => {
        calls++;
        return fetch(url, init);
      },
    });
    await counting.payments.create({ amount: '10.00', currency: 'BDT' }, { idempotencyKey: 'reuse-2' });
    const err = await caught(counting.payments.create({ amount: '11.00', currency: 'BDT' }, { idempotencyKey: 'reuse-2' }));
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', status: 409 });
    expect(calls).toBe(2);
  });

  it('refunds.get of an unknown transaction: PAYMENT_NOT_FOUND', async () => {
    const err = await caught(client.refunds.get('TRX-NOPE'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.code).toBe('PAYMENT_NOT_FOUND');
  });

  it('an unknown customer: CUSTOMER_NOT_FOUND', async () => {
    const err = await caught(client.customers.get('nobody@example.com'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.code).toBe('CUSTOMER_NOT_FOUND');
  });

  it('no server listening: ConnectionError after the retries', async () => {
    const down = new PaycollectMerchant({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', maxRetries: 1, retryDelay: { initialMs: 5 } });
    const err = await caught(down.brand.get());
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ code: 'CONNECTION_ERROR', status: null, requestId: null });
  });

  it('the constructor refuses a missing key or a bad base URL', () => {
    expect(() => new PaycollectMerchant({ apiKey: '', baseUrl: t.baseUrl })).toThrow('apiKey is required');
    expect(() => new PaycollectMerchant({ apiKey: 'k', baseUrl: 'localhost:3000' })).toThrow('baseUrl must be an http(s) URL');
  });
});
