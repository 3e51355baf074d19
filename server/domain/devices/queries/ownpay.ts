import type { Db } from '../../db.ts';

// The statements of devices paired by OwnPay's Android app (devices/ownpay.ts).

/** The protocol of the device a token names, whatever its status; undefined when there is none. */
export async function selectDeviceProtocol(db: Db, uuid: string) {
  return db.selectFrom('devices').select(['protocol']).where('uuid', '=', uuid).executeTakeFirst();
}

/** The sealed AES key of an active OwnPay device of the brand; undefined when it has none. */
export async function selectSealedAesKey(db: Db, deviceId: number, brandId: number) {
  return db
    .selectFrom('devices')
    .select(['uuid', 'aes_key_encrypted'])
    .where('id', '=', deviceId)
    .where('brand_id', '=', brandId)
    .where('status', '=', 'active')
    .where('protocol', '=', 'ownpay')
    .executeTakeFirst();
}
