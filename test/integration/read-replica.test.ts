import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createIntent } from '../../server/domain/payments/intents.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { startReplicaPair, type ReplicaPair } from '../support/replica.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { ADMIN_API, adminToken } from './admin-support.ts';

/**
 * DATABASE_READ_URL against a real streaming standby (test/support/replica.ts):
 * lists go to the standby, a client's own writes stay visible to it
 * (docs/read-replicas.md), writes and single reads go to the primary, and the
 * service keeps answering from the primary while the standby is down.
 */

let pair: ReplicaPair;
let t: TestContext;
let brandA: { brandId: number; apiKey: string };
let brandB: { brandId: number; apiKey: string };

const refs = (res: { body: any }) => res.body.data.map((p: any) => p.reference).sort();
const listPayments = (apiKey: string) => t.request('GET', '/api/v1/payments?per_page=100', { token: apiKey });
/** A payment of `brandId` written by something other than that brand's API client (a checkout, another process). */
const writtenElsewhere = (brandId: number, reference: string) =>
  createIntent(t.runtime.deps.db, t.runtime.deps.crypto, brandId, 'live', { amount: '100.00', currency: 'BDT', reference }, { publicBaseUrl: t.config.PUBLIC_BASE_URL });

beforeAll(async () => {
  pair = await startReplicaPair();
  const admin = new pg.Client({ connectionString: pair.primaryUrl('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE paycollect');
  await admin.end();
  t = await startTestServer(
    { DATABASE_READ_URL: pair.replicaUrl('paycollect') },
    { database: { url: pair.primaryUrl('paycollect'), drop: async () => undefined } },
  );
  await seedGateway(t, 'bkash');
  brandA = await t.createBrand('Replica A');
  brandB = await t.createBrand('Replica B');
  await pair.caughtUp();
}, 120_000);

afterAll(async () => {
  await t?.close();
  await pair?.close();
});

describe('a read replica (DATABASE_READ_URL)', () => {
  it('serves lists from the standby; the writing client reads its own writes from the primary', async () => {
    await createPayment(t, brandA.apiKey, { reference: 'a-before' });
    await createPayment(t, brandB.apiKey, { reference: 'b-before' });
    await pair.caughtUp();
    // The standby receives WAL but applies none of it from here on.
    await pair.pauseReplay();
    try {
      // A: a write through the API (to the primary: the standby is read-only and would refuse it)...
      const mine = await createPayment(t, brandA.apiKey, { reference: 'a-while-paused' });
      // ...is in A's next list, which therefore came from the primary.
      expect(refs(await listPayments(brandA.apiKey))).toEqual(['a-before', 'a-while-paused']);
      // An idempotent write commits its transaction before its answer, and is recorded after that commit.
      const idem = await t.request('POST', '/api/v1/payments', {
        token: brandA.apiKey,
        body: { amount: '300.00', currency: 'BDT', reference: 'a-idempotent' },
        headers: { 'idempotency-key': 'replica-idem-1' },
      });
      expect(idem.status, JSON.stringify(idem.body)).toBe(201);
      expect(refs(await listPayments(brandA.apiKey))).toEqual(['a-before', 'a-idempotent', 'a-while-paused']);
      // B wrote nothing since the standby stopped replaying: its list comes from the standby, which
      // has not applied a payment of B's written meanwhile by something else.
      await writtenElsewhere(brandB.brandId, 'b-elsewhere');
      expect(refs(await listPayments(brandB.apiKey))).toEqual(['b-before']);
      const [stored] = await t.sql<{ n: number }>("SELECT count(*)::int AS n FROM payment_intents WHERE reference = 'b-elsewhere'");
      expect(stored!.n).toBe(1);
      // Single-object reads are not lag-tolerant: the primary answers them.
      const intent = await t.sql<{ uuid: string }>("SELECT uuid FROM payment_intents WHERE reference = 'b-elsewhere'");
      const one = await t.request('GET', `/api/v1/payments/${intent[0]!.uuid}`, { token: brandB.apiKey });
      expect(one.status, JSON.stringify(one.body)).toBe(200);
      // A cancel (a write) by B: its next list is B's own view of the primary.
      const cancelled = await t.request('POST', `/api/v1/payments/${intent[0]!.uuid}/cancel`, { token: brandB.apiKey });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      const afterWrite = await listPayments(brandB.apiKey);
      expect(refs(afterWrite)).toEqual(['b-before', 'b-elsewhere']);
      expect(afterWrite.body.data.find((p: any) => p.reference === 'b-elsewhere').status).toBe('canceled');
      expect((await t.request('GET', `/api/v1/payments/${mine.payment_id}`, { token: brandA.apiKey })).status).toBe(200);
    } finally {
      await pair.resumeReplay();
    }
    await pair.caughtUp();
    // Replayed: the standby has B's cancel, so B's list may come from it again and is the same.
    expect(refs(await listPayments(brandB.apiKey))).toEqual(['b-before', 'b-elsewhere']);
  });

  it('keeps the console\'s own writes visible while the standby lags, and shows others\' writes once replayed', async () => {
    const token = adminToken(t);
    const brands = async () => (await t.request('GET', `${ADMIN_API}/brands?per_page=100`, { token })).body.data.map((b: any) => b.name).sort();
    await pair.caughtUp();
    await pair.pauseReplay();
    try {
      // Written outside the console: the overview and lists, served by the standby, do not have it yet.
      await t.createBrand('Replica C');
      expect(await brands()).not.toContain('Replica C');
      // A console write: the console's next lists come from the primary.
      const created = await t.request('POST', `${ADMIN_API}/brands`, { token, body: { name: 'Replica D' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(await brands()).toEqual(expect.arrayContaining(['Replica C', 'Replica D']));
    } finally {
      await pair.resumeReplay();
    }
  });

  it('answers from the primary while the standby is down, says so once in the log and in readiness, and goes back to it', async () => {
    const ready = await t.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.data.checks.read_replica).toMatchObject({ status: 'ok' });
    await pair.stopReplica();
    try {
      await writtenElsewhere(brandB.brandId, 'b-while-down');
      for (let i = 0; i < 3; i++) expect(refs(await listPayments(brandB.apiKey))).toContain('b-while-down');
      expect(t.logs.filter((l) => l.includes('read replica failed'))).toHaveLength(1);
      const degraded = await t.request('GET', '/readyz');
      // Degraded, not unready: every read has the primary to go to.
      expect(degraded.status).toBe(200);
      expect(degraded.body.data.status).toBe('ready');
      expect(degraded.body.data.checks.read_replica).toMatchObject({ status: 'error', latency_ms: null });
      expect(JSON.stringify(degraded.body)).not.toMatch(/postgres:\/\//);
      expect(t.logs.join('\n')).not.toMatch(/postgres:\/\/postgres@/);
    } finally {
      await pair.startReplica();
    }
    await pair.caughtUp();
    // After the retry pause the standby is tried again: a lagging standby shows it is the one answering.
    await new Promise((r) => setTimeout(r, 5200));
    await pair.pauseReplay();
    try {
      await writtenElsewhere(brandB.brandId, 'b-after-return');
      expect(refs(await listPayments(brandB.apiKey))).not.toContain('b-after-return');
      expect(t.logs.filter((l) => l.includes('read replica answers again'))).toHaveLength(1);
    } finally {
      await pair.resumeReplay();
    }
  }, 60_000);
});
