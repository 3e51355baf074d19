import { createHash } from 'node:crypto';

/**
 * The archive's plaintext: a sequence of records, compressed with gzip before
 * encryption (archive.ts). Each record is
 *   kind u8 | name length u16 BE | name (UTF-8) | mode u32 BE | size u64 BE | size bytes
 * Kinds: M the manifest (JSON, first), D a directory, F a file, T the trailer
 * (JSON: each file's SHA-256, last). Names are relative POSIX paths.
 */
export type RecordKind = 'M' | 'D' | 'F' | 'T';

export function recordHeader(kind: RecordKind, name: string, mode: number, size: number): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  if (nameBytes.length > 0xffff) throw new Error(`path too long for the archive: ${name}`);
  const b = Buffer.alloc(1 + 2 + nameBytes.length + 4 + 8);
  b.write(kind, 0, 'ascii');
  b.writeUInt16BE(nameBytes.length, 1);
  nameBytes.copy(b, 3);
  b.writeUInt32BE(mode & 0o7777, 3 + nameBytes.length);
  b.writeBigUInt64BE(BigInt(size), 7 + nameBytes.length);
  return b;
}

/** Reads exact byte counts from an async stream of chunks. */
export class ByteReader {
  #buf: Buffer = Buffer.alloc(0);
  readonly #it: AsyncIterator<Buffer>;
  #ended = false;
  constructor(source: AsyncIterable<Buffer>) {
    this.#it = source[Symbol.asyncIterator]();
  }
  async #fill(): Promise<boolean> {
    if (this.#ended) return false;
    const next = await this.#it.next();
    if (next.done) {
      this.#ended = true;
      return false;
    }
    this.#buf = this.#buf.length ? Buffer.concat([this.#buf, next.value]) : next.value;
    return true;
  }
  /** Whether the stream has ended with nothing left. */
  async atEnd(): Promise<boolean> {
    while (this.#buf.length === 0) if (!(await this.#fill())) return true;
    return false;
  }
  async read(n: number): Promise<Buffer> {
    while (this.#buf.length < n) if (!(await this.#fill())) throw new Error('archive content ends early');
    const out = this.#buf.subarray(0, n);
    this.#buf = this.#buf.subarray(n);
    return out;
  }
  /** Yields the next n bytes in pieces, without holding them all. */
  async *take(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.#buf.length === 0 && !(await this.#fill())) throw new Error('archive content ends early');
      const piece = this.#buf.subarray(0, Math.min(left, this.#buf.length));
      this.#buf = this.#buf.subarray(piece.length);
      left -= piece.length;
      yield piece;
    }
  }
}

export interface RecordHead {
  kind: RecordKind;
  name: string;
  mode: number;
  size: number;
}

export async function readRecordHead(r: ByteReader): Promise<RecordHead> {
  const fixed = await r.read(3);
  const kind = fixed.toString('ascii', 0, 1);
  if (!['M', 'D', 'F', 'T'].includes(kind)) throw new Error(`unknown record kind in archive: ${JSON.stringify(kind)}`);
  const name = (await r.read(fixed.readUInt16BE(1))).toString('utf8');
  const rest = await r.read(12);
  const size = rest.readBigUInt64BE(4);
  if (size > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('record too large');
  return { kind: kind as RecordKind, name, mode: rest.readUInt32BE(0), size: Number(size) };
}

export const sha256 = () => createHash('sha256');
