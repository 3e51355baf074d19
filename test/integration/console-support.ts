import type { OperatorRole } from '../../contract/vocabulary.ts';
import { createOperator } from '../../server/domain/operators/service.ts';
import type { TestContext } from '../support/harness.ts';
import { ADMIN_API } from './admin-support.ts';

/** Helpers of the console (operator session) tests. */

export const PASSWORD = 'correct horse battery staple';

let seq = 0;
export async function newOperator(t: TestContext, role: OperatorRole, opts: { brandIds?: number[] | null; email?: string } = {}) {
  const email = opts.email ?? `op${++seq}-${Date.now()}@example.com`;
  const { operator } = await createOperator(t.runtime.deps.db, { actor: 'test', requestId: null }, { email, name: `Op ${seq}`, role, brandIds: opts.brandIds ?? null, password: PASSWORD });
  return operator;
}

export interface ConsoleSession {
  cookie: string;
  csrf: string;
  setCookie: string;
  operatorId: string;
}

export async function loginAs(t: TestContext, email: string, password = PASSWORD, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.baseUrl}${ADMIN_API}/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email, password, ...extra }),
  });
  const body = (await res.json()) as any;
  const setCookie = res.headers.getSetCookie().find((c) => /^(__Host-)?pc_admin_session=/.test(c)) ?? '';
  return { status: res.status, body, headers: res.headers, setCookie };
}

export async function session(t: TestContext, email: string, password = PASSWORD): Promise<ConsoleSession> {
  const res = await loginAs(t, email, password);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { cookie: res.setCookie.split(';')[0]!, csrf: res.body.data.csrf_token, setCookie: res.setCookie, operatorId: res.body.data.operator.id };
}

/** An admin API request as the console makes it: the cookie, and the CSRF token unless `csrf: null`. */
export function consoleRequest(t: TestContext, s: ConsoleSession, method: string, path: string, body?: unknown, opts: { csrf?: string | null } = {}) {
  const headers: Record<string, string> = { cookie: s.cookie };
  const csrf = opts.csrf === undefined ? s.csrf : opts.csrf;
  if (csrf !== null) headers['x-csrf-token'] = csrf;
  return t.request(method, `${ADMIN_API}${path}`, { headers, ...(body === undefined ? {} : { body }) });
}
