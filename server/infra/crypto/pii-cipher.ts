import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';

/**
 * Field-level encryption of personal data (AES-256-GCM).
 *
 * Token: `v2.<keyId>.<iv>.<ciphertext>.<tag>`, parts base64url. The key id travels
 * with each value so keys can rotate: new values use the active key, old values
 * still decrypt with whichever key wrote them until a re-encryption pass moves
 * them (`keyIdOf` tells which values are due).
 *
 * The AAD of a `v2` token binds the version, the key id, a context naming the
 * column (`customer.email`) and a binding naming the brand and the row the value
 * belongs to. A ciphertext copied into another column, another row or another
 * brand, or relabelled with another key id, fails authentication instead of
 * showing one customer's phone as another customer's.
 *
 * `v1` tokens (context only, no row or brand) were written before binding
 * existed. `decrypt` refuses them, so an old token pasted into a row cannot be
 * served; only the start-up re-encryption (server/domain/pii/reencrypt.ts) reads
 * them, through `decryptUnbound`, and rewrites them as `v2`. Webhook signing
 * secrets stay `v1` on purpose: their context names the brand, and a brand has
 * one endpoint, so the context already is the row.
 */

const VERSION = 'v2';
const UNBOUND_VERSION = 'v1';
const KEY_BYTES = 32;
/** 96-bit random IVs, the GCM standard size; with random IVs keep each key under ~2^32 encryptions. */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_RE = /^[A-Za-z0-9_-]{1,32}$/;
const B64URL_RE = /^[A-Za-z0-9_-]*$/;

export type PiiCipherFailure = 'malformed' | 'unknown_key' | 'authentication_failed' | 'bad_keyring' | 'unbound';

/**
 * A 500 to clients (corrupt data or a key missing from configuration is our
 * fault); `reason` lets callers and logs tell the cases apart. Messages never
 * contain key material or plaintext.
 */
export class PiiCipherError extends AppError {
  readonly reason: PiiCipherFailure;
  constructor(reason: PiiCipherFailure, message: string) {
    super('INTERNAL_ERROR', message);
    this.name = 'PiiCipherError';
    this.reason = reason;
  }
}

export interface PiiKeyring {
  activeKeyId: string;
  keys: Record<string, Buffer>;
}

/**
 * The brand and row a value belongs to. `row` is whatever identifies the row for
 * its whole life and is known before the row is written (a uuid made before the
 * INSERT, an id reserved from the sequence, a unique natural key); each column's
 * owner documents its choice beside the context constant.
 */
export interface PiiBinding {
  brandId: number | string;
  row: number | string;
}

function unboundAad(keyId: string, context: string): Buffer {
  return Buffer.from(`${UNBOUND_VERSION}.${keyId}.${context}`, 'utf8');
}

/** JSON, so no choice of separator inside a row key can make two bindings read alike. */
function boundAad(keyId: string, context: string, binding: PiiBinding): Buffer {
  return Buffer.from(JSON.stringify([VERSION, keyId, context, String(binding.brandId), String(binding.row)]), 'utf8');
}

function checkContext(context: string): void {
  if (context.length === 0) throw new PiiCipherError('malformed', 'PII context must not be empty');
}

function checkBinding(binding: PiiBinding): void {
  if (!binding || String(binding.brandId) === '' || String(binding.row) === '') {
    throw new PiiCipherError('malformed', 'PII binding needs a brand and a row');
  }
}

export class PiiCipher {
  readonly activeKeyId: string;
  readonly #keys: ReadonlyMap<string, KeyObject>;

  constructor(keyring: PiiKeyring) {
    const keys = new Map<string, KeyObject>();
    for (const [id, key] of Object.entries(keyring.keys)) {
      if (!KEY_ID_RE.test(id)) throw new PiiCipherError('bad_keyring', `PII key id ${JSON.stringify(id)} must be 1-32 characters of A-Z a-z 0-9 _ -`);
      if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) throw new PiiCipherError('bad_keyring', `PII key ${id} must be exactly ${KEY_BYTES} bytes`);
      // A KeyObject holds a private copy (the caller may zero or reuse its buffer), and
      // Node 24 re-imports a raw Buffer key on every AES-GCM call, several times the
      // cost of the cipher itself (see server/infra/crypto/key-object.ts).
      keys.set(id, createSecretKey(key));
    }
    if (!keys.has(keyring.activeKeyId)) {
      throw new PiiCipherError('bad_keyring', `Active PII key ${JSON.stringify(keyring.activeKeyId)} is not in the keyring`);
    }
    this.activeKeyId = keyring.activeKeyId;
    this.#keys = keys;
  }

  /** A `v2` token bound to `context` (the column) and `binding` (brand and row). */
  encrypt(plaintext: string, context: string, binding: PiiBinding): string {
    checkContext(context);
    checkBinding(binding);
    return this.#seal(VERSION, plaintext, (keyId) => boundAad(keyId, context, binding));
  }

  /**
   * The plaintext of a `v2` token written for this context, brand and row. A
   * token of another row, brand or column fails with `authentication_failed`; an
   * old unbound `v1` token fails with `unbound` (it could have been copied from
   * anywhere: the re-encryption at start-up rewrites every legitimate one).
   */
  decrypt(token: string, context: string, binding: PiiBinding): string {
    checkContext(context);
    checkBinding(binding);
    const parsed = parseToken(token);
    if (parsed.version !== VERSION) throw new PiiCipherError('unbound', `Encrypted ${context} is in the old unbound format; refusing to serve it`);
    return this.#open(parsed, context, boundAad(parsed.keyId, context, binding));
  }

  /** A `v1` token bound to the context only: for values whose context already names their one row (webhook secrets). */
  encryptUnbound(plaintext: string, context: string): string {
    checkContext(context);
    return this.#seal(UNBOUND_VERSION, plaintext, (keyId) => unboundAad(keyId, context));
  }

  /** Reads a `v1` token: webhook secrets, and old values during re-encryption. */
  decryptUnbound(token: string, context: string): string {
    checkContext(context);
    const parsed = parseToken(token);
    if (parsed.version !== UNBOUND_VERSION) throw new PiiCipherError('malformed', `Not a ${UNBOUND_VERSION} PII token`);
    return this.#open(parsed, context, unboundAad(parsed.keyId, context));
  }

  #seal(version: string, plaintext: string, aad: (keyId: string) => Buffer): string {
    const keyId = this.activeKeyId;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(keyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(keyId));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [version, keyId, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
  }

  #open(parsed: ParsedToken, context: string, aad: Buffer): string {
    const key = this.#keys.get(parsed.keyId);
    if (!key) throw new PiiCipherError('unknown_key', `PII key ${JSON.stringify(parsed.keyId)} is not configured; cannot decrypt`);
    const decipher = createDecipheriv('aes-256-gcm', key, parsed.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(parsed.tag);
    try {
      return Buffer.concat([decipher.update(parsed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new PiiCipherError('authentication_failed', `Encrypted ${context} failed authentication (tampered, copied from another row, brand or column, or wrong key)`);
    }
  }

  /** True when the value was written with an older key and should be re-encrypted. */
  needsRotation(token: string): boolean {
    return keyIdOf(token) !== this.activeKeyId;
  }
}

interface ParsedToken {
  version: string;
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

function parseToken(token: string): ParsedToken {
  const parts = typeof token === 'string' ? token.split('.') : [];
  const [version, keyId, iv, ciphertext, tag] = parts;
  if (parts.length !== 5 || (version !== VERSION && version !== UNBOUND_VERSION)) {
    throw new PiiCipherError('malformed', 'Not a PII token');
  }
  if (!KEY_ID_RE.test(keyId!) || ![iv, ciphertext, tag].every((p) => B64URL_RE.test(p!))) {
    throw new PiiCipherError('malformed', 'PII token has an invalid part');
  }
  const ivBuf = Buffer.from(iv!, 'base64url');
  const tagBuf = Buffer.from(tag!, 'base64url');
  if (ivBuf.length !== IV_BYTES || tagBuf.length !== TAG_BYTES) {
    throw new PiiCipherError('malformed', 'PII token has a wrong-sized IV or tag');
  }
  return { version: version!, keyId: keyId!, iv: ivBuf, ciphertext: Buffer.from(ciphertext!, 'base64url'), tag: tagBuf };
}

/** True for a token written before row binding (`v1`): the re-encryption rewrites it. */
export function isUnboundToken(token: string): boolean {
  return parseToken(token).version === UNBOUND_VERSION;
}

/** The key id a token was written with, without decrypting it. */
export function keyIdOf(token: string): string {
  return parseToken(token).keyId;
}

/** Fresh random key material, base64, ready for a keyring spec or a blind index key. */
export function generateKeyMaterial(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

/**
 * Decodes one base64 (or base64url) 32-byte key. Strict, because Node's decoder
 * silently skips bad characters and a truncated key would otherwise load.
 */
export function parseKeyMaterial(b64: string, label = 'key'): Buffer {
  const trimmed = b64.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    throw new PiiCipherError('bad_keyring', `${label} is not base64`);
  }
  const key = Buffer.from(trimmed.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  if (key.length !== KEY_BYTES) {
    throw new PiiCipherError('bad_keyring', `${label} must decode to ${KEY_BYTES} bytes, got ${key.length}`);
  }
  return key;
}

/**
 * Parses `k2:<base64>,k1:<base64>`. The FIRST entry is the active key, so
 * rotation is: generate a key, put it in front, restart; older entries stay for
 * decryption until nothing uses them. (Order, not a marker: one less syntax to get
 * wrong in an environment variable.) Whitespace around entries is ignored.
 */
export function parseKeyring(spec: string): PiiKeyring {
  const entries = spec.split(',').map((e) => e.trim());
  if (spec.trim() === '' || entries.some((e) => e === '')) {
    throw new PiiCipherError('bad_keyring', 'PII keyring is empty or has an empty entry; expected "<keyId>:<base64 32 bytes>,..."');
  }
  // A Map, not an object literal: a key id such as `__proto__` must stay a key id.
  const keys = new Map<string, Buffer>();
  for (const [i, entry] of entries.entries()) {
    const sep = entry.indexOf(':');
    if (sep < 0) throw new PiiCipherError('bad_keyring', `PII keyring entry ${i + 1} lacks "<keyId>:"`);
    const id = entry.slice(0, sep).trim();
    if (!KEY_ID_RE.test(id)) {
      throw new PiiCipherError('bad_keyring', `PII keyring entry ${i + 1}: key id must be 1-32 characters of A-Z a-z 0-9 _ -`);
    }
    if (keys.has(id)) throw new PiiCipherError('bad_keyring', `PII keyring lists key id ${JSON.stringify(id)} twice`);
    keys.set(id, parseKeyMaterial(entry.slice(sep + 1), `PII key ${id}`));
  }
  return { activeKeyId: keys.keys().next().value!, keys: Object.fromEntries(keys) };
}
