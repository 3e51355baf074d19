import { drainDatabase } from './lib/database.ts';
import { withScope, worldSize, type Benchmark } from './lib/benchmark.ts';
import { assertSameAnswers, compareUnderLoad, httpRows } from './lib/compare.ts';
import { startLoadGenerator, writeTargets, type LoadTargets } from './lib/load.ts';
import { listPayments, seedBrands, seedCustomers, seedGateways, seedPayments, withPool } from './lib/seed.ts';
import { startBaseline, startOurs } from './lib/servers.ts';

/**
 * Merchant reads: `GET /api/v1/payments/{id}` and `GET /api/v1/customers/{identifier}`
 * over 100k payments and 100k customers of 100 brands, each request for a
 * random row with its own brand's API key (customers alternately by email and
 * by phone), at 64 connections flat out and at a steady 300/s. Targets (issue
 * 10): throughput >= 0.6 of the baseline, p99 <= 25 ms, server RSS <= 300 MB.
 */
/** Requests per second of the paced runs: about a third of what either side serves flat out here (BENCH_PACED_RATE: another rate, for diagnostics). */
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 300);

export const merchantReads: Benchmark = {
  name: 'merchant-reads',
  description: 'GET /api/v1/payments/{id} and GET /api/v1/customers/{identifier} over 100k rows, ours vs Express+pg',
  run: (opts) =>
    withScope('merchant-reads', opts, async ({ db, secrets, tmp, defer, stats }) => {
      const size = worldSize(opts);
      const seedStarted = performance.now();
      const { brands, customers, payments } = await withPool(db.url, async (pool) => {
        const brands = await seedBrands(pool, size.brands);
        const gateways = await seedGateways(db.db);
        const customers = await seedCustomers(pool, secrets.keys, brands, size.rows);
        await seedPayments(pool, gateways, 'history');
        return { brands, customers, payments: await listPayments(pool, brands) };
      });
      const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
      const tokens = brands.map((b) => b.apiKey);

      const paymentTargets: LoadTargets = {
        method: 'GET',
        tokens,
        items: payments.map((p) => [p.brandIndex, `/api/v1/payments/${p.paymentId}`, null]),
        order: 'random',
        idempotencyKey: false,
      };
      const customerTargets: LoadTargets = {
        method: 'GET',
        tokens,
        items: customers.map((c, i) => [c.brandIndex, `/api/v1/customers/${encodeURIComponent(i % 2 === 0 ? c.email : c.phone)}`, null]),
        order: 'random',
        idempotencyKey: false,
      };
      const paymentsFile = writeTargets(tmp, 'payments', paymentTargets);
      const customersFile = writeTargets(tmp, 'customers', customerTargets);

      const ours = await startOurs(db.url, secrets, { profile: opts.profile, label: 'merchant-reads' });
      defer(() => ours.child.stop());
      const baseline = await startBaseline(db.url, secrets);
      defer(() => baseline.child.stop());
      const gen = await startLoadGenerator();
      defer(() => gen.stop());
      const servers = { ours, baseline };

      const sample = (t: LoadTargets) => Array.from({ length: 25 }, (_, i) => t.items[Math.floor((i * t.items.length) / 25)]!).map(([ti, path]) => ({ path, token: tokens[ti]! }));
      await assertSameAnswers(servers, [...sample(paymentTargets), ...sample(customerTargets)]);

      const targets = { minRatio: 0.6, maxP99Ms: 25, maxRssMb: 300 };
      // BENCH_PACED_ONLY=1 (diagnostics of the steady-rate latency): skips the runs at 64 connections flat out.
      const flatOut = process.env.BENCH_PACED_ONLY === '1' ? null : { ...opts, stats, databaseUrl: db.url, expectStatus: 200 };
      const paymentsLoad = flatOut && (await compareUnderLoad(gen, servers, () => paymentsFile, flatOut));
      const customersLoad = flatOut && (await compareUnderLoad(gen, servers, () => customersFile, flatOut));
      if (!flatOut) {
        // The paced runs start cold otherwise: warm both servers (JIT, pools) at the paced rate first.
        await compareUnderLoad(gen, servers, () => paymentsFile, { ...opts, databaseUrl: db.url, expectStatus: 200, rate: PACED_RATE, rounds: 0 });
        await compareUnderLoad(gen, servers, () => customersFile, { ...opts, databaseUrl: db.url, expectStatus: 200, rate: PACED_RATE, rounds: 0 });
      }
      // The same reads at a steady rate both sides sustain: latency without the queueing of 64 connections flat out.
      const paced = { ...opts, stats, expectStatus: 200, rate: PACED_RATE, warmupSeconds: 0, rounds: opts.quick ? 1 : 2, databaseUrl: db.url };
      await drainDatabase(db.url);
      const paymentsPaced = await compareUnderLoad(gen, servers, () => paymentsFile, paced);
      await drainDatabase(db.url);
      const customersPaced = await compareUnderLoad(gen, servers, () => customersFile, paced);
      const steady = (label: string, f: typeof paymentsPaced) => httpRows(label, f, { maxP99Ms: 25 }).filter((r) => !r.metric.includes('RSS'));
      return {
        rows: [
          ...(paymentsLoad ? httpRows('GET /payments/{id}', paymentsLoad, targets) : []),
          ...(customersLoad ? httpRows('GET /customers/{identifier}', customersLoad, targets) : []),
          ...steady(`GET /payments/{id} at ${PACED_RATE}/s`, paymentsPaced),
          ...steady(`GET /customers/{identifier} at ${PACED_RATE}/s`, customersPaced),
        ],
        settings: { brands: size.brands, payments: payments.length, customers: customers.length, seedSeconds, pacedRate: PACED_RATE },
        details: { payments: paymentsLoad, customers: customersLoad, paymentsPaced, customersPaced },
      };
    }),
};
