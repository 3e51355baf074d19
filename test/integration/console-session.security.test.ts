import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentTotpCode } from '../../server/domain/operators/totp.ts';
import { sha256Hex } from '../../server/infra/crypto/tokens.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { auditRows } from './admin-support.ts';
import { consoleRequest, loginAs, newOperator, PASSWORD, session } from './console-support.ts';

let t: TestContext;

beforeAll(async () => {
  // One reverse proxy in front: X-Forwarded-Proto tells whether the browser used TLS.
  t = await startTestServer({ WORKERS_ENABLED: 'false', TRUST_PROXY: '1' });
});
afterAll(() => t?.close());

const sessionRows = (operatorId: string) => t.sql<{ token_hash: string; last_seen_at: Date; expires_at: Date }>('SELECT * FROM operator_sessions WHERE operator_id = $1', [operatorId]);
const brandCount = async () => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM brands'))[0]!.n);

describe('console login', () => {
  it('starts a session: HttpOnly SameSite=Strict cookie, CSRF token, only the token hash stored', async () => {
    const op = await newOperator(t, 'owner');
    const res = await loginAs(t, op.email.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.body.data.operator).toMatchObject({ id: op.id, email: op.email, role: 'owner', brand_ids: null, totp_enabled: false });
    expect(res.body.data.operator.last_login_at).not.toBeNull();
    expect(res.body.data.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const attrs = res.setCookie.split(';').map((a) => a.trim().toLowerCase());
    expect(attrs).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']));
    expect(attrs).not.toContain('secure');
    const token = res.setCookie.split(';')[0]!.split('=')[1]!;
    const rows = await sessionRows(op.id);
    expect(rows.map((r) => r.token_hash)).toEqual([sha256Hex(token)]);
    expect(JSON.stringify(await t.sql('SELECT * FROM operator_sessions'))).not.toContain(token);
    // The session reads the admin API and tells the console who is signed in.
    const s = { cookie: res.setCookie.split(';')[0]!, csrf: res.body.data.csrf_token, setCookie: res.setCookie, operatorId: op.id };
    const me = await consoleRequest(t, s, 'GET', '/session');
    expect(me.status).toBe(200);
    expect(me.body.data).toEqual({ operator: expect.objectContaining({ id: op.id }), csrf_token: s.csrf });
    expect((await consoleRequest(t, s, 'GET', '/brands')).status).toBe(200);
  });

  it('marks the cookie Secure when the browser came over TLS (X-Forwarded-Proto from the trusted proxy)', async () => {
    const op = await newOperator(t, 'viewer');
    const res = await loginAs(t, op.email, PASSWORD, {}, { 'x-forwarded-proto': 'https' });
    expect(res.status).toBe(200);
    expect(res.setCookie.split(';').map((a) => a.trim().toLowerCase())).toContain('secure');
  });

  it('answers a wrong password and an unknown e-mail alike: 401 INVALID_CREDENTIALS, no cookie', async () => {
    const op = await newOperator(t, 'operator');
    const wrong = await loginAs(t, op.email, 'not the password at all');
    const unknown = await loginAs(t, 'nobody@example.com', PASSWORD);
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body.errors).toEqual([{ code: 'INVALID_CREDENTIALS', message: 'Wrong e-mail, password or code', field: null }]);
      expect(res.setCookie).toBe('');
    }
    expect(await sessionRows(op.id)).toEqual([]);
  });

  it('locks the account after 5 failures in 15 minutes, even against the right password', async () => {
    const op = await newOperator(t, 'operator');
    for (let i = 0; i < 5; i++) expect((await loginAs(t, op.email, `wrong ${i} password`)).status).toBe(401);
    const locked = await loginAs(t, op.email);
    expect(locked.status).toBe(429);
    expect(locked.body.errors[0].code).toBe('ACCOUNT_LOCKED');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(locked.setCookie).toBe('');
    // When the lock has passed, the right password works and clears the count.
    await t.sql(`UPDATE operators SET locked_until = now() - interval '1 second' WHERE id = $1`, [op.id]);
    expect((await loginAs(t, op.email)).status).toBe(200);
    expect((await t.sql<{ failed_logins: number }>('SELECT failed_logins FROM operators WHERE id = $1', [op.id]))[0]!.failed_logins).toBe(0);
  });

  it('failures spread over more than 15 minutes do not lock', async () => {
    const op = await newOperator(t, 'operator');
    for (let i = 0; i < 4; i++) await loginAs(t, op.email, 'wrong password here');
    await t.sql(`UPDATE operators SET failed_logins_since = now() - interval '16 minutes' WHERE id = $1`, [op.id]);
    for (let i = 0; i < 2; i++) await loginAs(t, op.email, 'wrong password here');
    expect((await loginAs(t, op.email)).status).toBe(200);
  });

  it('refuses a disabled operator like a wrong password', async () => {
    const op = await newOperator(t, 'operator');
    await t.sql('UPDATE operators SET disabled = true WHERE id = $1', [op.id]);
    const res = await loginAs(t, op.email);
    expect([res.status, res.body.errors[0].code]).toEqual([401, 'INVALID_CREDENTIALS']);
  });
});

describe('console session', () => {
  it('without a cookie, or with an unknown one, the admin API is 401', async () => {
    expect((await t.request('GET', '/api/admin/v1/session')).status).toBe(401);
    const res = await t.request('GET', '/api/admin/v1/brands', { headers: { cookie: `pc_admin_session=${'x'.repeat(43)}` } });
    expect([res.status, res.body.errors[0].code]).toEqual([401, 'UNAUTHORIZED']);
  });

  it('ends after 30 idle minutes, and at the absolute end, deleting the row', async () => {
    const op = await newOperator(t, 'viewer');
    const idle = await session(t, op.email);
    await t.sql(`UPDATE operator_sessions SET last_seen_at = now() - interval '31 minutes' WHERE operator_id = $1`, [op.id]);
    expect((await consoleRequest(t, idle, 'GET', '/session')).status).toBe(401);
    expect(await sessionRows(op.id)).toEqual([]);

    const old = await session(t, op.email);
    await t.sql(`UPDATE operator_sessions SET expires_at = now() - interval '1 second' WHERE operator_id = $1`, [op.id]);
    expect((await consoleRequest(t, old, 'GET', '/brands')).status).toBe(401);
    expect(await sessionRows(op.id)).toEqual([]);
  });

  it('slides the idle timeout with use', async () => {
    const op = await newOperator(t, 'viewer');
    const s = await session(t, op.email);
    await t.sql(`UPDATE operator_sessions SET last_seen_at = now() - interval '29 minutes' WHERE operator_id = $1`, [op.id]);
    expect((await consoleRequest(t, s, 'GET', '/brands')).status).toBe(200);
    const [row] = await sessionRows(op.id);
    expect(Date.now() - new Date(row!.last_seen_at).getTime()).toBeLessThan(60_000);
  });

  it('logout deletes the session and clears the cookie', async () => {
    const op = await newOperator(t, 'viewer');
    const s = await session(t, op.email);
    const res = await fetch(`${t.baseUrl}/api/admin/v1/session`, { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    expect(res.status).toBe(204);
    expect(res.headers.getSetCookie().find((c) => c.startsWith('pc_admin_session=;'))).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(await sessionRows(op.id)).toEqual([]);
    expect((await consoleRequest(t, s, 'GET', '/session')).status).toBe(401);
  });

  it('the admin token opens no self-service route: it names no operator', async () => {
    const res = await t.request('GET', '/api/admin/v1/session', { token: t.runtime.deps.secrets.adminToken });
    expect(res.status).toBe(401);
  });
});

describe('CSRF', () => {
  it('a change without the X-CSRF-Token, or with a wrong one, is 403 CSRF_TOKEN_INVALID and changes nothing', async () => {
    const op = await newOperator(t, 'owner');
    const s = await session(t, op.email);
    const other = await session(t, (await newOperator(t, 'owner')).email);
    const before = await brandCount();
    for (const csrf of [null, 'wrong', other.csrf]) {
      const res = await consoleRequest(t, s, 'POST', '/brands', { name: 'Forged' }, { csrf });
      expect([res.status, res.body.errors[0].code]).toEqual([403, 'CSRF_TOKEN_INVALID']);
    }
    const logout = await consoleRequest(t, s, 'DELETE', '/session', undefined, { csrf: null });
    expect(logout.status).toBe(403);
    expect(await brandCount()).toBe(before);
    expect(await sessionRows(op.id)).toHaveLength(1);
    const ok = await consoleRequest(t, s, 'POST', '/brands', { name: 'Real' });
    expect(ok.status).toBe(201);
    expect(await brandCount()).toBe(before + 1);
  });
});

describe('audit identity', () => {
  it('records the operator as `operator:<uuid> <email>`, ignoring X-Admin-Actor', async () => {
    const op = await newOperator(t, 'owner');
    const s = await session(t, op.email);
    const res = await t.request('POST', '/api/admin/v1/brands', { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, 'x-admin-actor': 'someone-else' }, body: { name: 'Audited' } });
    expect(res.status).toBe(201);
    const rows = (await auditRows(t, 'brand.create')).filter((r) => r.target_id === String(res.body.data.id));
    expect(rows.map((r) => r.actor)).toEqual([`operator:${op.id} ${op.email}`]);
  });
});

describe('TOTP', () => {
  it('enrols, then login needs the code; a wrong or replayed code is refused; the secret is encrypted', async () => {
    const op = await newOperator(t, 'operator');
    const s = await session(t, op.email);
    const start = await consoleRequest(t, s, 'POST', '/session/totp');
    expect(start.status).toBe(200);
    const secret: string = start.body.data.secret;
    expect(start.body.data.otpauth_url).toMatch(/^otpauth:\/\/totp\//);
    // Pending only: login does not need a code yet.
    expect((await loginAs(t, op.email)).status).toBe(200);
    expect((await consoleRequest(t, s, 'POST', '/session/totp/confirm', { code: '000000' === currentTotpCode(secret) ? '111111' : '000000' })).body.errors[0].code).toBe('INVALID_CREDENTIALS');
    // The confirmation's code and time are kept: the replay below sends this very
    // code, which stays within the one-step drift allowance when the 30 s window
    // turns over during the test (a code recomputed then would be a new one).
    const confirmedAt = Date.now();
    const confirmedCode = currentTotpCode(secret, confirmedAt);
    const confirm = await consoleRequest(t, s, 'POST', '/session/totp/confirm', { code: confirmedCode });
    expect([confirm.status, confirm.body.data.totp_enabled]).toEqual([200, true]);
    const [row] = await t.sql<{ totp_secret: string }>('SELECT totp_secret FROM operators WHERE id = $1', [op.id]);
    expect(row!.totp_secret).toMatch(/^v2\./);
    expect(row!.totp_secret).not.toContain(secret);

    const missing = await loginAs(t, op.email);
    expect([missing.status, missing.body.errors[0].code, missing.setCookie]).toEqual([401, 'TOTP_REQUIRED', '']);
    const wrong = await loginAs(t, op.email, PASSWORD, { totp_code: currentTotpCode(secret, Date.now() - 5 * 60_000) });
    expect([wrong.status, wrong.body.errors[0].code]).toEqual([401, 'INVALID_CREDENTIALS']);
    // The code of the confirmation was used already.
    const replay = await loginAs(t, op.email, PASSWORD, { totp_code: confirmedCode });
    expect(replay.status).toBe(401);
    const next = currentTotpCode(secret, confirmedAt + 30_000);
    const ok = await loginAs(t, op.email, PASSWORD, { totp_code: next });
    expect(ok.status).toBe(200);
    expect(ok.body.data.operator.totp_enabled).toBe(true);

    // Turning it off needs a fresh code too.
    await t.sql('UPDATE operators SET totp_last_step = NULL WHERE id = $1', [op.id]);
    const off = await consoleRequest(t, s, 'DELETE', '/session/totp', { code: currentTotpCode(secret) });
    expect([off.status, off.body.data?.totp_enabled]).toEqual([200, false]);
    expect((await loginAs(t, op.email)).status).toBe(200);
  });
});

describe('own password', () => {
  it('changes with the current password and ends the other sessions', async () => {
    const op = await newOperator(t, 'viewer');
    const a = await session(t, op.email);
    const b = await session(t, op.email);
    const wrong = await consoleRequest(t, a, 'POST', '/session/password', { current_password: 'nope', new_password: 'a brand new password' });
    expect([wrong.status, wrong.body.errors[0].code]).toEqual([401, 'INVALID_CREDENTIALS']);
    const short = await consoleRequest(t, a, 'POST', '/session/password', { current_password: PASSWORD, new_password: 'short' });
    expect(short.status).toBe(400);
    expect((await consoleRequest(t, a, 'POST', '/session/password', { current_password: PASSWORD, new_password: 'a brand new password' })).status).toBe(204);
    expect((await consoleRequest(t, a, 'GET', '/session')).status).toBe(200);
    expect((await consoleRequest(t, b, 'GET', '/session')).status).toBe(401);
    expect((await loginAs(t, op.email)).status).toBe(401);
    expect((await loginAs(t, op.email, 'a brand new password')).status).toBe(200);
  });
});
