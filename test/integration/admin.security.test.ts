import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '../../contract/index.ts';
import { listRoutes } from '../../clients/shared/resources.ts';
import { createApp } from '../../server/app.ts';
import { contractRoutes } from '../support/contract-walk.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newPairingCode, pairDevice } from '../support/device.ts';
import { adminClient, adminRequest, adminToken, auditCount, auditRows } from './admin-support.ts';

let t: TestContext;
let apiKey: string;
let brandId: number;
let deviceToken: string;

beforeAll(async () => {
  t = await startTestServer();
  ({ apiKey, brandId } = await t.createBrand('Security Brand'));
  deviceToken = (await pairDevice(t, { brandId })).accessToken;
});
afterAll(() => t?.close());

const ADMIN_PREFIX = '/api/admin/';
const sample: Record<string, string> = { code: 'bkash', base: 'USD', quote: 'BDT' };
const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
// Every route of the contract under the admin prefix, whatever its metadata says:
// a route there that forgot `auth: 'admin'` is in this list and fails the 401s below.
const inContract = contractRoutes(contract).filter((r) => r.path.startsWith(ADMIN_PREFIX));
// The console's own session routes live under the prefix too: signing in (no
// credential: it is how a session starts) and the signed-in operator's routes
// (session cookie only); every other route takes the admin token or a session.
const sessionRoutes = inContract.filter((r) => r.name.startsWith('admin.session.'));
const adminRoutes = inContract.filter((r) => r.meta.auth !== 'none').map(({ name, method, path }) => ({
  name,
  method,
  path: path.replace(/:([a-z_]+)/g, (_m, p: string) => sample[p] ?? '1'),
}));

/** What the Express app itself serves under the admin prefix, with `:params` as written. */
function servedAdminRoutes(): string[] {
  type Layer = { route?: { path: unknown; methods: Record<string, boolean> } };
  const app = createApp(t.runtime.deps) as unknown as { router: { stack: Layer[] } };
  return app.router.stack.flatMap(({ route }) =>
    route && typeof route.path === 'string' && route.path.startsWith(ADMIN_PREFIX)
      ? Object.keys(route.methods).filter((m) => m !== '_all').map((m) => `${m.toUpperCase()} ${route.path as string}`)
      : [],
  );
}

describe('every admin route refuses anything but the admin token', () => {
  it('covers the whole admin contract, and the app serves nothing else under the admin prefix', () => {
    expect(adminRoutes.length).toBeGreaterThan(0);
    expect(new Set(adminRoutes.map(key)).size).toBe(adminRoutes.length);
    // The admin router holds exactly the admin paths, and each of them takes the admin token.
    expect(listRoutes(contract.admin).map(({ route }) => key(route)).sort()).toEqual(inContract.map(key).sort());
    expect(inContract.filter((r) => r.meta.auth !== 'admin').map(key).sort()).toEqual(sessionRoutes.map(key).sort());
    expect(sessionRoutes.filter((r) => r.meta.auth !== 'operator').map(key)).toEqual(['POST /api/admin/v1/session']);
    expect(contractRoutes(contract).filter((r) => r.meta.auth === 'admin' && !r.path.startsWith(ADMIN_PREFIX)).map(key)).toEqual([]);
    // No admin route reaches the app around the contract (and so around its auth metadata).
    expect([...new Set(servedAdminRoutes())].sort()).toEqual(inContract.map(key).sort());
  });

  it.each([
    ['no Authorization header', () => ({})],
    ['a wrong admin token', () => ({ authorization: `Bearer adm_${'x'.repeat(43)}` })],
    ['the admin token with a character added', () => ({ authorization: `Bearer ${adminToken(t)}x` })],
    ['the admin token cut short', () => ({ authorization: `Bearer ${adminToken(t).slice(0, -1)}` })],
    ['the admin token in another scheme', () => ({ authorization: `Basic ${adminToken(t)}` })],
    ["a merchant's API key", () => ({ authorization: `Bearer ${apiKey}` })],
    ["a device's access token", () => ({ authorization: `Bearer ${deviceToken}` })],
  ])('%s: 401 UNAUTHORIZED on all of them, and nothing changes', async (_name, headers) => {
    const brandsBefore = await t.sql('SELECT count(*) FROM brands');
    for (const route of adminRoutes) {
      const res = await t.request(route.method, route.path, { headers: headers(), body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {} });
      expect(res.status, `${route.method} ${route.path}`).toBe(401);
      expect(res.body.errors, `${route.method} ${route.path}`).toEqual([{ code: 'UNAUTHORIZED', message: 'Missing or invalid credentials', field: null }]);
    }
    expect(await t.sql('SELECT count(*) FROM brands')).toEqual(brandsBefore);
    expect(await auditCount(t)).toBe(0);
  });

  it('a one-time pairing code is not an admin token either (and stays unused)', async () => {
    const code = await newPairingCode(t, brandId);
    const res = await t.request('GET', '/api/admin/v1/brands', { token: code });
    expect(res.status).toBe(401);
    const [row] = await t.sql<{ n: string }>('SELECT count(*) AS n FROM pairing_codes WHERE used_at IS NOT NULL AND brand_id = $1', [brandId]);
    expect(row!.n).toBe('1');
  });

  it('the admin token does not open the merchant or device API', async () => {
    expect((await t.request('GET', '/api/v1/brand', { token: adminToken(t) })).status).toBe(401);
    expect((await t.request('GET', '/api/mobile/v1/dashboard', { token: adminToken(t) })).status).toBe(401);
  });
});

describe('the audit actor', () => {
  it('is `admin`, or `admin:<label>` from X-Admin-Actor, with the request id', async () => {
    const plain = await adminRequest(t, 'POST', '/brands', { name: 'Actor One' });
    const labelled = await adminRequest(t, 'POST', '/brands', { name: 'Actor Two' }, { 'x-admin-actor': 'alice@ops' });
    expect([plain.status, labelled.status]).toEqual([201, 201]);
    const rows = await auditRows(t, 'brand.create');
    expect(rows.map((r) => [r.actor, r.target_id, r.request_id])).toEqual([
      ['admin', String(plain.body.data.id), plain.headers.get('x-request-id')],
      ['admin:alice@ops', String(labelled.body.data.id), labelled.headers.get('x-request-id')],
    ]);
  });

  it('a malformed label is a 400 naming the header, before anything changes', async () => {
    const before = await auditCount(t);
    const res = await adminRequest(t, 'POST', '/brands', { name: 'Never' }, { 'x-admin-actor': 'robert"); drop table' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ code: 'VALIDATION_ERROR', message: 'Must be 1 to 64 characters of A-Z a-z 0-9 . _ @ : -', field: 'x-admin-actor' }]);
    expect(await t.sql("SELECT id FROM brands WHERE name = 'Never'")).toEqual([]);
    expect(await auditCount(t)).toBe(before);
  });
});

describe('secrets and personal data stay out of the audit log and the logs', () => {
  it('keys, pairing codes, SMS numbers and texts, and the admin token appear in neither', async () => {
    const admin = adminClient(t, 'secops');
    const key = await admin.brands.createApiKey(brandId, { name: 'leak check' });
    const code = await admin.pairingCodes.create(brandId, { ttl_minutes: 5 });
    await admin.outboundSms.enqueue(brandId, { phone: '01712345678', message: 'Your refund of 500 is on its way, Rahim' });
    const device = (await admin.devices.list({ brand_id: brandId })).data[0]!;
    await admin.notifications.send(device.id, { title: 'Hello Rahim', body: 'Call 01712345678' });
    const dump = JSON.stringify(await auditRows(t));
    const logs = t.logs.join('\n');
    for (const secret of [key.key, code.code, code.code.replace('-', ''), '01712345678', '+8801712345678', 'Rahim', adminToken(t)]) {
      expect(dump).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
    const rows = await auditRows(t);
    expect(rows.slice(-4).map((r) => [r.action, r.after])).toEqual([
      ['api_key.create', { prefix: key.prefix, mode: 'live', dialect: 'native', scopes: null, expires_at: null, revoked: false }],
      ['pairing_code.create', { mode: 'live', expires_at: code.expires_at }],
      ['outbound_sms.enqueue', { status: 'pending', device_id: null }],
      ['notification.send', { device_id: device.id }],
    ]);
  });
});
