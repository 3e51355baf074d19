import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Request, Response } from 'express';

/**
 * Compressed answers for the docs routes only: the OpenAPI document and the
 * renderer's assets are large, fixed for the life of the process and fetched
 * often, so each is compressed once, on first request, and kept. Other routes
 * keep their exact behaviour (no global compression middleware).
 */

type Encoding = 'br' | 'gzip' | 'identity';
const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** The best encoding the client accepts (`q=0` excludes one), brotli before gzip. */
function pickEncoding(header: string | undefined): Encoding {
  const accepted = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) : 1;
    accepted.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (ok('br')) return 'br';
  if (ok('gzip')) return 'gzip';
  return 'identity';
}

export class CompressedBody {
  private readonly variants = new Map<Encoding, Promise<Buffer>>();
  readonly body: Buffer;
  readonly type: string;
  constructor(body: Buffer | string, type: string) {
    this.type = type;
    this.body = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    this.variants.set('identity', Promise.resolve(this.body));
  }

  private variant(encoding: Encoding): Promise<Buffer> {
    let v = this.variants.get(encoding);
    if (!v) {
      v = encoding === 'br'
        ? brotli(this.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: this.body.length } })
        : gz(this.body, { level: 9 });
      this.variants.set(encoding, v);
    }
    return v;
  }

  async send(req: Request, res: Response, cacheControl?: string): Promise<void> {
    const encoding = pickEncoding(req.get('accept-encoding'));
    const bytes = await this.variant(encoding);
    res.setHeader('Vary', 'Accept-Encoding');
    res.setHeader('Content-Type', this.type);
    if (cacheControl) res.setHeader('Cache-Control', cacheControl);
    if (encoding !== 'identity') res.setHeader('Content-Encoding', encoding);
    res.setHeader('Content-Length', String(bytes.length));
    res.status(200).end(req.method === 'HEAD' ? undefined : bytes);
  }
}
