import { describe, expect, it } from 'vitest';
import {
  isEmailIdentifier,
  maskEmail,
  maskPhone,
  normalizeEmail,
  normalizePhone,
} from '../../server/domain/customers/normalize.ts';

describe('normalizeEmail', () => {
  it.each([
    ['alice@example.com', 'alice@example.com'],
    ['  Alice@Example.COM ', 'alice@example.com'],
    ['\tBOB.SMITH+shop@Mail.Example.co.uk\n', 'bob.smith+shop@mail.example.co.uk'],
    ["o'neil@example.bd", "o'neil@example.bd"],
    ['x@a-b.com', 'x@a-b.com'],
    [`${'a'.repeat(64)}@example.com`, `${'a'.repeat(64)}@example.com`],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeEmail(input)).toBe(expected);
  });

  it.each([
    '',
    '   ',
    'alice',
    'alice@',
    '@example.com',
    'alice@example',
    'alice@@example.com',
    'ali ce@example.com',
    'alice@exa mple.com',
    'alice@-example.com',
    'alice@example-.com',
    'alice@example..com',
    'রহিম@example.com',
    `${'a'.repeat(65)}@example.com`,
    `a@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(61)}.com`,
  ])('rejects %j', (input) => {
    expect(normalizeEmail(input)).toBeNull();
  });
});

describe('normalizePhone', () => {
  it.each([
    ['01712345678', '+8801712345678'],
    ['+8801712345678', '+8801712345678'],
    ['8801712345678', '+8801712345678'],
    ['008801712345678', '+8801712345678'],
    ['017-1234-5678', '+8801712345678'],
    ['(017) 1234 5678', '+8801712345678'],
    ['+880 1712-345678', '+8801712345678'],
    ['  01812345678  ', '+8801812345678'],
    ['01912.345.678', '+8801912345678'],
    ['1712345678', '+8801712345678'],
    ['+14155552671', '+14155552671'],
  ])('%j -> %j', (input, expected) => {
    expect(normalizePhone(input)).toBe(expected);
  });

  it.each([
    '',
    '   ',
    'abc',
    '+',
    '0171234567', // one digit short
    '017123456789', // one digit long
    '01212345678', // no such operator prefix
    '+8801212345678',
    'call 01712345678',
    '01712345678 ext 5',
    '01712345678;',
    '+1 555 0100',
    '0'.repeat(40),
  ])('rejects %j', (input) => {
    expect(normalizePhone(input)).toBeNull();
  });

  it('reads national forms in the given region', () => {
    expect(normalizePhone('(415) 555-2671', 'US')).toBe('+14155552671');
    expect(normalizePhone('(415) 555-2671')).toBeNull();
    expect(normalizePhone('+8801712345678', 'US')).toBe('+8801712345678');
  });
});

describe('maskEmail', () => {
  it.each([
    ['jane@example.com', 'j***@example.com'],
    ['a@example.com', 'a***@example.com'],
    ['bob.smith+shop@mail.example.co.uk', 'b***@mail.example.co.uk'],
    ['no-at-sign', '***'],
    ['@example.com', '***'],
  ])('%j -> %j', (input, expected) => {
    expect(maskEmail(input)).toBe(expected);
  });
});

describe('maskPhone', () => {
  it.each([
    ['+8801712345678', '+88017*****678'],
    ['+8801912345678', '+88019*****678'],
    ['+14155552671', '+141*****671'],
    ['+447911123456', '+4479*****456'],
    ['+3534567', '+353***7'], // too short to keep 2 + 3: at least three stay hidden
    ['not a phone', '***'],
    ['0171234567', '********67'],
  ])('%j -> %j', (input, expected) => {
    expect(maskPhone(input)).toBe(expected);
  });

  it.each(['+8801712345678', '+14155552671', '+447911123456'])('never shows the middle of %s', (e164) => {
    const masked = maskPhone(e164);
    expect(masked).toHaveLength(e164.length);
    expect(masked).toMatch(/\*{3,}/);
  });
});

describe('isEmailIdentifier', () => {
  it.each([
    ['alice@example.com', true],
    ['@', true],
    ['+8801712345678', false],
    ['01712345678', false],
    ['', false],
  ])('%j -> %s', (input, expected) => {
    expect(isEmailIdentifier(input)).toBe(expected);
  });
});
