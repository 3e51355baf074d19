import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { ArchiveError, decryptingStream, encryptingStream, HEADER_BYTES } from '../../server/infra/backup/archive.ts';

/** The backup archive's envelope: what opens, and every way it must not. */

const KDF = { logN: 10, r: 8, p: 1 };
const PASS = 'the right passphrase';

async function seal(plain: Buffer, pass = PASS): Promise<Buffer> {
  const parts: Buffer[] = [];
  await pipeline(Readable.from([plain]), await encryptingStream(pass, KDF), async (source: AsyncIterable<Buffer>) => {
    for await (const c of source) parts.push(c);
  });
  return Buffer.concat(parts);
}

async function open(sealed: Buffer, pass = PASS, piece = 7919): Promise<Buffer> {
  const parts: Buffer[] = [];
  // Fed in odd-sized pieces: chunk boundaries never line up with reads.
  const pieces = Array.from({ length: Math.ceil(sealed.length / piece) }, (_, i) => sealed.subarray(i * piece, (i + 1) * piece));
  await pipeline(Readable.from(pieces), decryptingStream(pass), async (source: AsyncIterable<Buffer>) => {
    for await (const c of source) parts.push(c);
  });
  return Buffer.concat(parts);
}

const reason = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ArchiveError) return err.reason;
    throw err;
  }
  return 'opened';
};

/** Offsets of each sealed chunk (its length field) after the header. */
function chunks(sealed: Buffer): Array<{ at: number; end: number }> {
  const out = [];
  let at = HEADER_BYTES;
  while (at < sealed.length) {
    const end = at + 4 + sealed.readUInt32BE(at) + 16;
    out.push({ at, end });
    at = end;
  }
  return out;
}

describe('the backup archive envelope', () => {
  const plain = randomBytes(2.5 * (1 << 20));
  let sealed: Buffer;

  it('opens with the passphrase it was sealed with, in three chunks, and hides the content', async () => {
    sealed = await seal(plain);
    expect(chunks(sealed)).toHaveLength(3);
    expect(sealed.includes(plain.subarray(0, 64))).toBe(false);
    expect((await open(sealed)).equals(plain)).toBe(true);
    expect((await open(await seal(Buffer.alloc(0)))).length).toBe(0);
  });

  it('refuses a wrong passphrase before opening anything', async () => {
    expect(await reason(open(sealed, 'the wrong passphrase'))).toBe('wrong_passphrase');
  });

  it('refuses any changed byte: header, length, ciphertext, tag', async () => {
    const [first, second] = chunks(sealed);
    for (const at of [20, first!.at + 1, first!.at + 100, second!.end - 1, sealed.length - 1]) {
      const copy = Buffer.from(sealed);
      copy[at]! ^= 0x40;
      expect([at, await reason(open(copy))]).toEqual([at, at < HEADER_BYTES ? 'wrong_passphrase' : 'damaged']);
    }
  });

  it('refuses a file cut at a chunk boundary, with a chunk dropped, with chunks swapped, or with bytes appended', async () => {
    const [a, b, c] = chunks(sealed) as [{ at: number; end: number }, { at: number; end: number }, { at: number; end: number }];
    const head = sealed.subarray(0, HEADER_BYTES);
    const part = (x: { at: number; end: number }) => sealed.subarray(x.at, x.end);
    expect(await reason(open(sealed.subarray(0, b.end)))).toBe('damaged');
    expect(await reason(open(Buffer.concat([head, part(a), part(c)])))).toBe('damaged');
    expect(await reason(open(Buffer.concat([head, part(b), part(a), part(c)])))).toBe('damaged');
    expect(await reason(open(Buffer.concat([sealed, Buffer.from([0])])))).toBe('damaged');
    expect(await reason(open(Buffer.concat([sealed, part(c)])))).toBe('damaged');
  });

  it('says a file that is no archive is not one', async () => {
    expect(await reason(open(Buffer.from('PGDMP this is a pg_dump file, not ours'.repeat(10))))).toBe('not_an_archive');
  });
});
