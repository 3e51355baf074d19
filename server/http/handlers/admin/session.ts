import { initServer } from '@ts-rest/express';
import type { Request, Response } from 'express';
import { contract } from '../../../../contract/index.ts';
import { sessionCookieName } from '../../../../contract/admin/session.ts';
import type { AppDeps } from '../../../deps.ts';
import { changeOwnPassword, csrfTokenizer, endSession, getOperator, login, operatorView, type SessionPolicy } from '../../../domain/operators/service.ts';
import { confirmTotpEnrolment, disableTotp, startTotpEnrolment } from '../../../domain/operators/totp.ts';
import { cookieValue } from '../../auth.ts';
import { adminActor } from './actor.ts';

const s = initServer();

export function sessionPolicy(config: AppDeps['config']): SessionPolicy {
  return { idleMs: config.CONSOLE_SESSION_IDLE_MINUTES * 60_000, absoluteMs: config.CONSOLE_SESSION_MAX_HOURS * 3_600_000 };
}

/**
 * HttpOnly (page scripts never see it), SameSite=Strict (no other site's page
 * makes the browser send it), Path=/, no Domain. Over TLS (`req.secure`, which
 * honours TRUST_PROXY's X-Forwarded-Proto) Secure and `__Host-` prefixed; plain
 * HTTP (a console on localhost) cannot use the prefix, which requires Secure.
 * No Max-Age or Expires: the server ends the session (idle and absolute limits),
 * and the browser forgets the cookie when it closes rather than keeping it on disk.
 */
function cookieOptions(req: Request) {
  return { httpOnly: true, sameSite: 'strict' as const, secure: req.secure, path: '/' };
}

function sessionOf(req: Express.Request) {
  const p = req.principal;
  if (p.kind !== 'admin' || !p.operator) throw new Error('route needs a console session');
  return p.operator;
}

export function adminSessionHandlers(deps: AppDeps) {
  const policy = sessionPolicy(deps.config);
  const csrf = csrfTokenizer(Buffer.from(deps.secrets.blindIndexKey, 'hex'));
  const pii = deps.crypto.pii;
  return s.router(contract.admin.session, {
    login: async ({ req, res, body }) => {
      const session = await login(req.db, pii, policy, { email: body.email, password: body.password, totpCode: body.totp_code }, req.requestId);
      (res as Response).cookie(sessionCookieName(req.secure), session.token, cookieOptions(req));
      return { status: 200, body: { success: true, data: { operator: session.operator, csrf_token: csrf(session.token) } } };
    },
    get: async ({ req }) => {
      const op = await getOperator(req.db, sessionOf(req).id);
      return { status: 200, body: { success: true, data: { operator: operatorView(op), csrf_token: csrf(cookieValue(req, sessionCookieName(req.secure))!) } } };
    },
    logout: async ({ req, res }) => {
      const me = sessionOf(req);
      await endSession(req.db, me.sessionId, adminActor(req), me.id);
      (res as Response).clearCookie(sessionCookieName(req.secure), cookieOptions(req));
      return { status: 204, body: undefined };
    },
    changePassword: async ({ req, body }) => {
      const me = sessionOf(req);
      await changeOwnPassword(req.db, adminActor(req), me.id, me.sessionId, body.current_password, body.new_password);
      return { status: 204, body: undefined };
    },
    startTotp: async ({ req }) => {
      return { status: 200, body: { success: true, data: await startTotpEnrolment(req.db, pii, sessionOf(req).id) } };
    },
    confirmTotp: async ({ req, body }) => {
      return { status: 200, body: { success: true, data: operatorView(await confirmTotpEnrolment(req.db, pii, adminActor(req), sessionOf(req).id, body.code)) } };
    },
    disableTotp: async ({ req, body }) => {
      return { status: 200, body: { success: true, data: operatorView(await disableTotp(req.db, pii, adminActor(req), sessionOf(req).id, body.code)) } };
    },
  });
}
