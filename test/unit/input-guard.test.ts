import { describe, expect, it } from 'vitest';
import { findBadText } from '../../server/http/input-guard.ts';

const NUL = 'Must not contain NUL characters';
const SURROGATE = 'Must be valid Unicode text (no unpaired surrogates)';

describe('findBadText', () => {
  it.each([
    ['plain text', { a: 'hello', b: ['x', { c: 'y' }] }, null],
    ['emoji, RTL override, zero width and combining marks are text', { a: '💸 abc\u202E \u200b e\u0301' }, null],
    ['numbers, booleans, null', { a: 1, b: true, c: null }, null],
    ['NUL in a value', { customer: { name: 'a\u0000b' } }, { field: 'customer.name', message: NUL }],
    ['NUL in an array item', { ids: ['ok', '\u0000'] }, { field: 'ids.1', message: NUL }],
    ['lone high surrogate', { reason: 'x\ud800' }, { field: 'reason', message: SURROGATE }],
    ['lone low surrogate', { reason: '\udfffx' }, { field: 'reason', message: SURROGATE }],
    ['NUL in a key, shown without it', { metadata: { 'k\u0000': 1 } }, { field: 'metadata.k?', message: NUL }],
    ['a top-level string', 'a\u0000', { field: 'body', message: NUL }],
  ])('%s', (_name, value, expected) => {
    expect(findBadText(value)).toEqual(expected);
  });

  it('names a parameter when given a root', () => {
    expect(findBadText('..\u0000', 'trx_id')).toEqual({ field: 'trx_id', message: NUL });
    expect(findBadText({ page: ['1', 'x\ud800'] })).toEqual({ field: 'page.1', message: SURROGATE });
  });

  it('walks 100 000 levels of nesting without overflowing the stack, and finds the text at the bottom', () => {
    let deep: unknown = 'a\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const found = findBadText(deep);
    expect(found?.message).toBe(NUL);
    expect(found?.field.split('.')).toHaveLength(100_000);
  });
});
