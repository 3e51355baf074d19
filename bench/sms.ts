import { withScope, worldSize, type Benchmark } from './lib/benchmark.ts';
import { compareUnderLoad, httpRows } from './lib/compare.ts';
import { startLoadGenerator, writeTargets, type LoadTargets } from './lib/load.ts';
import type { Row } from './lib/report.ts';
import { listPayments, seedBrands, seedCustomers, seedDevices, seedGateways, seedPayments, withPool, type SeededPayment } from './lib/seed.ts';
import { startBaseline, startOurs } from './lib/servers.ts';

/**
 * SMS verification: `POST /api/mobile/v1/sms/messages`, each request one
 * forwarded bKash "money received" SMS from a brand's paired phone, against
 * 100k open transactions of 100 brands (half already carrying the trx id the
 * customer typed at checkout, half waiting for an amount match). Every SMS is
 * new and names exactly one open transaction of its brand, so each should end
 * `matched`, completing the payment with its `payment.completed` event.
 * Two loads: as fast as 64 connections go, and a fixed 500 SMS/s for latency.
 * Brands have no webhook endpoint here: events are recorded, their delivery is
 * the webhooks benchmark. Targets (issue 10): >= 500 SMS/s, p99 <= 50 ms.
 */

const grouped = (amount: string) => {
  const [int, frac] = amount.split('.');
  return `${int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac}`;
};

function smsFor(p: SeededPayment, side: number): { trxId: string; body: string } {
  // A payment without a claimed id gets a fresh one the SMS introduces (upper-case hex, unique per payment and side).
  const trxId = p.gatewayTrxId ?? `S${side}${p.transactionId!.toString(16).toUpperCase().padStart(8, '0')}`;
  const body = `You have received Tk ${grouped(p.amount)} from 01712345678. Ref ${p.transactionId}. Fee Tk 0.00. Balance Tk 5,432.10. TrxID ${trxId} at 15/03/2024 14:32`;
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
        const gateways = await seedGateways(db.orm);
        await seedCustomers(pool, secrets.keys, brands, size.rows);
        await seedPayments(pool, gateways, 'open');
        const devices = await seedDevices(pool, secrets.jwt, brands, 2);
        return { brands, payments: await listPayments(pool, brands), devices };
      });

      // Per brand, its open payments in order; positions 0-1, 4-5, ... go to ours, 2-3, 6-7, ... to the baseline
      // (each side gets both kinds), sent round-robin over the brands.
      const byBrand = brands.map(() => [] as SeededPayment[]);
      for (const p of payments) byBrand[p.brandIndex]!.push(p);
      const receivedAt = new Date().toISOString();
      const targetsFor = (side: 0 | 1): LoadTargets => {
        const lists = byBrand.map((list) => list.filter((_, k) => ((k >> 1) & 1) === side));
        const items: LoadTargets['items'] = [];
        for (let k = 0; k < Math.max(...lists.map((l) => l.length)); k++) {
          for (const [bi, list] of lists.entries()) {
            const p = list[k];
            if (!p) continue;
            const { body } = smsFor(p, side);
            const message = { device_message_id: `bench-${side}-${p.transactionId}`, sender: 'bKash', body, received_at: receivedAt };
            items.push([bi, '/api/mobile/v1/sms/messages', JSON.stringify({ messages: [message] })]);
          }
        }
        // Token i is brand i's phone for this side.
        return { method: 'POST', tokens: devices.map((d) => d[side]!.accessToken), items, order: 'sequence', idempotencyKey: false };
      };
      const files = { ours: writeTargets(tmp, 'sms-ours', targetsFor(0)), baseline: writeTargets(tmp, 'sms-baseline', targetsFor(1)) };

      const ours = await startOurs(db.url, secrets, { profile: opts.profile, label: 'sms' });
      defer(() => ours.child.stop());
      const baseline = await startBaseline(db.url, secrets);
      defer(() => baseline.child.stop());
      const gen = await startLoadGenerator();
      defer(() => gen.stop());
      const servers = { ours, baseline };

      const max = await compareUnderLoad(gen, servers, (side) => files[side], { ...opts, stats, expectStatus: 200 });
      const fixed = await compareUnderLoad(gen, servers, (side) => files[side], { ...opts, warmupSeconds: 0, expectStatus: 200, rate: 500, rounds: 1 });

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
      const rows: Row[] = [
        ...httpRows('64 connections: SMS', max, { minRps: 500, maxRssMb: 300 }),
        ...httpRows('fixed 500/s: SMS', fixed, { maxP99Ms: 50 }),
        { metric: 'SMS stored / matched (%)', ours: `${count(0)} / ${matchedShare(0)}`, baseline: `${count(1)} / ${matchedShare(1)}`, target: 'all matched', met: count(0, 'matched') === count(0) && !max.ours.wrapped && !fixed.ours.wrapped },
      ];
      return {
        rows: rows.filter((r) => !(r.metric.startsWith('fixed') && r.metric.includes('RSS'))),
        settings: { brands: size.brands, openTransactions: payments.length, smsPerRequest: 1, fixedRate: 500 },
        details: { max, fixed, outcomes },
      };
    }),
};
