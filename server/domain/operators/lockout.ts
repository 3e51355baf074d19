import { AppError } from '../../../contract/common/errors.ts';
import { recordAudit, type AuditActor } from '../audit/service.ts';
import { writeOperator, type OperatorRecord } from './record.ts';
import type { Db } from '../db.ts';

/**
 * Failed credential checks that lock an account, the window they are counted in,
 * and how long the lock lasts. Login, the own-password change and the own TOTP
 * confirm/disable all count here: a stolen session must not be a way to guess
 * the password or a code without limit.
 */
export const LOCKOUT = { failures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 } as const;

/**
 * The audit log's actor for an operator: `operator:<uuid> <email>`. The column
 * holds 100 characters; the uuid is the identity, the e-mail a reading aid.
 */
export function operatorActor(op: { id: string; email: string }, requestId: string | null): AuditActor {
  return { actor: `operator:${op.id} ${op.email}`.slice(0, 100), requestId };
}

/** 429 `ACCOUNT_LOCKED` with `Retry-After` while the operator is locked, else null. */
export function lockedError(op: Pick<OperatorRecord, 'lockedUntil'>, now: number): AppError | null {
  if (!op.lockedUntil || op.lockedUntil.getTime() <= now) return null;
  const retry = String(Math.ceil((op.lockedUntil.getTime() - now) / 1000));
  return new AppError('ACCOUNT_LOCKED', undefined, { headers: { 'Retry-After': retry } });
}

/**
 * Counts one failure on the operator's row (written here; the caller holds it
 * locked for update and commits even though the request is refused) and audits
 * it, and the lock when this failure sets one. `what` names the check that failed
 * (`password`, `totp`); never the value tried.
 */
export async function countFailure(tx: Db, op: OperatorRecord, who: AuditActor, action: string, what: string, now: number): Promise<void> {
  const fresh = !op.failedLoginsSince || now - op.failedLoginsSince.getTime() > LOCKOUT.windowMs;
  const failedLogins = fresh ? 1 : op.failedLogins + 1;
  const locks = failedLogins >= LOCKOUT.failures;
  await writeOperator(tx, op, {
    failedLogins,
    ...(fresh && { failedLoginsSince: new Date(now) }),
    ...(locks && { lockedUntil: new Date(now + LOCKOUT.lockMs) }),
  });
  await recordAudit(tx, who, { action, targetType: 'operator', targetId: op.id, after: { failed: what, failures: op.failedLogins } });
  if (locks) await recordAudit(tx, who, { action: 'operator.lock', targetType: 'operator', targetId: op.id, after: { locked_until: op.lockedUntil!.toISOString() } });
}

/** A successful check clears the count: the fields to write (`writeOperator`). */
export function clearFailures(): Pick<OperatorRecord, 'failedLogins' | 'failedLoginsSince' | 'lockedUntil'> {
  return { failedLogins: 0, failedLoginsSince: null, lockedUntil: null };
}
