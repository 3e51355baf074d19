import type { Request } from 'express';
import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { contract } from '../../contract/index.ts';
import { errorCodes, errorRegistry, type ErrorCode } from '../../contract/common/errors.ts';
import { errorEnvelopeSchema, ok } from '../../contract/common/envelope.ts';
import { meta } from '../../contract/common/meta.ts';
import { apiSurfaceCodes, declaredErrorCodes, withErrorResponses } from '../../contract/common/responses.ts';
import { undeclaredError } from '../../server/http/errors.ts';
import { contractRoutes, type ContractRoute } from '../support/contract-walk.ts';
import { judge, type HostileInput } from '../support/hostile.ts';

const envelope = (code: string) => ({ success: false, error: 'x', errors: [{ code, message: 'x', field: null }], request_id: 'req_1' });
const route = (name: string): ContractRoute => contractRoutes().find((r) => r.name === name)!;

describe('per-status error responses', () => {
  it('every error status of every route admits exactly the codes declared for it, all of that status', () => {
    for (const r of contractRoutes()) {
      for (const [status, schema] of Object.entries(r.responses)) {
        if (Number(status) < 400) continue;
        const codes = declaredErrorCodes(schema);
        expect(codes, `${r.name} ${status}`).not.toBeNull();
        for (const code of codes!) expect(errorRegistry[code].status, `${r.name} ${status} ${code}`).toBe(Number(status));
        for (const code of errorCodes) {
          // readiness's 503 is also its own report (success: true), which no envelope is.
          expect(schema.safeParse(envelope(code)).success, `${r.name} ${status} ${code}`).toBe(codes!.includes(code));
        }
      }
    }
  });

  it('a route answers its own codes, its credential and rate limit codes, and the transport codes', () => {
    const get = contract.merchant.payments.get.responses;
    expect(declaredErrorCodes(get[404])).toEqual(['PAYMENT_NOT_FOUND']);
    expect(declaredErrorCodes(get[401])).toEqual(['UNAUTHORIZED']);
    expect(declaredErrorCodes(get[429])).toEqual(['RATE_LIMITED']);
    // A route without a request body answers none of the body parser's codes.
    expect(declaredErrorCodes(get[400])).toEqual(['VALIDATION_ERROR']);
    expect(declaredErrorCodes(get[403])).toEqual(['INSUFFICIENT_SCOPE']);
    expect(Object.keys(get).map(Number)).toEqual([200, 400, 401, 403, 404, 429, 500, 503]);
    const create = contract.merchant.payments.create.responses;
    expect(declaredErrorCodes(create[400])).toEqual(['VALIDATION_ERROR', 'MALFORMED_JSON']);
    expect(Object.keys(create).map(Number)).toEqual([201, 400, 401, 403, 409, 413, 415, 422, 429, 500, 503]);
    expect(Object.keys(contract.merchant.paymentLinks.deactivate.responses).map(Number)).not.toContain(415);
    // Admin routes are not rate limited; the sandbox callback takes no credential.
    expect(contract.admin.settings.get.responses).not.toHaveProperty('429');
    expect(declaredErrorCodes(contract.checkout.sandbox.callback.responses[401])).toEqual(['INVALID_SIGNATURE']);
  });

  it('a hand-written error response no declared code has is refused', () => {
    const c = initContract();
    const routes = c.router({
      get: { method: 'GET', path: '/x', responses: { 200: ok(z.object({})), 404: errorEnvelopeSchema }, metadata: meta({ auth: 'merchant' }) },
    });
    expect(() => withErrorResponses(routes, apiSurfaceCodes)).toThrow('get lists an error response 404 that none of its codes has');
  });
});

describe('an error answer a route does not declare is caught', () => {
  const aimed = (r: ContractRoute): HostileInput => ({ label: 'body x', method: r.method, url: r.path, headers: {}, mustFail: true, route: r });
  const answer = (status: number, code: ErrorCode) => ({ status, contentType: 'application/json', requestIdHeader: 'req_1', text: JSON.stringify(envelope(code)), ms: 1 });

  it('by the hostile suites: a refusal with a code the route does not declare for that status fails', () => {
    const r = route('merchant.payments.get');
    expect(judge(aimed(r), answer(404, 'PAYMENT_NOT_FOUND'))).toBeNull();
    expect(judge(aimed(r), answer(404, 'REFUND_NOT_FOUND'))).toBe('404 REFUND_NOT_FOUND is not declared for merchant.payments.get (add the code to its meta({ errors }))');
    expect(judge(aimed(r), answer(409, 'INVALID_STATE'))).toMatch(/^409 INVALID_STATE is not declared/);
    // A path mangled into no route at all is the router's answer, not the route's.
    expect(judge({ ...aimed(r), label: 'path payment_id: raw dot dot' }, answer(404, 'NOT_FOUND'))).toBeNull();
    expect(judge(aimed(r), answer(404, 'NOT_FOUND'))).toMatch(/is not declared/);
  });

  it('by the server: the error handler names an undeclared answer of the matched route (and logs it; the test harness fails on that log)', () => {
    const req = { requestId: 'req_1', tsRestRoute: contract.merchant.refunds.get } as unknown as Request;
    const item = (code: ErrorCode) => [{ code, message: 'x', field: null }];
    expect(undeclaredError(req, 404, item('REFUND_NOT_FOUND'))).toBeNull();
    expect(undeclaredError(req, 409, item('INVALID_STATE'))).toBe('GET /api/v1/refunds/:trx_id answered 409 INVALID_STATE, which its contract does not declare');
    expect(undeclaredError(req, 404, item('CUSTOMER_NOT_FOUND'))).toMatch(/answered 404 CUSTOMER_NOT_FOUND/);
    // No matched route (the body parser, an unknown path): nothing to check against.
    expect(undeclaredError({ requestId: 'req_1' } as unknown as Request, 404, item('NOT_FOUND'))).toBeNull();
  });
});
