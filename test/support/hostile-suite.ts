import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from './harness.ts';
import { contractRoutes, fillPath, type ContractRoute } from './contract-walk.ts';
import { changedTables, dbChecksum } from './db-checksum.ts';
import { pairDevice } from './device.ts';
import { createPayment, seedCompletedTransaction, seedGateway } from './seed.ts';
import { baselineFor, bodyInputs, pathParamInputs, queryInputs, runInputs, type HostileInput } from './hostile.ts';
import { recordReliability } from './reliability-summary.ts';
import { createOperator } from '../../server/domain/operators/service.ts';

/**
 * Defines the hostile-input suite for the contract routes `filter` selects:
 * every route found by walking the contract gets inputs generated from its own
 * schemas, sent with valid credentials so validation is reached. Refused inputs
 * must get a 4xx envelope and leave the database as it was; inputs the schema
 * accepts must never get a 5xx.
 */
export function defineHostileSuite(suite: string, filter: (r: ContractRoute) => boolean): void {
  const routes = contractRoutes().filter(filter);
  let t: TestContext;
  let auth: Record<string, Record<string, string>>;
  let fixtures: Record<string, string>;
  let tried = 0;
  // vitest cuts long diffs; the failures are printed whole so a CI log names every input.
  const report = (title: string, failures: string[]) => {
    if (failures.length) process.stdout.write(`[${suite}] ${title}: ${failures.length} failing inputs\n${failures.slice(0, 60).join('\n')}\n`);
  };
  const accepted: Array<{ route: ContractRoute; inputs: HostileInput[] }> = [];

  beforeAll(async () => {
    // No background jobs: a sweep changing rows mid-run would look like a leak.
    t = await startTestServer({ WORKERS_ENABLED: 'false' });
    const { apiKey, brandId } = await t.createBrand('Hostile Brand');
    const device = await pairDevice(t, { brandId });
    const gateway = await seedGateway(t, 'bkash');
    const payment = await createPayment(t, apiKey, { customer: { email: 'hostile@example.com', phone: '+8801712345678' } });
    const { transaction } = await seedCompletedTransaction(t, { apiKey, gateway });
    const invoice = await t.request('POST', '/api/v1/invoices', {
      token: apiKey,
      body: { customer: { email: 'hostile@example.com' }, currency: 'BDT', due_date: '2099-01-01', lines: [{ description: 'x', quantity: '1', unit_price: '10.00' }] },
    });
    // A console operator with a session, for the self-service routes (cookie plus CSRF token).
    const password = 'hostile suite password';
    const { operator } = await createOperator(t.runtime.deps.db, { actor: 'test', requestId: null }, { email: 'hostile-owner@example.com', name: 'Hostile', role: 'owner', password });
    const login = await fetch(`${t.baseUrl}/api/admin/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: operator.email, password }) });
    const consoleSession = { cookie: login.headers.getSetCookie()[0]!.split(';')[0]!, 'x-csrf-token': ((await login.json()) as { data: { csrf_token: string } }).data.csrf_token };
    auth = {
      merchant: { authorization: `Bearer ${apiKey}` },
      device: { authorization: `Bearer ${device.accessToken}` },
      admin: { authorization: `Bearer ${t.runtime.deps.secrets.adminToken}` },
      // Checked by the handler after validation: a well-formed code that was never issued.
      pairing: { authorization: 'Bearer ZZZZZ-ZZZZZ' },
      operator: consoleSession,
    };
    fixtures = {
      payment_id: payment.payment_id,
      trx_id: transaction.trxId,
      identifier: 'hostile@example.com',
      brand_id: String(brandId),
      device_id: String(device.deviceId),
      code: gateway.code,
      base: 'USD',
      quote: 'BDT',
      transaction_id: String(transaction.id),
      operator_id: operator.id,
      invoice_id: invoice.body.data.id as string,
    };
  });

  afterAll(async () => {
    recordReliability({ suite, inputs: tried });
    process.stdout.write(`[${suite}] hostile inputs tried: ${tried} over ${routes.length} routes\n`);
    await t?.close();
  });

  it('walks a contract with routes in it', () => {
    expect(routes.length).toBeGreaterThan(0);
  });

  describe.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (_title, route) => {
    it('refuses hostile path, query and body input with a 4xx envelope and changes nothing', async () => {
      const base = baselineFor(route, fixtures);
      const credential = auth[route.meta.auth] ?? {};
      const inputs = [...pathParamInputs(route, base, credential), ...queryInputs(route, base, credential), ...bodyInputs(route, base, credential)].map((i) => ({ ...i, route }));
      const refused = inputs.filter((i) => i.mustFail);
      accepted.push({ route, inputs: inputs.filter((i) => !i.mustFail) });
      const before = await dbChecksum(t);
      const { failures } = await runInputs(t.baseUrl, refused);
      tried += refused.length;
      report(`${route.method} ${route.path}`, failures);
      expect(failures).toEqual([]);
      expect(changedTables(before, await dbChecksum(t))).toEqual([]);
      expect(Object.prototype).not.toHaveProperty('polluted');
    });
  });

  it('never answers a 5xx to input the schemas accept (unicode edge cases in free text, boundary values)', async () => {
    const inputs = accepted.flatMap((a) => a.inputs);
    const { failures } = await runInputs(t.baseUrl, inputs);
    tried += inputs.length;
    report('accepted inputs', failures);
    expect(failures).toEqual([]);
    expect(Object.prototype).not.toHaveProperty('polluted');
    // Console logins and new operators each hash a password with scrypt on purpose (tens of ms, more on a loaded machine).
  }, 180_000);

  it('answers every method a path does not have with a 404 envelope, changing nothing', async () => {
    const byPath = new Map<string, Set<string>>();
    for (const r of routes) {
      const path = fillPath(r.path, baselineFor(r, fixtures).params);
      byPath.set(path, new Set([...(byPath.get(path) ?? []), r.method]));
    }
    const inputs: HostileInput[] = [];
    for (const [path, methods] of byPath) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !methods.has(m))) {
        const route = routes.find((r) => fillPath(r.path, baselineFor(r, fixtures).params) === path)!;
        inputs.push({
          label: 'wrong method',
          method,
          url: path,
          headers: { ...(auth[route.meta.auth] ?? {}), ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
          body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
          mustFail: true,
        });
      }
    }
    const before = await dbChecksum(t);
    const { failures } = await runInputs(t.baseUrl, inputs);
    tried += inputs.length;
    report('wrong methods', failures);
    expect(failures).toEqual([]);
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);
  });
}
