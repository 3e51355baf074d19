import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import { sendCode } from './errors.ts';

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const len = req.headers['content-length'];
  if (req.headers['transfer-encoding'] !== undefined) return true;
  return len !== undefined && len !== '0';
}

/**
 * JSON-only API bodies: a body in any other media type is a 415 before any
 * parsing; an empty body (heartbeat, acknowledgements with no ids) is fine.
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, res, next) => {
    if (hasBody(req) && !req.is(['application/json', 'application/*+json'])) {
      return sendCode(req, res, 'UNSUPPORTED_MEDIA_TYPE');
    }
    // A declared length over the limit is answered at once: reading (and
    // discarding) the body first would let a client hold the socket by never sending it.
    if (Number(req.headers['content-length']) > limitBytes) {
      res.setHeader('Connection', 'close');
      return sendCode(req, res, 'PAYLOAD_TOO_LARGE');
    }
    next();
  };
  // `verify` keeps the exact bytes for routes that check a signature over the raw
  // body (gateway callbacks); re-serialising the parsed JSON would not match.
  // JSON is UTF-8 (RFC 8259 §8.1): another declared charset is a 415, and bytes
  // that are not UTF-8 a 400, never silently decoded into replacement characters.
  const keepRawBody = (req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string) => {
    if (encoding.toLowerCase() !== 'utf-8' && encoding.toLowerCase() !== 'utf8') throw Object.assign(new Error('charset'), { type: 'charset.unsupported' });
    if (!isUtf8(buf)) throw Object.assign(new Error('invalid UTF-8'), { type: 'entity.utf8.invalid' });
    (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
  };
  return [requireJson, express.json({ limit: limitBytes, type: ['application/json', 'application/*+json'], strict: true, verify: keepRawBody })];
}
