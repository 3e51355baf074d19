import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentTotpCode } from '../../server/domain/operators/totp.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { auditRows } from './admin-support.ts';
import { consoleRequest, loginAs, newOperator, PASSWORD, session, type ConsoleSession } from './console-support.ts';

/**
 * The signed-in operator's own account routes are guarded like login (rate limit
 * per address, failures count toward the lock-out), session events are audited
 * without secrets, and over TLS the cookie is `__Host-` prefixed and HSTS is sent.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', TRUST_PROXY: '1' });
});
afterAll(() => t?.close());

const operatorAudit = async (operatorId: string) =>
  (await auditRows(t)).filter((r) => r.target_type === 'operator' && r.target_id === operatorId);

async function enrolTotp(s: ConsoleSession): Promise<string> {
  const start = await consoleRequest(t, s, 'POST', '/session/totp');
  expect(start.status).toBe(200);
  return start.body.data.secret as string;
}

describe('lock-out from the own-account routes', () => {
  it('wrong current passwords lock the account: then 429 ACCOUNT_LOCKED, even for login with the right password', async () => {
    const op = await newOperator(t, 'viewer');
    const s = await session(t, op.email);
    for (let i = 0; i < 5; i++) {
      const res = await consoleRequest(t, s, 'POST', '/session/password', { current_password: `wrong guess ${i}`, new_password: 'a brand new password 1' });
      expect(res.status).toBe(401);
      expect(res.body.errors[0].code).toBe('INVALID_CREDENTIALS');
    }
    const locked = await consoleRequest(t, s, 'POST', '/session/password', { current_password: PASSWORD, new_password: 'a brand new password 1' });
    expect(locked.status).toBe(429);
    expect(locked.body.errors[0].code).toBe('ACCOUNT_LOCKED');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    const login = await loginAs(t, op.email, PASSWORD);
    expect(login.status).toBe(429);
    expect(login.body.errors[0].code).toBe('ACCOUNT_LOCKED');
  });

  it('wrong TOTP codes on confirm count toward the lock-out', async () => {
    const op = await newOperator(t, 'viewer');
    const s = await session(t, op.email);
    const secret = await enrolTotp(s);
    const wrong = currentTotpCode(secret) === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await consoleRequest(t, s, 'POST', '/session/totp/confirm', { code: wrong })).status).toBe(401);
    const res = await consoleRequest(t, s, 'POST', '/session/totp/confirm', { code: currentTotpCode(secret) });
    expect(res.status).toBe(429);
    expect(res.body.errors[0].code).toBe('ACCOUNT_LOCKED');
  });

  it('wrong TOTP codes on disable count toward the lock-out', async () => {
    const op = await newOperator(t, 'viewer');
    const s = await session(t, op.email);
    const secret = await enrolTotp(s);
    expect((await consoleRequest(t, s, 'POST', '/session/totp/confirm', { code: currentTotpCode(secret) })).status).toBe(200);
    const wrong = currentTotpCode(secret) === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await consoleRequest(t, s, 'DELETE', '/session/totp', { code: wrong })).status).toBe(401);
    const res = await consoleRequest(t, s, 'DELETE', '/session/totp', { code: wrong });
    expect(res.status).toBe(429);
    expect(res.body.errors[0].code).toBe('ACCOUNT_LOCKED');
  });

  it('the own-account routes are rate limited per client address like login', async () => {
    const limited = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_LOGIN: '3/900' });
    try {
      const op = await newOperator(limited, 'viewer');
      const s = await session(limited, op.email); // one of the three
      const codes: number[] = [];
      for (let i = 0; i < 3; i++) {
        // No pending enrolment: INVALID_STATE, not a credential failure, so only the rate limit can stop these.
        codes.push((await consoleRequest(limited, s, 'POST', '/session/totp/confirm', { code: '123456' })).status);
      }
      expect(codes[0]).not.toBe(429);
      expect(codes[1]).not.toBe(429);
      expect(codes[2]).toBe(429);
      const pw = await consoleRequest(limited, s, 'POST', '/session/password', { current_password: 'x', new_password: 'a brand new password 1' });
      expect(pw.status).toBe(429);
      expect(pw.body.errors[0].code).toBe('RATE_LIMITED');
    } finally {
      await limited.close();
    }
  });
});

describe('session events in the audit log', () => {
  it('records logins, failures, the lock, logout, password and TOTP changes with the operator and no secrets', async () => {
    const op = await newOperator(t, 'operator');
    const actor = `operator:${op.id} ${op.email}`;
    expect((await loginAs(t, op.email, 'not the password')).status).toBe(401);
    const s = await session(t, op.email);
    const newPassword = 'another long password 2';
    expect((await consoleRequest(t, s, 'POST', '/session/password', { current_password: 'also not it', new_password: 'x'.repeat(12) })).status).toBe(401);
    expect((await consoleRequest(t, s, 'POST', '/session/password', { current_password: PASSWORD, new_password: newPassword })).status).toBe(204);
    const secret = await enrolTotp(s);
    const code = currentTotpCode(secret);
    expect((await consoleRequest(t, s, 'POST', '/session/totp/confirm', { code })).status).toBe(200);
    const next = currentTotpCode(secret, Date.now() + 30_000);
    expect((await consoleRequest(t, s, 'DELETE', '/session/totp', { code: next })).status).toBe(200);
    expect((await consoleRequest(t, s, 'DELETE', '/session')).status).toBe(204);

    const rows = await operatorAudit(op.id);
    expect(rows.map((r) => r.action)).toEqual([
      'operator.create',
      'operator.login_failed',
      'operator.login',
      'operator.password_change_failed',
      'operator.password_change',
      'operator.totp_enable',
      'operator.totp_disable',
      'operator.logout',
    ]);
    for (const r of rows.slice(1)) expect(r.actor).toBe(actor);
    expect(rows[1]!.after).toMatchObject({ failed: 'password' });
    const dump = JSON.stringify(rows);
    for (const secretText of [PASSWORD, newPassword, 'not the password', 'also not it', secret, code, next]) expect(dump).not.toContain(secretText);
  });

  it('records the lock-out and a refused login of a locked account', async () => {
    const op = await newOperator(t, 'viewer');
    for (let i = 0; i < 5; i++) expect((await loginAs(t, op.email, `wrong ${i}`)).status).toBe(401);
    expect((await loginAs(t, op.email)).status).toBe(429);
    const actions = (await operatorAudit(op.id)).map((r) => r.action);
    expect(actions.filter((a) => a === 'operator.login_failed')).toHaveLength(6);
    expect(actions).toContain('operator.lock');
  });

  it('records a login with an unknown e-mail without the e-mail typed', async () => {
    const before = (await auditRows(t, 'operator.login_failed')).length;
    expect((await loginAs(t, 'ghost-typed@example.com', 'p4ssw0rd typed')).status).toBe(401);
    const rows = await auditRows(t, 'operator.login_failed');
    expect(rows.length).toBe(before + 1);
    expect(JSON.stringify(rows.at(-1))).not.toMatch(/ghost-typed|p4ssw0rd/);
  });
});

describe('over TLS', () => {
  const tls = { 'x-forwarded-proto': 'https' };

  it('the session cookie is __Host- prefixed, Secure, Path=/, no Domain, no Max-Age or Expires, and it is accepted under that name only', async () => {
    const op = await newOperator(t, 'viewer');
    const res = await loginAs(t, op.email, PASSWORD, {}, tls);
    expect(res.status).toBe(200);
    expect(res.setCookie).toMatch(/^__Host-pc_admin_session=/);
    const attrs = res.setCookie.split(';').slice(1).map((a) => a.trim().toLowerCase());
    expect(attrs).toEqual(expect.arrayContaining(['secure', 'path=/', 'httponly', 'samesite=strict']));
    expect(attrs.some((a) => a.startsWith('domain=') || a.startsWith('max-age=') || a.startsWith('expires='))).toBe(false);
    const cookie = res.setCookie.split(';')[0]!;
    const ok = await t.request('GET', '/api/admin/v1/session', { headers: { cookie, ...tls } });
    expect(ok.status).toBe(200);
    // The same token under the plain name is not this server's TLS cookie.
    const plain = await t.request('GET', '/api/admin/v1/session', { headers: { cookie: cookie.replace('__Host-', ''), ...tls } });
    expect(plain.status).toBe(401);
    const out = await t.request('DELETE', '/api/admin/v1/session', { headers: { cookie, 'x-csrf-token': res.body.data.csrf_token, ...tls } });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie().find((c) => c.startsWith('__Host-pc_admin_session=;'))).toMatch(/Secure/i);
  });

  it('over plain HTTP the cookie keeps the plain name, without Secure or Max-Age, and works', async () => {
    const op = await newOperator(t, 'viewer');
    const res = await loginAs(t, op.email);
    expect(res.setCookie).toMatch(/^pc_admin_session=/);
    const attrs = res.setCookie.split(';').slice(1).map((a) => a.trim().toLowerCase());
    expect(attrs.some((a) => a === 'secure' || a.startsWith('max-age=') || a.startsWith('expires='))).toBe(false);
    expect((await t.request('GET', '/api/admin/v1/session', { headers: { cookie: res.setCookie.split(';')[0]! } })).status).toBe(200);
  });

  it('sends Strict-Transport-Security when the trusted proxy says https, never over plain HTTP', async () => {
    for (const path of ['/admin', '/api/v1/payments', '/healthz', '/nowhere']) {
      const secure = await t.request('GET', path, { headers: tls });
      expect(secure.headers.get('strict-transport-security'), path).toBe('max-age=31536000');
      const plain = await t.request('GET', path);
      expect(plain.headers.get('strict-transport-security'), path).toBeNull();
    }
  });
});
