import { Secret, TOTP } from 'otpauth';
import { AppError } from '../../../contract/common/errors.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { findOperatorOrFail, writeOperator, type OperatorPatch, type OperatorRecord } from './record.ts';
import { recordAudit, type AuditActor } from '../audit/service.ts';
import { countFailure, lockedError } from './lockout.ts';
import { transaction, type Db } from '../db.ts';

/**
 * TOTP (RFC 6238: SHA-1, 6 digits, 30 s) with the `otpauth` library, the
 * maintained implementation authenticator apps are tested against. Secrets are
 * encrypted with the PII cipher, bound to the operator's row, so a secret copied
 * to another row does not decrypt. A code is accepted once (its time step is
 * remembered) and one step either side is allowed for clock drift.
 */
const CONTEXT = 'operators.totp_secret';
const PERIOD = 30;
const ISSUER = 'paycollect';

const binding = (op: Pick<OperatorRecord, 'id'>) => ({ brandId: 'console', row: op.id });

function totpOf(base32: string, label = 'operator'): TOTP {
  return new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret: Secret.fromBase32(base32) });
}

/** The time step the code belongs to, or null when it is wrong or was used already. */
export function checkTotp(pii: PiiCipher, op: Pick<OperatorRecord, 'id' | 'totpLastStep'>, encryptedSecret: string, code: string): number | null {
  const totp = totpOf(pii.decrypt(encryptedSecret, CONTEXT, binding(op)));
  const now = Date.now();
  const delta = totp.validate({ token: code, timestamp: now, window: 1 });
  if (delta === null) return null;
  const step = Math.floor(now / 1000 / PERIOD) + delta;
  if (op.totpLastStep !== null && op.totpLastStep !== undefined && step <= op.totpLastStep) return null;
  return step;
}

/** A new pending secret (replacing a pending one); TOTP already on is INVALID_STATE. */
export async function startTotpEnrolment(em: Db, pii: PiiCipher, operatorId: string): Promise<{ secret: string; otpauth_url: string }> {
  return transaction(em, async (tx) => {
    const op = await findOperatorOrFail(tx, { id: operatorId }, { forUpdate: true });
    if (op.totpSecret) throw new AppError('INVALID_STATE', 'TOTP is already on; turn it off first');
    const secret = new Secret({ size: 20 }).base32;
    await writeOperator(tx, op, { totpPendingSecret: pii.encrypt(secret, CONTEXT, binding(op)) });
    return { secret, otpauth_url: totpOf(secret, op.email).toString() };
  });
}

/**
 * Confirm and disable need a current code: a wrong one counts toward the
 * operator's lock-out like a failed login (committed although refused), and a
 * locked operator gets `ACCOUNT_LOCKED`. A right one does not clear the count:
 * whoever holds the session chose the pending secret, so it proves nothing.
 */
async function withCode(
  em: Db,
  who: AuditActor,
  operatorId: string,
  action: 'operator.totp_enable' | 'operator.totp_disable',
  check: (op: OperatorRecord) => { error: AppError } | { secret: string },
  apply: (op: OperatorRecord, step: number) => OperatorPatch,
  pii: PiiCipher,
  code: string,
): Promise<OperatorRecord> {
  const result = await transaction(em, async (tx) => {
    const op = await findOperatorOrFail(tx, { id: operatorId }, { forUpdate: true });
    const now = Date.now();
    const locked = lockedError(op, now);
    if (locked) return { error: locked };
    const state = check(op);
    if ('error' in state) return state;
    const step = checkTotp(pii, op, state.secret, code);
    if (step === null) {
      await countFailure(tx, op, who, `${action}_failed`, 'totp', now);
      return { error: new AppError('INVALID_CREDENTIALS', 'Wrong code') };
    }
    await writeOperator(tx, op, apply(op, step));
    await recordAudit(tx, who, { action, targetType: 'operator', targetId: op.id });
    return { op };
  });
  if ('error' in result) throw result.error;
  return result.op;
}

export async function confirmTotpEnrolment(em: Db, pii: PiiCipher, who: AuditActor, operatorId: string, code: string): Promise<OperatorRecord> {
  return withCode(
    em,
    who,
    operatorId,
    'operator.totp_enable',
    (op) => (op.totpSecret || !op.totpPendingSecret ? { error: new AppError('INVALID_STATE', 'No TOTP enrolment is pending') } : { secret: op.totpPendingSecret }),
    (op, step) => ({ totpSecret: op.totpPendingSecret, totpPendingSecret: null, totpLastStep: step }),
    pii,
    code,
  );
}

export async function disableTotp(em: Db, pii: PiiCipher, who: AuditActor, operatorId: string, code: string): Promise<OperatorRecord> {
  return withCode(
    em,
    who,
    operatorId,
    'operator.totp_disable',
    (op) => (op.totpSecret ? { secret: op.totpSecret } : { error: new AppError('INVALID_STATE', 'TOTP is not on') }),
    (op, step) => ({ totpSecret: null, totpLastStep: step }),
    pii,
    code,
  );
}

/** The current code of a base32 secret (tests and the CLI's own checks). */
export function currentTotpCode(base32: string, timestamp = Date.now()): string {
  return totpOf(base32).generate({ timestamp });
}
