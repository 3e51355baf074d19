import { type UpdateObject } from 'kysely';
import type { OperatorRole } from '../../../contract/vocabulary.ts';
import type { DB, Db } from '../db.ts';
import { selectOperator, updateOperatorRow, type OperatorRow } from './queries.ts';

export type { OperatorRow };

/**
 * An operator as the domain reads it (entities.ts `Operator`, camelCase).
 * A plain record: a change is written with `writeOperator`, not by assigning
 * to it.
 */
export interface OperatorRecord {
  id: string;
  email: string;
  name: string;
  role: OperatorRole;
  /** Brands in scope; null: every brand. */
  brandIds: number[] | null;
  passwordHash: string;
  /** Encrypted (PII cipher, bound to the operator): the confirmed secret, and one being enrolled. */
  totpSecret: string | null;
  totpPendingSecret: string | null;
  /** The last accepted TOTP time step: a code is accepted once. */
  totpLastStep: number | null;
  disabled: boolean;
  failedLogins: number;
  failedLoginsSince: Date | null;
  lockedUntil: Date | null;
  lastLoginAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toOperator(r: OperatorRow): OperatorRecord {
  return {
    id: r.id,
    email: r.email,
    name: r.name,
    role: r.role as OperatorRole,
    brandIds: (r.brand_ids as number[] | null) ?? null,
    passwordHash: r.password_hash,
    totpSecret: r.totp_secret ?? null,
    totpPendingSecret: r.totp_pending_secret ?? null,
    totpLastStep: r.totp_last_step === null || r.totp_last_step === undefined ? null : Number(r.totp_last_step),
    disabled: r.disabled,
    failedLogins: r.failed_logins,
    failedLoginsSince: r.failed_logins_since ?? null,
    lockedUntil: r.locked_until ?? null,
    lastLoginAt: r.last_login_at ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The operator with this id or e-mail (stored lower-cased); `forUpdate` locks the row until the transaction ends. */
export async function findOperator(db: Db, by: { id: string } | { email: string }, opts: { forUpdate?: boolean } = {}): Promise<OperatorRecord | undefined> {
  const row = await selectOperator(db, by, opts);
  return row ? toOperator(row) : undefined;
}

/** As `findOperator`, for an operator that must exist (the signed-in one): a missing row is an internal error. */
export async function findOperatorOrFail(db: Db, by: { id: string }, opts: { forUpdate?: boolean } = {}): Promise<OperatorRecord> {
  const op = await findOperator(db, by, opts);
  if (!op) throw new Error(`Operator not found (${by.id})`);
  return op;
}

export type OperatorPatch = Partial<Omit<OperatorRecord, 'id' | 'createdAt' | 'updatedAt'>>;

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) || Array.isArray(b)) return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
};

/**
 * Writes the fields of `patch` that differ from `op` to its row (one UPDATE,
 * with `updated_at`; none when nothing differs, as the unit of work did) and
 * applies them to `op`, so the caller goes on reading the new state.
 */
export async function writeOperator(tx: Db, op: OperatorRecord, patch: OperatorPatch): Promise<void> {
  const changed = Object.fromEntries(Object.entries(patch).filter(([k, v]) => v !== undefined && !sameValue(op[k as keyof OperatorRecord], v))) as OperatorPatch;
  if (Object.keys(changed).length === 0) return;
  const updatedAt = new Date();
  const set: UpdateObject<DB, 'operators'> = { updated_at: updatedAt };
  if ('email' in changed) set.email = changed.email;
  if ('name' in changed) set.name = changed.name;
  if ('role' in changed) set.role = changed.role;
  if ('brandIds' in changed) set.brand_ids = changed.brandIds ?? null;
  if ('passwordHash' in changed) set.password_hash = changed.passwordHash;
  if ('totpSecret' in changed) set.totp_secret = changed.totpSecret;
  if ('totpPendingSecret' in changed) set.totp_pending_secret = changed.totpPendingSecret;
  if ('totpLastStep' in changed) set.totp_last_step = changed.totpLastStep;
  if ('disabled' in changed) set.disabled = changed.disabled;
  if ('failedLogins' in changed) set.failed_logins = changed.failedLogins;
  if ('failedLoginsSince' in changed) set.failed_logins_since = changed.failedLoginsSince;
  if ('lockedUntil' in changed) set.locked_until = changed.lockedUntil;
  if ('lastLoginAt' in changed) set.last_login_at = changed.lastLoginAt;
  await updateOperatorRow(tx, op.id, set);
  Object.assign(op, changed, { updatedAt });
}
