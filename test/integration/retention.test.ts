import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entities } from '../../server/domain/entities.ts';
import { enforceRetention, maintainAttemptPartitions } from '../../server/domain/retention/retention.ts';
import { expireSmsTextBatch } from '../../server/domain/retention/queries.ts';
import { loadConfig, ConfigError } from '../../server/config.ts';
import { createOrm } from '../../server/infra/database/orm.ts';
import { checkSchema, describeSchemaCheck } from '../../server/infra/database/schema-diff.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';
import { adminRequest } from './admin-support.ts';
import { RETENTION_QUEUE, retentionRegistration } from '../../server/domain/retention/retention.job.ts';
import { waitForJobFinished } from '../support/wait.ts';
import { startBoss } from '../../server/infra/jobs/boss.ts';
import { createGateway } from '../../server/domain/gateways/service.ts';
import { gatewayPresets } from '../support/seed.ts';

// Workers off: the retention runs here are the only ones, on this file's own database.
// Batches of 2 rows: every table below holds more than one batch of expired rows.
let t: TestContext;
let device: PairedDevice;
const BATCH = 2;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RETENTION_BATCH_SIZE: String(BATCH) });
  // The brand's phones may forward bKash's SMS; no template, so they are stored unparsed (`no_match`).
  await createGateway(t.runtime.deps.db, { ...gatewayPresets.bkash(), code: 'retention-senders', sms_senders: ['bKash'], sms_templates: [] });
  device = await pairDevice(t);
});
afterAll(() => t?.close());

const deps = () => ({ db: t.runtime.deps.db, logger: t.runtime.deps.logger, config: t.config });
const run = (now?: Date) => enforceRetention(deps(), now);
const one = async <T>(text: string, values?: unknown[]) => (await t.sql<T>(text, values))[0]!;

let seq = 0;
async function forwardSms(): Promise<number> {
  seq += 1;
  const res = await deviceRequest(t, device, 'POST', '/sms/messages', {
    messages: [{ device_message_id: `ret-${seq}-${Date.now()}`, sender: 'bKash', body: `You have received Tk 100.00 from 01712345678. TrxID RET${seq}X at 15/03/2024 14:32`, received_at: new Date().toISOString(), sim_slot: 0 }],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.data[0].id, JSON.stringify(res.body)).toEqual(expect.any(Number));
  return res.body.data[0].id as number;
}
const ageSms = (ids: number[], days: number) => t.sql(`UPDATE sms_records SET created_at = now() - make_interval(days => $2) WHERE id = ANY($1::bigint[])`, [ids, days]);

async function seedEvent(daysOld: number, delivery: { status: string; daysOld: number } | null, attemptsDaysOld: number[] = []): Promise<{ eventId: number; deliveryId: number | null }> {
  seq += 1;
  const e = await one<{ id: string }>(
    `INSERT INTO webhook_events (public_id, brand_id, event, payload, created_at) VALUES ($1, $2, 'payment.completed', '{}', now() - make_interval(days => $3)) RETURNING id`,
    [`evt_ret_${seq}_${Date.now()}`, device.brandId, daysOld],
  );
  if (!delivery) return { eventId: Number(e.id), deliveryId: null };
  const d = await one<{ id: string }>(
    `INSERT INTO webhook_deliveries (event_id, brand_id, url, status, created_at) VALUES ($1, $2, 'https://example.test/hook', $3, now() - make_interval(days => $4)) RETURNING id`,
    [e.id, device.brandId, delivery.status, delivery.daysOld],
  );
  let n = 0;
  for (const age of attemptsDaysOld) {
    await t.sql(`INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at) VALUES ($1, $2, 'https://example.test/hook', 'failure', now() - make_interval(days => $3))`, [d.id, ++n, age]);
  }
  return { eventId: Number(e.id), deliveryId: Number(d.id) };
}

const count = async (table: string, where = 'true', values: unknown[] = []) => Number((await one<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, values)).n);

describe('retention periods', () => {
  it('defaults an auditor accepts, and refuses periods that contradict each other', () => {
    const c = loadConfig({});
    expect([c.RETENTION_SMS_TEXT_DAYS, c.RETENTION_WEBHOOK_ATTEMPT_DAYS, c.RETENTION_WEBHOOK_DELIVERY_DAYS, c.RETENTION_EVENT_DAYS, c.RETENTION_RECOVERY_DAYS, c.RETENTION_AUDIT_DAYS]).toEqual([90, 90, 180, 400, 180, 2557]);
    expect(() => loadConfig({ RETENTION_EVENT_DAYS: '30' })).toThrow(/RETENTION_EVENT_DAYS: must be at least RETENTION_WEBHOOK_DELIVERY_DAYS/);
    expect(() => loadConfig({ RETENTION_AUDIT_DAYS: '30' })).toThrow(ConfigError);
    expect(() => loadConfig({ RETENTION_SMS_TEXT_DAYS: 'soon' })).toThrow(/RETENTION_SMS_TEXT_DAYS: must be a whole number of days/);
  });
});

describe('SMS text expiry', () => {
  it('drops sender and text of records past the period in bounded batches, keeps the evidence, and a second run changes nothing', async () => {
    const old = [await forwardSms(), await forwardSms(), await forwardSms()];
    const fresh = await forwardSms();
    await ageSms(old, 91);
    await ageSms([fresh], 89);
    const before = await t.sql<{ id: string; content_hash: string; match_status: string; parsed_trx_id: string | null }>('SELECT id, content_hash, match_status, parsed_trx_id FROM sms_records WHERE id = ANY($1::bigint[]) ORDER BY id', [old]);
    expect(before.every((r) => r.match_status !== 'pending')).toBe(true);

    // One statement touches at most its limit.
    expect(await expireSmsTextBatch(t.runtime.deps.db, 90, BATCH)).toBe(BATCH);
    const report = await run();
    expect(report.sms_text_expired).toBe(old.length - BATCH);

    const after = await t.sql<any>('SELECT id, sender, body_encrypted, text_expired_at, content_hash, match_status, parsed_trx_id FROM sms_records WHERE id = ANY($1::bigint[]) ORDER BY id', [[...old, fresh]]);
    for (const r of after.slice(0, 3)) {
      expect(r).toMatchObject({ sender: null, body_encrypted: null });
      expect(r.text_expired_at).toBeInstanceOf(Date);
    }
    // The evidence and the hash that recognises the same SMS again stay.
    expect(after.slice(0, 3).map((r: any) => [r.id, r.content_hash, r.match_status, r.parsed_trx_id])).toEqual(before.map((r) => [r.id, r.content_hash, r.match_status, r.parsed_trx_id]));
    expect(after[3]).toMatchObject({ text_expired_at: null });
    expect(after[3].sender).not.toBeNull();
    expect(after[3].body_encrypted).not.toBeNull();

    expect((await run()).sms_text_expired).toBe(0);
    // No text, no sender, no id of a record in what the job logged.
    const logged = t.logs.filter((l) => l.includes('retention run')).join('\n');
    expect(logged).toContain('"sms_text_expired":1');
    expect(logged).not.toMatch(/bKash|01712345678|RET\d/);
  });

  it('never expires a record matching has not read yet', async () => {
    const id = await forwardSms();
    await t.sql(`UPDATE sms_records SET created_at = now() - interval '200 days', match_status = 'pending' WHERE id = $1`, [id]);
    await run();
    expect(await one<{ text_expired_at: Date | null }>('SELECT text_expired_at FROM sms_records WHERE id = $1', [id])).toEqual({ text_expired_at: null });
  });

  it('an expired record still reads in the admin API, with its evidence and without its text', async () => {
    const id = await forwardSms();
    await ageSms([id], 120);
    await run();
    const res = await adminRequest(t, 'GET', `/sms-records/${id}?include=body`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ id, sender: null, text_expired_at: expect.any(String), match_status: expect.any(String) });
    expect(res.body.data.body).toBeUndefined();
    const list = await adminRequest(t, 'GET', `/sms-records?brand_id=${device.brandId}&per_page=100`);
    expect(list.status).toBe(200);
    const listed = list.body.data.find((r: { id: number }) => r.id === id);
    expect(listed).toMatchObject({ sender: null, text_expired_at: expect.any(String) });
    // A record with its text still reads it.
    const kept = await forwardSms();
    const keptRes = await adminRequest(t, 'GET', `/sms-records/${kept}?include=body`);
    expect(keptRes.body.data).toMatchObject({ sender: 'bKash', text_expired_at: null, body: expect.stringContaining('TrxID') });
  });

  it('the database refuses a record without text that is not marked expired', async () => {
    const id = await forwardSms();
    await expect(t.sql('UPDATE sms_records SET body_encrypted = NULL WHERE id = $1', [id])).rejects.toThrow(/sms_records_text_expired_check/);
  });
});

describe('webhook events, deliveries and attempts', () => {
  it('removes expired finished deliveries and events with what hangs on them, keeps open and newer ones', async () => {
    const oldEvent = await seedEvent(401, { status: 'success', daysOld: 401 }, [401, 401]);
    const oldEvent2 = await seedEvent(402, null);
    const oldEvent3 = await seedEvent(403, null);
    const openOld = await seedEvent(401, { status: 'retrying', daysOld: 401 });
    const newEvent = await seedEvent(100, { status: 'dead_letter', daysOld: 100 });
    const oldDelivery = await seedEvent(200, { status: 'success', daysOld: 181 });
    const oldDelivery2 = await seedEvent(200, { status: 'dead_letter', daysOld: 190 });
    const oldDelivery3 = await seedEvent(200, { status: 'success', daysOld: 185 });
    await t.sql(`INSERT INTO receipts (brand_id, event_id, kind, mode) VALUES ($1, $2, 'payment', 'live')`, [device.brandId, oldEvent.eventId]);

    const report = await run();
    expect(report.webhook_events_deleted).toBe(3);
    // The old event's own finished delivery is past the delivery period too: it goes first, by itself.
    expect(report.webhook_deliveries_deleted).toBe(4);
    expect(await count('webhook_events', 'id = ANY($1::bigint[])', [[oldEvent.eventId, oldEvent2.eventId, oldEvent3.eventId]])).toBe(0);
    expect(await count('webhook_deliveries', 'id = ANY($1::bigint[])', [[oldEvent.deliveryId, oldDelivery.deliveryId, oldDelivery2.deliveryId, oldDelivery3.deliveryId]])).toBe(0);
    expect(await count('webhook_attempts', 'delivery_id = $1', [oldEvent.deliveryId])).toBe(0);
    expect(await count('receipts', 'event_id = $1', [oldEvent.eventId])).toBe(0);
    // A delivery still retrying keeps its event, however old; newer ones stay.
    expect(await count('webhook_events', 'id = ANY($1::bigint[])', [[openOld.eventId, newEvent.eventId, oldDelivery.eventId]])).toBe(3);
    expect(await count('webhook_deliveries', 'id = ANY($1::bigint[])', [[openOld.deliveryId, newEvent.deliveryId]])).toBe(2);

    const again = await run();
    expect([again.webhook_events_deleted, again.webhook_deliveries_deleted, again.webhook_attempts_deleted]).toEqual([0, 0, 0]);
  });

  it('attempts of the default partition (rows from before partitioning) expire by batched delete', async () => {
    const { deliveryId } = await seedEvent(10, { status: 'retrying', daysOld: 10 }, [95, 94, 93, 91, 5]);
    const inDefault = await count('webhook_attempts_default', 'delivery_id = $1', [deliveryId]);
    expect(inDefault).toBe(4 + (await count('webhook_attempts_default', 'delivery_id = $1 AND requested_at > now() - interval \'6 days\'', [deliveryId])));
    const report = await run();
    expect(report.webhook_attempts_deleted).toBe(4);
    expect(await count('webhook_attempts', 'delivery_id = $1', [deliveryId])).toBe(1);
  });
});

describe('webhook attempt partitions', () => {
  const partitions = async () => (await t.sql<{ name: string }>(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'webhook_attempts'::regclass ORDER BY 1`)).map((r) => r.name);

  it('creates months ahead, routes attempts into them, drops a month once all of it is past the period, and the schema check still passes', async () => {
    const db = t.runtime.deps.db;
    const march = new Date('2031-03-15T12:00:00Z');
    const made = await maintainAttemptPartitions(db, 90, march);
    expect(made.created).toEqual(['webhook_attempts_p203103', 'webhook_attempts_p203104', 'webhook_attempts_p203105']);
    expect(await partitions()).toEqual(expect.arrayContaining(['webhook_attempts_default', ...made.created]));
    // Idempotent.
    expect(await maintainAttemptPartitions(db, 90, march)).toEqual({ created: [], dropped: [], skipped: [] });

    const { deliveryId } = await seedEvent(1, { status: 'retrying', daysOld: 1 });
    await t.sql(`INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at) VALUES ($1, 1, 'u', 'failure', '2031-03-20T00:00:00Z'), ($1, 2, 'u', 'failure', '2031-05-02T00:00:00Z')`, [deliveryId]);
    const where = await t.sql<{ attempt: number; part: string }>('SELECT attempt, tableoid::regclass::text AS part FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt', [deliveryId]);
    expect(where).toEqual([{ attempt: 1, part: 'webhook_attempts_p203103' }, { attempt: 2, part: 'webhook_attempts_p203105' }]);

    // On 2031-08-01 the cutoff of 90 days is 2031-05-03: March and April are wholly past it, May is not.
    const august = await maintainAttemptPartitions(db, 90, new Date('2031-08-01T00:00:00Z'));
    expect(august.dropped.sort()).toEqual(['webhook_attempts_p203103', 'webhook_attempts_p203104']);
    expect(august.created).toEqual(['webhook_attempts_p203108', 'webhook_attempts_p203109', 'webhook_attempts_p203110']);
    expect(await t.sql('SELECT attempt FROM webhook_attempts WHERE delivery_id = $1', [deliveryId])).toEqual([{ attempt: 2 }]);

    // The job's months are no schema drift: the entity declares the partitioning and its default partition.
    const orm = await createOrm({ url: t.config.DATABASE_URL!, entities, poolMax: 1 });
    try {
      const check = await checkSchema(orm);
      expect(check.ok, describeSchemaCheck(check)).toBe(true);
    } finally {
      await orm.close();
    }
  });

  it('leaves a month to the default partition when it already holds rows of it', async () => {
    const { deliveryId } = await seedEvent(1, { status: 'retrying', daysOld: 1 });
    await t.sql(`INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at) VALUES ($1, 1, 'u', 'failure', '2032-01-10T00:00:00Z')`, [deliveryId]);
    const made = await maintainAttemptPartitions(t.runtime.deps.db, 90, new Date('2032-01-20T00:00:00Z'));
    expect(made.skipped).toEqual(['webhook_attempts_p203201']);
    expect(made.created).toEqual(['webhook_attempts_p203202', 'webhook_attempts_p203203']);
    expect(await one('SELECT tableoid::regclass::text AS part FROM webhook_attempts WHERE delivery_id = $1', [deliveryId])).toEqual({ part: 'webhook_attempts_default' });
  });

  it('the delivery engine records an attempt and its abandoned twin on the partitioned key', async () => {
    const { deliveryId } = await seedEvent(1, { status: 'retrying', daysOld: 1 });
    const at = '2026-06-01 10:00:00.123456+00';
    await t.sql(`INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at) VALUES ($1, 1, 'u', 'abandoned', $2)`, [deliveryId, at]);
    await expect(t.sql(`INSERT INTO webhook_attempts (delivery_id, attempt, url, outcome, requested_at) VALUES ($1, 1, 'u', 'failure', $2)`, [deliveryId, at])).rejects.toThrow(/webhook_attempts_delivery_id_attempt_key|duplicate key/);
  });
});

describe('messages to and from phones', () => {
  it('removes push notifications and finished outbound SMS past the SMS text period; queued outbound SMS stay', async () => {
    const note = (days: number) => t.sql(`INSERT INTO notifications (device_id, title, body, created_at) VALUES ($1, 't', 'b', now() - make_interval(days => $2))`, [device.deviceId, days]);
    await note(91);
    await note(95);
    await note(120);
    await note(10);
    const out = (status: string, days: number) =>
      t.sql(`INSERT INTO outbound_sms (brand_id, phone_encrypted, message_encrypted, status, expires_at, created_at) VALUES ($1, 'p', 'm', $2, now() + interval '1 day', now() - make_interval(days => $3))`, [device.brandId, status, days]);
    await out('delivered', 91);
    await out('failed', 100);
    await out('expired', 100);
    await out('pending', 100);
    await out('sent', 5);
    const report = await run();
    expect(report.notifications_deleted).toBe(3);
    expect(report.outbound_sms_deleted).toBe(3);
    expect(await count('notifications', 'device_id = $1', [device.deviceId])).toBe(1);
    expect(await t.sql('SELECT status FROM outbound_sms WHERE brand_id = $1 ORDER BY status', [device.brandId])).toEqual([{ status: 'pending' }, { status: 'sent' }]);
  });
});

describe('recovery rows and the audit log', () => {
  it('removes finished backfill requests and idle sequence counters past the period; never removes audit rows, only counts them', async () => {
    const ins = (status: string, days: number) =>
      t.sql(`INSERT INTO backfill_requests (brand_id, device_id, window_from, window_to, reason, status, created_at) VALUES ($1, $2, now() - interval '2 hours', now() - interval '1 hour', 'manual', $3, now() - make_interval(days => $4))`, [device.brandId, device.deviceId, status, days]);
    await ins('answered', 181);
    await ins('failed', 200);
    await ins('answered', 190);
    await ins('pending', 300);
    await ins('answered', 10);
    for (const [epoch, days] of [['e-old-1', 181], ['e-old-2', 182], ['e-old-3', 183], ['e-new', 3]] as const) {
      await t.sql(`INSERT INTO sms_sequence_counters (device_id, sim_slot, epoch, highest, last_seen_at) VALUES ($1, 0, $2, 5, now() - make_interval(days => $3))`, [device.deviceId, epoch, days]);
    }
    // An audit row from eight years ago: the service's role cannot remove it, and the job does not try.
    await t.sql(`ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only`);
    await t.sql(`INSERT INTO audit_log (actor, action, target_type, created_at) VALUES ('admin', 'brand.update', 'brand', now() - interval '8 years')`);
    await t.sql(`ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only`);
    const auditBefore = await count('audit_log');

    const report = await run();
    expect(report.backfill_requests_deleted).toBe(3);
    expect(report.sequence_counters_deleted).toBe(3);
    expect(await count('backfill_requests', 'device_id = $1', [device.deviceId])).toBe(2);
    expect(await t.sql('SELECT epoch FROM sms_sequence_counters WHERE device_id = $1', [device.deviceId])).toEqual([{ epoch: 'e-new' }]);
    expect(report.audit_rows_past_retention).toBe(1);
    expect(await count('audit_log')).toBe(auditBefore);
    expect(t.logs.some((l) => l.includes('audit rows are past RETENTION_AUDIT_DAYS'))).toBe(true);
  });
});

describe('a step that cannot run', () => {
  it('a partition change that cannot get the table lock fails only itself: the other tables are done, the run fails naming it', async () => {
    const id = await forwardSms();
    await ageSms([id], 100);
    // A long transaction reading the attempts holds a lock that creating a partition must wait for.
    const pg = await import('pg');
    const holder = new pg.default.Client({ connectionString: t.config.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE webhook_attempts IN ACCESS SHARE MODE');
      await expect(run(new Date('2035-06-15T00:00:00Z'))).rejects.toThrow('retention failed: webhook_attempt_partitions');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(await one<{ text_expired_at: Date | null }>('SELECT text_expired_at FROM sms_records WHERE id = $1', [id])).toEqual({ text_expired_at: expect.any(Date) });
    expect(t.logs.some((l) => l.includes('retention step failed') && l.includes('"step":"webhook_attempt_partitions"'))).toBe(true);
  });
});

describe('the retention job', () => {
  it('is scheduled hourly on its exclusive queue, and a run sent to it completes', async () => {
    // A queue instance as a worker process has it (this test server is the api role, whose
    // pg-boss keeps no LISTEN wake-up: its 60 s poll would outlast the wait).
    const boss = await startBoss({ url: t.runtime.deps.config.DATABASE_URL!, logger: t.runtime.deps.logger, background: true });
    const registration = retentionRegistration();
    expect(registration.queue.policy).toBe('exclusive');
    await boss.createQueue(registration.queue.name, registration.queue);
    const started = await registration.start!({ ...t.runtime.deps, boss });
    try {
      expect((await boss.getSchedules()).map((s) => [s.name, s.cron])).toContainEqual([RETENTION_QUEUE, '41 * * * *']);
      const id = await boss.send(RETENTION_QUEUE, {});
      const job = await waitForJobFinished(boss, RETENTION_QUEUE, id!);
      expect(job?.state).toBe('completed');
    } finally {
      await started.stop();
      await boss.stop({ graceful: false, close: true });
    }
  });
});
