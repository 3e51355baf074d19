import { sql } from 'kysely';
import type { DeviceProtocol, Mode } from '../../../../contract/vocabulary.ts';
import type { Db } from '../../db.ts';

// The statements of pairing: codes and the device rows they create.

export async function insertPairingCode(db: Db, row: { brandId: number; mode: Mode; codeHash: string; ttlMinutes: number }): Promise<{ id: number; expires_at: Date }> {
  return db
    .insertInto('pairing_codes')
    .values({ brand_id: row.brandId, mode: row.mode, code_hash: row.codeHash, expires_at: sql<Date>`now() + make_interval(mins => ${row.ttlMinutes})` })
    .returning(['id', 'expires_at'])
    .executeTakeFirstOrThrow();
}

/** Marks an unused, unexpired code of an active brand used; undefined when there is none (one conditional UPDATE). */
export async function useValidCode(tx: Db, codeHash: string) {
  return tx
    .updateTable('pairing_codes as pc')
    .from('brands as b')
    .set({ used_at: sql<Date>`now()` })
    .where('pc.code_hash', '=', codeHash)
    .where('pc.used_at', 'is', null)
    .where('pc.expires_at', '>', sql<Date>`now()`)
    .whereRef('b.id', '=', 'pc.brand_id')
    .where('b.status', '=', 'active')
    .returning(['pc.id', 'pc.brand_id', 'pc.mode'])
    .executeTakeFirst();
}

/** Revokes the brand's active devices with this fingerprint (the same phone pairing again). */
export async function revokeRepairedDevices(tx: Db, brandId: number, fingerprintHash: string): Promise<void> {
  await tx
    .updateTable('devices')
    .set({ status: 'revoked', revoked_at: sql<Date>`now()`, revoked_reason: 're_paired', refresh_jti: null, aes_key_encrypted: null, updated_at: sql<Date>`now()` })
    .where('brand_id', '=', brandId)
    .where('fingerprint_hash', '=', fingerprintHash)
    .where('status', '=', 'active')
    .execute();
}

/** Stores a newly paired device, seen now; its id. */
export async function insertDevice(
  tx: Db,
  row: { uuid: string; brandId: number; mode: Mode; name: string; fingerprintHash: string; appVersion: string | null; refreshJti: string; protocol: DeviceProtocol; aesKeyEncrypted: string | null },
): Promise<number> {
  const inserted = await tx
    .insertInto('devices')
    .values({
      uuid: row.uuid,
      brand_id: row.brandId,
      mode: row.mode,
      name: row.name,
      fingerprint_hash: row.fingerprintHash,
      app_version: row.appVersion,
      last_seen_at: sql<Date>`now()`,
      refresh_jti: row.refreshJti,
      protocol: row.protocol,
      aes_key_encrypted: row.aesKeyEncrypted,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

export async function setCodeDevice(tx: Db, codeId: number, deviceId: number): Promise<void> {
  await tx.updateTable('pairing_codes').set({ used_by_device_id: deviceId }).where('id', '=', codeId).execute();
}
