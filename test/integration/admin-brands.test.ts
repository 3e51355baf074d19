import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { newPairingCode } from '../support/device.ts';
import { adminRequest, auditCount, auditRows } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('brands', () => {
  it('create, get, list (paged, filtered) and update name, time zone and status', async () => {
    const created = await adminRequest(t, 'POST', '/brands', { name: '  Corner Shop ', timezone: 'Asia/Dhaka' });
    expect(created.status).toBe(201);
    const brand = created.body.data;
    expect(brand).toEqual({ id: expect.any(Number), uuid: expect.any(String), name: 'Corner Shop', timezone: 'Asia/Dhaka', status: 'active', receipts_enabled: false, primary_color: null, support_phone: null, support_email: null, logo: null, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) });
    expect((await adminRequest(t, 'GET', `/brands/${brand.id}`)).body.data).toEqual(brand);

    const second = (await adminRequest(t, 'POST', '/brands', { name: 'Second' })).body.data;
    expect(second.timezone).toBe('UTC');
    const page = await adminRequest(t, 'GET', '/brands?per_page=1&page=2');
    expect(page.body.data).toEqual([second]);
    expect(page.body.meta).toEqual({ page: 2, per_page: 1, total: 2, total_pages: 2 });

    const updated = await adminRequest(t, 'PATCH', `/brands/${brand.id}`, { status: 'disabled', timezone: 'Europe/Berlin', name: 'Corner Shop Ltd' });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: brand.id, name: 'Corner Shop Ltd', timezone: 'Europe/Berlin', status: 'disabled' });
    const disabled = await adminRequest(t, 'GET', '/brands?status=disabled');
    expect(disabled.body.data.map((b: { id: number }) => b.id)).toEqual([brand.id]);
    expect((await auditRows(t, 'brand.update')).map((r) => [r.target_id, r.before, r.after])).toEqual([
      [String(brand.id), { status: 'active', timezone: 'Asia/Dhaka', receipts_enabled: false, primary_color: null, support_phone: null, support_email: null }, { status: 'disabled', timezone: 'Europe/Berlin', receipts_enabled: false, primary_color: null, support_phone: null, support_email: null }],
    ]);
  });

  it('disabling a brand stops its API keys at once; enabling restores them', async () => {
    const { brandId, apiKey } = await t.createBrand('Toggle Brand');
    expect((await t.request('GET', '/api/v1/brand', { token: apiKey })).status).toBe(200);
    await adminRequest(t, 'PATCH', `/brands/${brandId}`, { status: 'disabled' });
    expect((await t.request('GET', '/api/v1/brand', { token: apiKey })).status).toBe(401);
    await adminRequest(t, 'PATCH', `/brands/${brandId}`, { status: 'active' });
    expect((await t.request('GET', '/api/v1/brand', { token: apiKey })).status).toBe(200);
  });

  it('a name-only change is not an audited change', async () => {
    const { brandId } = await t.createBrand('Rename Me');
    const before = await auditCount(t);
    expect((await adminRequest(t, 'PATCH', `/brands/${brandId}`, { name: 'Renamed' })).body.data.name).toBe('Renamed');
    expect(await auditCount(t)).toBe(before);
  });

  it.each([
    ['POST', '/brands', {}, 'name', 'name is required'],
    ['POST', '/brands', { name: '   ' }, 'name', 'name is required'],
    ['POST', '/brands', { name: 'X', timezone: '+06:00' }, 'timezone', 'Must be an IANA time zone name, e.g. "Asia/Dhaka" or "UTC"'],
    ['POST', '/brands', { name: 'X', timezone: 'Mars/Olympus' }, 'timezone', 'Unknown time zone; use an IANA name such as "Asia/Dhaka" or "UTC"'],
    ['POST', '/brands', { name: 'X', owner: 'me' }, 'owner', 'Unknown field `owner`'],
    ['PATCH', '/brands/1', { status: 'paused' }, 'status', expect.stringContaining('Invalid option')],
    ['PATCH', '/brands/1', {}, 'body', 'Give at least one of name, timezone, status, receipts_enabled, primary_color, support_phone, support_email'],
    ['GET', '/brands?per_page=101', undefined, 'per_page', 'Must be between 1 and 100'],
    ['GET', '/brands?status=gone', undefined, 'status', expect.stringContaining('Invalid option')],
    ['GET', '/brands/abc', undefined, 'brand_id', 'Must be a brand id (a positive whole number)'],
    ['GET', '/brands/0', undefined, 'brand_id', 'Must be a brand id (a positive whole number)'],
  ])('%s %s %j: 400 naming %s', async (method, path, body, field, message) => {
    const res = await adminRequest(t, method, path, body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ code: 'VALIDATION_ERROR', message, field }]);
  });

  it('unknown brands: 404 BRAND_NOT_FOUND everywhere', async () => {
    for (const [method, path, body] of [
      ['GET', '/brands/999999', undefined],
      ['PATCH', '/brands/999999', { status: 'disabled' }],
      ['POST', '/brands/999999/api-keys', { name: 'k' }],
      ['GET', '/brands/999999/api-keys', undefined],
      ['POST', '/brands/999999/api-keys/1/revocations', undefined],
    ] as const) {
      const res = await adminRequest(t, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.errors[0].code).toBe('BRAND_NOT_FOUND');
    }
  });
});

describe('API keys', () => {
  it('create shows the key once; it works; the list shows prefix and last use, never the key; revoke stops it', async () => {
    const { brandId } = await t.createBrand('Key Brand');
    const created = await adminRequest(t, 'POST', `/brands/${brandId}/api-keys`, { name: 'shop backend', mode: 'test' });
    expect(created.status).toBe(201);
    const key = created.body.data;
    expect(key).toEqual({
      id: expect.any(Number),
      brand_id: brandId,
      name: 'shop backend',
      prefix: key.key.slice(0, 12),
      mode: 'test',
      dialect: 'native',
      key: expect.stringMatching(/^sk_test_[0-9A-Za-z]{40}$/),
      created_at: expect.stringMatching(ISO),
      last_used_at: null,
      revoked_at: null,
      scopes: null,
      expires_at: null,
    });
    expect((await t.request('GET', '/api/v1/brand', { token: key.key })).body.data.id).toBe(brandId);

    const list = await adminRequest(t, 'GET', `/brands/${brandId}/api-keys`);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(key.key);
    const listed = list.body.data.find((k: { id: number }) => k.id === key.id);
    expect(listed).toEqual({ ...key, key: undefined, last_used_at: expect.stringMatching(ISO) });
    expect(Object.keys(listed)).not.toContain('key');
    expect(list.body.data.map((k: { id: number }) => k.id)[0]).toBe(key.id);

    const revoked = await adminRequest(t, 'POST', `/brands/${brandId}/api-keys/${key.id}/revocations`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revoked_at).toMatch(ISO);
    expect((await t.request('GET', '/api/v1/brand', { token: key.key })).status).toBe(401);
    // A repeat answers the key as it is and records nothing new.
    const again = await adminRequest(t, 'POST', `/brands/${brandId}/api-keys/${key.id}/revocations`, {});
    expect(again.body.data.revoked_at).toBe(revoked.body.data.revoked_at);

    expect((await auditRows(t)).filter((r) => r.target_type === 'api_key' && r.target_id === String(key.id)).map((r) => [r.action, r.brand_id, r.before, r.after])).toEqual([
      ['api_key.create', String(brandId), null, { prefix: key.prefix, mode: 'test', dialect: 'native', scopes: null, expires_at: null, revoked: false }],
      ['api_key.revoke', String(brandId), { prefix: key.prefix, revoked: false }, { prefix: key.prefix, revoked: true }],
    ]);
  });

  it('another brand’s key id is API_KEY_NOT_FOUND, and stays valid', async () => {
    const a = await t.createBrand('Brand A');
    const b = await t.createBrand('Brand B');
    const [keyOfB] = await t.sql<{ id: string }>('SELECT id FROM api_keys WHERE brand_id = $1', [b.brandId]);
    const res = await adminRequest(t, 'POST', `/brands/${a.brandId}/api-keys/${keyOfB!.id}/revocations`);
    expect(res.status).toBe(404);
    expect(res.body.errors).toEqual([{ code: 'API_KEY_NOT_FOUND', message: 'API key not found', field: null }]);
    expect((await t.request('GET', '/api/v1/brand', { token: b.apiKey })).status).toBe(200);
  });

  it('bad input: 400 naming the field, and no key or audit row is made', async () => {
    const { brandId } = await t.createBrand('Bad Key Brand');
    const keys = await t.sql('SELECT id FROM api_keys WHERE brand_id = $1', [brandId]);
    const audits = await auditCount(t);
    for (const [body, field] of [
      [{}, 'name'],
      [{ name: 'x', mode: 'prod' }, 'mode'],
      [{ name: 'x', scopes: ['all'] }, 'scopes.0'],
      [{ name: 'x', owner: 'me' }, 'owner'],
    ] as const) {
      const res = await adminRequest(t, 'POST', `/brands/${brandId}/api-keys`, body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    expect(await t.sql('SELECT id FROM api_keys WHERE brand_id = $1', [brandId])).toEqual(keys);
    expect(await auditCount(t)).toBe(audits);
  });

  it('a disabled brand also stops its pairing codes', async () => {
    const { brandId } = await t.createBrand('Paused Pairing');
    const code = await newPairingCode(t, brandId);
    await adminRequest(t, 'PATCH', `/brands/${brandId}`, { status: 'disabled' });
    const res = await t.request('POST', '/api/mobile/v1/devices/pairings', { token: code, body: { fingerprint: 'f'.repeat(64), device_name: 'x' } });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].code).toBe('INVALID_PAIRING_CODE');
  });
});

describe('API key last use', () => {
  it('is written on use at most once a minute', async () => {
    const { brandId, apiKey } = await t.createBrand('Last Use Brand');
    const lastUsed = async () => (await adminRequest(t, 'GET', `/brands/${brandId}/api-keys`)).body.data[0].last_used_at;
    expect(await lastUsed()).toBeNull();
    await t.request('GET', '/api/v1/brand', { token: apiKey });
    const first = await lastUsed();
    expect(first).toMatch(ISO);
    await t.request('GET', '/api/v1/brand', { token: apiKey });
    expect(await lastUsed()).toBe(first);
    await t.sql("UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE brand_id = $1", [brandId]);
    const stale = await lastUsed();
    await t.request('GET', '/api/v1/brand', { token: apiKey });
    const refreshed = await lastUsed();
    expect(Date.parse(refreshed)).toBeGreaterThan(Date.parse(stale) + 100_000);
  });
});
