import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { withScope, type Benchmark } from './lib/benchmark.ts';
import { round1, sampleRss } from './lib/processes.ts';
import type { Row } from './lib/report.ts';
import { seedBrands, seedGateways, withPool } from './lib/seed.ts';
import { startOurs, unreachableRateLimits } from './lib/servers.ts';
import { PaycollectDevice } from '../clients/device/index.ts';
import { pollOnce, run as sim, type InboxSms } from '../scripts/device-sim.ts';
import { createPairingCode } from '../server/domain/devices/pairing.ts';

/**
 * Pull-on-submit, the way a customer sees it when the merchant's phone had
 * missed the payment SMS (docs/recovery.md): from the moment the customer
 * submits the TrxID on the checkout (`POST /api/checkout/v1/payments/{id}/transactions`)
 * to the moment the checkout's status stream says `completed`. In between, the
 * service finds no SMS, asks the brand's phone (a `payment_submitted`
 * backfill command with the gateway's sender and a push notification), the
 * phone's background loop sees the push, reads its commands, re-forwards the
 * SMS from its inbox and the payment completes.
 *
 * The phone is the device simulator (scripts/device-sim.ts, built only on the
 * device SDK), paired through the real pairing flow; it received each SMS with
 * `sms --miss` (kept in its inbox, never forwarded). Its loop looks for unread
 * notifications every PUSH_POLL_MS: that stands in for the push transport
 * (FCM delivers in roughly 0.1-1 s on a live phone, which a real deployment
 * adds). One payment at a time (a customer waiting, not a load test).
 * Targets (BENCHMARKS.md): p50 <= 1000 ms, p99 <= 3000 ms.
 */

const PUSH_POLL_MS = 200;
const now = () => performance.timeOrigin + performance.now();
const quantile = (xs: readonly number[], q: number): number | null => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? round1(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!) : null;
};
const p2 = (n: number) => String(n).padStart(2, '0');
const grouped = (cents: number) => `${Math.floor(cents / 100).toLocaleString('en-US')}.${String(cents % 100).padStart(2, '0')}`;

/** bKash's "money received" SMS (the default template), dated in Bangladesh time as bKash dates it. */
function bkashSms(amount: string, payer: string, trxId: string, balanceCents: number, at: Date): string {
  const bd = new Date(at.getTime() + 6 * 3_600_000);
  const date = `${p2(bd.getUTCDate())}/${p2(bd.getUTCMonth() + 1)}/${bd.getUTCFullYear()} ${p2(bd.getUTCHours())}:${p2(bd.getUTCMinutes())}`;
  return `You have received Tk ${grouped(Math.round(Number(amount) * 100))} from ${payer}. Fee Tk 0.00. Balance Tk ${grouped(balanceCents)}. TrxID ${trxId} at ${date}`;
}

/** Opens the checkout status stream and resolves with the time the `completed` event arrived (or null after `timeoutMs`). */
async function completedEvent(url: string, timeoutMs: number): Promise<{ ready: Promise<void>; completedAt: Promise<number | null>; checkingSeen: () => boolean }> {
  const abort = new AbortController();
  const res = await fetch(url, { signal: abort.signal, headers: { accept: 'text/event-stream' } });
  let checking = false;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((r) => (markReady = r));
  const completedAt = (async () => {
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    let at: number | null = null;
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!data) continue;
          const event = JSON.parse(data) as { status: string; checking_phone: boolean };
          markReady();
          if (event.checking_phone) checking = true;
          if (event.status === 'completed') at = now();
        }
        // The server ends the stream after a terminal status.
        if (at !== null) break;
      }
    } catch {
      /* aborted (timeout) */
    } finally {
      clearTimeout(timer);
      abort.abort();
      markReady();
    }
    return at;
  })();
  return { ready, completedAt, checkingSeen: () => checking };
}

export const pullOnSubmit: Benchmark = {
  name: 'pull-on-submit',
  description: 'customer submits a TrxID the phone missed -> phone asked by push -> simulator re-sends -> checkout stream says completed',
  run: (opts) =>
    withScope('pull-on-submit', opts, async ({ db, secrets, tmp, defer }) => {
      const count = opts.quick ? 5 : Math.max(20, Math.round(opts.durationSeconds * 4));
      const warmCount = opts.quick ? 1 : 3;
      const [brand] = await withPool(db.url, (pool) => seedBrands(pool, 1));
      const gateways = await seedGateways(db.db);
      const ours = await startOurs(db.url, secrets, { profile: opts.profile, label: 'pull-on-submit', env: { ...unreachableRateLimits, RATE_LIMIT_CHECKOUT: '100000000/60' } });
      defer(() => ours.child.stop());

      // The phone: paired through the simulator with a one-time code, as a merchant pairs it.
      const state = path.join(tmp, 'phone.json');
      const quiet = { out: () => {}, err: (l: string) => console.error(`  device-sim: ${l}`) };
      const { code } = await createPairingCode(db.db, brand!.id, { mode: 'live' });
      if ((await sim(['pair', '--code', code, '--base-url', ours.url, '--state', state], quiet)) !== 0) throw new Error('pairing the simulator failed');
      const saved = () => JSON.parse(readFileSync(state, 'utf8')) as { fingerprint: string; tokens: ConstructorParameters<typeof PaycollectDevice>[0]['tokens']; inbox?: InboxSms[] };
      const device = new PaycollectDevice({ baseUrl: ours.url, fingerprint: saved().fingerprint, tokens: saved().tokens });

      // Its background loop: on a push, read the commands and answer them from the inbox.
      let looping = true;
      let answered = 0;
      const loopErrors: string[] = [];
      const loop = (async () => {
        while (looping) {
          try {
            answered += (await pollOnce(device, () => saved().inbox ?? [])).length;
          } catch (err) {
            loopErrors.push((err as Error).message);
          }
          await new Promise((r) => setTimeout(r, PUSH_POLL_MS));
        }
      })();
      defer(async () => {
        looping = false;
        await loop;
      });

      let balanceCents = 1_000_000;
      const api = (p: string, init: RequestInit & { token?: string } = {}) =>
        fetch(`${ours.url}${p}`, {
          ...init,
          headers: { 'content-type': 'application/json', ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) },
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

      interface Sample {
        ms: number | null;
        checking: boolean;
        submitStatus: number;
      }
      const one = async (i: number, warm: boolean): Promise<Sample> => {
        const amount = `${100 + i}.00`;
        const created = await api('/api/v1/payments', { method: 'POST', token: brand!.apiKey, body: JSON.stringify({ amount, currency: 'BDT', reference: `pull-${warm ? 'w' : 'm'}-${i}` }) });
        if (created.status !== 201) throw new Error(`creating a payment: ${created.status} ${JSON.stringify(created.body)}`);
        const paymentId = created.body.data.payment_id as string;
        const view = await api(`/api/checkout/v1/payments/${paymentId}`);
        const toSend = view.body.data.gateways.find((g: { code: string }) => g.code === gateways.manual.code).amount_to_send as string;
        const trxId = `P${(warm ? 'W' : 'M')}${String(i).padStart(8, '0')}`;
        const payer = `0171${String(1_000_000 + i).slice(-7)}`;
        balanceCents += Math.round(Number(toSend) * 100);
        // The phone receives the wallet SMS, but the app does not forward it (killed, offline).
        const smsFile = path.join(tmp, `sms-${i}.json`);
        writeFileSync(smsFile, JSON.stringify([{ sender: 'bKash', body: bkashSms(toSend, payer, trxId, balanceCents, new Date()), device_message_id: `pull-${warm ? 'w' : 'm'}-${i}` }]));
        if ((await sim(['sms', '--miss', '--file', smsFile, '--state', state], quiet)) !== 0) throw new Error('sms --miss failed');

        const stream = await completedEvent(`${ours.url}/api/checkout/v1/payments/${paymentId}/status-stream`, 30_000);
        await stream.ready;
        const submittedAt = now();
        const res = await api(`/api/checkout/v1/payments/${paymentId}/transactions`, { method: 'POST', body: JSON.stringify({ gateway: gateways.manual.code, gateway_trx_id: trxId, sender_number: payer }) });
        const done = await stream.completedAt;
        return { ms: done === null ? null : done - submittedAt, checking: res.body?.data?.phone_check_until != null, submitStatus: res.status };
      };

      for (let i = 0; i < warmCount; i++) await one(i, true);
      const rss = sampleRss(ours.child.pid);
      const samples: Sample[] = [];
      for (let i = 0; i < count; i++) samples.push(await one(i, false));
      const rssFigures = rss.stop();
      looping = false;
      await loop;

      const latencies = samples.filter((s) => s.ms !== null).map((s) => s.ms!);
      const requests = await withPool(db.url, async (pool) =>
        (await pool.query<{ reason: string; status: string; n: number }>('SELECT reason, status, count(*)::int AS n FROM backfill_requests GROUP BY 1, 2 ORDER BY 1, 2')).rows,
      );
      const completedWithoutOperator = await withPool(db.url, async (pool) =>
        (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions WHERE status = 'completed' AND completion_source = 'sms' AND gateway_trx_id LIKE 'PM%'`)).rows[0]!.n,
      );
      const p50 = quantile(latencies, 0.5);
      const p99 = quantile(latencies, 0.99);
      const rows: Row[] = [
        { metric: 'payments submitted (one at a time)', ours: samples.length },
        { metric: 'submit -> checkout says completed p50 (ms)', ours: p50, target: '<= 1000 ms', met: p50 !== null && p50 <= 1000 },
        { metric: 'submit -> checkout says completed p90 (ms)', ours: quantile(latencies, 0.9) },
        { metric: 'submit -> checkout says completed p99 (ms)', ours: p99, target: '<= 3000 ms', met: p99 !== null && p99 <= 3000 },
        { metric: 'submit -> checkout says completed max (ms)', ours: quantile(latencies, 1) },
        { metric: 'submissions answered "checking with the phone"', ours: `${samples.filter((s) => s.checking).length}/${samples.length}`, target: 'all', met: samples.every((s) => s.checking && s.submitStatus === 201) },
        { metric: 'completed by the re-sent SMS, no operator', ours: `${completedWithoutOperator}/${samples.length}`, target: 'all', met: completedWithoutOperator === samples.length && latencies.length === samples.length },
        { metric: 'server RSS max / mean (MB)', ours: `${rssFigures.maxMb} / ${rssFigures.meanMb}` },
      ];
      return {
        rows,
        settings: { payments: samples.length, warmup: warmCount, pushPollMs: PUSH_POLL_MS },
        details: { latencyMs: latencies.map(round1), requests, commandsAnswered: answered, loopErrors: loopErrors.slice(0, 10), rss: rssFigures },
      };
    }),
};
