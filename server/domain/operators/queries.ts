import { type Insertable, type Selectable, type UpdateObject } from 'kysely';
import type { DB, Db } from '../db.ts';

/** An `operators` row as the database returns it. */
export type OperatorRow = Selectable<DB['operators']>;

// Operators

/** The operator with this id or e-mail; `forUpdate` locks the row until the transaction ends. */
export async function selectOperator(db: Db, by: { id: string } | { email: string }, opts: { forUpdate?: boolean } = {}): Promise<OperatorRow | undefined> {
  let q = db.selectFrom('operators').selectAll();
  q = 'id' in by ? q.where('id', '=', by.id) : q.where('email', '=', by.email);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function updateOperatorRow(tx: Db, id: string, set: UpdateObject<DB, 'operators'>): Promise<void> {
  await tx.updateTable('operators').set(set).where('id', '=', id).execute();
}

/** Throws the driver's unique violation when the e-mail is taken. */
export async function insertOperator(tx: Db, row: Insertable<DB['operators']>): Promise<OperatorRow> {
  return tx.insertInto('operators').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Oldest first. */
export async function selectOperators(db: Db): Promise<OperatorRow[]> {
  return db.selectFrom('operators').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

/** How many operators there are (with this e-mail, when given). */
export async function countOperatorRows(db: Db, email?: string): Promise<number> {
  let q = db.selectFrom('operators').select((eb) => eb.fn.countAll<string>().as('n'));
  if (email !== undefined) q = q.where('email', '=', email);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Every owner, each row locked until the transaction ends. */
export async function lockOwners(tx: Db): Promise<Array<{ id: string; disabled: boolean }>> {
  return tx.selectFrom('operators').select(['id', 'disabled']).where('role', '=', 'owner').forUpdate().execute();
}

/** Which of these brand ids exist. */
export async function selectExistingBrandIds(db: Db, brandIds: number[]): Promise<number[]> {
  const found = await db.selectFrom('brands').select('id').where('id', 'in', brandIds).execute();
  return found.map((b) => Number(b.id));
}

// Sessions

export async function insertSession(tx: Db, row: { operatorId: string; tokenHash: string; createdAt: Date; expiresAt: Date }): Promise<void> {
  await tx
    .insertInto('operator_sessions')
    .values({ operator_id: row.operatorId, token_hash: row.tokenHash, created_at: row.createdAt, last_seen_at: row.createdAt, expires_at: row.expiresAt })
    .execute();
}

/** The session of a token hash with its operator's row. */
export async function selectSessionWithOperator(db: Db, tokenHash: string) {
  return db
    .selectFrom('operator_sessions as s')
    .innerJoin('operators as o', 'o.id', 's.operator_id')
    .selectAll('o')
    .select(['s.id as session_id', 's.last_seen_at as session_last_seen_at', 's.expires_at as session_expires_at'])
    .where('s.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function touchSession(db: Db, sessionId: number, at: Date): Promise<void> {
  await db.updateTable('operator_sessions').set({ last_seen_at: at }).where('id', '=', sessionId).execute();
}

export async function deleteSession(db: Db, sessionId: number): Promise<void> {
  await db.deleteFrom('operator_sessions').where('id', '=', sessionId).execute();
}

/** Deletes the operator's sessions, but the one to keep when given. */
export async function deleteOperatorSessions(tx: Db, operatorId: string, opts: { except?: number } = {}): Promise<void> {
  let q = tx.deleteFrom('operator_sessions').where('operator_id', '=', operatorId);
  if (opts.except !== undefined) q = q.where('id', '!=', opts.except);
  await q.execute();
}

/** Deletes sessions that ended by `now` or were last seen by `idleSince`; how many. */
export async function deleteEndedSessions(db: Db, now: Date, idleSince: Date): Promise<number> {
  const result = await db
    .deleteFrom('operator_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
