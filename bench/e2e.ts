import { Agent } from 'undici';
import { withScope, worldSize, type Benchmark } from './lib/benchmark.ts';
import { round1, sampleRss, startChild, type BenchChild } from './lib/processes.ts';
import type { Row } from './lib/report.ts';
import { listPayments, seedBrands, seedCustomers, seedDevices, seedGateways, seedPayments, seedWebhookEndpoint, withPool, type SeededPayment } from './lib/seed.ts';
import { startOurs } from './lib/servers.ts';
import { CUSTOMER_CONTEXT, customerBinding } from '../server/domain/customers/service.ts';

/**
 * End to end, the way a merchant sees it: from the moment a paired phone sends
 * a bKash "money received" SMS (`POST /api/mobile/v1/sms/messages`, one SMS
 * per request) to the moment the signed `payment.completed` webhook for that
 * payment arrives at the merchant's receiver (a local process that checks every
 * signature with the merchant SDK's verifier). Open payments of the brands
 * carry the trx id their customers typed at checkout, each brand has one
 * webhook endpoint on the receiver, and the SMS go out at a steady rate from an
 * open-loop sender: each is sent at its scheduled time whether or not earlier
 * ones were answered, so a slow server shows as latency, not as a lower rate.
 * Our server only (the baseline has no such pipeline). Targets (BENCHMARKS.md,
 * Summary): p50 <= 50 ms, p99 <= 250 ms at 50 SMS/s, RSS <= 300 MB.
 */

const RATE = 50;
/** Each phone forwards at most one SMS this often, so one phone's SMS are never in flight together (its balance chain decides them in SMS-time order). */
const PER_PHONE_SECONDS = 4;
const now = () => performance.timeOrigin + performance.now();

const grouped = (cents: number) => `${Math.floor(cents / 100).toLocaleString('en-US')}.${String(cents % 100).padStart(2, '0')}`;
const p2 = (n: number) => String(n).padStart(2, '0');

/** A phone of a brand with its wallet balance (cents) as its last SMS reported it. */
interface Phone {
  token: string;
  balanceCents: number;
}

/**
 * The bKash "money received" SMS for a payment, as the brand's phone receives it:
 * from the customer's number (the matcher compares it with the customer's phone),
 * with the phone's balance after the money arrived (the balance chain checks it).
 */
function smsFor(p: SeededPayment, payer: string, phone: Phone, at: Date): string {
  const cents = Math.round(Number(p.amount) * 100);
  phone.balanceCents += cents;
  // bKash dates its messages in Bangladesh time (UTC+6); the matcher reads that date (docs/matching.md, rule 5b).
  const bd = new Date(at.getTime() + 6 * 3_600_000);
  const date = `${p2(bd.getUTCDate())}/${p2(bd.getUTCMonth() + 1)}/${bd.getUTCFullYear()} ${p2(bd.getUTCHours())}:${p2(bd.getUTCMinutes())}`;
  return `You have received Tk ${grouped(cents)} from ${payer}. Ref ${p.transactionId}. Fee Tk 0.00. Balance Tk ${grouped(phone.balanceCents)}. TrxID ${p.gatewayTrxId} at ${date}`;
}

interface Sent {
  trxId: string;
  brandIndex: number;
  sentAt: number;
  answeredAt: number | null;
  status: number | null;
  matchStatus: string | null;
}

interface ReceiverStats {
  received: number;
  distinct: number;
  badSignatures: number;
  duplicates: number;
  arrivals: Record<string, number>;
}

async function receiverStats(receiver: BenchChild, ids: string[]): Promise<ReceiverStats> {
  receiver.send({ type: 'stats', ids });
  return receiver.message<ReceiverStats>('stats', 30_000);
}

const quantile = (xs: readonly number[], q: number): number | null => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? round1(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!) : null;
};

export const e2e: Benchmark = {
  name: 'e2e',
  description: `phone SMS -> payment completed -> signed payment.completed at a local receiver, at a steady ${RATE} SMS/s`,
  run: (opts) =>
    withScope('e2e', opts, async ({ db, secrets, defer, stats: statements }) => {
      const size = worldSize(opts);
      const seconds = opts.durationSeconds * (opts.quick ? 1 : 2);
      const count = Math.ceil(RATE * seconds);
      const receiver = startChild('receiver', 'bench/servers/receiver.ts');
      defer(() => receiver.stop());
      const { port } = await receiver.message<{ port: number }>('ready');

      const { brands, payments, devices, payers } = await withPool(db.url, async (pool) => {
        const brands = await seedBrands(pool, size.brands);
        const gateways = await seedGateways(db.db);
        await seedCustomers(pool, secrets.keys, brands, size.rows);
        await seedPayments(pool, gateways, 'open');
        const devices = await seedDevices(pool, secrets.jwt, brands, Math.max(1, Math.ceil((RATE * PER_PHONE_SECONDS) / brands.length)));
        // Each payment's customer phone, in the local form a wallet SMS shows (01XXXXXXXXX).
        const { rows } = await pool.query<{ uuid: string; brand_id: string; customer_uuid: string; phone_encrypted: string }>(
          'SELECT i.uuid, c.brand_id, c.uuid AS customer_uuid, c.phone_encrypted FROM payment_intents i JOIN customers c ON c.id = i.customer_id',
        );
        const payers = new Map(rows.map((r) => [r.uuid, secrets.keys.pii.decrypt(r.phone_encrypted, CUSTOMER_CONTEXT.phone, customerBinding(r.brand_id, r.customer_uuid)).replace(/^\+88/, '')]));
        return { brands, payments: await listPayments(pool, brands), devices, payers };
      });
      const phones: Phone[][] = devices.map((list) => list.map((d) => ({ token: d.accessToken, balanceCents: 1_000_000 })));
      const turn = brands.map(() => 0);
      const endpointSecrets: Record<string, string> = {};
      for (const [i, b] of brands.entries()) {
        endpointSecrets[`/hooks/${i}`] = await seedWebhookEndpoint(db.db, secrets.keys, b.id, `http://127.0.0.1:${port}/hooks/${i}`);
      }
      receiver.send({ type: 'secrets', secrets: endpointSecrets });
      await receiver.message('secrets-set');

      // Round-robin over the brands, each payment used once.
      const byBrand = brands.map(() => [] as SeededPayment[]);
      for (const p of payments) if (p.gatewayTrxId) byBrand[p.brandIndex]!.push(p);
      const plan: SeededPayment[] = [];
      for (let k = 0; plan.length < count; k++) {
        if (byBrand.every((l) => k >= l.length)) throw new Error(`only ${plan.length} open payments for ${count} SMS; seed more rows`);
        for (const list of byBrand) if (k < list.length && plan.length < count) plan.push(list[k]!);
      }

      const ours = await startOurs(db.url, secrets, { profile: opts.profile, label: 'e2e', env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
      defer(() => ours.child.stop());
      const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
      defer(() => agent.close());

      const send = async (p: SeededPayment, i: number, warm: boolean): Promise<Sent> => {
        const list = phones[p.brandIndex]!;
        const phone = list[turn[p.brandIndex]!++ % list.length]!;
        const at = new Date();
        const body = smsFor(p, payers.get(p.paymentId)!, phone, at);
        const payload = JSON.stringify({ messages: [{ device_message_id: `e2e-${warm ? 'w' : 'm'}-${i}`, sender: 'bKash', body, received_at: at.toISOString() }] });
        const sent: Sent = { trxId: p.gatewayTrxId!, brandIndex: p.brandIndex, sentAt: now(), answeredAt: null, status: null, matchStatus: null };
        try {
          const res = await fetch(`${ours.url}/api/mobile/v1/sms/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${phone.token}` },
            body: payload,
            dispatcher: agent,
          } as RequestInit);
          const json = (await res.json()) as { data?: Array<{ match_status: string }> };
          sent.status = res.status;
          sent.matchStatus = json.data?.[0]?.match_status ?? null;
        } catch {
          sent.status = 0;
        }
        sent.answeredAt = now();
        return sent;
      };

      /** Open loop: SMS i is sent at start + i / rate, whatever happened to the ones before. */
      const steady = async (list: SeededPayment[], warm: boolean): Promise<Sent[]> => {
        const start = now() + 50;
        const inflight: Array<Promise<Sent>> = [];
        for (let i = 0; i < list.length; i++) {
          const due = start + (i * 1000) / RATE;
          const wait = due - now();
          if (wait > 1) await new Promise((r) => setTimeout(r, wait));
          inflight.push(send(list[i]!, i, warm));
        }
        return Promise.all(inflight);
      };

      // Warm-up (JIT, connection pools, the webhook worker's first poll): a few seconds of the same load on payments of its own.
      const warmCount = Math.min(Math.ceil(RATE * opts.warmupSeconds), Math.floor(plan.length / 4));
      const warm = plan.splice(plan.length - warmCount, warmCount);
      if (warm.length) await steady(warm, true);
      await new Promise((r) => setTimeout(r, 1000));

      await statements?.reset();
      const rss = sampleRss(ours.child.pid);
      const sent = await steady(plan, false);
      // Wait for every webhook of the measured SMS (or give up after 30 s).
      const ids = new Map<string, Sent>();
      const eventIds = async () =>
        withPool(db.url, async (pool) =>
          (
            await pool.query<{ public_id: string; gateway_trx_id: string }>(
              `SELECT e.public_id, t.gateway_trx_id FROM webhook_events e JOIN transactions t ON t.id = e.transaction_id
                WHERE e.event = 'payment.completed' AND t.gateway_trx_id = ANY($1::text[])`,
              [sent.map((s) => s.trxId)],
            )
          ).rows,
        );
      let stats: ReceiverStats;
      const until = Date.now() + 30_000;
      for (;;) {
        for (const r of await eventIds()) ids.set(r.public_id, sent.find((s) => s.trxId === r.gateway_trx_id)!);
        stats = await receiverStats(receiver, [...ids.keys()]);
        if ((ids.size >= sent.length && Object.keys(stats.arrivals).length >= ids.size) || Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const rssFigures = rss.stop();

      const latencies: number[] = [];
      // The webhook's own part: from the SMS request's answer (its transaction committed) to the arrival.
      const afterAnswer: number[] = [];
      for (const [id, s] of ids) {
        const at = stats.arrivals[id];
        if (at === undefined) continue;
        latencies.push(at - s.sentAt);
        if (s.answeredAt !== null) afterAnswer.push(at - s.answeredAt);
      }
      const answer = sent.filter((s) => s.answeredAt !== null).map((s) => s.answeredAt! - s.sentAt);
      const matched = sent.filter((s) => s.status === 200 && s.matchStatus === 'matched').length;
      // Every SMS completed exactly one payment: one completed transaction and one payment.completed event per SMS, nothing else completed.
      const completion = await withPool(db.url, async (pool) =>
        (
          await pool.query<{ completed: number; events: number; distinct_intents: number }>(
            `SELECT (SELECT count(*)::int FROM transactions WHERE status = 'completed' AND gateway_trx_id = ANY($1::text[])) AS completed,
                    (SELECT count(*)::int FROM webhook_events e JOIN transactions t ON t.id = e.transaction_id
                      WHERE e.event = 'payment.completed' AND t.gateway_trx_id = ANY($1::text[])) AS events,
                    (SELECT count(DISTINCT intent_id)::int FROM transactions WHERE status = 'completed' AND gateway_trx_id = ANY($1::text[])) AS distinct_intents`,
            [sent.map((s) => s.trxId)],
          )
        ).rows[0]!,
      );
      // What became of the SMS (every one should be `matched`; anything else names its reason).
      const outcomes = await withPool(db.url, async (pool) =>
        (await pool.query<{ match_status: string; reason_code: string | null; n: number }>('SELECT match_status, reason_code, count(*)::int AS n FROM sms_records GROUP BY 1, 2 ORDER BY 3 DESC')).rows,
      );
      // With --statements: what the measured SMS cost in PostgreSQL, by total time (the slowest statements first).
      const top = statements ? (await statements.read()).sort((a, b) => b.totalMs - a.totalMs).slice(0, 25) : undefined;
      if (top) {
        console.log(`  statements per SMS: ${(top.reduce((a, q) => a + q.calls, 0) / sent.length).toFixed(1)} (top 25), ms executing per SMS: ${(top.reduce((a, q) => a + q.totalMs, 0) / sent.length).toFixed(2)}`);
        for (const q of top) console.log(`    ${(q.calls / sent.length).toFixed(2).padStart(6)} ${String(q.totalMs).padStart(7)} ms  ${q.query}`);
      }
      const exactlyOne = matched === sent.length && completion.completed === sent.length && completion.events === sent.length && completion.distinct_intents === sent.length;
      const p50 = quantile(latencies, 0.5);
      const p99 = quantile(latencies, 0.99);
      const rows: Row[] = [
        { metric: `SMS sent at ${RATE}/s (open loop)`, ours: sent.length },
        { metric: 'SMS -> webhook at receiver p50 (ms)', ours: p50, target: '<= 50 ms', met: p50 !== null && p50 <= 50 },
        { metric: 'SMS -> webhook at receiver p90 (ms)', ours: quantile(latencies, 0.9) },
        { metric: 'SMS -> webhook at receiver p99 (ms)', ours: p99, target: '<= 250 ms', met: p99 !== null && p99 <= 250 },
        { metric: 'SMS -> webhook at receiver max (ms)', ours: quantile(latencies, 1) },
        { metric: 'of which SMS request answered p50 / p99 (ms)', ours: `${quantile(answer, 0.5)} / ${quantile(answer, 0.99)}` },
        { metric: 'of which answer -> webhook at receiver p50 / p99 (ms)', ours: `${quantile(afterAnswer, 0.5)} / ${quantile(afterAnswer, 0.99)}` },
        { metric: 'SMS matched, each completing one payment', ours: `${matched}/${sent.length}`, target: 'all', met: exactlyOne },
        { metric: 'webhooks arrived / bad signatures / duplicates', ours: `${latencies.length}/${stats.badSignatures}/${stats.duplicates}`, target: `${sent.length}/0/0`, met: latencies.length === sent.length && stats.badSignatures === 0 && stats.duplicates === 0 },
        { metric: 'server RSS max / mean (MB)', ours: `${rssFigures.maxMb} / ${rssFigures.meanMb}`, target: '<= 300 MB', met: rssFigures.maxMb !== null && rssFigures.maxMb <= 300 },
      ];
      return {
        rows,
        settings: { brands: brands.length, openPayments: payments.length, rate: RATE, sms: sent.length, warmupSms: warm.length, smsPerRequest: 1 },
        details: { outcomes, statements: top, latencyMs: latencies.map(round1), answerMs: answer.map(round1), afterAnswerMs: afterAnswer.map(round1), completion, rss: rssFigures, receiver: { received: stats.received, badSignatures: stats.badSignatures, duplicates: stats.duplicates } },
      };
    }),
};
