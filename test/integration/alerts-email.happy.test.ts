import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectOfflineDevices } from '../../server/domain/devices/presence.ts';
import { raiseAlert } from '../../server/domain/alerts/raise.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { startSmtpSink } from '../support/smtp-sink.ts';
import { waitFor } from '../support/wait.ts';
import { transaction } from '../../server/domain/db.ts';

const SMTP_PASS = 'smtp-secret-pass-7f3a9c';
let t: TestContext;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;

beforeAll(async () => {
  smtp = await startSmtpSink({ user: 'alerts', pass: SMTP_PASS });
  t = await startTestServer({ SMTP_URL: smtp.url, ALERT_EMAIL_TO: 'ops@example.com, oncall@example.com', ALERT_EMAIL_FROM: 'paycollect@example.com' });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const detect = () => detectOfflineDevices(t.runtime.deps.db);
const silence = (d: PairedDevice, minutes: number) => t.sql('UPDATE devices SET last_seen_at = now() - make_interval(mins => $1) WHERE id = $2', [minutes, d.deviceId]);
const alertsOf = (brandId: number, type: string) =>
  t.sql<{ id: string; status: string; attempts: number; last_error: string | null; dedupe_key: string }>(
    'SELECT id, status, attempts, last_error, dedupe_key FROM alerts WHERE brand_id = $1 AND type = $2 ORDER BY id',
    [brandId, type],
  );
const mailsFor = (text: string) => smtp.mails.filter((m) => m.raw.includes(text));

describe('operator alerts by e-mail', () => {
  it('a device going offline raises one alert per episode, delivered by SMTP to the operators', async () => {
    await detect();
    const d = await pairDevice(t, { name: 'Till phone' });
    await silence(d, 90);
    expect((await detect()).wentOffline).toBe(1);
    expect((await detect()).wentOffline).toBe(0);

    const delivered = await waitFor(() => alertsOf(d.brandId, 'device_offline'), (r) => r.length === 1 && r[0]!.status === 'delivered');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ status: 'delivered', attempts: 1, last_error: null });

    const mails = await waitFor(async () => mailsFor(d.deviceUuid), (m) => m.length === 1);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.from).toBe('paycollect@example.com');
    expect(mail.to.sort()).toEqual(['oncall@example.com', 'ops@example.com']);
    expect(mail.subject).toBe('[Paycollect alert] Device "Till phone" is offline');
    expect(mail.body).toContain('Alert: device_offline');
    expect(mail.body).toContain(`Brand: ${d.brandId}`);
    expect(mail.body).toContain(`device_uuid: ${d.deviceUuid}`);
    // No secret travels in the mail.
    expect(mail.raw).not.toContain(SMTP_PASS);

    // Back online, then silent again: a new episode, a new alert.
    expect((await deviceRequest(t, d, 'GET', '/notifications')).status).toBe(200);
    expect((await detect()).cameOnline).toBe(1);
    await silence(d, 90);
    expect((await detect()).wentOffline).toBe(1);
    const two = await waitFor(() => alertsOf(d.brandId, 'device_offline'), (r) => r.length === 2 && r.every((a) => a.status === 'delivered'));
    expect(two.map((a) => a.status)).toEqual(['delivered', 'delivered']);
    expect(new Set(two.map((a) => a.dedupe_key)).size).toBe(2);
    expect(await waitFor(async () => mailsFor(d.deviceUuid), (m) => m.length === 2)).toHaveLength(2);
  });

  it('raiseAlert drops a repeat of the same episode and rolls back with its transaction', async () => {
    const { brandId } = await t.createBrand('Dedupe brand');
    const input = { brandId, type: 'review_waiting' as const, dedupeKey: 'review:batch-1', subject: 'Payments wait for review', details: { waiting: 3 } };
    const em = t.runtime.deps.db;
    expect(await transaction(em, (tx) => raiseAlert(tx, input))).toMatchObject({ raised: true });
    expect(await transaction(em, (tx) => raiseAlert(tx, input))).toEqual({ raised: false, reason: 'duplicate' });
    await expect(
      transaction(em, async (tx) => {
        await raiseAlert(tx, { ...input, dedupeKey: 'review:batch-2' });
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    expect((await alertsOf(brandId, 'review_waiting')).map((a) => a.dedupe_key)).toEqual(['review:batch-1']);
    await expect(transaction(em, async () => undefined).then(() => raiseAlert(em, input))).rejects.toThrow(/must run inside a transaction/);
  });

  it('a type the brand switched off is not raised', async () => {
    const { brandId } = await t.createBrand('Quiet brand');
    await t.sql("INSERT INTO alert_brand_settings (brand_id, disabled_types) VALUES ($1, '{device_offline}')", [brandId]);
    const em = t.runtime.deps.db;
    const r = await transaction(em, (tx) => raiseAlert(tx, { brandId, type: 'device_offline', dedupeKey: 'device:x', subject: 'Device offline', details: {} }));
    expect(r).toEqual({ raised: false, reason: 'switched_off' });
    expect(await alertsOf(brandId, 'device_offline')).toEqual([]);
  });

  it('a refused delivery is recorded and retried; neither logs nor the row hold the SMTP password', async () => {
    const { brandId } = await t.createBrand('Retry brand');
    smtp.state.reject = true;
    try {
      const em = t.runtime.deps.db;
      await transaction(em, (tx) => raiseAlert(tx, { brandId, type: 'webhook_endpoint_disabled', dedupeKey: 'endpoint:1', subject: 'Webhook endpoint disabled', details: { endpoint_id: 1 } }));
      const failed = await waitFor(() => alertsOf(brandId, 'webhook_endpoint_disabled'), (r) => r[0]?.last_error != null);
      expect(failed[0]).toMatchObject({ status: 'pending', attempts: 1 });
      expect(failed[0]!.last_error).toMatch(/451/);
    } finally {
      smtp.state.reject = false;
    }
    // pg-boss retries after its backoff delay; the next attempt gets through.
    const ok = await waitFor(() => alertsOf(brandId, 'webhook_endpoint_disabled'), (r) => r[0]?.status === 'delivered', 30_000);
    expect(ok[0]).toMatchObject({ status: 'delivered', last_error: null });
    expect(ok[0]!.attempts).toBeGreaterThanOrEqual(2);
    expect(t.logs.join('\n')).not.toContain(SMTP_PASS);
    expect((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM alerts WHERE last_error LIKE $1`, [`%${SMTP_PASS}%`]))[0]!.n).toBe('0');
  }, 45_000);
});
