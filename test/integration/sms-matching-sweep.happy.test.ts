import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPendingSmsSweep } from '../../server/domain/sms/matching/match-pending-sms.job.ts';
import { ingestSmsBatch } from '../../server/domain/sms/intake/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, transactionRow } from '../support/sms-matching.ts';

let t: TestContext;

beforeAll(async () => {
  // Workers off: this file runs the sweep itself, so the scheduled one cannot race it.
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

/** Stores SMS the way intake does when its matching failed: left `pending`. */
async function storeUnmatched(scene: Awaited<ReturnType<typeof smsScene>>, bodies: string[]): Promise<number[]> {
  const deps = { cipher: t.runtime.deps.crypto.pii, hashKey: t.runtime.deps.crypto.blindIndexKey };
  const stored = await ingestSmsBatch(
    t.runtime.deps.db,
    deps,
    { brandId: scene.brandId, deviceId: scene.device.deviceId },
    bodies.map((body, i) => ({ deviceMessageId: `sweep-${Date.now()}-${i}`, sender: 'bKash', body, receivedAt: new Date(), simSlot: null })),
  );
  expect(stored.map((r) => r.matchStatus)).toEqual(bodies.map(() => 'pending'));
  return stored.map((r) => r.id);
}

describe('the sweep decides records intake left pending', () => {
  it('matches them, and a record that fails again does not hold up the others', async () => {
    const scene = await smsScene(t);
    const id = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '640.00', status: 'awaiting_verification', gatewayTrxId: id });
    const [broken, good, none] = await storeUnmatched(scene, [
      smsBodies.bkash('10.00', newGatewayTrxId()),
      smsBodies.bkash('640.00', id),
      smsBodies.bkash('641.00', newGatewayTrxId()),
    ]);
    // A body that can no longer be decrypted (say, a retired key): matching it throws.
    await t.sql("UPDATE sms_records SET body_encrypted = 'v1.gone.AAAA.AAAA.AAAA' WHERE id = $1", [broken]);

    expect(await runPendingSmsSweep(t.runtime.deps, { minAgeSeconds: 0 })).toEqual({ decided: 2, failed: 1 });
    expect(await smsRow(t, good!)).toMatchObject({ match_status: 'matched', transaction_id: String(transaction.id) });
    expect((await smsRow(t, none!)).match_status).toBe('no_candidate');
    expect((await smsRow(t, broken!)).match_status).toBe('pending');
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    expect(t.logs.some((l) => l.includes('SMS matching sweep: record left pending') && l.includes(`"sms_record_id":${broken}`))).toBe(true);

    // Nothing left but the broken one; a second run decides nothing new.
    expect(await runPendingSmsSweep(t.runtime.deps, { minAgeSeconds: 0 })).toEqual({ decided: 0, failed: 1 });
  });

  it('leaves records younger than the minimum age to intake', async () => {
    const scene = await smsScene(t);
    const [fresh] = await storeUnmatched(scene, [smsBodies.bkash('650.00', newGatewayTrxId())]);
    await t.sql("DELETE FROM sms_records WHERE match_status = 'pending' AND id <> $1", [fresh]);
    expect(await runPendingSmsSweep(t.runtime.deps, { minAgeSeconds: 60 })).toEqual({ decided: 0, failed: 0 });
    expect((await smsRow(t, fresh!)).match_status).toBe('pending');
  });
});
