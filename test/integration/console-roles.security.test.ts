import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractRoutes, fillPath } from '../support/contract-walk.ts';
import { changedTables, dbChecksum } from '../support/db-checksum.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { pairDevice } from '../support/device.ts';
import { seedGateway, seedTransaction } from '../support/seed.ts';
import { adminRequest, auditRows } from './admin-support.ts';
import { consoleRequest, newOperator, session, type ConsoleSession } from './console-support.ts';

let t: TestContext;
const adminRoutes = contractRoutes().filter((r) => r.name.startsWith('admin.'));

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

describe('every admin route has a deliberate permission', () => {
  it('no route without one; no route that changes anything is `read`; self-service routes take the session only', () => {
    expect(adminRoutes.length).toBeGreaterThan(50);
    for (const r of adminRoutes) {
      const where = `${r.method} ${r.path}`;
      expect(['read', 'operate', 'own', 'self'], where).toContain(r.meta.permission);
      if (r.meta.permission === 'self') expect(['operator', 'none'], where).toContain(r.meta.auth);
      else expect(r.meta.auth, where).toBe('admin');
      if (r.method !== 'GET' && r.meta.auth === 'admin') expect(r.meta.permission, where).not.toBe('read');
    }
  });
});

describe('roles over HTTP', () => {
  let viewer: ConsoleSession;
  let operator: ConsoleSession;
  let brandId: number;

  beforeAll(async () => {
    ({ brandId } = await t.createBrand('Roles Brand'));
    viewer = await session(t, (await newOperator(t, 'viewer')).email);
    operator = await session(t, (await newOperator(t, 'operator')).email);
  });

  const params = () => ({ brand_id: String(brandId), device_id: '1', transaction_id: '1', refund_id: '1', delivery_id: '1', sms_record_id: '1', key_id: '1', code: 'bkash', base: 'USD', quote: 'BDT', operator_id: '00000000-0000-4000-8000-000000000000' });

  it('a viewer reads, and every route that changes something is 403 FORBIDDEN with nothing changed', async () => {
    expect((await consoleRequest(t, viewer, 'GET', '/transactions')).status).toBe(200);
    expect((await consoleRequest(t, viewer, 'GET', '/brands')).status).toBe(200);
    const before = await dbChecksum(t);
    const mutating = adminRoutes.filter((r) => r.meta.auth === 'admin' && r.method !== 'GET');
    expect(mutating.length).toBeGreaterThan(25);
    for (const r of mutating) {
      const res = await consoleRequest(t, viewer, r.method, fillPath(r.path, params()).replace('/api/admin/v1', ''), r.method === 'DELETE' ? undefined : {});
      expect([res.status, res.body?.errors?.[0]?.code], `${r.method} ${r.path}`).toEqual([403, 'FORBIDDEN']);
    }
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);
  });

  it('an operator does the day-to-day work but no owner route (brands, keys, settings, operators)', async () => {
    const code = await consoleRequest(t, operator, 'POST', `/brands/${brandId}/pairing-codes`, { ttl_minutes: 5 });
    expect(code.status).toBe(201);
    const before = await dbChecksum(t);
    const ownerOnly = adminRoutes.filter((r) => r.meta.permission === 'own');
    for (const r of ownerOnly) {
      const res = await consoleRequest(t, operator, r.method, fillPath(r.path, params()).replace('/api/admin/v1', ''), r.method === 'GET' || r.method === 'DELETE' ? undefined : {});
      expect([res.status, res.body?.errors?.[0]?.code], `${r.method} ${r.path}`).toEqual([403, 'FORBIDDEN']);
    }
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);
  });
});

describe('brand scope', () => {
  let mine: { brandId: number; apiKey: string };
  let theirs: { brandId: number; apiKey: string };
  let s: ConsoleSession;
  let theirTx: number;
  let myTx: number;
  let theirDevice: number;
  let theirAccount: number;

  beforeAll(async () => {
    mine = await t.createBrand('Scoped Mine');
    theirs = await t.createBrand('Scoped Theirs');
    const gateway = await seedGateway(t, 'bkash');
    myTx = (await seedTransaction(t, { apiKey: mine.apiKey, gateway, status: 'awaiting_verification' })).transaction.id;
    theirTx = (await seedTransaction(t, { apiKey: theirs.apiKey, gateway, status: 'awaiting_verification' })).transaction.id;
    await pairDevice(t, { brandId: mine.brandId });
    theirDevice = (await pairDevice(t, { brandId: theirs.brandId })).deviceId;
    theirAccount = (await adminRequest(t, 'POST', `/brands/${theirs.brandId}/wallet-accounts`, { gateway: gateway.code, number: '01711000099' })).body.data.id;
    s = await session(t, (await newOperator(t, 'operator', { brandIds: [mine.brandId] })).email);
  });

  it('lists only the brands in scope; a filter on another brand is empty', async () => {
    const brands = await consoleRequest(t, s, 'GET', '/brands');
    expect(brands.body.data.map((b: { id: number }) => b.id)).toEqual([mine.brandId]);
    const txs = await consoleRequest(t, s, 'GET', '/transactions?per_page=100');
    expect(new Set(txs.body.data.map((x: { brand_id: number }) => x.brand_id))).toEqual(new Set([mine.brandId]));
    expect(txs.body.meta.total).toBe(txs.body.data.length);
    const devices = await consoleRequest(t, s, 'GET', '/devices');
    expect(devices.body.data.map((d: { brand_id: number }) => d.brand_id)).toEqual([mine.brandId]);
    const filtered = await consoleRequest(t, s, 'GET', `/transactions?brand_id=${theirs.brandId}`);
    expect([filtered.status, filtered.body.data, filtered.body.meta.total]).toEqual([200, [], 0]);
    // The admin token still sees every brand.
    expect((await adminRequest(t, 'GET', '/brands')).body.data.map((b: { id: number }) => b.id)).toEqual(expect.arrayContaining([mine.brandId, theirs.brandId]));
  });

  it("another brand's object answers 404 like an unknown id, and nothing changes", async () => {
    const before = await dbChecksum(t);
    const cases: Array<[string, string, unknown, string]> = [
      ['GET', `/brands/${theirs.brandId}`, undefined, 'BRAND_NOT_FOUND'],
      ['GET', `/transactions/${theirTx}`, undefined, 'TRANSACTION_NOT_FOUND'],
      ['POST', `/transactions/${theirTx}/rejections`, { reason: 'not yours' }, 'TRANSACTION_NOT_FOUND'],
      ['GET', `/devices/${theirDevice}`, undefined, 'DEVICE_NOT_FOUND'],
      ['POST', `/devices/${theirDevice}/revocations`, {}, 'DEVICE_NOT_FOUND'],
      ['GET', `/wallet-accounts/${theirAccount}`, undefined, 'WALLET_ACCOUNT_NOT_FOUND'],
      ['GET', `/brands/${theirs.brandId}/wallet-accounts`, undefined, 'BRAND_NOT_FOUND'],
      ['POST', `/brands/${theirs.brandId}/pairing-codes`, { ttl_minutes: 5 }, 'BRAND_NOT_FOUND'],
      ['POST', '/webhook-tests', { brand_id: theirs.brandId, event: 'payment.completed' }, 'BRAND_NOT_FOUND'],
    ];
    for (const [method, path, body, code] of cases) {
      const res = await consoleRequest(t, s, method, path, body);
      const unknownBody = body && typeof body === 'object' && 'brand_id' in body ? { ...body, brand_id: 99999 } : body;
      const unknown = await adminRequest(t, method, path.replace(String(theirs.brandId), '99999').replace(String(theirTx), '99999').replace(String(theirDevice), '99999').replace(`/wallet-accounts/${theirAccount}`, '/wallet-accounts/99999'), unknownBody);
      expect([res.status, res.body.errors?.[0]?.code], `${method} ${path}`).toEqual([404, code]);
      expect(res.body.errors, `${method} ${path} answers like an unknown id`).toEqual(unknown.body.errors);
    }
    expect(changedTables(before, await dbChecksum(t))).toEqual([]);
    const all = await consoleRequest(t, s, 'POST', '/webhook-deliveries/dead-letter-replays', { since: '2026-01-01T00:00:00Z' });
    expect([all.status, all.body.errors[0].code]).toEqual([403, 'FORBIDDEN']);
  });

  it('acts on its own brand, and the audit log it reads holds its brands only', async () => {
    const res = await consoleRequest(t, s, 'POST', `/transactions/${myTx}/rejections`, { reason: 'checked by hand' });
    expect(res.status).toBe(200);
    await adminRequest(t, 'POST', `/transactions/${theirTx}/rejections`, { reason: 'someone else' });
    const audit = await consoleRequest(t, s, 'GET', '/audit-log?per_page=100');
    expect(audit.body.data.length).toBeGreaterThan(0);
    expect(new Set(audit.body.data.map((r: { brand_id: number | null }) => r.brand_id))).toEqual(new Set([mine.brandId]));
    expect((await auditRows(t, 'transaction.reject')).length).toBe(2);
  });
});

describe('operators (owner only)', () => {
  it('creates with a one-time password, lists, updates, resets; audited', async () => {
    const created = await adminRequest(t, 'POST', '/operators', { email: 'New.Person@Example.com', name: 'New Person', role: 'operator', brand_ids: [1] });
    expect(created.status).toBe(201);
    expect(created.body.data.operator).toMatchObject({ email: 'new.person@example.com', role: 'operator', brand_ids: [1], totp_enabled: false, disabled: false });
    const password: string = created.body.data.password;
    expect(password.length).toBeGreaterThanOrEqual(20);
    const id: string = created.body.data.operator.id;
    expect((await session(t, 'new.person@example.com', password)).operatorId).toBe(id);
    const dup = await adminRequest(t, 'POST', '/operators', { email: 'new.person@example.com', name: 'Again', role: 'viewer' });
    expect([dup.status, dup.body.errors[0].code]).toEqual([409, 'OPERATOR_EMAIL_TAKEN']);
    expect((await adminRequest(t, 'GET', '/operators')).body.data.map((o: { id: string }) => o.id)).toContain(id);

    const s = await session(t, 'new.person@example.com', password);
    const patched = await adminRequest(t, 'PATCH', `/operators/${id}`, { role: 'viewer', brand_ids: null });
    expect(patched.body.data).toMatchObject({ role: 'viewer', brand_ids: null });
    // Changed access ends their sessions.
    expect((await consoleRequest(t, s, 'GET', '/session')).status).toBe(401);

    const reset = await adminRequest(t, 'POST', `/operators/${id}/password-reset`);
    expect(reset.status).toBe(200);
    expect(reset.body.data.password).not.toBe(password);
    await session(t, 'new.person@example.com', reset.body.data.password);
    expect((await auditRows(t)).filter((r) => r.target_type === 'operator' && r.target_id === id).map((r) => r.action)).toEqual(['operator.create', 'operator.login', 'operator.login', 'operator.update', 'operator.password_reset', 'operator.login']);
    const unknown = await adminRequest(t, 'PATCH', '/operators/00000000-0000-4000-8000-000000000000', { name: 'x' });
    expect([unknown.status, unknown.body.errors[0].code]).toEqual([404, 'OPERATOR_NOT_FOUND']);
  });

  it('refuses to demote or disable the last active owner (409 LAST_OWNER)', async () => {
    await t.sql("UPDATE operators SET disabled = true WHERE role = 'owner'");
    const owner = await newOperator(t, 'owner');
    const s = await session(t, owner.email);
    for (const patch of [{ role: 'operator' }, { disabled: true }]) {
      const res = await consoleRequest(t, s, 'PATCH', `/operators/${owner.id}`, patch);
      expect([res.status, res.body.errors[0].code]).toEqual([409, 'LAST_OWNER']);
    }
    const second = await newOperator(t, 'owner');
    const ok = await consoleRequest(t, s, 'PATCH', `/operators/${second.id}`, { disabled: true });
    expect([ok.status, ok.body.data.disabled]).toEqual([200, true]);
    expect((await consoleRequest(t, s, 'PATCH', `/operators/${owner.id}`, { role: 'viewer' })).status).toBe(409);
    const audit = await auditRows(t, 'operator.update');
    expect(audit.at(-1)!.actor).toBe(`operator:${owner.id} ${owner.email}`);
  });
});
