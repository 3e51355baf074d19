import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, auditRows, runCli } from './admin-support.ts';
import { deviceRequest, pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { creditTemplate, creditWithBalance, eventsOf, forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsRow, smsScene, transactionRow, type SmsScene } from '../support/sms-matching.ts';
import { retryBackfillRequests, takeUnreportedBackfillFailures } from '../../server/domain/recovery/retry-backfill.job.ts';
import { MAX_BACKFILL_ATTEMPTS } from '../../server/domain/recovery/backfill.ts';
import { detectOfflineDevices } from '../../server/domain/devices/presence.ts';

/**
 * Nothing missed (docs/recovery.md): a pasted SMS takes the forwarded SMS's
 * path; backfill requests reach the phone as commands, are retried and
 * reported; a broken balance chain asks for the gap by itself.
 */
let t: TestContext;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const paste = (body: Record<string, unknown>, actor = 'alice') => adminRequest(t, 'POST', '/sms-records', body, { 'x-admin-actor': actor });
const em = () => t.runtime.deps.db;

describe('paste a missed SMS', () => {
  let scene: SmsScene;
  beforeAll(async () => {
    scene = await smsScene(t);
  });

  it('completes the payment it proves, marked pasted with the actor and operator name, audited; the phone copy later is a duplicate', async () => {
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '450.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const body = smsBodies.bkash('450.00', trxId, '01712345515');
    const res = await paste({ device_id: scene.device.deviceId, sender: 'bKash', body, received_at: new Date(Date.now() - 60_000).toISOString(), operator_name: 'Alice Rahman' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ match_status: 'matched', entry: 'pasted', entered_by: 'admin:alice', operator_name: 'Alice Rahman', transaction_id: transaction.id, device_id: scene.device.deviceId });
    expect(res.body.data.body).toBeUndefined();
    const [row] = await t.sql<{ entry: string; entered_by: string; operator_name: string }>('SELECT entry, entered_by, operator_name FROM sms_records WHERE id = $1', [res.body.data.id]);
    expect(row).toEqual({ entry: 'pasted', entered_by: 'admin:alice', operator_name: 'Alice Rahman' });
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');
    const audit = (await auditRows(t, 'sms_record.paste')).filter((a) => a.target_id === String(res.body.data.id));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'admin:alice', target_type: 'sms_record', brand_id: String(scene.brandId), after: { entry: 'pasted', match_status: 'matched', operator_name: 'Alice Rahman' } });
    expect(JSON.stringify(audit[0])).not.toContain(trxId);

    // The phone comes back and forwards the same SMS, with its own id and another time (and CRLF): a duplicate, no second match.
    const [copy] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: body.replace(/ /g, '  '), received_at: new Date(Date.now() - 30_000).toISOString() }]);
    expect(copy).toMatchObject({ match_status: 'duplicate', duplicate_of: res.body.data.id });
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
  });

  it('a pasted copy of an SMS the phone already forwarded is a duplicate', async () => {
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '120.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const body = smsBodies.bkash('120.00', trxId, '01712345515');
    const [first] = await forwardSms(t, scene.device, [{ sender: 'bKash', body }]);
    expect(first!.match_status).toBe('matched');
    const res = await paste({ device_id: scene.device.deviceId, sender: 'BKASH', body, received_at: new Date().toISOString() });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ match_status: 'duplicate', duplicate_of: first!.id, entry: 'pasted', operator_name: null });
    expect(await eventsOf(t, transaction.id)).toEqual(['payment.completed']);
  });

  it('text with no readable amount or id is stored as no_match with the reason', async () => {
    const res = await paste({ device_id: scene.device.deviceId, sender: 'bKash', body: 'Dear customer, your payment was received. Thank you.', received_at: new Date().toISOString() });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ match_status: 'no_match', reason_code: 'not_parsed', entry: 'pasted' });
    expect(res.body.data.reason).toMatch(/amount and a transaction id/);
  });

  it('bad input is a 400 naming the field; an unknown device is 404; nothing is stored', async () => {
    const before = Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records'))[0]!.n);
    const missing = await paste({ device_id: scene.device.deviceId, sender: 'bKash', received_at: new Date().toISOString() });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { field: string }) => e.field)).toContain('body');
    const badTime = await paste({ device_id: scene.device.deviceId, sender: 'bKash', body: 'x', received_at: 'yesterday' });
    expect(badTime.status).toBe(400);
    expect(badTime.body.errors.map((e: { field: string }) => e.field)).toContain('received_at');
    const unknown = await paste({ device_id: 999_999, sender: 'bKash', body: 'x', received_at: new Date().toISOString() });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0].code).toBe('DEVICE_NOT_FOUND');
    expect(Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records'))[0]!.n)).toBe(before);
  });
});

describe('paste for a revoked device', () => {
  it('is refused with 409 DEVICE_REVOKED naming device_id: nothing stored, the payment it would prove stays open', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '310.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const revoked = await adminRequest(t, 'POST', `/devices/${scene.device.deviceId}/revocations`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const before = Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records'))[0]!.n);
    const res = await paste({ device_id: scene.device.deviceId, sender: 'bKash', body: smsBodies.bkash('310.00', trxId, '01712345515'), received_at: new Date().toISOString() });
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ code: 'DEVICE_REVOKED', field: 'device_id' });
    expect(Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM sms_records'))[0]!.n)).toBe(before);
    expect((await transactionRow(t, transaction.id)).status).toBe('awaiting_verification');
    expect(await auditRows(t, 'sms_record.paste').then((rows) => rows.filter((a) => a.brand_id === String(scene.brandId)))).toHaveLength(0);
  });
});

describe('backfill requests', () => {
  let scene: SmsScene;
  beforeAll(async () => {
    scene = await smsScene(t);
  });
  const request = (deviceId: number, from: Date | string, to: Date | string) =>
    adminRequest(t, 'POST', `/devices/${deviceId}/backfill-requests`, { from: typeof from === 'string' ? from : from.toISOString(), to: typeof to === 'string' ? to : to.toISOString() }, { 'x-admin-actor': 'bob' });

  it.each([
    ['a window in the future', 60_000, 120_000, 'from'],
    ['a window ending in the future', -60_000, 60_000, 'to'],
    ['a reversed window', -60_000, -120_000, 'to'],
    ['a window longer than 7 days', -8 * 86_400_000, -1000, 'to'],
  ])('%s is a 400 naming the field, nothing stored', async (_name, fromMs, toMs, field) => {
    const before = Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM backfill_requests'))[0]!.n);
    const res = await request(scene.device.deviceId, new Date(Date.now() + fromMs), new Date(Date.now() + toMs));
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe('VALIDATION_ERROR');
    expect(res.body.errors[0].field).toBe(field);
    expect(Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM backfill_requests'))[0]!.n)).toBe(before);
  });

  it('an unknown device is 404, a revoked one 409 DEVICE_REVOKED, both naming device_id; nothing stored', async () => {
    const res = await request(999_999, new Date(Date.now() - 3_600_000), new Date(Date.now() - 60_000));
    expect(res.status).toBe(404);
    expect(res.body.errors[0]).toMatchObject({ code: 'DEVICE_NOT_FOUND', field: 'device_id' });
    const device = await pairDevice(t, { brandId: scene.brandId });
    expect((await adminRequest(t, 'POST', `/devices/${device.deviceId}/revocations`)).status).toBe(200);
    const refused = await request(device.deviceId, new Date(Date.now() - 3_600_000), new Date(Date.now() - 60_000));
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0]).toMatchObject({ code: 'DEVICE_REVOKED', field: 'device_id' });
    expect(await t.sql('SELECT id FROM backfill_requests WHERE device_id = $1', [device.deviceId])).toEqual([]);
  });

  it('reaches the phone as a command it polls and completes; another device cannot see or complete it', async () => {
    const from = new Date(Date.now() - 3_600_000);
    const to = new Date(Date.now() - 60_000);
    const res = await request(scene.device.deviceId, from, to);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.data.id;
    expect(res.body.data).toMatchObject({ status: 'pending', reason: 'manual', requested_by: 'admin:bob', from: from.toISOString(), to: to.toISOString(), attempts: 0 });
    expect((await auditRows(t, 'device.backfill_request')).some((a) => a.after?.backfill_request_id === id)).toBe(true);

    const other = await pairDevice(t, { brandId: scene.brandId });
    expect((await deviceRequest(t, other, 'GET', '/commands')).body.data).toEqual([]);
    const polled = await deviceRequest(t, scene.device, 'GET', '/commands');
    expect(polled.status).toBe(200);
    expect(polled.body.data).toEqual([{ id, type: 'backfill_sms', from: from.toISOString(), to: to.toISOString(), reason: 'manual', senders: null, created_at: expect.any(String) }]);
    expect((await adminRequest(t, 'GET', `/backfill-requests?device_id=${scene.device.deviceId}`)).body.data[0]).toMatchObject({ id, status: 'delivered', delivered_at: expect.any(String) });

    const foreign = await deviceRequest(t, other, 'POST', `/commands/${id}/complete`, { resent_count: 0 });
    expect(foreign.status).toBe(404);
    const badCount = await deviceRequest(t, scene.device, 'POST', `/commands/${id}/complete`, { resent_count: -1 });
    expect(badCount.status).toBe(400);
    expect(badCount.body.errors[0].field).toBe('resent_count');
    const done = await deviceRequest(t, scene.device, 'POST', `/commands/${id}/complete`, { resent_count: 3 });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ id, status: 'answered', resent_count: 3 });
    const again = await deviceRequest(t, scene.device, 'POST', `/commands/${id}/complete`, { resent_count: 9 });
    expect(again.body.data.resent_count).toBe(3);
    expect((await deviceRequest(t, scene.device, 'GET', '/commands')).body.data).toEqual([]);
  });

  it('an unanswered request is nudged with backoff, then failed, listed and reported once', async () => {
    const device = await pairDevice(t, { brandId: scene.brandId });
    const res = await request(device.deviceId, new Date(Date.now() - 3_600_000), new Date(Date.now() - 60_000));
    const id = res.body.data.id;
    const waits: number[] = [];
    for (let i = 1; i <= MAX_BACKFILL_ATTEMPTS; i++) {
      // The wait has passed.
      await t.sql("UPDATE backfill_requests SET next_attempt_at = now() - interval '1 second' WHERE id = $1", [id]);
      await retryBackfillRequests(em(), t.runtime.deps.crypto.pii);
      const [r] = await t.sql<{ attempts: number; status: string; wait: number }>('SELECT attempts, status, extract(epoch FROM next_attempt_at - updated_at)::int AS wait FROM backfill_requests WHERE id = $1', [id]);
      expect(r).toMatchObject({ attempts: i, status: 'pending' });
      waits.push(r!.wait);
      // Not due yet: a second sweep does nothing.
      await retryBackfillRequests(em(), t.runtime.deps.crypto.pii);
      expect((await t.sql<{ attempts: number }>('SELECT attempts FROM backfill_requests WHERE id = $1', [id]))[0]!.attempts).toBe(i);
    }
    expect(waits).toEqual([120, 240, 480, 960, 1920]);
    const nudges = await deviceRequest(t, device, 'GET', '/notifications');
    expect(nudges.body.data.filter((n: { title: string }) => n.title === 'Re-send missed SMS')).toHaveLength(MAX_BACKFILL_ATTEMPTS);

    await t.sql("UPDATE backfill_requests SET next_attempt_at = now() - interval '1 second' WHERE id = $1", [id]);
    expect(await retryBackfillRequests(em(), t.runtime.deps.crypto.pii)).toMatchObject({ failed: 1 });
    const failed = await adminRequest(t, 'GET', '/backfill-requests?status=failed');
    expect(failed.body.data.map((r: { id: number }) => r.id)).toContain(id);
    const reported = await takeUnreportedBackfillFailures(em());
    expect(reported.map((r) => r.id)).toContain(id);
    expect((await takeUnreportedBackfillFailures(em())).map((r) => r.id)).not.toContain(id);
  });
});

describe('automatic backfill when the balance chain breaks', () => {
  it('asks the phone for the window between the previous link and the breaking SMS', async () => {
    const { brandId } = await t.createBrand('Chain Gap Brand');
    const device = await pairDevice(t, { brandId });
    const sender = `bK${newGatewayTrxId('').slice(0, 6)}`;
    await seedGateway(t, 'bkash', { sms_senders: [sender], sms_templates: [creditTemplate] });
    const t0 = Date.now() - 120_000;
    const [first] = await forwardSms(t, device, [{ sender, body: creditWithBalance('100.00', newGatewayTrxId(), '1,000.00'), received_at: new Date(t0).toISOString() }]);
    // The SMS that brought the balance to 1,500.00 never arrived.
    const [breaking] = await forwardSms(t, device, [{ sender, body: creditWithBalance('300.00', newGatewayTrxId(), '1,800.00'), received_at: new Date(t0 + 60_000).toISOString() }]);
    expect(breaking!.match_status).toBe('balance_mismatch');
    const rows = await t.sql<{ reason: string; status: string; window_from: Date; window_to: Date }>('SELECT reason, status, window_from, window_to FROM backfill_requests WHERE device_id = $1', [device.deviceId]);
    expect(rows).toHaveLength(1);
    const firstTime = (await smsRow(t, first!.id)).sms_time!.getTime();
    const breakTime = (await smsRow(t, breaking!.id)).sms_time!.getTime();
    expect(rows[0]!.reason).toBe('balance_chain_break');
    expect(rows[0]!.window_from.getTime()).toBeLessThanOrEqual(firstTime);
    expect(rows[0]!.window_to.getTime()).toBeGreaterThanOrEqual(breakTime);
    // Another break inside the same open window asks nothing more.
    await forwardSms(t, device, [{ sender, body: creditWithBalance('50.00', newGatewayTrxId(), '5,000.00'), received_at: new Date(t0 + 61_000).toISOString() }]);
    expect(await t.sql('SELECT id FROM backfill_requests WHERE device_id = $1', [device.deviceId])).toHaveLength(1);
  });
});

describe('the CLI', () => {
  it('sms:paste, device:backfill and backfill:list', async () => {
    const scene = await smsScene(t);
    const trxId = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '75.00', status: 'awaiting_verification', gatewayTrxId: trxId });
    const pasted = await runCli(t, ['sms:paste', '--device', String(scene.device.deviceId), '--from', 'bKash', '--body', smsBodies.bkash('75.00', trxId, '01712345515'), '--operator-name', 'Carol', '--actor', 'carol', '--json']);
    expect(pasted.code, pasted.stderr).toBe(0);
    expect(pasted.json()).toMatchObject({ match_status: 'matched', entry: 'pasted', entered_by: 'admin:carol', operator_name: 'Carol' });
    expect((await transactionRow(t, transaction.id)).status).toBe('completed');

    const reversed = await runCli(t, ['device:backfill', '--device', String(scene.device.deviceId), '--from', new Date().toISOString(), '--to', new Date(Date.now() - 3_600_000).toISOString()]);
    expect(reversed.code).not.toBe(0);
    expect(reversed.stderr).toContain('to');
    const ok = await runCli(t, ['device:backfill', '--device', String(scene.device.deviceId), '--from', new Date(Date.now() - 3_600_000).toISOString(), '--to', new Date(Date.now() - 1000).toISOString(), '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ status: 'pending', reason: 'manual', device_id: scene.device.deviceId });
    const listed = await runCli(t, ['backfill:list', '--device', String(scene.device.deviceId), '--json']);
    expect(listed.json().map((r: { id: number }) => r.id)).toEqual([ok.json().id]);
  });
});

describe('automatic backfill after an offline spell or a heartbeat gap', () => {
  it('a device back online is asked for the time it was silent', async () => {
    const { brandId } = await t.createBrand('Offline Brand');
    const device = await pairDevice(t, { brandId });
    await detectOfflineDevices(em());
    await t.sql("UPDATE devices SET last_seen_at = now() - interval '3 hours' WHERE id = $1", [device.deviceId]);
    await detectOfflineDevices(em());
    // Marked offline "now"; pretend that happened two hours ago, an hour after it fell silent.
    await t.sql("UPDATE devices SET offline_since = now() - interval '2 hours' WHERE id = $1", [device.deviceId]);
    expect(await t.sql('SELECT id FROM backfill_requests WHERE device_id = $1', [device.deviceId])).toHaveLength(0);
    expect((await deviceRequest(t, device, 'GET', '/notifications')).status).toBe(200);
    await detectOfflineDevices(em());
    const rows = await t.sql<{ reason: string; silent_minutes: number; to_age: number }>(
      'SELECT reason, round(extract(epoch FROM now() - window_from) / 60)::int AS silent_minutes, extract(epoch FROM now() - window_to)::int AS to_age FROM backfill_requests WHERE device_id = $1',
      [device.deviceId],
    );
    expect(rows).toEqual([{ reason: 'offline', silent_minutes: 180, to_age: expect.any(Number) }]);
    expect(rows[0]!.to_age).toBeLessThan(60);
    // The phone sees it on its next poll.
    expect((await deviceRequest(t, device, 'GET', '/commands')).body.data).toMatchObject([{ type: 'backfill_sms', reason: 'offline' }]);
  });

  it('a heartbeat after a long gap asks for the gap; regular heartbeats ask nothing', async () => {
    const { brandId } = await t.createBrand('Heartbeat Brand');
    const device = await pairDevice(t, { brandId });
    expect((await deviceRequest(t, device, 'POST', '/devices/heartbeats', {})).status).toBe(200);
    expect((await deviceRequest(t, device, 'POST', '/devices/heartbeats', {})).status).toBe(200);
    expect(await t.sql('SELECT id FROM backfill_requests WHERE device_id = $1', [device.deviceId])).toHaveLength(0);
    await t.sql("UPDATE devices SET last_heartbeat_at = now() - interval '40 minutes' WHERE id = $1", [device.deviceId]);
    expect((await deviceRequest(t, device, 'POST', '/devices/heartbeats', {})).status).toBe(200);
    const rows = await t.sql<{ reason: string; gap: number }>('SELECT reason, round(extract(epoch FROM window_to - window_from) / 60)::int AS gap FROM backfill_requests WHERE device_id = $1', [device.deviceId]);
    expect(rows).toEqual([{ reason: 'heartbeat_gap', gap: 40 }]);
  });
});
