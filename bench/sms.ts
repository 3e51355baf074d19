import { drainDatabase } from './lib/database.ts';
import { withScope, worldSize, type Benchmark } from './lib/benchmark.ts';
import { compareUnderLoad, httpRows, type SideFigures } from './lib/compare.ts';
import { startLoadGenerator, writeTargets, type LoadTargets } from './lib/load.ts';
import { ratio, type Row } from './lib/report.ts';
import { round1 } from './lib/processes.ts';
import { listPayments, seedBrands, seedCustomers, seedDevices, seedGateways, seedPayments, withPool, type SeededPayment } from './lib/seed.ts';
import { startBaseline, startOurs } from './lib/servers.ts';

/**
 * SMS verification: `POST /api/mobile/v1/sms/messages`, forwarded bKash
 * "money received" SMS from brands' paired phones, against 100k open
 * transactions of 100 brands (half already carrying the trx id the customer
 * typed at checkout, half waiting for an amount match). Every SMS is new and
 * names exactly one open transaction of its brand, so each should end
 * `matched`, completing the payment with its `payment.completed` event.
 * Three loads: one SMS per request (a phone forwarding as they arrive) and ten
 * per request (a phone catching up; the device SDK forwards what it has), each
 * as fast as 64 connections go, and one SMS per request at a steady 50/s for
 * latency without queueing. Brands have no webhook endpoint here: events are
 * recorded, their delivery is the webhooks benchmark. Targets (BENCHMARKS.md, Summary):
 * >= 500 SMS/s, p99 <= 50 ms per request.
 */

/** Requests per second of the paced run: within what both sides sustain here, so its latency is not queueing. */
const PACED_RATE = 50;

const grouped = (amount: string) => {
  const [int, frac] = amount.split('.');
  return `${int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac}`;
};

/** A bKash "money received" SMS naming `p` (its amount, payer and trx id): it matches `p` and nothing else. */
export function smsFor(p: SeededPayment, side: number): { trxId: string; body: string } {
  // Every open payment of the `open` mix claims an id; one without would get a fresh id (and wait for review).
  const trxId = p.gatewayTrxId ?? `S${side}${p.transactionId!.toString(16).toUpperCase().padStart(8, '0')}`;
  // The payer is the payment's customer (the number the SMS must agree with when none was declared at
  // checkout). No balance: SMS of one phone sent over 64 connections arrive out of order, and each SMS
  // overtaken by a later one would break the phone's balance chain (a person decides); the baseline has no
  // chain either. The chain's cost is in the tests (sms-matching.*), not in this throughput figure.
  const payer = p.customerPhone ? `0${p.customerPhone.slice(-10)}` : '01712345678';
  const body = `You have received Tk ${grouped(p.amount)} from ${payer}.Ref ${p.transactionId}. TrxID ${trxId} at 15/03/2024 14:32`;
  return { trxId, body };
}

export const sms: Benchmark = {
  name: 'sms',
  description: 'POST /api/mobile/v1/sms/messages matched against 100k open transactions of 100 brands',
  run: (opts) =>
    withScope('sms', opts, async ({ db, secrets, tmp, defer, stats }) => {
      const size = worldSize(opts);
      const { brands, payments, devices } = await withPool(db.url, async (pool) => {
        const brands = await seedBrands(pool, size.brands);
        const gateways = await seedGateways(db.db);
        await seedCustomers(pool, secrets.keys, brands, size.rows);
        await seedPayments(pool, gateways, 'open');
        const devices = await seedDevices(pool, secrets.jwt, brands, 2);
        return { brands, payments: await listPayments(pool, brands, secrets.keys), devices };
      });

      // Per brand, its open payments in order; positions 0-1, 4-5, ... go to ours, 2-3, 6-7, ... to the baseline
      // (each side gets both kinds). A request carries `perRequest` SMS of one phone, requests go round-robin
      // over the brands, and each scenario uses payments no earlier one used.
      const byBrand = brands.map(() => [] as SeededPayment[]);
      for (const p of payments) byBrand[p.brandIndex]!.push(p);
      const receivedAt = new Date().toISOString();
      const sides = ([0, 1] as const).map((side) => byBrand.map((list) => list.filter((_, k) => ((k >> 1) & 1) === side)));
      const used = [0, 0];
      const targetsFor = (side: 0 | 1, perRequest: number, requests: number): LoadTargets => {
        const lists = sides[side]!;
        const items: LoadTargets['items'] = [];
        if (used[side]! >= Math.max(...lists.map((l) => l.length))) throw new Error('no open payments left for another SMS scenario; seed more rows');
        for (let k = used[side]!; items.length < requests; k += perRequest) {
          if (lists.every((l) => k >= l.length)) break;
          for (const [bi, list] of lists.entries()) {
            const chunk = list.slice(k, k + perRequest);
            if (chunk.length === 0) continue;
            const messages = chunk.map((p) => ({ device_message_id: `bench-${side}-${p.transactionId}`, sender: 'bKash', body: smsFor(p, side).body, received_at: receivedAt }));
            items.push([bi, '/api/mobile/v1/sms/messages', JSON.stringify({ messages })]);
          }
          used[side] = k + perRequest;
        }
        // Token i is brand i's phone for this side.
        return { method: 'POST', tokens: devices.map((d) => d[side]!.accessToken), items, order: 'sequence', idempotencyKey: false };
      };

      const ours = await startOurs(db.url, secrets, { profile: opts.profile, label: 'sms' });
      defer(() => ours.child.stop());
      const baseline = await startBaseline(db.url, secrets);
      defer(() => baseline.child.stop());
      const gen = await startLoadGenerator();
      defer(() => gen.stop());
      const servers = { ours, baseline };

      // Enough distinct SMS for every run of a scenario at a generous rate, within each side's half of the
      // open payments (a scenario that runs out repeats its SMS, which then count as duplicates).
      const seconds = (opts.warmupSeconds + opts.durationSeconds * (opts.quick ? 1 : 2)) * 1.5;
      const perPhone = Math.floor(payments.length / 2 / brands.length);
      const share = (fraction: number, perRequest: number) => Math.max(1, Math.floor((perPhone * fraction) / perRequest)) * brands.length;
      const scenario = async (name: string, perRequest: number, rate: number | null, maxRequests: number) => {
        const files = {
          ours: writeTargets(tmp, `sms-${name}-ours`, targetsFor(0, perRequest, maxRequests)),
          baseline: writeTargets(tmp, `sms-${name}-baseline`, targetsFor(1, perRequest, maxRequests)),
        };
        return compareUnderLoad(gen, servers, (side) => files[side], { ...opts, stats, databaseUrl: db.url, expectStatus: 200, ...(rate ? { rate, warmupSeconds: 0, rounds: 2 } : {}) });
      };
      const single = await scenario('single', 1, null, Math.min(Math.ceil(400 * seconds), share(0.4, 1)));
      const batched = await scenario('batch10', 10, null, Math.min(Math.ceil(60 * seconds), share(0.4, 10)));
      await drainDatabase(db.url);
      const paced = await scenario('paced', 1, PACED_RATE, Math.min(Math.ceil(PACED_RATE * opts.durationSeconds * (opts.quick ? 1 : 2) * 1.2), share(0.15, 1)));

      const outcomes = await withPool(db.url, async (pool) =>
        (
          await pool.query<{ side: number; match_status: string; n: number }>(
            `SELECT CASE WHEN d.id = ANY($1::bigint[]) THEN 0 ELSE 1 END AS side, r.match_status, count(*)::int AS n
               FROM sms_records r JOIN devices d ON d.id = r.device_id GROUP BY 1, 2 ORDER BY 1, 2`,
            [devices.map((d) => d[0]!.deviceId)],
          )
        ).rows,
      );
      const count = (side: number, status?: string) => outcomes.filter((o) => o.side === side && (!status || o.match_status === status)).reduce((a, o) => a + o.n, 0);
      const matchedShare = (side: number) => (count(side) ? Math.round((count(side, 'matched') / count(side)) * 1000) / 10 : null);
      const smsRate = (f: SideFigures, n: number) => round1(f.rps * n);
      const rows: Row[] = [
        ...httpRows('1 SMS/request, 64 connections:', single, { maxRssMb: 300 }),
        { metric: '1 SMS/request: SMS/s', ours: single.ours.rps, baseline: single.baseline.rps, ratio: ratio(single.ours.rps, single.baseline.rps), target: '>= 500/s', met: single.ours.rps >= 500 },
        ...httpRows('10 SMS/request, 64 connections:', batched, { maxRssMb: 300 }),
        { metric: '10 SMS/request: SMS/s', ours: smsRate(batched.ours, 10), baseline: smsRate(batched.baseline, 10), ratio: ratio(batched.ours.rps, batched.baseline.rps), target: '>= 500/s', met: smsRate(batched.ours, 10) >= 500 },
        ...httpRows(`1 SMS/request at ${PACED_RATE}/s:`, paced, { maxP99Ms: 50 }),
        { metric: 'SMS stored / matched (%)', ours: `${count(0)} / ${matchedShare(0)}`, baseline: `${count(1)} / ${matchedShare(1)}`, target: 'all matched', met: count(0, 'matched') === count(0) && count(1, 'matched') === count(1) },
      ];
      return {
        rows: rows.filter((r) => !(r.metric.startsWith(`1 SMS/request at`) && r.metric.includes('RSS'))),
        settings: { brands: size.brands, openTransactions: payments.length, smsPerRequest: [1, 10], pacedRate: PACED_RATE },
        details: { single, batched, paced, outcomes },
      };
    }),
};
