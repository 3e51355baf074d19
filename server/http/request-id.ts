import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

/** A caller's id is kept when it is a sane token, so traces join across services. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{8,128}$/;

export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.get('x-request-id');
  req.requestId = incoming && WELL_FORMED.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
  req.startedAt = process.hrtime.bigint();
  req.principal = { kind: 'anonymous' };
  res.setHeader('X-Request-Id', req.requestId);
  next();
};
