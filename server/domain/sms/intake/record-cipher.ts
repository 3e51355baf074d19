import type { PiiBinding, PiiCipher } from '../../../infra/crypto/pii-cipher.ts';

/** Cipher contexts of the encrypted columns of `sms_records`. */
export const SMS_RECORD_CONTEXT = {
  body: 'sms_record.body',
  /** The SMS's own sender (a wallet's short code, or a person's number). */
  sender: 'sms_record.sender',
  /** The paying customer's number, as matching parsed it from the text. */
  senderNumber: 'sms_record.sender_number',
} as const;

/**
 * Every value of an SMS record is bound to the brand and to the record's natural
 * key, the device and the phone's own message id: unique together (the table's
 * UNIQUE constraint), never changed, and known before the INSERT, so a batch is
 * still one statement per message with no id reserved first (the id is only
 * known after the INSERT). The device id has no `:`, so the key reads one way.
 */
export function smsRecordBinding(r: { brandId: number | string; deviceId: number | string; deviceMessageId: string }): PiiBinding {
  return { brandId: r.brandId, row: `${r.deviceId}:${r.deviceMessageId}` };
}

/** The same from a raw `sms_records` row. */
export function smsRowBinding(r: { brand_id: number | string; device_id: number | string; device_message_id: string }): PiiBinding {
  return smsRecordBinding({ brandId: r.brand_id, deviceId: r.device_id, deviceMessageId: r.device_message_id });
}

/**
 * A sender or body ciphertext read by a query that only takes records whose
 * text is kept (`text_expired_at IS NULL`): the check constraint makes the
 * two the same, so a null here is a query that forgot the filter.
 */
export function textKept(token: string | null): string {
  if (token === null) throw new Error('an SMS record whose text expired was read as if it had text');
  return token;
}

export function decryptSmsSender(cipher: PiiCipher, token: string, binding: PiiBinding): string {
  return cipher.decrypt(token, SMS_RECORD_CONTEXT.sender, binding);
}

export function decryptSmsBody(cipher: PiiCipher, token: string, binding: PiiBinding): string {
  return cipher.decrypt(token, SMS_RECORD_CONTEXT.body, binding);
}

/** Cipher contexts of the encrypted columns of `sms_parts` (parts.ts). */
export const SMS_PART_CONTEXT = { body: 'sms_part.body', sender: 'sms_part.sender' } as const;

/** A waiting part's values are bound to the brand, its device, its set's reference and the phone's id for the part. */
export function smsPartBinding(r: { brandId: number | string; deviceId: number | string; reference: number; deviceMessageId: string }): PiiBinding {
  return { brandId: r.brandId, row: `${r.deviceId}:part:${r.reference}:${r.deviceMessageId}` };
}
