import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, newFingerprint, newPairingCode, pairDevice } from '../support/device.ts';

// TRUST_PROXY (one proxy hop) lets the test speak from many client addresses through X-Forwarded-For.
const env = {
  TRUST_PROXY: '1',
  RATE_LIMIT_PAIRING: '3/86400',
  RATE_LIMIT_PAIRING_GLOBAL: '6/86400',
  RATE_LIMIT_TOKEN_REFRESH: '2/86400',
  RATE_LIMIT_API_KEY: '2/86400',
  WORKERS_ENABLED: 'false',
};

let t: TestContext;
let lastOctet = 10;
const newAddress = () => `198.51.100.${lastOctet++}`;

beforeAll(async () => {
  t = await startTestServer(env);
});
afterAll(() => t?.close());

function pair(code: string, address: string) {
  return t.request('POST', `${DEVICE_API}/devices/pairings`, {
    token: code,
    headers: { 'x-forwarded-for': address },
    body: { fingerprint: newFingerprint(), device_name: 'Phone' },
  });
}

/** The code-space counter; a successful pairing gives its hit back just after answering, so wait for it to settle. */
async function expectGlobalHits(expected: number) {
  await vi.waitFor(async () => {
    const [row] = await t.sql<{ hits: number }>("SELECT hits FROM rate_limits WHERE bucket = 'pairing-global'");
    expect(row?.hits).toBe(expected);
  });
}

const wrongCode = () => `${Math.random().toString(36).slice(2, 7)}-ZZZZZ`.toUpperCase().replace(/[ILOU]/g, '7');

describe('pairing code guessing', () => {
  it('per address: after 3 attempts even the right code is refused with 429 until the window ends', async () => {
    const { brandId } = await t.createBrand('Pairing A');
    const address = newAddress();
    for (let i = 0; i < 3; i++) expect((await pair(wrongCode(), address)).status).toBe(401);
    const code = await newPairingCode(t, brandId);
    const refused = await pair(code, address);
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].code).toBe('RATE_LIMITED');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('ratelimit-policy')).toBe('"pairing";q=3;w=86400, "pairing-global";q=6;w=86400');
    // The refused attempt did not consume the code: the phone can pair from elsewhere.
    expect((await pair(code, newAddress())).status).toBe(201);
  });

  it('across the code space: wrong guesses from many addresses exhaust the global budget; correct pairings do not spend it', async () => {
    // Earlier tests left 3 failures in the global bucket; fill it to 6 from fresh addresses.
    await expectGlobalHits(3);
    const { brandId } = await t.createBrand('Pairing B');
    for (let i = 0; i < 3; i++) {
      expect((await pair(await newPairingCode(t, brandId), newAddress())).status).toBe(201);
      // The success gives its hit back just after answering: let it land, or the next guess may
      // be counted while the budget still holds it (and be refused with 429 one guess early).
      await expectGlobalHits(3 + i);
      expect((await pair(wrongCode(), newAddress())).status).toBe(401);
    }
    await expectGlobalHits(6);
    const blocked = await pair(wrongCode(), newAddress());
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('ratelimit')).toMatch(/"pairing-global";r=0;t=\d+$/);
    // Refusals by the limiter are not guesses: the count stays at the limit.
    await expectGlobalHits(6);
  });

  it('the code-space count holds under concurrent guesses from many addresses', async () => {
    await t.sql("UPDATE rate_limits SET hits = 0 WHERE bucket = 'pairing-global'");
    const results = await Promise.all(Array.from({ length: 20 }, () => pair(wrongCode(), newAddress())));
    expect(results.filter((r) => r.status === 401)).toHaveLength(6);
    expect(results.filter((r) => r.status === 429)).toHaveLength(14);
    await expectGlobalHits(6);
  });
});

describe('token refresh', () => {
  it('is limited per address whatever token is presented', async () => {
    await t.sql("UPDATE rate_limits SET hits = 0 WHERE bucket = 'pairing-global'");
    const device = await pairDevice(t);
    const address = newAddress();
    const refresh = (token: string) =>
      t.request('POST', `${DEVICE_API}/devices/token-refreshes`, {
        headers: { 'x-forwarded-for': address },
        body: { refresh_token: token, fingerprint: device.fingerprint },
      });
    expect((await refresh('not-a-jwt')).status).toBe(401);
    const ok = await refresh(device.refreshToken);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit')).toMatch(/^"token-refresh";r=0;t=\d+$/);
    const limited = await refresh(ok.body.data.refresh_token);
    expect(limited.status).toBe(429);
    // The refused refresh did not rotate (or burn) the token: it still works from another address.
    const elsewhere = await t.request('POST', `${DEVICE_API}/devices/token-refreshes`, {
      headers: { 'x-forwarded-for': newAddress() },
      body: { refresh_token: ok.body.data.refresh_token, fingerprint: device.fingerprint },
    });
    expect(elsewhere.status).toBe(200);
  });
});

describe('a refused request has no effect', () => {
  it('does not claim its Idempotency-Key nor create anything', async () => {
    const { apiKey, brandId } = await t.createBrand('Idempotent');
    for (let i = 0; i < 2; i++) expect((await t.request('GET', '/api/v1/brand', { token: apiKey })).status).toBe(200);
    const res = await t.request('POST', '/api/v1/payments', {
      token: apiKey,
      headers: { 'idempotency-key': 'limited-1' },
      body: { amount: '10.00', currency: 'BDT' },
    });
    expect(res.status).toBe(429);
    expect(await t.sql('SELECT 1 FROM idempotency_keys WHERE brand_id = $1', [brandId])).toEqual([]);
    expect(await t.sql('SELECT 1 FROM payment_intents WHERE brand_id = $1', [brandId])).toEqual([]);
  });
});

describe('limiter store failure', () => {
  it('fails open: requests pass uncounted and without headers, one warning is logged, and limiting resumes with the store', async () => {
    const { apiKey } = await t.createBrand('Fail open');
    await t.sql('ALTER TABLE rate_limits RENAME TO rate_limits_gone');
    try {
      for (let i = 0; i < 4; i++) {
        const res = await t.request('GET', '/api/v1/brand', { token: apiKey });
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await t.sql('ALTER TABLE rate_limits_gone RENAME TO rate_limits');
    }
    const warnings = t.logs.filter((l) => l.includes('rate limiter unavailable'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 'warn', err: { message: expect.stringContaining('rate_limits') } });
    expect((await t.request('GET', '/api/v1/brand', { token: apiKey })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/brand', { token: apiKey })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/brand', { token: apiKey })).status).toBe(429);
  });
});

describe('logs', () => {
  it('name the exhausted quota, never the address, code or key', async () => {
    const limited = t.logs.filter((l) => l.includes('"rate limited"'));
    expect(limited.length).toBeGreaterThan(0);
    expect(limited.some((l) => l.includes('"pairing-global"'))).toBe(true);
    expect(t.logs.join('\n')).not.toMatch(/198\.51\.100\./);
  });
});
