import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { contract } from '../../contract/index.ts';
import { routeTakesBody } from '../../contract/common/responses.ts';
import { sendCode } from './errors.ts';

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const len = req.headers['content-length'];
  if (req.headers['transfer-encoding'] !== undefined) return true;
  return len !== undefined && len !== '0';
}

/**
 * The operations that take no request body (every GET, and those written with
 * `c.noBody()`), by method and path pattern. Their contract declares no 413,
 * 415 or MALFORMED_JSON, so a body sent to them is not read at all.
 */
function bodilessMatcher(router: AppRouter): (method: string, path: string) => boolean {
  const patterns = new Map<string, RegExp[]>();
  const walk = (node: AppRouter | AppRoute) => {
    if (!isAppRoute(node)) return Object.values(node).forEach((n) => walk(n as AppRouter | AppRoute));
    if (routeTakesBody(node)) return;
    const re = new RegExp(`^${node.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`);
    patterns.set(node.method, [...(patterns.get(node.method) ?? []), re]);
  };
  walk(router);
  return (method, path) => method === 'GET' || method === 'HEAD' || (patterns.get(method)?.some((re) => re.test(path)) ?? false);
}

/**
 * JSON-only API bodies: a body in any other media type is a 415 before any
 * parsing; an empty body (heartbeat, acknowledgements with no ids) is fine.
 */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const bodiless = bodilessMatcher(contract);
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
  const parse = express.json({ limit: limitBytes, type: ['application/json', 'application/*+json'], strict: true, verify: keepRawBody });
  const readBody: RequestHandler = (req, res, next) => {
    if (bodiless(req.method, req.originalUrl.split('?')[0]!)) {
      // Not read: the socket is closed after the answer rather than draining whatever was sent.
      if (hasBody(req)) res.setHeader('Connection', 'close');
      return next();
    }
    requireJson(req, res, ((err?: unknown) => (err ? next(err) : parse(req, res, next))) as Parameters<RequestHandler>[2]);
  };
  return [readBody];
}
