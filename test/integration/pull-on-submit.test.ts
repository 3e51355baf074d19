import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerFromInbox, inboxWindow, pollOnce, run, type InboxSms } from '../../scripts/device-sim.ts';
import { PaycollectDevice } from '../../clients/device/index.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { PHONE_CHECK_SECONDS } from '../../server/domain/recovery/backfill.ts';
import { loadMatchSettings } from '../../server/domain/sms/matching/service.ts';
import { retryBackfillRequests } from '../../server/domain/recovery/retry-backfill.job.ts';
import { newPairingCode } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { createPayment, seedGateway } from '../support/seed.ts';
import { creditTemplate, creditWithBalance, eventsOf, newGatewayTrxId, transactionRow } from '../support/sms-matching.ts';

/**
 * Pull-on-submit (docs/recovery.md), through the HTTP API and the device
 * simulator (device SDK only): the phone received the payment's SMS but never
 * forwarded it; the customer submits the TrxID at checkout; the service asks
 * the phone at once (a narrow backfill command and a push); the phone's loop
 * sees the push, re-sends from its inbox, and the payment completes without
 * an operator.
 */
let t: TestContext;
let dir: string;
let gateway: GatewayView;
const PAYER = '01712345515';

beforeAll(async () => {
  t = await startTestServer();
  dir = mkdtempSync(path.join(os.tmpdir(), 'pull-on-submit-'));
  gateway = await seedGateway(t, 'bkash', { sms_templates: [creditTemplate] });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
interface Shop {
  brandId: number;
  apiKey: string;
  state: string;
  deviceId: number;
  sim(...argv: string[]): Promise<any>;
  device(): PaycollectDevice;
  inbox(): InboxSms[];
}

/** A brand with one simulated phone, paired through the simulator. */
async function shop(name: string): Promise<Shop> {
  const { brandId, apiKey } = await t.createBrand(name);
  const state = path.join(dir, `state-${++n}.json`);
  const sim = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run([...argv, '--state', state, '--json'], { out: (l) => out.push(l), err: (l) => err.push(l) });
    expect(code, err.join('\n') + out.join('\n')).toBe(0);
    return JSON.parse(out.join('\n'));
  };
  const paired = await sim('pair', '--code', await newPairingCode(t, brandId), '--base-url', t.baseUrl, '--name', `${name} phone`);
  const [row] = await t.sql<{ id: string }>('SELECT id FROM devices WHERE uuid = $1', [paired.device_id]);
  const readState = () => JSON.parse(readFileSync(state, 'utf8'));
  return {
    brandId,
    apiKey,
    state,
    deviceId: Number(row!.id),
    sim,
    device: () => {
      const s = readState();
      return new PaycollectDevice({ baseUrl: t.baseUrl, fingerprint: s.fingerprint, tokens: s.tokens });
    },
    inbox: () => readState().inbox ?? [],
  } as Shop;
}

/** The phone receives an SMS; `missed`: the app never forwards it. */
async function receive(s: Shop, body: string, opts: { missed?: boolean; sender?: string; at?: Date } = {}) {
  const file = path.join(dir, `sms-${++n}.json`);
  writeFileSync(file, JSON.stringify([{ sender: opts.sender ?? 'bKash', body, received_at: (opts.at ?? new Date()).toISOString(), device_message_id: `inbox-${n}` }]));
  return s.sim('sms', '--file', file, ...(opts.missed ? ['--miss'] : []));
}

async function submit(paymentId: string, trxId: string) {
  return t.request('POST', `/api/checkout/v1/payments/${paymentId}/transactions`, { body: { gateway: gateway.code, gateway_trx_id: trxId, sender_number: PAYER } });
}

const requestsOf = (brandId: number) =>
  t.sql<{ id: string; device_id: string; reason: string; status: string; attempts: number; senders: string[] | null; window_from: Date; window_to: Date; resent_count: number | null }>(
    'SELECT id, device_id, reason, status, attempts, senders, window_from, window_to, resent_count FROM backfill_requests WHERE brand_id = $1 ORDER BY id',
    [brandId],
  );
const unreadOf = async (deviceId: number) => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM notifications WHERE device_id = $1 AND read_at IS NULL', [deviceId]))[0]!.n);
const checkout = async (paymentId: string) => (await t.request('GET', `/api/checkout/v1/payments/${paymentId}`)).body.data;
const page = async (paymentId: string) => (await fetch(`${t.baseUrl}/checkout/${paymentId}`)).text();

describe('pull-on-submit: the customer submits first and the phone had missed the SMS', () => {
  it('asks the phone at once (window, sender, push), the phone re-sends from its inbox and the payment completes without an operator', async () => {
    const s = await shop('Pull Shop');
    const payment = await createPayment(t, s.apiKey, { amount: '500.00' });
    const trx = newGatewayTrxId();
    // Another sender's SMS in the same minutes stays on the phone: the command names bKash only.
    await receive(s, 'Your OTP is 1234', { missed: true, sender: 'NAGAD' });
    const missed = await receive(s, creditWithBalance('500.00', trx, '1,500.00', PAYER), { missed: true });
    expect(missed.results[0]).toMatchObject({ forwarded: false, reason: 'missed' });

    const submitted = performance.now();
    const res = await submit(payment.payment_id, trx);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'awaiting_verification', phone_check_until: expect.any(String) });
    const until = Date.parse(res.body.data.phone_check_until);
    expect(until).toBeGreaterThan(Date.now() + (PHONE_CHECK_SECONDS - 10) * 1000);

    // One narrow request, nudged at once (attempt 1), with a push waiting on the phone.
    const [req] = await requestsOf(s.brandId);
    expect(req).toMatchObject({ device_id: String(s.deviceId), reason: 'payment_submitted', status: 'pending', attempts: 1, senders: ['bKash'] });
    const [intent] = await t.sql<{ created_at: Date }>('SELECT created_at FROM payment_intents WHERE uuid = $1', [payment.payment_id]);
    const { graceSeconds } = await loadMatchSettings(t.runtime.deps.db);
    expect(req!.window_from.getTime()).toBe(intent!.created_at.getTime() - graceSeconds * 1000);
    expect(req!.window_to.getTime()).toBeGreaterThan(Date.now() - 10_000);
    expect(await unreadOf(s.deviceId)).toBe(1);

    // The page says it is checking with the merchant's phone.
    expect(await page(payment.payment_id)).toContain('Checking with the merchant');

    // The command as the phone reads it: the window and the sender.
    const commands = await s.device().commands.list();
    expect(commands).toEqual([
      { id: Number(req!.id), type: 'backfill_sms', from: req!.window_from.toISOString(), to: req!.window_to.toISOString(), reason: 'payment_submitted', senders: ['bKash'], created_at: expect.any(String) },
    ]);

    // The phone's background loop: a push arrived, so it answers its commands from the inbox.
    const answered = await pollOnce(s.device(), s.inbox);
    const completed = performance.now();
    expect(answered).toHaveLength(1);
    const [done] = await requestsOf(s.brandId);
    expect(done).toMatchObject({ status: 'answered', resent_count: 1 });
    const tx = await t.sql<{ id: string }>('SELECT id FROM transactions WHERE gateway_trx_id = $1', [trx]);
    expect(await transactionRow(t, Number(tx[0]!.id))).toMatchObject({ status: 'completed', completion_source: 'sms' });
    expect(await eventsOf(t, Number(tx[0]!.id))).toEqual(['payment.completed']);
    expect(await checkout(payment.payment_id)).toMatchObject({ status: 'completed', transaction: { phone_check_until: null } });
    // The OTP of the other sender never left the phone.
    expect((await t.sql('SELECT 1 FROM sms_records WHERE device_id = $1', [s.deviceId])).length).toBe(1);
    console.log(`pull-on-submit: submit -> completed in ${(completed - submitted).toFixed(0)} ms (in-process, no push latency)`);
  });

  it('asks nothing when a stored SMS already proves the id: the payment completes on submission', async () => {
    const s = await shop('Proved Shop');
    const payment = await createPayment(t, s.apiKey, { amount: '420.00' });
    const trx = newGatewayTrxId();
    await receive(s, creditWithBalance('420.00', trx, '1,420.00', PAYER));
    const res = await submit(payment.payment_id, trx);
    expect(res.body.data).toMatchObject({ status: 'completed', phone_check_until: null });
    expect(await requestsOf(s.brandId)).toEqual([]);
    expect(await unreadOf(s.deviceId)).toBe(0);
  });

  it('deduplicates: submissions while the request is undelivered widen it with one push; once the phone read it, a new one is asked', async () => {
    const s = await shop('Busy Shop');
    const a = await createPayment(t, s.apiKey, { amount: '100.00' });
    const b = await createPayment(t, s.apiKey, { amount: '200.00' });
    const trxA = newGatewayTrxId();
    const trxB = newGatewayTrxId();
    await receive(s, creditWithBalance('100.00', trxA, '1,100.00', PAYER), { missed: true });
    await receive(s, creditWithBalance('200.00', trxB, '1,300.00', PAYER), { missed: true });
    expect((await submit(a.payment_id, trxA)).status).toBe(201);
    expect((await submit(b.payment_id, trxB)).status).toBe(201);
    const open = await requestsOf(s.brandId);
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ status: 'pending', attempts: 1, senders: ['bKash'] });
    expect(await unreadOf(s.deviceId)).toBe(1);
    // Both pages say checking.
    expect((await checkout(a.payment_id)).transaction.phone_check_until).not.toBeNull();
    expect((await checkout(b.payment_id)).transaction.phone_check_until).not.toBeNull();

    // The phone reads its commands (delivered); a third submission now gets its own request and push.
    await s.device().commands.list();
    const c = await createPayment(t, s.apiKey, { amount: '300.00' });
    const trxC = newGatewayTrxId();
    await receive(s, creditWithBalance('300.00', trxC, '1,600.00', PAYER), { missed: true });
    expect((await submit(c.payment_id, trxC)).status).toBe(201);
    expect((await requestsOf(s.brandId)).map((r) => r.status)).toEqual(['delivered', 'pending']);
    expect(await unreadOf(s.deviceId)).toBe(2);

    // One answer round completes all three.
    const answered = await pollOnce(s.device(), s.inbox);
    expect(answered).toHaveLength(2);
    for (const p of [a, b, c]) expect((await checkout(p.payment_id)).status).toBe('completed');
  });

  it('a phone that answers without the SMS ends the check: the page shows the ordinary waiting state, no error', async () => {
    const s = await shop('Empty Phone Shop');
    const payment = await createPayment(t, s.apiKey, { amount: '750.00' });
    const res = await submit(payment.payment_id, newGatewayTrxId());
    expect(res.body.data.phone_check_until).not.toBeNull();
    const answered = await answerFromInbox(s.device(), s.inbox());
    expect(answered).toHaveLength(1);
    expect((await requestsOf(s.brandId))[0]).toMatchObject({ status: 'answered', resent_count: 0 });
    expect(await checkout(payment.payment_id)).toMatchObject({ status: 'awaiting_verification', transaction: { phone_check_until: null } });
    const html = await page(payment.payment_id);
    expect(html).toContain('Waiting for verification');
    expect(html).not.toContain('Checking with the merchant');
  });

  it('an offline phone: the page stops saying "checking" after the wait, the sweep keeps nudging, and a late answer still completes the payment', async () => {
    const s = await shop('Offline Shop');
    const payment = await createPayment(t, s.apiKey, { amount: '333.00' });
    // Time moved back rather than waited for: the payment was made 200 s ago, the customer paid 100 s ago.
    await t.sql(`UPDATE payment_intents SET created_at = now() - interval '200 seconds' WHERE uuid = $1`, [payment.payment_id]);
    const trx = newGatewayTrxId();
    await receive(s, creditWithBalance('333.00', trx, '1,333.00', PAYER), { missed: true, at: new Date(Date.now() - 100_000) });
    await submit(payment.payment_id, trx);
    // The phone stays silent past the check's wait: the ask moved back by that wait.
    await t.sql(`UPDATE backfill_requests SET window_to = window_to - make_interval(secs => $2), next_attempt_at = now() WHERE brand_id = $1`, [s.brandId, PHONE_CHECK_SECONDS + 5]);
    expect(await checkout(payment.payment_id)).toMatchObject({ status: 'awaiting_verification', transaction: { phone_check_until: null } });
    expect(await page(payment.payment_id)).toContain('Waiting for verification');
    // The retry sweep nudges again (attempt 2); the request is still open.
    await retryBackfillRequests(t.runtime.deps.db, t.runtime.deps.crypto.pii);
    expect((await requestsOf(s.brandId))[0]).toMatchObject({ status: 'pending', attempts: 2 });
    // The phone comes back and answers: the payment completes.
    await pollOnce(s.device(), s.inbox);
    expect((await checkout(payment.payment_id)).status).toBe('completed');
  });

  it('a revoked phone is not asked: the submission waits for verification as before', async () => {
    const s = await shop('Revoked Shop');
    await t.sql(`UPDATE devices SET status = 'revoked', revoked_at = now() WHERE id = $1`, [s.deviceId]);
    const payment = await createPayment(t, s.apiKey, { amount: '610.00' });
    const res = await submit(payment.payment_id, newGatewayTrxId());
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'awaiting_verification', phone_check_until: null });
    expect(await requestsOf(s.brandId)).toEqual([]);
  });

  it('a replaced (mistyped) id asks the phone again for the new one', async () => {
    const s = await shop('Typo Shop');
    const payment = await createPayment(t, s.apiKey, { amount: '880.00' });
    const right = newGatewayTrxId();
    await receive(s, creditWithBalance('880.00', right, '1,880.00', PAYER), { missed: true });
    await submit(payment.payment_id, newGatewayTrxId());
    // The phone answers the first ask (nothing with that id), then the customer corrects the id.
    await answerFromInbox(s.device(), []);
    const res = await t.request('PUT', `/api/checkout/v1/payments/${payment.payment_id}/transaction/gateway-trx-id`, { body: { gateway_trx_id: right } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.phone_check_until).not.toBeNull();
    expect((await requestsOf(s.brandId)).map((r) => r.status)).toEqual(['answered', 'pending']);
    await pollOnce(s.device(), s.inbox);
    expect((await checkout(payment.payment_id)).status).toBe('completed');
  });

  it('device-sim watch (the background loop of the app) answers the push by itself', async () => {
    const s = await shop('Watch Shop');
    const payment = await createPayment(t, s.apiKey, { amount: '270.00' });
    const trx = newGatewayTrxId();
    await receive(s, creditWithBalance('270.00', trx, '1,270.00', PAYER), { missed: true });
    await submit(payment.payment_id, trx);
    const watched = await s.sim('watch', '--interval', '100', '--for', '1');
    expect(watched.answered).toEqual([expect.objectContaining({ reason: 'payment_submitted', senders: ['bKash'] })]);
    expect((await checkout(payment.payment_id)).status).toBe('completed');
    expect(await unreadOf(s.deviceId)).toBe(0);
  });

  it('the status stream says checking, then completed when the phone answers', async () => {
    const s = await shop('Stream Shop');
    const payment = await createPayment(t, s.apiKey, { amount: '990.00' });
    const trx = newGatewayTrxId();
    await receive(s, creditWithBalance('990.00', trx, '1,990.00', PAYER), { missed: true });
    await submit(payment.payment_id, trx);
    const abort = new AbortController();
    const res = await fetch(`${t.baseUrl}/api/checkout/v1/payments/${payment.payment_id}/status-stream`, { signal: abort.signal });
    const events: unknown[] = [];
    const reader = (async () => {
      const decoder = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true });
          for (const m of buf.matchAll(/^data: (.*)$/gm)) events.push(JSON.parse(m[1]!));
          buf = buf.slice(buf.lastIndexOf('\n\n') + 2);
        }
      } catch {
        /* aborted */
      }
    })();
    const until = Date.now() + 5000;
    while (events.length < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await pollOnce(s.device(), s.inbox);
    while (events.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    abort.abort();
    await reader;
    expect(events).toEqual([
      { status: 'awaiting_verification', terminal: false, checking_phone: true },
      { status: 'completed', terminal: true, checking_phone: false },
    ]);
  });
});

describe('the simulator answers a narrow command from its inbox', () => {
  it('keeps to the window and to the senders named (compared as the filter rules compare)', () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, s)).toISOString();
    const inbox: InboxSms[] = [
      { device_message_id: 'a', sender: 'bKash', body: 'You have received Tk 1.00 TrxID A', received_at: at(10) },
      { device_message_id: 'b', sender: 'NAGAD', body: 'You have received Tk 2.00 TrxID B', received_at: at(20) },
      { device_message_id: 'c', sender: 'BKASH', body: 'You have received Tk 3.00 TrxID C', received_at: at(30) },
      { device_message_id: 'd', sender: 'bKash', body: 'You have received Tk 4.00 TrxID D', received_at: at(50) },
    ];
    const rules = { version: 1, allowed_senders: ['bKash', 'NAGAD'], positive_keywords: [], negative_keywords: [], check_interval_hours: 24 };
    const w = { id: 1, from: new Date(at(0)), to: new Date(at(40)), reason: 'payment_submitted' as const, senders: ['bKash'] };
    expect(inboxWindow(inbox, w, rules as never).map((m) => m.device_message_id)).toEqual(['a', 'c']);
    expect(inboxWindow(inbox, { ...w, senders: null }, rules as never).map((m) => m.device_message_id)).toEqual(['a', 'b', 'c']);
  });
});
