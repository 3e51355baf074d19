import { sql, type Insertable, type Selectable } from 'kysely';
import type { Mode, WebhookEventName, WebhookSigning } from '../../../../contract/vocabulary.ts';
import type { DB, Db } from '../../db.ts';

// The statements of webhook endpoints: reading, creating, changing, deleting, rotating their secrets.

export type EndpointRow = Selectable<DB['webhook_endpoints']>;

/**
 * The brand's endpoints a key of `mode` sees, in id order: a test key its test
 * endpoints, a live key its live and both-modes ones.
 */
function endpointsOfMode(db: Db, brandId: number, mode: Mode) {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('brand_id', '=', brandId)
    .where((eb) => (mode === 'test' ? eb('mode', '=', 'test') : eb.or([eb('mode', 'is', null), eb('mode', '=', 'live')])))
    .orderBy('id');
}

export async function selectEndpointsOfMode(db: Db, brandId: number, mode: Mode): Promise<EndpointRow[]> {
  return endpointsOfMode(db, brandId, mode).execute();
}

/** One endpoint the key of `mode` sees (id null: the first), optionally locked. */
export async function selectEndpointOfMode(db: Db, brandId: number, mode: Mode, id: number | null, lock?: 'FOR UPDATE' | 'FOR SHARE'): Promise<EndpointRow | undefined> {
  let q = endpointsOfMode(db, brandId, mode).limit(1);
  if (id !== null) q = q.where('id', '=', id);
  if (lock === 'FOR UPDATE') q = q.forUpdate();
  if (lock === 'FOR SHARE') q = q.forShare();
  return q.executeTakeFirst();
}

/** The brand row lock that serialises endpoint creation. */
export async function lockBrandRow(tx: Db, brandId: number): Promise<void> {
  await tx.selectFrom('brands').select('id').where('id', '=', brandId).forUpdate().execute();
}

export async function countBrandEndpoints(db: Db, brandId: number): Promise<number> {
  const { n } = await db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<string>().as('n')).where('brand_id', '=', brandId).executeTakeFirstOrThrow();
  return Number(n);
}

/** `disabled_at` is set to now when the endpoint starts disabled. */
export async function insertEndpointRow(tx: Db, row: Omit<Insertable<DB['webhook_endpoints']>, 'disabled_at'>): Promise<EndpointRow> {
  return tx
    .insertInto('webhook_endpoints')
    .values({ ...row, disabled_at: row.enabled ? null : sql<Date>`now()` })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Changes the given fields. Enabling clears an automatic disable and, when the
 * endpoint was disabled (`enabling`), the failure streak; `disabling` records the
 * merchant did it.
 */
export async function updateEndpointRow(
  tx: Db,
  id: number,
  patch: { url?: string; description?: string; events?: WebhookEventName[]; enabled?: boolean; signing?: WebhookSigning },
  change: { enabling: boolean; disabling: boolean },
): Promise<EndpointRow> {
  const now = sql<Date>`now()`;
  return tx
    .updateTable('webhook_endpoints')
    .set({
      ...(patch.url !== undefined && { url: patch.url }),
      ...(patch.description !== undefined && { description: patch.description }),
      ...(patch.events !== undefined && { events: [...new Set(patch.events)] }),
      ...(patch.enabled !== undefined && { enabled: patch.enabled }),
      ...(patch.signing !== undefined && { signing: patch.signing }),
      ...(patch.enabled === true && { disabled_reason: null, disabled_at: null }),
      ...(change.disabling && { disabled_reason: 'merchant' as const, disabled_at: now }),
      ...(change.enabling && { failing_since: null, consecutive_failures: 0 }),
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Dead-letters the endpoint's waiting deliveries and deletes it. */
export async function deleteEndpointRow(tx: Db, id: number): Promise<void> {
  const now = sql<Date>`now()`;
  await tx
    .updateTable('webhook_deliveries')
    .set({ status: 'dead_letter', dead_lettered_at: now, next_attempt_at: null, last_error: 'endpoint deleted', lease_token: null, lease_until: null, updated_at: now })
    .where('endpoint_id', '=', id)
    .where('status', 'in', ['pending', 'retrying'])
    .execute();
  await tx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
}

export async function storeSecrets(tx: Db, id: number, secretEncrypted: string, previous: EndpointRow['previous_secrets']): Promise<void> {
  await tx.updateTable('webhook_endpoints').set({ secret_encrypted: secretEncrypted, previous_secrets: previous, updated_at: sql<Date>`now()` }).where('id', '=', id).execute();
}

/** The endpoint a sample event of `mode` may go to (of the mode, or both-modes; id null: the first), locked FOR SHARE. */
export async function selectTestTarget(tx: Db, scope: { brandId: number; mode: Mode }, id: number | null): Promise<EndpointRow | undefined> {
  let q = tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('brand_id', '=', scope.brandId)
    .where((eb) => eb.or([eb('mode', 'is', null), eb('mode', '=', scope.mode)]))
    .orderBy('id')
    .limit(1)
    .forShare();
  if (id !== null) q = q.where('id', '=', id);
  return q.executeTakeFirst();
}

/** Every endpoint of the brand (both modes), oldest first: the admin's view. */
export async function selectBrandEndpoints(db: Db, brandId: number): Promise<EndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('brand_id', '=', brandId).orderBy('id').execute();
}

/** One endpoint of the brand whatever its mode, locked for an admin's change. */
export async function lockBrandEndpoint(tx: Db, brandId: number, id: number): Promise<EndpointRow | undefined> {
  return tx.selectFrom('webhook_endpoints').selectAll().where('brand_id', '=', brandId).where('id', '=', id).forUpdate().executeTakeFirst();
}
