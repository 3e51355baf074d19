import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, newFingerprint, newPairingCode, pairDevice, type PairedDevice } from '../support/device.ts';
import { seedCompletedTransaction, seedGateway } from '../support/seed.ts';
import { forwardSms, newGatewayTrxId, seedPayment, smsBodies, type SmsScene } from '../support/sms-matching.ts';
import { requestAt, startSecondInstance, type Instance } from '../support/second-instance.ts';
import { recordReliability } from '../support/reliability-summary.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';

/**
 * The races the service must win (README.md, reliability suites), each run ROUNDS times, with the racers split over two
 * server instances (separate connection pools, one database), so only the
 * database's guarantees can pick the winner. Every round ends with exactly one
 * winner and rows that agree with the answers.
 *
 * Single-instance versions live with their features: refunds.error (ten
 * refunds on one transaction), sms-matching.concurrency (same SMS from two
 * phones, SMS vs. customer submission, 20 rounds each), device-sms-queue.happy
 * (three devices polling), device-pairing.error (six phones, one code),
 * device-session.security (refresh reuse), idempotency (ten requests, one key).
 */
const ROUNDS = Number(process.env.RACE_ROUNDS ?? 20);

let t: TestContext;
let second: Instance;
let apiKey: string;
let brandId: number;
let gateway: GatewayView;
let races = 0;
const urls = () => [t.baseUrl, second.baseUrl];

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  second = await startSecondInstance(t);
  ({ apiKey, brandId } = await t.createBrand('Races'));
  gateway = await seedGateway(t, 'bkash');
});
afterAll(async () => {
  recordReliability({ suite: 'races', races });
  process.stdout.write(`[races] ${races} races run, ${ROUNDS} rounds each kind\n`);
  await second?.close();
  await t?.close();
});

describe(`races over two server instances, ${ROUNDS} rounds each`, () => {
  it('two refunds that together overdraw: one is created, the other is REFUND_EXCEEDS_AVAILABLE', async () => {
    for (let round = 0; round < ROUNDS; round++, races++) {
      const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway, amount: '100.00' });
      const results = await Promise.all(urls().map((u) => requestAt(u, 'POST', '/api/v1/refunds', { token: apiKey, body: { trx_id: transaction.trxId, amount: '60.00' } })));
      expect(results.map((r) => r.status).sort(), `round ${round}`).toEqual([201, 422]);
      expect(results.find((r) => r.status === 422)!.body.errors[0].code).toBe('REFUND_EXCEEDS_AVAILABLE');
      const rows = await t.sql<{ uuid: string; amount: string }>("SELECT uuid, amount FROM refunds WHERE transaction_id = $1 AND status <> 'failed'", [transaction.id]);
      expect(rows).toEqual([{ uuid: results.find((r) => r.status === 201)!.body.data.uuid, amount: '60.00' }]);
    }
  });

  it('the same Idempotency-Key at the same moment: one payment, and both answers name it', async () => {
    for (let round = 0; round < ROUNDS; round++, races++) {
      const key = `race-key-${round}-${Date.now()}`;
      const body = { amount: '25.00', currency: 'BDT', reference: key };
      const results = await Promise.all(urls().map((u) => requestAt(u, 'POST', '/api/v1/payments', { token: apiKey, body, headers: { 'idempotency-key': key } })));
      const created = await t.sql<{ uuid: string }>('SELECT uuid FROM payment_intents WHERE reference = $1', [key]);
      expect(created, `round ${round}`).toHaveLength(1);
      const fresh = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
      expect(fresh).toHaveLength(1);
      for (const r of results) {
        if (r.status === 201) expect(r.body.data.payment_id).toBe(created[0]!.uuid);
        else expect(r.body.errors[0].code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
      }
      const [keyRow] = await t.sql<{ status: number }>('SELECT response_status AS status FROM idempotency_keys WHERE key = $1', [key]);
      expect(keyRow!.status).toBe(201);
    }
  });

  it('one pairing code used by two phones at once: one device, the code spent on it', async () => {
    for (let round = 0; round < ROUNDS; round++, races++) {
      const code = await newPairingCode(t, brandId);
      const results = await Promise.all(
        urls().map((u) => requestAt(u, 'POST', `${DEVICE_API}/devices/pairings`, { token: code, body: { fingerprint: newFingerprint(), device_name: `racer ${round}` } })),
      );
      expect(results.map((r) => r.status).sort(), `round ${round}`).toEqual([201, 401]);
      const winner = results.find((r) => r.status === 201)!.body.data.device_id;
      const devices = await t.sql<{ uuid: string }>("SELECT uuid FROM devices WHERE name = $1 AND brand_id = $2", [`racer ${round}`, brandId]);
      expect(devices).toEqual([{ uuid: winner }]);
      const [codeRow] = await t.sql<{ uuid: string }>(
        'SELECT d.uuid FROM pairing_codes pc JOIN devices d ON d.id = pc.used_by_device_id WHERE pc.brand_id = $1 ORDER BY pc.id DESC LIMIT 1',
        [brandId],
      );
      expect(codeRow!.uuid).toBe(winner);
    }
  });

  it('one refresh token rotated twice at once: one new pair, and the reuse revokes the device', async () => {
    for (let round = 0; round < ROUNDS; round++, races++) {
      const d = await pairDevice(t, { brandId });
      const results = await Promise.all(
        urls().map((u) => requestAt(u, 'POST', `${DEVICE_API}/devices/token-refreshes`, { body: { refresh_token: d.refreshToken, fingerprint: d.fingerprint } })),
      );
      expect(results.map((r) => r.status).sort(), `round ${round}`).toEqual([200, 401]);
      const [row] = await t.sql<{ status: string; revoked_reason: string | null }>('SELECT status, revoked_reason FROM devices WHERE id = $1', [d.deviceId]);
      expect(row).toEqual({ status: 'revoked', revoked_reason: 'refresh_token_reuse' });
      // The winner's pair is dead too: a copied token was in use, so the phone pairs again.
      const winner = results.find((r) => r.status === 200)!.body.data;
      expect((await requestAt(t.baseUrl, 'GET', `${DEVICE_API}/dashboard`, { token: winner.access_token })).status).toBe(401);
    }
  });

  it('three devices pulling the queue at once: every item goes to exactly one device, as recorded', async () => {
    const devices: PairedDevice[] = [await pairDevice(t, { brandId }), await pairDevice(t, { brandId }), await pairDevice(t, { brandId })];
    const admin = { authorization: `Bearer ${t.runtime.deps.secrets.adminToken}` };
    for (let round = 0; round < ROUNDS; round++, races++) {
      const queued = await Promise.all(
        Array.from({ length: 12 }, (_, i) => t.request('POST', `/api/admin/v1/brands/${brandId}/outbound-sms`, { headers: admin, body: { phone: '+8801711111111', message: `r${round} #${i}` } })),
      );
      const ids = queued.map((r) => r.body.data.id as number).sort((x, y) => x - y);
      const results = await Promise.all(devices.map((d, i) => requestAt(urls()[i % 2]!, 'GET', `${DEVICE_API}/sms/queues`, { token: d.accessToken })));
      const got = results.flatMap((r) => r.body.data.map((x: { id: number }) => x.id as number));
      expect(new Set(got).size, `round ${round}`).toBe(got.length);
      expect([...got].sort((x, y) => x - y)).toEqual(ids);
      for (const [i, d] of devices.entries()) {
        const held = await t.sql<{ id: string }>('SELECT id FROM outbound_sms WHERE leased_by_device_id = $1 AND id = ANY($2) ORDER BY id', [d.deviceId, ids]);
        expect(held.map((r) => Number(r.id))).toEqual(results[i]!.body.data.map((x: { id: number }) => x.id).sort((x: number, y: number) => x - y));
      }
    }
  });

  it('two SMS with one gateway trx id on two instances: one completion, one payment.completed', async () => {
    const scene: SmsScene = { brandId, apiKey, device: await pairDevice(t, { brandId }), gateway };
    const other = await pairDevice(t, { brandId });
    for (let round = 0; round < ROUNDS; round++, races++) {
      const amount = `${400 + round}.00`;
      const trxId = newGatewayTrxId();
      const { transaction } = await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: trxId });
      const [x, y] = await Promise.all([
        forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, trxId) }]),
        forwardOn(second.baseUrl, other, smsBodies.bkash(amount, trxId)),
      ]);
      expect([x[0]!.match_status, y.match_status].sort(), `round ${round}`).toEqual(['duplicate', 'matched']);
      const [tx] = await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [transaction.id]);
      expect(tx!.status).toBe('completed');
      const matched = await t.sql("SELECT 1 FROM sms_records WHERE transaction_id = $1 AND match_status = 'matched'", [transaction.id]);
      expect(matched).toHaveLength(1);
      const events = await t.sql("SELECT 1 FROM webhook_events WHERE transaction_id = $1 AND event = 'payment.completed'", [transaction.id]);
      expect(events).toHaveLength(1);
    }
  });
});

async function forwardOn(baseUrl: string, device: PairedDevice, body: string) {
  const res = await requestAt(baseUrl, 'POST', `${DEVICE_API}/sms/messages`, {
    token: device.accessToken,
    body: { messages: [{ device_message_id: `other-${Date.now()}-${Math.random()}`, sender: 'bKash', body, received_at: new Date().toISOString() }] },
  });
  expect(res.status).toBe(200);
  return res.body.data[0] as { match_status: string };
}
