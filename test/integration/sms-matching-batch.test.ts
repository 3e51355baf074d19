import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway, seedSetting } from '../support/seed.ts';
import { paymentEventData } from '../../server/domain/payments/view.ts';
import { waitForLockWaiters } from '../support/wait.ts';
import {
  creditTemplate,
  creditWithBalance,
  eventsOf,
  forwardSms,
  newGatewayTrxId,
  sendMoneyTemplate,
  sendMoneyWithBalance,
  seedPayment,
  smsBodies,
  smsRow,
  smsScene,
  transactionRow,
  type OutgoingSms,
  type SmsScene,
} from '../support/sms-matching.ts';

/**
 * A request's SMS are decided together, in one transaction with their reads
 * and locks taken for all of them at once (server/domain/sms/matching/batch-reads.ts).
 * What must not change: each SMS ends exactly as it would had the phone
 * forwarded them one by one in the order it received them. Each scenario is
 * played on two phones of two brands with the same payments, one SMS per
 * request on the first and as one batch on the second, and every decision is
 * compared: status, reason, balance chain (state, previous link, expected
 * balance), the transaction completed and the candidates, position for
 * position.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off' });
});
afterAll(() => t?.close());

/** A brand with a phone and a gateway whose sender is its own, reading balances and money out. */
async function chainScene(): Promise<SmsScene & { sender: string }> {
  const { brandId, apiKey } = await t.createBrand('Batch Brand');
  const device = await pairDevice(t, { brandId });
  const sender = `bK${newGatewayTrxId('').slice(0, 6)}`;
  const gateway = await seedGateway(t, 'bkash', { sms_senders: [sender], sms_templates: [creditTemplate, sendMoneyTemplate] });
  return { brandId, apiKey, device, gateway, sender };
}

/** Deterministic pseudo-random numbers (mulberry32): a failing seed replays. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Step =
  | { kind: 'credit'; amount: string; balance: string; claim: 'exact' | 'other_amount' | 'none'; trx: number }
  | { kind: 'out'; amount: string; balance: string };

const money = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

/** A phone's SMS: credits and debits whose balances mostly follow, some forged, some received out of order, an id twice. */
function scenario(seed: number): { steps: Step[]; offsets: number[] } {
  const r = rng(seed);
  const n = 3 + Math.floor(r() * 6);
  let balance = 100_000 + Math.floor(r() * 50_000);
  const steps: Step[] = [];
  for (let i = 0; i < n; i++) {
    const amount = 10_000 + Math.floor(r() * 90_000);
    if (r() < 0.2) {
      balance -= amount + 500;
      steps.push({ kind: 'out', amount: money(amount), balance: money(balance) });
      continue;
    }
    balance += amount;
    // Now and then a forged balance, which breaks the chain from here on.
    const shown = r() < 0.15 ? balance + 100 + Math.floor(r() * 1000) : balance;
    const claim = r() < 0.7 ? 'exact' : r() < 0.5 ? 'other_amount' : 'none';
    // Now and then the id of an earlier credit again (a second SMS for one payment).
    const earlier = steps.findIndex((s) => s.kind === 'credit');
    const trx = earlier >= 0 && r() < 0.15 ? (steps[earlier] as { trx: number }).trx : i;
    steps.push({ kind: 'credit', amount: money(amount), balance: money(shown), claim, trx });
  }
  // Received order: mostly as listed, sometimes two neighbours swapped (the phone got them the other way round).
  const offsets = steps.map((_, i) => i * 1000);
  for (let i = 0; i + 1 < offsets.length; i++) {
    if (r() < 0.25) [offsets[i], offsets[i + 1]] = [offsets[i + 1]!, offsets[i]!];
  }
  return { steps, offsets };
}

/** Plays the scenario on a fresh phone; `batched` sends all SMS in one request, else one per request in received order. */
async function play(steps: Step[], offsets: number[], batched: boolean) {
  const scene = await chainScene();
  const trxIds = new Map<number, string>();
  const trxOf = (n: number) => trxIds.get(n) ?? (trxIds.set(n, newGatewayTrxId()), trxIds.get(n)!);
  const transactionIds: number[] = [];
  for (const s of steps) {
    if (s.kind !== 'credit' || s.claim === 'none' || trxIds.has(s.trx)) continue;
    const amount = s.claim === 'exact' ? s.amount : money(Math.round(Number(s.amount) * 100) + 100);
    const { transaction } = await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: trxOf(s.trx) });
    transactionIds.push(transaction.id);
  }
  const base = Date.now() - 120_000;
  const messages: OutgoingSms[] = steps.map((s, i) => ({
    sender: scene.sender,
    body: s.kind === 'credit' ? creditWithBalance(s.amount, trxOf(s.trx), s.balance) : sendMoneyWithBalance(s.amount, '01812345678', s.balance),
    received_at: new Date(base + offsets[i]!).toISOString(),
  }));
  let ids: number[];
  if (batched) {
    ids = (await forwardSms(t, scene.device, messages)).map((a) => a.id);
  } else {
    ids = new Array<number>(messages.length);
    const order = messages.map((_, i) => i).sort((a, b) => offsets[a]! - offsets[b]! || a - b);
    for (const i of order) ids[i] = (await forwardSms(t, scene.device, [messages[i]!]))[0]!.id;
  }
  const position = (id: string | number | null) => (id === null ? null : ids.indexOf(Number(id)));
  const txPosition = (id: string | number | null) => (id === null ? null : transactionIds.indexOf(Number(id)));
  // SELECT *: the row has every column, also those SmsRow does not name.
  const rows = (await Promise.all(ids.map((id) => smsRow(t, id)))) as Array<Awaited<ReturnType<typeof smsRow>> & { chain_expected_balance: string | null; sms_time: Date | null }>;
  const decisions = rows.map((row) => ({
    status: row.match_status,
    reason_code: row.reason_code,
    // Ids differ between the two phones: each trx id as its place in the scenario, other numbers (record and transaction ids) as #.
    reason: [...trxIds].reduce((text, [n, id]) => text.replaceAll(id, `trx-${'abcdefghijklmnop'[n]}`), row.reason ?? '').replace(/\d+/g, '#'),
    chain_state: row.chain_state,
    chain_previous: position(row.chain_previous_id),
    chain_expected_balance: row.chain_expected_balance,
    transaction: txPosition(row.transaction_id),
    candidates: (row.candidate_ids ?? []).map(txPosition),
    suggestions: (row.suggestions ?? []).length,
  }));
  const transactions = await Promise.all(transactionIds.map(async (id) => ({ status: (await transactionRow(t, id)).status, events: await eventsOf(t, id) })));
  const head = await t.sql<{ last_record_id: string | null; last_balance: string | null; broken: boolean }>(
    'SELECT last_record_id, last_balance, broken FROM sms_balance_chains WHERE device_id = $1',
    [scene.device.deviceId],
  );
  // Decided by one database transaction when batched (not one by one after a failed batch), else by one each.
  const writers = await t.sql<{ n: number }>('SELECT count(DISTINCT xmin::text)::int AS n FROM sms_records WHERE id = ANY($1::bigint[])', [ids]);
  expect(writers[0]!.n).toBe(batched ? 1 : ids.length);
  return { decisions, transactions, head: head.map((h) => ({ last: position(h.last_record_id), balance: h.last_balance, broken: h.broken })) };
}

describe('a batch decides each SMS as one by one would', () => {
  it.each(Array.from({ length: 12 }, (_, i) => 101 + i))('scenario %i: same statuses, reasons, chain links, completions and events', async (seed) => {
    const { steps, offsets } = scenario(seed);
    const single = await play(steps, offsets, false);
    const batch = await play(steps, offsets, true);
    expect(batch).toEqual(single);
    // Each completed payment has exactly one completion event, and only proved payments completed.
    for (const tx of batch.transactions) expect(tx.events).toEqual(tx.status === 'completed' ? ['payment.completed'] : []);
    expect(batch.decisions.every((d) => d.status !== 'pending')).toBe(true);
  });

  it('the same id twice in one batch: the first completes, the second is a duplicate naming it', async () => {
    const scene = await smsScene(t);
    const id = newGatewayTrxId();
    const p = await seedPayment(t, scene, { amount: '610.00', status: 'awaiting_verification', gatewayTrxId: id });
    const at = Date.now() - 60_000;
    const answers = await forwardSms(t, scene.device, [
      { sender: 'bKash', body: smsBodies.bkash('610.00', id), received_at: new Date(at).toISOString() },
      { sender: 'bKash', body: smsBodies.bkash('610.00', id, '01712345999'), received_at: new Date(at + 1000).toISOString() },
    ]);
    expect(answers.map((a) => a.match_status)).toEqual(['matched', 'duplicate']);
    const second = await smsRow(t, answers[1]!.id);
    expect(second).toMatchObject({ reason_code: 'duplicate_trx_id', transaction_id: null });
    expect(second.reason).toContain(`(proved by SMS record ${answers[0]!.id})`);
    expect(await eventsOf(t, p.transaction.id)).toEqual(['payment.completed']);
  });
});

describe('events of a batch', () => {
  it('each completion of a batch records its payment.completed with a delivery to each subscribed endpoint of the brand and mode', async () => {
    const scene = await smsScene(t);
    const endpoints = await t.sql<{ id: string }>(
      `INSERT INTO webhook_endpoints (brand_id, url, events, secret_encrypted) VALUES ($1, 'https://merchant.example/a', $2, 'x'), ($1, 'https://merchant.example/b', $2, 'x'),
              ($1, 'https://merchant.example/c', $3, 'x') RETURNING id`,
      [scene.brandId, ['payment.completed'], ['payment.failed']],
    );
    const ids = [newGatewayTrxId(), newGatewayTrxId(), newGatewayTrxId()];
    const payments = [];
    for (const [i, id] of ids.entries()) payments.push(await seedPayment(t, scene, { amount: `${510 + i}.00`, status: 'awaiting_verification', gatewayTrxId: id }));
    const at = Date.now() - 60_000;
    const answers = await forwardSms(t, scene.device, ids.map((id, i) => ({ sender: 'bKash', body: smsBodies.bkash(`${510 + i}.00`, id), received_at: new Date(at + i).toISOString() })));
    expect(answers.map((a) => a.match_status)).toEqual(['matched', 'matched', 'matched']);
    for (const p of payments) {
      const rows = await t.sql<{ endpoint_id: string; payload: unknown }>(
        `SELECT d.endpoint_id, e.payload FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.transaction_id = $1 AND e.event = 'payment.completed' ORDER BY d.endpoint_id`,
        [p.transaction.id],
      );
      expect(rows.map((r) => r.endpoint_id)).toEqual([endpoints[0]!.id, endpoints[1]!.id]);
      // The event names its own payment (built from that transaction's completion, not another's of the batch).
      const payload = typeof rows[0]!.payload === 'string' ? JSON.parse(rows[0]!.payload) : rows[0]!.payload;
      expect(payload).toMatchObject({ event: 'payment.completed', data: { id: p.transaction.id, status: 'completed' } });
      expect(JSON.stringify(payload)).toContain(p.transaction.trxId);
    }
  });
});

describe('concurrent batches', () => {
  it('two phones forwarding batches that name the same ids at once: each id completes one payment once, nothing stays pending', async () => {
    for (let round = 0; round < 6; round++) {
      const scene = await smsScene(t);
      const second = await pairDevice(t, { brandId: scene.brandId });
      const ids = [newGatewayTrxId(), newGatewayTrxId(), newGatewayTrxId()];
      const payments = await Promise.all(ids.map((id, i) => seedPayment(t, scene, { amount: `${700 + i}.00`, status: 'awaiting_verification', gatewayTrxId: id })));
      // The same ids in opposite orders, from two payers' numbers (so neither is a copy of the other's text).
      const one = ids.map((id, i) => ({ sender: 'bKash', body: smsBodies.bkash(`${700 + i}.00`, id, '01712345678') }));
      const two = ids.map((id, i) => ({ sender: 'bKash', body: smsBodies.bkash(`${700 + i}.00`, id, '01712345679') })).reverse();
      const [a, b] = await Promise.all([forwardSms(t, scene.device, one), forwardSms(t, second, two)]);
      const all = [...a, ...b];
      expect(all.filter((x) => x.match_status === 'matched')).toHaveLength(ids.length);
      expect(all.filter((x) => x.match_status === 'duplicate')).toHaveLength(ids.length);
      for (const p of payments) {
        expect((await transactionRow(t, p.transaction.id)).status).toBe('completed');
        expect(await eventsOf(t, p.transaction.id)).toEqual(['payment.completed']);
        expect(all.filter((x) => x.trx_id === p.transaction.trxId)).toHaveLength(1);
      }
    }
  });
});

describe('locks taken after the reads (batch-reads.ts)', () => {
  it('a payment completed between the read of the candidates and their locks is decided as it is under the lock', async () => {
    const scene = await smsScene(t);
    const id = newGatewayTrxId();
    const { transaction } = await seedPayment(t, scene, { amount: '640.00', status: 'awaiting_verification', gatewayTrxId: id });
    const holder = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await holder.connect();
    try {
      // The payment's intent is held: the batch reads the payment open, then waits at its first lock.
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM payment_intents WHERE id = $1 FOR UPDATE', [transaction.intentId]);
      const forwarded = forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash('640.00', id) }]);
      await waitForLockWaiters(holder, 1);
      // Meanwhile another path (an operator) completes it and lets go.
      await holder.query("UPDATE transactions SET status = 'completed', completed_at = now(), completion_source = 'admin' WHERE id = $1", [transaction.id]);
      await holder.query("UPDATE payment_intents SET status = 'completed', completed_at = now() WHERE id = $1", [transaction.intentId]);
      await holder.query('COMMIT');
      const [answer] = await forwarded;
      // As one by one: the SMS proves a payment already completed, not one to complete again.
      expect(answer!.match_status).toBe('duplicate');
      expect(await smsRow(t, answer!.id)).toMatchObject({ reason_code: 'duplicate_trx_id', transaction_id: null });
      expect(await eventsOf(t, transaction.id)).toEqual([]);
    } finally {
      await holder.end();
    }
  });
});

describe('events built from what the completion returned (completeLockedTransactions)', () => {
  it('each payment.completed says exactly what the payment reads once committed', async () => {
    const scene = await smsScene(t);
    const ids = [newGatewayTrxId(), newGatewayTrxId()];
    const payments = [];
    for (const [i, id] of ids.entries()) payments.push(await seedPayment(t, scene, { amount: `${660 + i}.00`, status: 'awaiting_verification', gatewayTrxId: id }));
    const at = Date.now() - 60_000;
    // Twice: the first batch of a brand and a later one must write the same.
    for (const round of [0, 1]) {
      const id = round === 0 ? ids[0]! : ids[1]!;
      const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(`${660 + round}.00`, id), received_at: new Date(at + round).toISOString() }]);
      expect(answer!.match_status).toBe('matched');
      const p = payments[round]!;
      const [event] = await t.sql<{ payload: string; mode: string }>(`SELECT payload, mode FROM webhook_events WHERE transaction_id = $1 AND event = 'payment.completed'`, [p.transaction.id]);
      const sent = JSON.parse(event!.payload) as { data: Record<string, unknown>; livemode: boolean };
      // What the sequential path records: the payment as read after the completion committed.
      const read = await paymentEventData(t.runtime.deps.db, p.transaction.intentId);
      expect(sent.data).toEqual(JSON.parse(JSON.stringify(read)));
      expect(sent.data).toMatchObject({ status: 'completed' });
      const [row] = await t.sql<{ completed_at: Date }>('SELECT completed_at FROM transactions WHERE id = $1', [p.transaction.id]);
      expect(sent.data.completed_at).toBe(new Date(row!.completed_at).toISOString());
      expect(sent.livemode).toBe(event!.mode === 'live');
    }
  });
});

describe('settings read with the claim (service.ts)', () => {
  it('a changed match window is used by the next batch', async () => {
    const scene = await smsScene(t);
    const forwardFor = async (amount: string, createdMinutesAgo: number) => {
      const { transaction } = await seedPayment(t, scene, { amount });
      await t.sql(`UPDATE payment_intents SET created_at = now() - make_interval(mins => $2) WHERE id = $1`, [transaction.intentId, createdMinutesAgo]);
      const [answer] = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, newGatewayTrxId()) }]);
      return { answer: answer!, row: await smsRow(t, answer!.id), transaction };
    };
    expect((await forwardFor('611.00', 1)).answer.match_status).toBe('low_confidence');
    await seedSetting(t, 'match_window_minutes', 5);
    try {
      // Claimed with a window of 5 minutes, the payment of 6 minutes ago is no candidate.
      const narrowed = await forwardFor('612.00', 6);
      expect(narrowed.answer.match_status).toBe('no_candidate');
      expect(narrowed.row).toMatchObject({ reason_code: 'no_candidate', candidate_ids: [] });
      // And back: claimed with 1440 minutes, the payment of 30 minutes ago is found.
      await seedSetting(t, 'match_window_minutes', 1440);
      const widened = await forwardFor('613.00', 30);
      expect(widened.answer.match_status).toBe('low_confidence');
      expect(widened.row).toMatchObject({ candidate_ids: [String(widened.transaction.id)] });
    } finally {
      await seedSetting(t, 'match_window_minutes', 1440);
    }
  });
});
