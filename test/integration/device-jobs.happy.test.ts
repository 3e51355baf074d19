import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DETECT_OFFLINE_SWEEP } from '../../server/domain/devices/detect-offline-devices.job.ts';
import { enqueueOutboundSms } from '../../server/domain/outbound-sms/service.ts';
import { OUTBOUND_SMS_SWEEP } from '../../server/domain/outbound-sms/sweep-outbound-sms.job.ts';
import { MINUTE_SWEEPS_QUEUE, runMinuteSweepsNow } from '../../server/infra/jobs/scheduled.ts';
import { jobRegistrations } from '../../server/domain/jobs.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { pairDevice } from '../support/device.ts';
import { waitFor, waitForJobFinished } from '../support/wait.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'true' });
});
afterAll(() => t?.close());

describe('device background jobs run through the job queue', () => {
  it('both sweeps run every minute, with the other minute sweeps', async () => {
    const minute = jobRegistrations().find((r) => r.queue.name === MINUTE_SWEEPS_QUEUE);
    expect(minute).toBeDefined();
    const schedules = await t.runtime.deps.boss.getSchedules();
    expect(schedules.filter((s) => s.name === MINUTE_SWEEPS_QUEUE).map((s) => s.cron)).toEqual(['* * * * *']);
    // Each sweep answers to its name in an on-demand run: an unknown name would fail the job.
    for (const name of [DETECT_OFFLINE_SWEEP, OUTBOUND_SMS_SWEEP]) {
      const id = await runMinuteSweepsNow(t.runtime.deps.boss, [name]);
      const job = await waitForJobFinished(t.runtime.deps.boss, MINUTE_SWEEPS_QUEUE, id);
      expect(job?.state).toBe('completed');
    }
  });

  it('a presence sweep job marks a silent device offline and records its event', async () => {
    const d = await pairDevice(t);
    await t.sql("UPDATE devices SET last_seen_at = now() - interval '2 hours' WHERE id = $1", [d.deviceId]);
    await runMinuteSweepsNow(t.runtime.deps.boss, [DETECT_OFFLINE_SWEEP]);
    const online = await waitFor(
      async () => (await t.sql<any>('SELECT online FROM devices WHERE id = $1', [d.deviceId]))[0].online,
      (v) => v === false,
    );
    expect(online).toBe(false);
    const events = await t.sql<any>("SELECT event FROM webhook_events WHERE brand_id = $1 AND event LIKE 'device.%'", [d.brandId]);
    expect(events).toEqual([{ event: 'device.offline' }]);
  });

  it('an outbound SMS sweep job expires items past their time to live', async () => {
    const d = await pairDevice(t);
    const { id } = await enqueueOutboundSms(t.runtime.deps.db, t.runtime.deps.crypto.pii, { brandId: d.brandId, phone: '01712345678', message: 'x' });
    await t.sql("UPDATE outbound_sms SET expires_at = now() - interval '1 second' WHERE id = $1", [id]);
    await runMinuteSweepsNow(t.runtime.deps.boss, [OUTBOUND_SMS_SWEEP]);
    const status = await waitFor(
      async () => (await t.sql<any>('SELECT status FROM outbound_sms WHERE id = $1', [id]))[0].status,
      (v) => v === 'expired',
    );
    expect(status).toBe('expired');
  });
});
