import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { waitForLockWaiters } from '../support/wait.ts';
import { requestRefund, seedCompletedTransaction, seedGateway, settleRefund } from '../support/seed.ts';
import { purgeExpiredKeys, requestHash } from '../../server/domain/idempotency/service.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';

let t: TestContext;
let apiKey: string;
let brandId: number;
let bkash: GatewayView;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey, brandId } = await t.createBrand('Idempotent Shop'));
  bkash = await seedGateway(t, 'bkash');
});
afterAll(() => t?.close());

let n = 0;
const newKey = () => `key-${Date.now()}-${++n}`;
const body = (reference = 'order-1') => ({ amount: '150.00', currency: 'BDT', reference, customer: { email: 'idem@example.com' } });

function pay(key: string | undefined, b: unknown, token = apiKey) {
  return t.request('POST', '/api/v1/payments', { token, body: b, headers: key === undefined ? {} : { 'idempotency-key': key } });
}

async function intentsWithReference(reference: string): Promise<number> {
  return Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM payment_intents WHERE reference = $1', [reference]))[0]!.n);
}

describe('replays and conflicts', () => {
  it('same key and body: the first response again, with Idempotent-Replayed, and one intent', async () => {
    const key = newKey();
    const first = await pay(key, body('replay-1'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await pay(key, body('replay-1'));
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('content-type')).toMatch(/^application\/json/);
    expect(second.body).toEqual(first.body);
    expect(await intentsWithReference('replay-1')).toBe(1);
  });

  it('the body is compared canonically: key order does not matter', async () => {
    const key = newKey();
    expect((await pay(key, { amount: '10.00', currency: 'BDT', reference: 'canon-1' })).status).toBe(201);
    const swapped = await pay(key, { reference: 'canon-1', currency: 'BDT', amount: '10.00' });
    expect(swapped.headers.get('idempotent-replayed')).toBe('true');
    expect(await intentsWithReference('canon-1')).toBe(1);
  });

  it('same key with another body: 409 IDEMPOTENCY_KEY_REUSED, nothing created', async () => {
    const key = newKey();
    expect((await pay(key, body('reuse-1'))).status).toBe(201);
    const other = await pay(key, body('reuse-2'));
    expect(other.status).toBe(409);
    expect(other.body.errors).toEqual([{ code: 'IDEMPOTENCY_KEY_REUSED', field: 'idempotency-key', message: 'Idempotency key was already used with a different request' }]);
    expect(await intentsWithReference('reuse-2')).toBe(0);
  });

  it('same key on another route is another request: 409', async () => {
    const key = newKey();
    expect((await pay(key, body('route-1'))).status).toBe(201);
    const refund = await requestRefund(t, apiKey, { trx_id: 'TRXWHATEVER', amount: '1.00' }, { 'idempotency-key': key });
    expect(refund.status).toBe(409);
    expect(refund.body.errors[0].code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('keys are scoped to the brand: another brand with the same key gets its own payment', async () => {
    const other = await t.createBrand('Other Brand');
    const key = newKey();
    const mine = await pay(key, body('scope-1'));
    const theirs = await pay(key, body('scope-1'), other.apiKey);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.data.payment_id).not.toBe(mine.body.data.payment_id);
    expect(await intentsWithReference('scope-1')).toBe(2);
  });

  it('without a key every request acts', async () => {
    await pay(undefined, body('nokey-1'));
    await pay(undefined, body('nokey-1'));
    expect(await intentsWithReference('nokey-1')).toBe(2);
  });

  it('a 4xx first response is replayed too (the outcome of that request is final)', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '50.00' });
    const full = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '50.00' });
    const key = newKey();
    const refused = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '20.00' }, { 'idempotency-key': key });
    expect(refused.status).toBe(422);
    await settleRefund(t, full.body.data.id, 'failed');
    const again = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '20.00' }, { 'idempotency-key': key });
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(refused.body);
  });

  it('refunds honour the key: one refund for two identical requests', async () => {
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway: bkash, amount: '50.00' });
    const key = newKey();
    const a = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '5.00' }, { 'idempotency-key': key });
    const b = await requestRefund(t, apiKey, { trx_id: transaction.trxId, amount: '5.00' }, { 'idempotency-key': key });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.data.id).toBe(a.body.data.id);
    expect((await t.sql('SELECT id FROM refunds WHERE transaction_id = $1', [transaction.id])).length).toBe(1);
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['with a space', 'my key'],
    ['empty', ''],
  ])('a malformed key (%s): 400 naming idempotency-key, nothing created', async (_name, key) => {
    const res = await t.request('POST', '/api/v1/payments', { token: apiKey, body: body('badkey-1'), headers: { 'idempotency-key': key } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ code: 'VALIDATION_ERROR', field: 'idempotency-key', message: 'Must be 1 to 255 visible ASCII characters' }]);
    expect(await intentsWithReference('badkey-1')).toBe(0);
  });
});

describe('concurrency and failures', () => {
  it('ten concurrent requests with one key: exactly one executes', async () => {
    const key = newKey();
    const results = await Promise.all(Array.from({ length: 10 }, () => pay(key, body('race-1'))));
    expect(await intentsWithReference('race-1')).toBe(1);
    const fresh = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const r of results) {
      if (r.status === 201) expect(r.body.data.payment_id).toBe(fresh[0]!.body.data.payment_id);
      else {
        expect(r.status).toBe(409);
        expect(r.body.errors[0].code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
        expect(r.headers.get('retry-after')).toBe('1');
      }
    }
  });

  it('a client that hangs up mid-request and retries gets the first outcome, not a second payment', async () => {
    const key = newKey();
    // Hold the intents table so the first request is still running when its client gives up.
    const blocker = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE payment_intents IN EXCLUSIVE MODE');
    try {
      const abort = new AbortController();
      const first = fetch(`${t.baseUrl}/api/v1/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body('hangup-1')),
        signal: abort.signal,
      }).catch((e: unknown) => e);
      // Parked behind the lock, so still running when its client gives up.
      await waitForLockWaiters(blocker, 1);
      abort.abort();
      expect(await first).toBeInstanceOf(Error);
      const whileRunning = await pay(key, body('hangup-1'));
      expect(whileRunning.status).toBe(409);
      expect(whileRunning.body.errors[0].code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    let retry = await pay(key, body('hangup-1'));
    for (let i = 0; i < 50 && retry.status === 409; i++) {
      await new Promise((r) => setTimeout(r, 100));
      retry = await pay(key, body('hangup-1'));
    }
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await intentsWithReference('hangup-1')).toBe(1);
  });

  it('a run that lost its key to a takeover rolls its work back instead of committing a second execution', async () => {
    const key = newKey();
    const blocker = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE payment_intents IN EXCLUSIVE MODE');
    let res;
    try {
      const pending = pay(key, body('takeover-1'));
      // Wait until the request holds its claim, then hand the key to "another run".
      for (let i = 0; i < 50; i++) {
        if ((await t.sql('SELECT 1 FROM idempotency_keys WHERE key = $1', [key])).length) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await t.sql('UPDATE idempotency_keys SET lock_token = gen_random_uuid() WHERE brand_id = $1 AND key = $2', [brandId, key]);
      await blocker.query('COMMIT');
      res = await pending;
    } finally {
      await blocker.end();
    }
    expect(res.status).toBe(500);
    expect(res.body.errors[0].code).toBe('INTERNAL_ERROR');
    expect(await intentsWithReference('takeover-1')).toBe(0);
  });

  it('with a key, the operation and its stored response are one transaction: a rolled-back response leaves no intent', async () => {
    const key = newKey();
    // Make storing the response fail after the handler did its work.
    await t.sql(`ALTER TABLE idempotency_keys ADD CONSTRAINT test_no_completion CHECK (completed_at IS NULL) NOT VALID`);
    let res;
    try {
      res = await pay(key, body('atomic-1'));
    } finally {
      await t.sql('ALTER TABLE idempotency_keys DROP CONSTRAINT test_no_completion');
    }
    expect(res.status).toBe(500);
    expect(await intentsWithReference('atomic-1')).toBe(0);
    // The key was released, so the retry runs.
    const retry = await pay(key, body('atomic-1'));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await intentsWithReference('atomic-1')).toBe(1);
  });

  it('a request still running: 409 IDEMPOTENCY_REQUEST_IN_PROGRESS', async () => {
    const key = newKey();
    const hash = requestHash('POST', '/api/v1/payments', body('running-1'));
    await t.sql(`INSERT INTO idempotency_keys (brand_id, key, request_hash, lock_token, locked_at) VALUES ($1, $2, $3, gen_random_uuid(), now())`, [brandId, key, hash]);
    const res = await pay(key, body('running-1'));
    expect(res.status).toBe(409);
    expect(res.body.errors[0].code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
    expect(await intentsWithReference('running-1')).toBe(0);
  });

  it('a run that died without answering is taken over after the lock timeout', async () => {
    const key = newKey();
    const hash = requestHash('POST', '/api/v1/payments', body('stale-1'));
    await t.sql(
      `INSERT INTO idempotency_keys (brand_id, key, request_hash, lock_token, locked_at) VALUES ($1, $2, $3, gen_random_uuid(), now() - interval '6 minutes')`,
      [brandId, key, hash],
    );
    // Another request cannot steal it; the same one can.
    expect((await pay(key, body('stale-other'))).status).toBe(409);
    const res = await pay(key, body('stale-1'));
    expect(res.status).toBe(201);
    expect(await intentsWithReference('stale-1')).toBe(1);
  });

  it('a 5xx first attempt does not poison the key: the retry executes', async () => {
    const key = newKey();
    await t.sql('ALTER TABLE payment_intents RENAME TO payment_intents_gone');
    let failed;
    try {
      failed = await pay(key, body('poison-1'));
    } finally {
      await t.sql('ALTER TABLE payment_intents_gone RENAME TO payment_intents');
    }
    expect(failed.status).toBe(500);
    expect((await t.sql('SELECT 1 FROM idempotency_keys WHERE brand_id = $1 AND key = $2', [brandId, key])).length).toBe(0);
    const retry = await pay(key, body('poison-1'));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await intentsWithReference('poison-1')).toBe(1);
  });

  it('keys are kept 24 hours: then the key is free again and the purge deletes it', async () => {
    const key = newKey();
    expect((await pay(key, body('ttl-1'))).status).toBe(201);
    await t.sql(`UPDATE idempotency_keys SET created_at = now() - interval '23 hours 59 minutes' WHERE brand_id = $1 AND key = $2`, [brandId, key]);
    expect((await pay(key, body('ttl-2'))).status).toBe(409);
    await t.sql(`UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE brand_id = $1 AND key = $2`, [brandId, key]);
    expect((await pay(key, body('ttl-2'))).status).toBe(201);
    expect(await intentsWithReference('ttl-2')).toBe(1);

    const stale = newKey();
    await pay(stale, body('ttl-3'));
    await t.sql(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE brand_id = $1 AND key = $2`, [brandId, stale]);
    expect(await purgeExpiredKeys(t.runtime.deps.db)).toBe(1);
    expect((await t.sql('SELECT 1 FROM idempotency_keys WHERE key = $1', [stale])).length).toBe(0);
    expect((await t.sql('SELECT 1 FROM idempotency_keys WHERE key = $1', [key])).length).toBe(1);
  });
});
