import { sql } from 'kysely';
import { prepared, rawStatement, type Db } from '../db.ts';
import type { Mode } from '../../../contract/vocabulary.ts';

/** A key's row as a repeated request reads it; `response_body` is the stored JSON text. */
export interface KeyRow {
  request_hash: string;
  completed_at: Date | null;
  response_status: number | null;
  response_body: string | null;
}

export interface KeyScope {
  brandId: number;
  mode: Mode;
  key: string;
}

/**
 * Inserts the key, or takes over one older than `ttlHours` or abandoned (same
 * request, locked longer than `lockTimeoutSeconds` ago, never completed).
 * Raw SQL: the conflict rule's conditions name the stored row by its alias and
 * compare it with EXCLUDED, kept as one readable text.
 */
const insertClaim = rawStatement<{ lock_token: string }>(
  `INSERT INTO idempotency_keys AS k (brand_id, mode, key, request_hash, lock_token, locked_at)
   VALUES ($1::bigint, $2::text, $3::varchar, $4::varchar, $5::uuid, now())
   ON CONFLICT (brand_id, mode, key) DO UPDATE
     SET request_hash = EXCLUDED.request_hash, lock_token = EXCLUDED.lock_token, locked_at = now(),
         response_status = NULL, response_body = NULL, completed_at = NULL, created_at = now()
   WHERE k.created_at < now() - make_interval(hours => $6::integer)
      OR (k.completed_at IS NULL AND k.request_hash = EXCLUDED.request_hash
          AND k.locked_at < now() - make_interval(secs => $7::integer))
   RETURNING k.lock_token`,
);

/** True when this call holds the key now (its `token` is the key's lock token). */
export async function insertOrTakeOverKey(
  db: Db,
  scope: KeyScope & { hash: string; token: string },
  limits: { ttlHours: number; lockTimeoutSeconds: number },
): Promise<boolean> {
  const rows = await insertClaim(db, [scope.brandId, scope.mode, scope.key, scope.hash, scope.token, limits.ttlHours, limits.lockTimeoutSeconds]);
  return rows.some((r) => r.lock_token === scope.token);
}

export async function selectKey(db: Db, scope: KeyScope): Promise<KeyRow | undefined> {
  return (
    db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'completed_at', 'response_status'])
      // The stored JSON text itself (a jsonb string), for a byte-identical replay.
      .select(sql<string | null>`response_body #>> '{}'`.as('response_body'))
      .where('brand_id', '=', scope.brandId)
      .where('mode', '=', scope.mode)
      .where('key', '=', scope.key)
      .executeTakeFirst()
  );
}

/** completeKey's UPDATE, run by every keyed request, compiled once (db.ts `prepared`; BENCHMARKS.md, "Data layer"). */
const completeKeyStatement = prepared((k, $: { brandId: number; mode: Mode; key: string; token: string; status: number; bodyJson: string }) =>
  k
    .updateTable('idempotency_keys')
    // A jsonb string of the exact text: jsonb objects would reorder keys.
    .set({ response_status: $.status, response_body: sql`to_jsonb(${$.bodyJson}::text)`, completed_at: sql<Date>`now()`, lock_token: null })
    .where('brand_id', '=', $.brandId)
    .where('mode', '=', $.mode)
    .where('key', '=', $.key)
    .where('lock_token', '=', $.token)
    .returning('id'),
);

/** Stores the response on the key still held by `token`; false when the key is no longer held by it. */
export async function storeResponse(db: Db, scope: KeyScope, token: string, status: number, bodyJson: string): Promise<boolean> {
  const rows = await completeKeyStatement.execute(db, { ...scope, token, status, bodyJson });
  return rows.length > 0;
}

/** Deletes the key if `token` still holds it and it never completed. */
export async function deleteHeldKey(db: Db, scope: KeyScope, token: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('brand_id', '=', scope.brandId)
    .where('mode', '=', scope.mode)
    .where('key', '=', scope.key)
    .where('lock_token', '=', token)
    .where('completed_at', 'is', null)
    .execute();
}

/** Deletes up to `limit` keys older than `ttlHours`, oldest first; how many. */
export async function deleteKeysOlderThan(db: Db, ttlHours: number, limit: number): Promise<number> {
  const rows = await db
    .deleteFrom('idempotency_keys')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('idempotency_keys')
        .select('id')
        .where('created_at', '<', sql<Date>`now() - make_interval(hours => ${ttlHours})`)
        .orderBy('created_at')
        .limit(limit),
    )
    .returning('id')
    .execute();
  return rows.length;
}
