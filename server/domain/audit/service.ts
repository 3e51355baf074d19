import { transaction, type Db } from '../db.ts';
import { insertAuditRow, selectAuditPage } from './queries.ts';

/** Who asked for a change, as the admin surface knows it. */
export interface AuditActor {
  /** `admin`, or `admin:<label>` when the caller named itself (X-Admin-Actor). */
  actor: string;
  requestId: string | null;
}

/**
 * What may go into `before`/`after`: ids, statuses, amounts, flags and short
 * codes. Short strings only, so nobody is tempted to dump a whole row (with a
 * name, a phone number or a secret) into the permanent record.
 */
type AuditScalar = string | number | boolean | null;
type AuditValue = AuditScalar | AuditScalar[];
export type AuditState = Record<string, AuditValue>;

export interface AuditEntry {
  /** `<target type>.<verb>`, e.g. `transaction.verify`. */
  action: string;
  targetType: string;
  targetId: string | number | null;
  brandId?: number | null;
  before?: AuditState | null;
  after?: AuditState | null;
}

export interface AuditRecord {
  id: number;
  actor: string;
  action: string;
  targetType: string;
  targetId: string | null;
  brandId: number | null;
  before: AuditState | null;
  after: AuditState | null;
  requestId: string | null;
  createdAt: Date;
}

const MAX_AUDIT_STRING = 200;

/** Throws when a before/after state holds anything but short scalars or lists of them. */
export function assertAuditState(what: string, state: AuditState | null | undefined): void {
  if (!state) return;
  for (const [key, value] of Object.entries(state)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v === 'string' && v.length > MAX_AUDIT_STRING) throw new Error(`audit ${what}.${key} is too long to be an id, status or amount`);
      if (v !== null && typeof v === 'object') throw new Error(`audit ${what}.${key} must be a scalar or a list of scalars`);
    }
  }
}

/**
 * Writes one audit row. Must run inside the transaction that makes the change,
 * so the change and its record commit together or not at all.
 */
export async function recordAudit(tx: Db, who: AuditActor, entry: AuditEntry): Promise<void> {
  if (!tx.isTransaction) throw new Error('recordAudit must run inside the transaction of the change it records');
  assertAuditState('before', entry.before);
  assertAuditState('after', entry.after);
  await insertAuditRow(tx, {
    actor: who.actor,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId === null ? null : String(entry.targetId),
    brandId: entry.brandId ?? null,
    before: entry.before ?? null,
    after: entry.after ?? null,
    requestId: who.requestId,
  });
}

/**
 * Runs an admin change and records it in one database transaction. `change`
 * reads what it needs (locking it), makes the change through the owning
 * service (whose own `transactional` becomes a savepoint inside this one) and
 * returns its result with the audit entry, or `audit: null` when nothing
 * changed (a repeated request), which is not recorded.
 */
export async function withAudit<T>(em: Db, who: AuditActor, change: (tx: Db) => Promise<{ result: T; audit: AuditEntry | null }>): Promise<T> {
  return transaction(em, async (tx) => {
    const { result, audit } = await change(tx);
    if (audit) await recordAudit(tx, who, audit);
    return result;
  });
}

export interface AuditFilter {
  page: number;
  perPage: number;
  action?: string;
  targetType?: string;
  targetId?: string;
  brandId?: number;
  /** A console operator's brands; absent or null: every brand. */
  brandIds?: number[] | null;
}

/** Newest first. */
export async function listAudit(em: Db, f: AuditFilter): Promise<{ items: AuditRecord[]; total: number }> {
  // A console operator limited to some brands sees their brands' rows only (not service-wide changes).
  const { rows, total } = await selectAuditPage(em, f, { limit: f.perPage, offset: (f.page - 1) * f.perPage });
  return {
    total,
    items: rows.map((r) => ({
      id: r.id,
      actor: r.actor,
      action: r.action,
      targetType: r.target_type,
      targetId: r.target_id,
      brandId: r.brand_id,
      before: r.before as AuditState | null,
      after: r.after as AuditState | null,
      requestId: r.request_id,
      createdAt: r.created_at,
    })),
  };
}
