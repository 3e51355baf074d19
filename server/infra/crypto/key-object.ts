import { createSecretKey, type KeyObject } from 'node:crypto';

/**
 * The same secret as a KeyObject, made once per key and reused.
 *
 * Why: on Node 24, createHmac/createCipheriv given a raw Buffer key spend most of
 * their time turning it into a key again on every call, and jsonwebtoken turns
 * a string secret into a key on every verify after first trying it as a public
 * key. Every merchant and device request does several of these (blind index,
 * decrypting personal data, the rate limiter's address key, the device JWT);
 * figures: BENCHMARKS.md, "What the profiles showed", 1.
 *
 * Keyed by the Buffer or string itself: Buffers through a WeakMap (a key that
 * is dropped frees its KeyObject), strings through a small Map (secrets are a
 * handful of configured values, never per-request data).
 */
const fromBuffers = new WeakMap<Buffer, KeyObject>();
const fromStrings = new Map<string, KeyObject>();
const STRING_KEYS_MAX = 64;

export function secretKeyObject(key: Buffer | string): KeyObject {
  if (typeof key === 'string') {
    let k = fromStrings.get(key);
    if (!k) {
      if (fromStrings.size >= STRING_KEYS_MAX) fromStrings.clear();
      k = createSecretKey(Buffer.from(key, 'utf8'));
      fromStrings.set(key, k);
    }
    return k;
  }
  let k = fromBuffers.get(key);
  if (!k) {
    k = createSecretKey(key);
    fromBuffers.set(key, k);
  }
  return k;
}
