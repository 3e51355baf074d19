import { createHmac, createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { OperatorRole } from '../../../contract/vocabulary.ts';
import { randomToken, sha256Hex, timingSafeEqualString } from '../../infra/crypto/tokens.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { recordAudit, withAudit, type AuditActor } from '../audit/service.ts';
import { findOperator, findOperatorOrFail, toOperator, writeOperator, type OperatorRecord } from './record.ts';
import { dummyPasswordHash, generatePassword, hashPassword, verifyPassword } from './password.ts';
import { checkTotp } from './totp.ts';
import { clearFailures, countFailure, lockedError, operatorActor } from './lockout.ts';
import { transaction, type Db } from '../db.ts';
import { isUniqueViolation } from '../../infra/database/database.ts';
import {
  countOperatorRows,
  deleteEndedSessions,
  deleteOperatorSessions,
  deleteSession,
  insertOperator,
  insertSession,
  lockOwners,
  selectExistingBrandIds,
  selectOperators,
  selectSessionWithOperator,
  touchSession,
} from './queries.ts';

export { LOCKOUT } from './lockout.ts';
export type { OperatorRecord } from './record.ts';


export interface SessionPolicy {
  idleMs: number;
  absoluteMs: number;
}

/** The operator as the admin API shows it (no hash, no secret). */
export interface OperatorView {
  id: string;
  email: string;
  name: string;
  role: OperatorRole;
  brand_ids: number[] | null;
  totp_enabled: boolean;
  disabled: boolean;
  created_at: string;
  last_login_at: string | null;
}

export function operatorView(op: OperatorRecord): OperatorView {
  return {
    id: op.id,
    email: op.email,
    name: op.name,
    role: op.role,
    brand_ids: op.role === 'owner' ? null : (op.brandIds ?? null),
    totp_enabled: op.totpSecret !== null,
    disabled: op.disabled,
    created_at: op.createdAt.toISOString(),
    last_login_at: op.lastLoginAt ? op.lastLoginAt.toISOString() : null,
  };
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * The CSRF token of a session: an HMAC of the session token under a key derived
 * from the service's blind-index key. Derived rather than stored so the console
 * gets the same token back from `GET /session` after a reload; only a holder of
 * the cookie's token (which page scripts cannot read: HttpOnly) and the server
 * key can compute it.
 */
export function csrfTokenizer(blindIndexKey: Buffer): (sessionToken: string) => string {
  const key: KeyObject = createSecretKey(createHmac('sha256', blindIndexKey).update('pc.console.csrf.v1').digest());
  return (sessionToken) => createHmac('sha256', key).update(sessionToken).digest('base64url');
}

export function csrfMatches(expected: string, presented: string | undefined): boolean {
  return typeof presented === 'string' && presented.length > 0 && timingSafeEqualString(presented, expected);
}

export interface NewSession {
  operator: OperatorView;
  token: string;
}

async function startSession(tx: Db, op: OperatorRecord, policy: SessionPolicy): Promise<string> {
  const token = randomToken(32);
  const now = new Date();
  await insertSession(tx, { operatorId: op.id, tokenHash: sha256Hex(token), createdAt: now, expiresAt: new Date(now.getTime() + policy.absoluteMs) });
  return token;
}

type LoginOutcome = { ok: true; session: NewSession } | { ok: false; error: AppError };

/**
 * Checks e-mail, password and TOTP code and starts a session. Failures are
 * counted on the operator's row (locked for update, so concurrent guesses count
 * exactly) and committed, with their audit rows, even though the login is
 * refused. The audit names the operator and what failed, never what was typed.
 */
export async function login(
  em: Db,
  pii: PiiCipher,
  policy: SessionPolicy,
  input: { email: string; password: string; totpCode?: string },
  requestId: string | null = null,
): Promise<NewSession> {
  const outcome = await transaction(em, async (tx): Promise<LoginOutcome> => {
    const op = await findOperator(tx, { email: normalizeEmail(input.email) }, { forUpdate: true });
    const invalid = { ok: false as const, error: new AppError('INVALID_CREDENTIALS') };
    if (!op) {
      await verifyPassword(input.password, await dummyPasswordHash());
      // The typed e-mail is not recorded: it may be a password typed in the wrong field.
      await recordAudit(tx, { actor: 'anonymous', requestId }, { action: 'operator.login_failed', targetType: 'operator', targetId: null, after: { failed: 'unknown_operator' } });
      return invalid;
    }
    const who = operatorActor(op, requestId);
    const now = Date.now();
    const locked = lockedError(op, now);
    if (locked) {
      await recordAudit(tx, who, { action: 'operator.login_failed', targetType: 'operator', targetId: op.id, after: { failed: 'locked' } });
      return { ok: false, error: locked };
    }
    if (!(await verifyPassword(input.password, op.passwordHash))) {
      await countFailure(tx, op, who, 'operator.login_failed', 'password', now);
      return invalid;
    }
    if (op.disabled) {
      await recordAudit(tx, who, { action: 'operator.login_failed', targetType: 'operator', targetId: op.id, after: { failed: 'disabled' } });
      return invalid;
    }
    let totpLastStep: number | undefined;
    if (op.totpSecret) {
      if (!input.totpCode) return { ok: false, error: new AppError('TOTP_REQUIRED') };
      const step = checkTotp(pii, op, op.totpSecret, input.totpCode);
      if (step === null) {
        await countFailure(tx, op, who, 'operator.login_failed', 'totp', now);
        return invalid;
      }
      totpLastStep = step;
    }
    await writeOperator(tx, op, { totpLastStep, ...clearFailures(), lastLoginAt: new Date(now) });
    const token = await startSession(tx, op, policy);
    await recordAudit(tx, who, { action: 'operator.login', targetType: 'operator', targetId: op.id, after: { totp: Boolean(op.totpSecret) } });
    return { ok: true, session: { operator: operatorView(op), token } };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.session;
}

export interface SessionOperator {
  sessionId: number;
  operator: OperatorRecord;
}

/**
 * The live session of a cookie token, sliding its idle timeout; null when the
 * token is unknown, idle too long, past its absolute end, or its operator is
 * disabled (the dead row is deleted on the way).
 */
export async function findSession(em: Db, token: string, policy: SessionPolicy): Promise<SessionOperator | null> {
  const row = await selectSessionWithOperator(em, sha256Hex(token));
  if (!row) return null;
  const now = Date.now();
  const op = toOperator(row);
  const sessionId = row.session_id;
  if (row.session_expires_at.getTime() <= now || row.session_last_seen_at.getTime() + policy.idleMs <= now || op.disabled) {
    await deleteSession(em, sessionId);
    return null;
  }
  // Written at most once a minute per session: the idle timeout does not need
  // the exact second, and every console request would otherwise be a write.
  if (now - row.session_last_seen_at.getTime() > 60_000) await touchSession(em, sessionId, new Date(now));
  return { sessionId, operator: op };
}

export async function endSession(em: Db, sessionId: number, who: AuditActor, operatorId: string): Promise<void> {
  await transaction(em, async (tx) => {
    await deleteSession(tx, sessionId);
    await recordAudit(tx, who, { action: 'operator.logout', targetType: 'operator', targetId: operatorId });
  });
}

/** Deletes sessions past their absolute end or idle timeout (run periodically). */
export async function purgeExpiredSessions(em: Db, policy: SessionPolicy): Promise<number> {
  const now = Date.now();
  return deleteEndedSessions(em, new Date(now), new Date(now - policy.idleMs));
}

export async function getOperator(em: Db, id: string): Promise<OperatorRecord> {
  const op = await findOperator(em, { id });
  if (!op) throw new AppError('OPERATOR_NOT_FOUND');
  return op;
}

/**
 * The signed-in operator's own password change. A wrong current password counts
 * toward the lock-out like a failed login (committed although refused); a locked
 * operator gets `ACCOUNT_LOCKED`.
 */
export async function changeOwnPassword(em: Db, who: AuditActor, operatorId: string, keepSessionId: number, current: string, next: string): Promise<void> {
  const error = await transaction(em, async (tx): Promise<AppError | null> => {
    const op = await findOperatorOrFail(tx, { id: operatorId }, { forUpdate: true });
    const now = Date.now();
    const locked = lockedError(op, now);
    if (locked) return locked;
    if (!(await verifyPassword(current, op.passwordHash))) {
      await countFailure(tx, op, who, 'operator.password_change_failed', 'password', now);
      return new AppError('INVALID_CREDENTIALS', 'The current password is wrong');
    }
    await writeOperator(tx, op, { passwordHash: await hashPassword(next), ...clearFailures() });
    // Another session may be someone who learnt the old password.
    await deleteOperatorSessions(tx, op.id, { except: keepSessionId });
    await recordAudit(tx, who, { action: 'operator.password_change', targetType: 'operator', targetId: op.id });
    return null;
  });
  if (error) throw error;
}

function auditState(op: OperatorRecord) {
  return { email: op.email, role: op.role, brand_ids: op.brandIds, disabled: op.disabled };
}

/**
 * Every id of an operator's brand list must name an existing brand: a typo would
 * otherwise give a scope that silently shows nothing. A 400 naming `brand_ids`.
 */
async function checkBrandIds(tx: Db, brandIds: number[] | null | undefined): Promise<void> {
  if (!brandIds || brandIds.length === 0) return;
  const known = new Set(await selectExistingBrandIds(tx, brandIds));
  const unknown = brandIds.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new AppError('VALIDATION_ERROR', `No brand with id ${unknown.join(', ')}`, { field: 'brand_ids' });
  }
}

/** Creates an operator with a generated password (returned once). */
export async function createOperator(
  em: Db,
  who: AuditActor,
  input: { email: string; name: string; role: OperatorRole; brandIds?: number[] | null; password?: string },
): Promise<{ operator: OperatorView; password: string }> {
  const password = input.password ?? generatePassword();
  const passwordHash = await hashPassword(password);
  const email = normalizeEmail(input.email);
  return withAudit(em, who, async (tx) => {
    if (await countOperators(tx, email)) throw new AppError('OPERATOR_EMAIL_TAKEN');
    if (input.role !== 'owner') await checkBrandIds(tx, input.brandIds);
    const now = new Date();
    // The count above answers the usual case; two creates racing with one e-mail meet at the unique index.
    const op = toOperator(
      await insertOperator(tx, {
        id: randomUUID(),
        email,
        name: input.name,
        role: input.role,
        brand_ids: input.role === 'owner' ? null : (input.brandIds ?? null),
        password_hash: passwordHash,
        disabled: false,
        failed_logins: 0,
        created_at: now,
        updated_at: now,
      }).catch((err: unknown) => {
        throw isUniqueViolation(err) ? new AppError('OPERATOR_EMAIL_TAKEN') : err;
      }),
    );
    return {
      result: { operator: operatorView(op), password },
      audit: { action: 'operator.create', targetType: 'operator', targetId: op.id, after: auditState(op) },
    };
  });
}

export async function listOperators(em: Db): Promise<OperatorView[]> {
  const rows = await selectOperators(em);
  return rows.map((r) => operatorView(toOperator(r)));
}

/** How many operators there are (with this e-mail, when given). */
async function countOperators(em: Db, email?: string): Promise<number> {
  return countOperatorRows(em, email);
}

async function otherActiveOwners(tx: Db, id: string): Promise<number> {
  // Every owner row is locked so two owners demoting each other at once cannot both succeed.
  const owners = await lockOwners(tx);
  return owners.filter((o) => o.id !== id && !o.disabled).length;
}

export async function updateOperator(
  em: Db,
  who: AuditActor,
  id: string,
  patch: { name?: string; role?: OperatorRole; brandIds?: number[] | null; disabled?: boolean },
): Promise<OperatorView> {
  return withAudit(em, who, async (tx) => {
    const op = await findOperator(tx, { id }, { forUpdate: true });
    if (!op) throw new AppError('OPERATOR_NOT_FOUND');
    if ((patch.role ?? op.role) !== 'owner') await checkBrandIds(tx, patch.brandIds);
    const before = auditState(op);
    const demoted = op.role === 'owner' && ((patch.role !== undefined && patch.role !== 'owner') || (patch.disabled === true && !op.disabled));
    if (demoted && (await otherActiveOwners(tx, op.id)) === 0) throw new AppError('LAST_OWNER');
    const access = (patch.role !== undefined && patch.role !== op.role) || patch.brandIds !== undefined || (patch.disabled === true && !op.disabled);
    const role = patch.role ?? op.role;
    await writeOperator(tx, op, {
      name: patch.name,
      role: patch.role,
      brandIds: role === 'owner' ? null : patch.brandIds,
      disabled: patch.disabled,
    });
    // A session carries the access it was opened with: changed access starts over.
    if (access) await deleteOperatorSessions(tx, op.id);
    return { result: operatorView(op), audit: { action: 'operator.update', targetType: 'operator', targetId: op.id, before, after: auditState(op) } };
  });
}

export async function resetOperatorPassword(em: Db, who: AuditActor, id: string): Promise<{ operator: OperatorView; password: string }> {
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  return withAudit(em, who, async (tx) => {
    const op = await findOperator(tx, { id }, { forUpdate: true });
    if (!op) throw new AppError('OPERATOR_NOT_FOUND');
    await writeOperator(tx, op, { passwordHash, ...clearFailures() });
    await deleteOperatorSessions(tx, op.id);
    return { result: { operator: operatorView(op), password }, audit: { action: 'operator.password_reset', targetType: 'operator', targetId: op.id } };
  });
}

export async function findOperatorByEmail(em: Db, email: string): Promise<OperatorRecord | null> {
  return (await findOperator(em, { email: normalizeEmail(email) })) ?? null;
}

/**
 * The console's first owner, when there is no operator at all (a new install,
 * or an upgrade from before the console): created with a generated password
 * that is shown once. Null when operators exist, or when another process
 * starting at the same moment created it first.
 */
export async function ensureFirstOwner(em: Db, email: string): Promise<{ email: string; password: string } | null> {
  if (await countOperators(em)) return null;
  try {
    const { operator, password } = await createOperator(em, { actor: 'system:first-run', requestId: null }, { email, name: 'Owner', role: 'owner' });
    return { email: operator.email, password };
  } catch (err) {
    // Another process starting at the same moment got there first.
    if (isUniqueViolation(err) || (err instanceof AppError && err.code === 'OPERATOR_EMAIL_TAKEN')) return null;
    throw err;
  }
}
