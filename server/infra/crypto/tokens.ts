import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { ApiKeyDialect, Mode } from '../../../contract/vocabulary.ts';

/** URL-safe random secret (refresh-token ids, pairing nonces, webhook secrets). */
export function randomToken(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < 16) throw new RangeError('randomToken needs at least 16 bytes');
  return randomBytes(bytes).toString('base64url');
}

export function sha256Hex(input: string | Buffer): string {
  return createHash('sha256').update(input).digest('hex');
}

/**
 * Compares secrets without leaking, through timing, how many leading characters
 * matched or how long the expected value is: both sides are hashed to 32 bytes
 * first, so `timingSafeEqual` always sees equal lengths.
 */
export function timingSafeEqualString(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

export type ApiKeyMode = Mode;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 40 base62 characters carry about 238 bits of entropy. */
const API_KEY_RANDOM_LENGTH = 40;
/** `sk_live_` plus four random characters: enough to tell keys apart in a list. */
const API_KEY_PREFIX_LENGTH = 12;
/**
 * Accepts 32 to 64 random characters so the length can grow later without
 * breaking keys already issued.
 */
const API_KEY_RE = /^(?:(?:[ps]k|op)_(?:live|test)_[0-9A-Za-z]{32,64}|op_[0-9a-f]{8}\.[0-9A-Za-z]{16,128})$/;

/**
 * The spelling of an OwnPay-dialect key: ours (`op_live_…`, `op_test_…`), or one
 * OwnPay itself issued and `import:ownpay` brought over (`op_<8 hex>.<secret>`,
 * its SecurityHelpers::generateApiKey): OwnPay's SDKs refuse keys not starting `op_`.
 */
export const OWNPAY_KEY_RE = /^op_(?:live_|test_|[0-9a-f]{8}\.)/;

export interface GeneratedApiKey {
  /** Shown to the merchant once, never stored. */
  key: string;
  /** Stored in clear for display ("sk_live_AbC1…"). */
  prefix: string;
  /** Stored and looked up by; see `hashApiKey`. */
  hash: string;
}

export function generateApiKey(mode: ApiKeyMode, dialect: ApiKeyDialect = 'native'): GeneratedApiKey {
  let random = '';
  // randomInt draws without modulo bias, so every character is uniform.
  for (let i = 0; i < API_KEY_RANDOM_LENGTH; i++) random += BASE62[randomInt(BASE62.length)];
  // Secret server keys: `sk_`. Keys issued before were `pk_` and keep working
  // (looksLikeApiKey); their mode is stored with them like a new key's.
  // OwnPay-dialect keys: `op_` (README "Coming from OwnPay").
  const key = `${dialect === 'ownpay' ? 'op' : 'sk'}_${mode}_${random}`;
  return { key, prefix: key.slice(0, API_KEY_PREFIX_LENGTH), hash: hashApiKey(key) };
}

/**
 * Plain SHA-256, not a slow password hash: an API key carries ~238 random bits, so
 * brute force is hopeless whatever the hash speed, and a fast deterministic hash
 * lets every request find its key with one indexed lookup instead of paying
 * bcrypt/scrypt per request.
 */
export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

/** Cheap format gate before the database, so junk credentials cost no query. */
export function looksLikeApiKey(s: unknown): s is string {
  return typeof s === 'string' && API_KEY_RE.test(s);
}
