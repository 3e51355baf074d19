import { createHmac } from 'node:crypto';
import { normalizeSender } from '../templates/parser.ts';
import { secretKeyObject } from '../../../infra/crypto/key-object.ts';

/**
 * Keyed hash of an SMS's sender and text, to recognise the same message
 * forwarded again under another message id or by another phone. Keyed (HMAC),
 * because payment SMS have little entropy (amount, phone number, a short trx
 * id): a plain hash in a stolen database could be brute-forced back to the
 * text. The key is the blind-index key with its own domain prefix, so the two
 * uses never produce comparable values. The brand is part of the input: the
 * same SMS in two brands hashes apart, so a dump does not link brands through
 * a message (duplicates are only ever looked for within a brand anyway).
 *
 * Text is compared as a phone would show it: Unicode NFC, any run of
 * whitespace (including \r\n vs \n) as one space, ends trimmed. The device
 * clock is deliberately not part of it: two phones disagree about time.
 */
export function smsContentHash(key: Buffer, brandId: number | string, sender: string, body: string): string {
  const text = body.normalize('NFC').replace(/\s+/gu, ' ').trim();
  // A KeyObject made once per key: a raw Buffer key costs ~6x more per HMAC on Node 24 (key-object.ts).
  return createHmac('sha256', secretKeyObject(key)).update(`pc.smshash.v2:${brandId}:${normalizeSender(sender)}\n${text}`, 'utf8').digest('hex');
}

/**
 * Keyed hash naming the set a part of a long SMS belongs to (parts.ts): the
 * brand, the sender exactly as received (not normalised: parts of one SMS carry
 * the same address), the SIM slot and the header's reference and count. Keyed
 * for the same reason as the content hash: the sender stays unreadable.
 */
export function smsPartSetHash(key: Buffer, brandId: number | string, part: { sender: string; simSlot: number | null; reference: number; count: number }): string {
  return createHmac('sha256', secretKeyObject(key))
    .update(`pc.smsparts.v1:${brandId}:${part.simSlot ?? '-'}:${part.reference}:${part.count}\n${part.sender}`, 'utf8')
    .digest('hex');
}
