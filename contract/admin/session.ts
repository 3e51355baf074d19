import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta, ok, timestampSchema, uuidSchema, type ErrorCode } from '../common/index.ts';
import { adminRouterOptions } from './shared.ts';
import { operatorRoles } from '../vocabulary.ts';

const c = initContract();

/** Name of the console's session cookie over plain HTTP (HttpOnly, SameSite=Strict, Path=/, no Max-Age). */
export const SESSION_COOKIE = 'pc_admin_session';
/**
 * Its name over TLS: the `__Host-` prefix makes browsers refuse it unless it is
 * Secure, Path=/ and without Domain, so neither a sibling subdomain nor a plain
 * HTTP page can plant or overwrite it.
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** The session cookie's name for a request: the prefixed one exactly when it came over TLS. */
export const sessionCookieName = (secure: boolean) => (secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE);
/** Header carrying the session's CSRF token on every console request but GET/HEAD. */
export const CSRF_HEADER = 'x-csrf-token';

export const operatorRoleSchema = z
  .enum(operatorRoles)
  .describe('`viewer` reads everything in scope; `operator` also verifies and rejects transactions, resolves SMS, pairs devices, replays deliveries, completes refunds and recovers SMS; `owner` also manages brands, keys, gateways, templates, filter rules, settings, alerts and operators.');

export const operatorSchema = z
  .object({
    id: uuidSchema,
    email: z.string().describe('Login e-mail (lower-cased).'),
    name: z.string(),
    role: operatorRoleSchema,
    brand_ids: z.array(z.number().int()).nullable().describe('Brands this operator sees and acts on; `null`: every brand.'),
    totp_enabled: z.boolean().describe('Login needs a TOTP code as well.'),
    disabled: z.boolean().describe('A disabled operator cannot log in; their sessions are ended.'),
    created_at: timestampSchema,
    last_login_at: timestampSchema.nullable(),
  })
  .meta({ id: 'AdminOperator' });

const sessionSchema = z
  .object({
    operator: operatorSchema,
    csrf_token: z.string().describe('Send it as `X-CSRF-Token` on every request but GET/HEAD while this session lasts.'),
  })
  .meta({ id: 'AdminSession' });

/** An operator's login e-mail: `name@host` (a host without a dot, such as `owner@localhost`, is allowed: consoles run on private networks). */
export const operatorEmailSchema = z
  .string()
  .trim()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+$/, 'Must be an e-mail address');

export const passwordSchema = z.string().min(12, 'Must be at least 12 characters').max(200, 'Must be at most 200 characters');
const totpCodeSchema = z.string().regex(/^[0-9]{6}$/, 'Must be 6 digits').describe('The current 6-digit code of the authenticator app.').meta({ examples: ['492039'] });

export const loginBodySchema = z
  .strictObject({
    email: z.string().trim().min(3).max(254).describe('Operator e-mail (case-insensitive).'),
    password: z.string().min(1).max(200),
    totp_code: totpCodeSchema.optional(),
  })
  .meta({ id: 'AdminLoginRequest' });

/** A route on the operator's own account (`CSRF_TOKEN_INVALID` on a mutating method is added with the credential's codes, responses.ts). */
const selfMeta = <const E extends readonly ErrorCode[] = readonly []>(errors: E = [] as unknown as E, rateLimit?: 'login') =>
  meta({ auth: 'operator', tag: 'Admin: Session', errors, ...(rateLimit ? { rateLimit } : {}) });

/**
 * The console's session: log in with e-mail and password (and TOTP), read who is
 * signed in, log out; and the signed-in operator's own password and TOTP.
 */
export const adminSessionContract = c.router(
  {
    login: {
      method: 'POST',
      path: '/session',
      summary: 'Log in to the console',
      description:
        'Checks e-mail and password (and `totp_code` when the operator has TOTP on), then starts a session: the `pc_admin_session` cookie, named `__Host-pc_admin_session` over TLS (HttpOnly, SameSite=Strict, Path=/, Secure over TLS, no Max-Age: the browser drops it when it closes; the server ends the session after 30 idle minutes, at most 12 hours) and a CSRF token for `X-CSRF-Token`. A wrong or unknown e-mail, wrong password or code, or a disabled operator are all `INVALID_CREDENTIALS`. Five failures for one operator within 15 minutes lock it for 15 minutes (429 `ACCOUNT_LOCKED` with `Retry-After`); attempts per client address are rate limited too.',
      body: loginBodySchema,
      responses: { 200: ok(sessionSchema) },
      metadata: meta({ auth: 'none', rateLimit: 'login', tag: 'Admin: Session', errors: ['INVALID_CREDENTIALS', 'TOTP_REQUIRED', 'ACCOUNT_LOCKED'] }),
    },
    get: {
      method: 'GET',
      path: '/session',
      summary: 'The signed-in operator',
      description: 'The operator of the session cookie and the session’s CSRF token (the console calls it on load). No session or an expired one: 401.',
      responses: { 200: ok(sessionSchema) },
      metadata: selfMeta(),
    },
    logout: {
      method: 'DELETE',
      path: '/session',
      summary: 'Log out',
      description: 'Ends the session (its row is deleted) and clears the cookie.',
      body: c.noBody(),
      responses: { 204: c.noBody() },
      metadata: selfMeta(),
    },
    changePassword: {
      method: 'POST',
      path: '/session/password',
      summary: 'Change my password',
      description:
        'Needs the current password. Ends every other session of this operator. Rate limited per client address like login; a wrong current password counts toward the lock-out like a failed login (429 `ACCOUNT_LOCKED` with `Retry-After` once locked).',
      body: z.strictObject({ current_password: z.string().min(1).max(200), new_password: passwordSchema }).meta({ id: 'AdminChangePasswordRequest' }),
      responses: { 204: c.noBody() },
      metadata: selfMeta(['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED'], 'login'),
    },
    startTotp: {
      method: 'POST',
      path: '/session/totp',
      summary: 'Start TOTP enrolment',
      description: 'A new secret for an authenticator app (pending: login does not need a code until it is confirmed). Replaces a pending one; with TOTP already on it is `INVALID_STATE`.',
      body: c.noBody(),
      responses: { 200: ok(z.object({ secret: z.string().describe('Base32 secret.'), otpauth_url: z.string().describe('`otpauth://totp/…` URL for a QR code.') }).meta({ id: 'AdminTotpEnrolment' })) },
      metadata: selfMeta(['INVALID_STATE']),
    },
    confirmTotp: {
      method: 'POST',
      path: '/session/totp/confirm',
      summary: 'Confirm TOTP enrolment',
      description:
        'A current code from the pending secret turns TOTP on. No pending secret: `INVALID_STATE`; a wrong code: `INVALID_CREDENTIALS`, counted toward the lock-out like a failed login (429 `ACCOUNT_LOCKED`). Rate limited per client address like login.',
      body: z.strictObject({ code: totpCodeSchema }).meta({ id: 'AdminTotpCodeRequest' }),
      responses: { 200: ok(operatorSchema) },
      metadata: selfMeta(['INVALID_STATE', 'INVALID_CREDENTIALS', 'ACCOUNT_LOCKED'], 'login'),
    },
    disableTotp: {
      method: 'DELETE',
      path: '/session/totp',
      summary: 'Turn TOTP off',
      description:
        'Needs a current code. TOTP not on: `INVALID_STATE`; a wrong code: `INVALID_CREDENTIALS`, counted toward the lock-out like a failed login (429 `ACCOUNT_LOCKED`). Rate limited per client address like login.',
      body: z.strictObject({ code: totpCodeSchema }),
      responses: { 200: ok(operatorSchema) },
      metadata: selfMeta(['INVALID_STATE', 'INVALID_CREDENTIALS', 'ACCOUNT_LOCKED'], 'login'),
    },
  },
  adminRouterOptions,
);
