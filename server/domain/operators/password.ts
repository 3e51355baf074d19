import { randomBytes, randomInt, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Operator passwords: scrypt from node:crypto (no native dependency), a 16-byte
 * salt per password, and the parameters inside the stored string
 * (`scrypt$N$r$p$salt$hash`), so raising the cost later leaves old hashes
 * verifiable. N=2^15, r=8 costs ~32 MiB and tens of milliseconds per attempt.
 */
const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number, options: ScryptOptions) => Promise<Buffer>;

const PARAMS = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;
const HASH_RE = /^scrypt\$([0-9]{1,8})\$([0-9]{1,3})\$([0-9]{1,3})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{32,128})$/;

const maxmem = (N: number, r: number) => 128 * N * r * 2;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_BYTES, { ...PARAMS, maxmem: maxmem(PARAMS.N, PARAMS.r) });
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Timing-safe; a malformed or foreign hash is simply false. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = HASH_RE.exec(stored);
  if (!m) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Refuse parameters far outside what this code writes: a tampered row must not make one login cost gigabytes.
  if (N < 2 ** 10 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  const key = await scrypt(password, Buffer.from(m[4]!, 'base64url'), expected.length, { N, r, p, maxmem: maxmem(N, r) });
  return timingSafeEqual(key, expected);
}

let dummy: Promise<string> | null = null;
/**
 * A hash to verify against when the e-mail is unknown, so an unknown e-mail
 * costs as long as a wrong password and timing does not tell which e-mails exist.
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
/** A generated password (20 characters from 57, ~116 bits), shown once. */
export function generatePassword(length = 20): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}
