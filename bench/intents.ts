import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { withScope, worldSize, type Benchmark } from './lib/benchmark.ts';
import { compareUnderLoad, httpRows } from './lib/compare.ts';
import { startLoadGenerator, writeTargets, type LoadTargets } from './lib/load.ts';
import { seedBrands, seedCustomers, seedGateways, seedPayments, withPool } from './lib/seed.ts';
import { startBaseline, startOurs, type RunningServer } from './lib/servers.ts';

/**
 * Intent creation: `POST /api/v1/payments` with a fresh `Idempotency-Key` on
 * every request (as the merchant SDK sends it), against the baseline's plain
 * insert of the same row (no idempotency record, no gateway check). Target
 * (BENCHMARKS.md, Summary): ours >= 0.5 of the baseline. Then against the keyed baseline, the
 * same Idempotency-Key protocol written by hand (bench/servers/baseline.ts), to
 * tell the protocol's cost from our layers'.
 */
export const intents: Benchmark = {
  name: 'intents',
  description: 'POST /api/v1/payments with Idempotency-Key, ours vs a plain Express+pg insert',
  run: (opts) =>
    withScope('intents', opts, async ({ db, secrets, tmp, defer, stats }) => {
      const size = worldSize(opts);
      const brands = await withPool(db.url, async (pool) => {
        const brands = await seedBrands(pool, size.brands);
        const gateways = await seedGateways(db.db);
        await seedCustomers(pool, secrets.keys, brands, size.rows);
        await seedPayments(pool, gateways, 'history');
        return brands;
      });
      const bodies = Array.from({ length: opts.quick ? 2000 : 20_000 }, (_, i) => {
        const body = { amount: `${100 + (i % 5000)}.${String(i % 100).padStart(2, '0')}`, currency: 'BDT', reference: `order-${i}`, metadata: { cart: String(i), channel: 'web' } };
        return [i % brands.length, '/api/v1/payments', JSON.stringify(body)] as [number, string, string];
      });
      const targets: LoadTargets = { method: 'POST', tokens: brands.map((b) => b.apiKey), items: bodies, order: 'sequence', idempotencyKey: process.env.BENCH_NO_IDEMPOTENCY !== '1' };
      const file = writeTargets(tmp, 'intents', targets);

      const ours = await startOurs(db.url, secrets, { profile: opts.profile, label: 'intents' });
      defer(() => ours.child.stop());
      const baseline = await startBaseline(db.url, secrets);
      defer(() => baseline.child.stop());
      const gen = await startLoadGenerator();
      defer(() => gen.stop());
      await assertSameCreation({ ours, baseline }, brands[0]!.apiKey, bodies[0]![2]);

      const load = await compareUnderLoad(gen, { ours, baseline }, () => file, { ...opts, stats, databaseUrl: db.url, expectStatus: 201 });
      await baseline.child.stop();
      // The same protocol written by hand: what the Idempotency-Key costs by itself, apart from our layers.
      const keyed = await startBaseline(db.url, secrets, { BASELINE_IDEMPOTENCY: '1' });
      defer(() => keyed.child.stop());
      const keyedLoad = await compareUnderLoad(gen, { ours, baseline: keyed }, () => file, { ...opts, stats, databaseUrl: db.url, expectStatus: 201 });
      const [{ n: keys }] = await withPool(db.url, async (pool) => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE completed_at IS NOT NULL')).rows) as [{ n: number }];
      return {
        rows: [
          ...httpRows('POST /payments', load, { minRatio: 0.5, maxRssMb: 300 }),
          ...httpRows('vs keyed baseline: POST /payments', keyedLoad, {}).filter((r) => !/RSS/.test(r.metric)),
          { metric: 'idempotency keys stored (ours and keyed baseline)', ours: keys },
        ],
        settings: { brands: size.brands, existingPayments: size.rows, distinctBodies: bodies.length },
        details: { load, keyedLoad },
      };
    }),
};

/** Same request to both: the answers must agree on everything but the new ids and times. */
async function assertSameCreation(servers: { ours: RunningServer; baseline: RunningServer }, apiKey: string, body: string): Promise<void> {
  const post = async (s: RunningServer) => {
    const res = await fetch(`${s.url}/api/v1/payments`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body });
    const json = (await res.json()) as { data?: Record<string, unknown> };
    const { payment_id: _p, checkout_url: _c, created_at: _t, expires_at: _e, ...rest } = json.data ?? {};
    return { status: res.status, keys: Object.keys(json.data ?? {}).sort(), rest };
  };
  const [a, b] = [await post(servers.ours), await post(servers.baseline)];
  if (a.status !== 201 || !isDeepStrictEqual(a, b)) throw new Error(`ours and the baseline create differently:\nours     ${JSON.stringify(a)}\nbaseline ${JSON.stringify(b)}`);
}
