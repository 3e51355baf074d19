import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAppRoute, isAppRouteNoBody, isAppRouteOtherResponse, type AppRoute, type AppRouter } from '@ts-rest/core';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { contract } from '../../contract/index.ts';

/**
 * Rules of the published document beyond "examples fit their JSON schema"
 * (openapi-examples.test.ts): what a reader of /docs relies on.
 */
type Json = Record<string, any>;
const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../openapi/openapi.json');
const doc = JSON.parse(readFileSync(file, 'utf8')) as Json;
const deref = (node: Json, section: string): Json =>
  typeof node?.$ref === 'string' ? deref(doc.components[section][String(node.$ref.split('/').pop())], section) : node;

const operations: Array<{ where: string; op: Json; route: AppRoute }> = [];
const routes = new Map<string, AppRoute>();
(function walk(router: AppRouter) {
  for (const v of Object.values(router)) {
    if (isAppRoute(v)) routes.set(`${v.method.toLowerCase()} ${v.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`, v);
    else walk(v as AppRouter);
  }
})(contract);
for (const [p, item] of Object.entries(doc.paths as Record<string, Json>)) {
  for (const [m, op] of Object.entries(item)) {
    const route = routes.get(`${m} ${p}`);
    if (!route) throw new Error(`${m} ${p} is not in the contract`);
    operations.push({ where: `${m.toUpperCase()} ${p}`, op, route });
  }
}

describe('the OpenAPI document', () => {
  it('has every contract route, each described', () => {
    expect(operations).toHaveLength(routes.size);
    const undescribed = operations.filter(({ op }) => typeof op.description !== 'string' || op.description.trim().length < 20).map((o) => o.where);
    expect(undescribed).toEqual([]);
  });

  it('declares 413 and 415 only on operations that take a body', () => {
    const wrong = operations.filter(({ op }) => !op.requestBody && ('413' in op.responses || '415' in op.responses)).map((o) => o.where);
    expect(wrong).toEqual([]);
    // ...and still on those that do.
    const withBody = operations.filter(({ op }) => op.requestBody);
    expect(withBody.length).toBeGreaterThan(20);
    for (const { where, op } of withBody) expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(['413', '415']));
  });

  it('gives every error response one example per code it lists, each an envelope with that code', () => {
    let checked = 0;
    for (const { where, op } of operations) {
      for (const [status, ref] of Object.entries(op.responses as Record<string, Json>)) {
        if (Number(status) < 400) continue;
        const response = deref(ref, 'responses');
        const codes = [...String(response.description).matchAll(/^`([A-Z_]+)`/gm)].map((m) => m[1]);
        expect(codes.length, `${where} ${status}`).toBeGreaterThan(0);
        const examples = response.content?.['application/json']?.examples as Record<string, Json> | undefined;
        expect(Object.keys(examples ?? {}), `${where} ${status}`).toEqual(codes);
        for (const [code, ex] of Object.entries(examples ?? {})) {
          expect(ex.value, `${where} ${status} ${code}`).toMatchObject({ success: false, errors: [{ code }] });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  it('names components without a disambiguating digit', () => {
    for (const section of ['schemas', 'responses', 'examples']) {
      expect(Object.keys(doc.components[section] ?? {}).filter((n) => /[A-Za-z]\d+$/.test(n)), section).toEqual([]);
    }
  });

  it('has realistic examples: a payment that lasts 30 minutes, a checkout with a method the gateway offers', () => {
    const create = doc.paths['/api/v1/payments'].post.requestBody.content['application/json'].example;
    expect(create.expires_in).toBe(1800);
    const start = doc.paths['/api/checkout/v1/payments/{payment_id}/transactions'].post.requestBody.content['application/json'].example;
    // The demo gateway (server/domain/brands/demo.ts): code `bkash`, method `send_money`.
    expect(start).toMatchObject({ gateway: 'bkash', method: 'send_money' });
  });

  it('publishes examples the contract itself accepts (refinements included), requests and success responses', () => {
    let checked = 0;
    const problems: string[] = [];
    for (const { where, op, route } of operations) {
      const body = 'body' in route ? (route as { body?: unknown }).body : undefined;
      const example = op.requestBody?.content?.['application/json']?.example;
      if (example !== undefined && body && !isAppRouteNoBody(body as never)) {
        const r = (body as z.ZodType).safeParse(example);
        if (!r.success) problems.push(`${where} request: ${r.error.message}`);
        checked++;
      }
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const schema = (route.responses as Record<string, unknown>)[status];
        const value = response.content?.['application/json']?.example;
        if (Number(status) >= 400 || value === undefined || !schema || isAppRouteNoBody(schema as never) || isAppRouteOtherResponse(schema as never)) continue;
        const r = (schema as z.ZodType).safeParse(value);
        if (!r.success) problems.push(`${where} ${status}: ${r.error.message}`);
        checked++;
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('shows a payment as two forms told apart by `object`', () => {
    const payment = doc.components.schemas.Payment;
    expect(payment.oneOf.map((s: Json) => s.$ref)).toEqual(['#/components/schemas/PaymentTransaction', '#/components/schemas/PaymentIntent']);
    expect(doc.components.schemas.PaymentTransaction.properties.object.const).toBe('transaction');
    expect(doc.components.schemas.PaymentIntent.properties.object.const).toBe('payment_intent');
    for (const form of ['PaymentTransaction', 'PaymentIntent']) {
      for (const field of ['object', 'id', 'payment_id', 'transaction_id', 'trx_id', 'gateway_trx_id', 'amount']) {
        expect(String(doc.components.schemas[form].properties[field].description ?? ''), `${form}.${field}`).not.toBe('');
      }
    }
  });
});
