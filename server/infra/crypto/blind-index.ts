import { createHmac } from 'node:crypto';
import { secretKeyObject } from './key-object.ts';

export type BlindIndexKind = 'email' | 'phone';

const MIN_KEY_BYTES = 32;

/**
 * Keyed hash used to find a customer by email or phone without storing either in
 * clear. Keyed (HMAC) rather than a plain hash because emails and phone numbers are
 * guessable: without the key, a stolen database cannot be matched against a list.
 * The key must differ from the PII cipher key so one leak does not give both.
 *
 * The brand and the kind are part of the MAC input
 * (`pc.bidx.v2:<brandId>:<kind>:<value>`): the same email in two brands gives two
 * unrelated indexes, so a dump does not tell which brands share a customer, and
 * the same text as email and as phone never gives the same index. (`v1` indexes
 * had no brand; the start-up re-encryption recomputes them.) Callers pass the value already
 * normalised (`normalizeEmail`, `normalizePhone`), or lookups silently miss.
 * Changing this key changes every index: rotating it means recomputing them all.
 */
export function blindIndex(key: Buffer, brandId: number | string, kind: BlindIndexKind, normalisedValue: string): string {
  if (key.length < MIN_KEY_BYTES) throw new RangeError(`Blind index key must be at least ${MIN_KEY_BYTES} bytes`);
  if (kind !== 'email' && kind !== 'phone') throw new RangeError('Unknown blind index kind');
  if (normalisedValue.length === 0) throw new RangeError('Blind index value must not be empty');
  if (!/^[1-9][0-9]*$/.test(String(brandId))) throw new RangeError('Blind index brand must be a positive integer id');
  // The key as a KeyObject made once: a raw Buffer key costs ~6x more per HMAC on Node 24 (key-object.ts).
  return createHmac('sha256', secretKeyObject(key)).update(`pc.bidx.v2:${brandId}:${kind}:${normalisedValue}`, 'utf8').digest('hex');
}
