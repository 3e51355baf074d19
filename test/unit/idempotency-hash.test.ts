import { describe, expect, it } from 'vitest';
import { canonicalJson, requestHash } from '../../server/domain/idempotency/service.ts';

describe('canonicalJson', () => {
  it.each([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [{ z: { y: 1, x: [3, { d: 1, c: 2 }] } }, '{"z":{"x":[3,{"c":2,"d":1}],"y":1}}'],
    [{ a: undefined, b: null }, '{"b":null}'],
    [[1, 'two', false], '[1,"two",false]'],
    ['text "quoted"', '"text \\"quoted\\""'],
    [null, 'null'],
    [{}, '{}'],
  ])('%j -> %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });
});

describe('requestHash', () => {
  const base = requestHash('POST', '/api/v1/payments', { amount: '1.00', currency: 'BDT' });

  it('ignores key order and method case', () => {
    expect(requestHash('post', '/api/v1/payments', { currency: 'BDT', amount: '1.00' })).toBe(base);
  });

  it.each([
    ['another body', 'POST', '/api/v1/payments', { amount: '1.01', currency: 'BDT' }],
    ['another path', 'POST', '/api/v1/refunds', { amount: '1.00', currency: 'BDT' }],
    ['another method', 'PUT', '/api/v1/payments', { amount: '1.00', currency: 'BDT' }],
    ['an extra field', 'POST', '/api/v1/payments', { amount: '1.00', currency: 'BDT', x: null }],
    ['a number instead of a string', 'POST', '/api/v1/payments', { amount: 1, currency: 'BDT' }],
  ])('changes with %s', (_name, method, path, body) => {
    expect(requestHash(method, path, body)).not.toBe(base);
  });

  it('is a SHA-256 hex digest', () => {
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });
});
