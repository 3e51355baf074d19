import { createCipheriv, createDecipheriv, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * The backup archive's envelope: a passphrase-encrypted, authenticated stream.
 *
 * Layout: a header in clear, then sealed chunks.
 *   header  = "PCBACKUP" | version u8 | log2(N) u8 | r u8 | p u8 | salt[16] | nonce prefix[8] | verifier[32]
 *   chunk   = length u32 BE (of the ciphertext) | ciphertext | GCM tag[16]
 *
 * Keys: scrypt(passphrase, salt, N, r, p) gives 64 bytes: the first 32 are the
 * AES-256-GCM key, the last 32 key the header verifier, an HMAC-SHA-256 over
 * the header before it. A wrong passphrase is told apart from a damaged body by
 * the verifier, before any chunk is opened.
 *
 * Chunks follow the STREAM construction (Hoang, Reyhanitabar, Rogaway, Vizár,
 * "Online Authenticated-Encryption and its Nonce-Reuse Misuse-Resistance",
 * CRYPTO 2015): each chunk's nonce is the random prefix and the chunk's
 * number, and its additional data is the header, the number and a flag
 * marking the last chunk. Reordered, dropped, repeated or appended chunks and
 * a cut-off file all fail to open; a chunk is passed on only after its tag
 * checked out, so nothing unauthenticated reaches the reader.
 */

const MAGIC = Buffer.from('PCBACKUP', 'ascii');
const VERSION = 1;
const SALT_BYTES = 16;
const PREFIX_BYTES = 8;
const VERIFIER_BYTES = 32;
const TAG_BYTES = 16;
export const HEADER_BYTES = MAGIC.length + 4 + SALT_BYTES + PREFIX_BYTES + VERIFIER_BYTES;
const CHUNK_BYTES = 1 << 20;
const MAX_CHUNK_BYTES = 4 << 20;

/** scrypt cost: N = 2^17, r = 8, p = 1 (128 MiB, about half a second): RFC 7914's interactive figures raised for an offline secret. */
export const DEFAULT_KDF = { logN: 17, r: 8, p: 1 } as const;
export interface KdfParams {
  logN: number;
  r: number;
  p: number;
}

/** Why an archive could not be opened; the message is safe to print. */
export class ArchiveError extends Error {
  readonly reason: 'not_an_archive' | 'wrong_passphrase' | 'damaged' | 'unsupported';
  constructor(reason: ArchiveError['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

function deriveKeys(passphrase: string, salt: Buffer, kdf: KdfParams): Promise<{ key: Buffer; verifierKey: Buffer }> {
  const N = 2 ** kdf.logN;
  return new Promise((resolve, reject) =>
    scrypt(passphrase.normalize('NFKC'), salt, 64, { N, r: kdf.r, p: kdf.p, maxmem: 256 * N * kdf.r + 1024 * 1024 }, (err, out) =>
      err ? reject(err) : resolve({ key: out.subarray(0, 32), verifierKey: out.subarray(32) }),
    ),
  );
}

function nonce(prefix: Buffer, counter: number): Buffer {
  const n = Buffer.alloc(12);
  prefix.copy(n, 0);
  n.writeUInt32BE(counter, 8);
  return n;
}

function aad(header: Buffer, counter: number, final: boolean): Buffer {
  const tail = Buffer.alloc(5);
  tail.writeUInt32BE(counter, 0);
  tail[4] = final ? 1 : 0;
  return Buffer.concat([header, tail]);
}

/** A Transform that seals what is written to it into the archive format. */
export async function encryptingStream(passphrase: string, kdf: KdfParams = DEFAULT_KDF): Promise<Transform> {
  const salt = randomBytes(SALT_BYTES);
  const prefix = randomBytes(PREFIX_BYTES);
  const { key, verifierKey } = await deriveKeys(passphrase, salt, kdf);
  const head = Buffer.concat([MAGIC, Buffer.from([VERSION, kdf.logN, kdf.r, kdf.p]), salt, prefix]);
  const header = Buffer.concat([head, createHmac('sha256', verifierKey).update(head).digest()]);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let counter = 0;
  let headerSent = false;
  const seal = (t: Transform, data: Buffer, final: boolean) => {
    if (!headerSent) {
      t.push(header);
      headerSent = true;
    }
    if (counter === 0xffffffff) throw new Error('backup too large for one archive');
    const cipher = createCipheriv('aes-256-gcm', key, nonce(prefix, counter));
    cipher.setAAD(aad(header, counter, final));
    const body = Buffer.concat([cipher.update(data), cipher.final()]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length, 0);
    t.push(Buffer.concat([len, body, cipher.getAuthTag()]));
    counter++;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      try {
        while (pendingBytes > CHUNK_BYTES) {
          const all = Buffer.concat(pending);
          seal(this, all.subarray(0, CHUNK_BYTES), false);
          pending = [all.subarray(CHUNK_BYTES)];
          pendingBytes = pending[0]!.length;
        }
        cb();
      } catch (err) {
        cb(err as Error);
      }
    },
    flush(cb: TransformCallback) {
      try {
        seal(this, Buffer.concat(pending), true);
        cb();
      } catch (err) {
        cb(err as Error);
      }
    },
  });
}

/** A Transform that opens an archive written by encryptingStream; fails with ArchiveError. */
export function decryptingStream(passphrase: string): Transform {
  let buf: Buffer = Buffer.alloc(0);
  let header: Buffer | null = null;
  let key: Buffer | null = null;
  let prefix: Buffer | null = null;
  let counter = 0;
  let done = false;

  async function openHeader(h: Buffer): Promise<void> {
    if (!h.subarray(0, MAGIC.length).equals(MAGIC)) throw new ArchiveError('not_an_archive', 'not a paycollect backup archive');
    const at = MAGIC.length;
    if (h[at] !== VERSION) throw new ArchiveError('unsupported', `archive format version ${h[at]} is not supported by this version (expects ${VERSION})`);
    const kdf = { logN: h[at + 1]!, r: h[at + 2]!, p: h[at + 3]! };
    // Bounded so that an archive from elsewhere cannot make the restore allocate without limit (scrypt takes 128 * N * r bytes).
    if (kdf.logN < 10 || kdf.logN > 22 || kdf.r < 1 || kdf.r > 32 || kdf.p < 1 || kdf.p > 16 || 128 * 2 ** kdf.logN * kdf.r > 512 * 1024 * 1024) {
      throw new ArchiveError('damaged', 'the archive header is damaged');
    }
    const salt = h.subarray(at + 4, at + 4 + SALT_BYTES);
    prefix = h.subarray(at + 4 + SALT_BYTES, at + 4 + SALT_BYTES + PREFIX_BYTES);
    const head = h.subarray(0, HEADER_BYTES - VERIFIER_BYTES);
    const derived = await deriveKeys(passphrase, salt, kdf);
    const expected = createHmac('sha256', derived.verifierKey).update(head).digest();
    if (!timingSafeEqual(expected, h.subarray(HEADER_BYTES - VERIFIER_BYTES))) {
      throw new ArchiveError('wrong_passphrase', 'wrong passphrase (or the archive header was altered)');
    }
    key = derived.key;
    header = h;
  }

  function openChunks(t: Transform): void {
    for (;;) {
      if (buf.length < 4) return;
      const len = buf.readUInt32BE(0);
      if (len > MAX_CHUNK_BYTES) throw new ArchiveError('damaged', 'the archive is damaged or was altered');
      if (buf.length < 4 + len + TAG_BYTES) return;
      const body = buf.subarray(4, 4 + len);
      const tag = buf.subarray(4 + len, 4 + len + TAG_BYTES);
      const rest = buf.subarray(4 + len + TAG_BYTES);
      // The last chunk is the one nothing follows; a cut-off file therefore fails here or at flush.
      const final = rest.length === 0 && ended;
      if (!final && rest.length === 0) return;
      if (done) throw new ArchiveError('damaged', 'the archive is damaged or was altered (data after its end)');
      const decipher = createDecipheriv('aes-256-gcm', key!, nonce(prefix!, counter));
      decipher.setAAD(aad(header!, counter, final));
      decipher.setAuthTag(tag);
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(body), decipher.final()]);
      } catch {
        throw new ArchiveError('damaged', 'the archive is damaged or was altered');
      }
      counter++;
      done = final;
      buf = rest;
      if (plain.length) t.push(plain);
      if (final) return;
    }
  }

  let ended = false;
  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      void (async () => {
        if (!header) {
          if (buf.length < HEADER_BYTES) return;
          const h = Buffer.from(buf.subarray(0, HEADER_BYTES));
          buf = buf.subarray(HEADER_BYTES);
          await openHeader(h);
        }
        openChunks(this);
      })().then(() => cb(), (err: Error) => cb(err));
    },
    flush(cb: TransformCallback) {
      ended = true;
      try {
        if (!header) throw new ArchiveError(buf.length >= MAGIC.length && !buf.subarray(0, MAGIC.length).equals(MAGIC) ? 'not_an_archive' : 'damaged', 'not a paycollect backup archive, or cut off');
        openChunks(this);
        if (!done || buf.length) throw new ArchiveError('damaged', 'the archive is damaged or was cut off');
        cb();
      } catch (err) {
        cb(err as Error);
      }
    },
  });
}
