import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPairingCode } from '../../server/domain/devices/pairing.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, newFingerprint, newPairingCode } from '../support/device.ts';

let t: TestContext;
let brandId: number;

beforeAll(async () => {
  t = await startTestServer();
  ({ brandId } = await t.createBrand('Pairing Errors'));
});
afterAll(() => t?.close());

const pair = (code: string | undefined, body: Record<string, unknown> = { fingerprint: newFingerprint(), device_name: 'Phone' }, headers: Record<string, string> = {}) =>
  t.request('POST', `${DEVICE_API}/devices/pairings`, { token: code, body, headers });

function expectCode(res: { status: number; body: any }, status: number, code: string, field?: string | null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.errors[0].code).toBe(code);
  if (field !== undefined) expect(res.body.errors[0].field).toBe(field);
}

const deviceCount = async () => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM devices WHERE brand_id = $1', [brandId]))[0]!.n);

describe('rejected pairing codes: 401 INVALID_PAIRING_CODE with the spec message', () => {
  it('no Authorization header', async () => {
    const res = await pair(undefined);
    expectCode(res, 401, 'INVALID_PAIRING_CODE', null);
    expect(res.body.error).toBe('Invalid pairing code');
  });

  it('a code that was never issued, and text that cannot be a code', async () => {
    expectCode(await pair('ABCDE-FGHJK'), 401, 'INVALID_PAIRING_CODE');
    expectCode(await pair('short'), 401, 'INVALID_PAIRING_CODE');
    expectCode(await pair('U'.repeat(10)), 401, 'INVALID_PAIRING_CODE');
  });

  it('a code used once already', async () => {
    const code = await newPairingCode(t, brandId);
    const before = await deviceCount();
    expect((await pair(code)).status).toBe(201);
    expectCode(await pair(code), 401, 'INVALID_PAIRING_CODE');
    expect(await deviceCount()).toBe(before + 1);
  });

  it('an expired code', async () => {
    const code = await newPairingCode(t, brandId);
    await t.sql("UPDATE pairing_codes SET created_at = now() - interval '20 minutes', expires_at = now() - interval '1 second' WHERE used_at IS NULL AND brand_id = $1", [brandId]);
    const before = await deviceCount();
    expectCode(await pair(code), 401, 'INVALID_PAIRING_CODE');
    expect(await deviceCount()).toBe(before);
    const [row] = await t.sql<any>('SELECT used_at FROM pairing_codes WHERE brand_id = $1 ORDER BY id DESC LIMIT 1', [brandId]);
    expect(row.used_at).toBeNull();
  });

  it('a code of a disabled brand', async () => {
    const other = await t.createBrand('Disabled');
    const code = await newPairingCode(t, other.brandId);
    await t.sql("UPDATE brands SET status = 'disabled' WHERE id = $1", [other.brandId]);
    expectCode(await pair(code), 401, 'INVALID_PAIRING_CODE');
  });

  it('two phones racing for one code: exactly one wins', async () => {
    const code = await newPairingCode(t, brandId);
    const before = await deviceCount();
    const results = await Promise.all(Array.from({ length: 6 }, () => pair(code)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 401, 401, 401, 401, 401]);
    for (const r of results.filter((x) => x.status === 401)) expect(r.body.errors[0].code).toBe('INVALID_PAIRING_CODE');
    expect(await deviceCount()).toBe(before + 1);
    const winner = results.find((r) => r.status === 201)!.body.data.device_id;
    const [pc] = await t.sql<any>(
      'SELECT d.uuid FROM pairing_codes pc JOIN devices d ON d.id = pc.used_by_device_id WHERE pc.brand_id = $1 ORDER BY pc.id DESC LIMIT 1',
      [brandId],
    );
    expect(pc.uuid).toBe(winner);
  });

  it('body and header fingerprints that disagree', async () => {
    const code = await newPairingCode(t, brandId);
    expectCode(await pair(code, { fingerprint: newFingerprint(), device_name: 'Phone' }, { 'X-Device-Fingerprint': newFingerprint() }), 401, 'INVALID_PAIRING_CODE');
  });
});

describe('bad input: 400 VALIDATION_ERROR naming the field, and the code stays usable', () => {
  it.each([
    ['device_name missing', { fingerprint: 'a'.repeat(64) }, 'device_name'],
    ['device_name blank', { fingerprint: 'a'.repeat(64), device_name: '   ' }, 'device_name'],
    ['device_name too long', { fingerprint: 'a'.repeat(64), device_name: 'x'.repeat(101) }, 'device_name'],
    ['fingerprint missing (no header either)', { device_name: 'Phone' }, 'fingerprint'],
    ['fingerprint too short', { fingerprint: 'abc', device_name: 'Phone' }, 'fingerprint'],
    ['fingerprint with spaces', { fingerprint: 'a b'.repeat(10), device_name: 'Phone' }, 'fingerprint'],
    ['app_version not a string', { fingerprint: 'a'.repeat(64), device_name: 'Phone', app_version: 2 }, 'app_version'],
    ['unknown field', { fingerprint: 'a'.repeat(64), device_name: 'Phone', admin: true }, 'admin'],
  ])('%s', async (_name, body, field) => {
    const code = await newPairingCode(t, brandId);
    expectCode(await pair(code, body), 400, 'VALIDATION_ERROR', field);
    expect((await pair(code)).status).toBe(201);
  });

  it('a malformed header fingerprint names the header', async () => {
    const code = await newPairingCode(t, brandId);
    expectCode(await pair(code, { device_name: 'Phone' }, { 'X-Device-Fingerprint': 'short' }), 400, 'VALIDATION_ERROR', 'x-device-fingerprint');
  });
});

describe('createPairingCode', () => {
  it('refuses a time to live outside 1 minute .. 7 days, and unknown brands', async () => {
    const em = () => t.runtime.deps.db;
    await expect(createPairingCode(em(), brandId, { ttlMinutes: 0 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', field: 'ttl_minutes' });
    await expect(createPairingCode(em(), brandId, { ttlMinutes: 7 * 24 * 60 + 1 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(createPairingCode(em(), brandId, { ttlMinutes: 1.5 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(createPairingCode(em(), 999_999, {})).rejects.toMatchObject({ code: 'BRAND_NOT_FOUND' });
    const ok = await createPairingCode(em(), brandId, { ttlMinutes: 7 * 24 * 60 });
    expect(ok.expiresAt.getTime() - Date.now()).toBeGreaterThan(7 * 24 * 3600 * 1000 - 60_000);
  });

  it('stores only a hash of the code', async () => {
    const { code } = await createPairingCode(t.runtime.deps.db, brandId);
    const dump = JSON.stringify(await t.sql('SELECT * FROM pairing_codes'));
    expect(dump).not.toContain(code);
    expect(dump).not.toContain(code.replace('-', ''));
  });
});
