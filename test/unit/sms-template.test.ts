import { describe, expect, it } from 'vitest';
import { AppError } from '../../contract/common/errors.ts';
import { defaultGatewayTemplates } from '../../server/domain/sms/templates/presets/index.ts';
import { compileTemplate, MAX_TEMPLATE_LENGTH } from '../../server/domain/sms/templates/template.ts';

const OK = String.raw`^Paid (?<amount>[\d,.]+) ref (?<trx_id>\w+)`;

function rejection(source: string, flags?: string): AppError {
  try {
    compileTemplate(source, flags);
  } catch (e) {
    return e as AppError;
  }
  throw new Error(`expected ${source} /${flags ?? ''} to be rejected`);
}

describe('compileTemplate accepts', () => {
  it.each([
    [OK, undefined, 'Paid 1,250.00 ref AB12CD34'],
    [OK, 'i', 'PAID 1,250.00 REF AB12CD34'],
    [OK, 'imsu', 'paid 1,250.00 ref AB12CD34'],
    [String.raw`^Paid (?<amount>[\d,.]+) ref (?<trx_id>\w+)(?: from (?<sender_number>\d+))?`, '', 'Paid 1,250.00 ref AB12CD34 from 017'],
    [String.raw`^(?:Paid|Got) (?<amount>\d{1,3}(?:,\d{3})*(?:\.\d{1,2})?) ref (?<trx_id>[A-Z0-9]{8,12})`, 'i', 'Got 1,250.00 ref AB12CD34'],
    [String.raw`^(?:a\s+)?Paid (?<amount>[\d,.]+) ref (?<trx_id>\w+)`, '', 'a  Paid 1,250.00 ref AB12CD34'],
  ])('%s /%s', (source, flags, sample) => {
    const re = compileTemplate(source, flags);
    expect(re.exec(sample)?.groups).toMatchObject({ amount: '1,250.00', trx_id: 'AB12CD34' });
  });

  it.each(Object.entries(defaultGatewayTemplates))('the default %s templates', (_name, g) => {
    for (const t of g.templates) expect(() => compileTemplate(t.pattern, t.flags, t.direction)).not.toThrow();
  });
});

describe('compileTemplate rejects with INVALID_SMS_TEMPLATE on field "pattern"', () => {
  it.each([
    ['', '', /empty/],
    ['   ', '', /empty/],
    [`${OK}${'x'.repeat(MAX_TEMPLATE_LENGTH)}`, '', /maximum is 1000/],
    [OK, 'g', /flag "g" is not allowed/],
    [OK, 'y', /flag "y" is not allowed/],
    [OK, 'ii', /flag "i" is given twice/],
    [OK, 'x', /flag "x" is not allowed/],
    [String.raw`^Paid (?<amount>[\d,.]+ ref (?<trx_id>\w+)`, '', /does not compile/],
    [String.raw`(?<amount>\d+)(?<amount>\d+)(?<trx_id>\w+)`, '', /does not compile/],
    [String.raw`^Paid (?<amount>[\d,.]+) ref (\w+)`, '', /named group "trx_id"/],
    [String.raw`^Paid ([\d,.]+) ref (?<trx_id>\w+)`, '', /named group "amount"/],
    [String.raw`^Paid (?<amount>[\d,.]+) ref (?<trxid>\w+)`, '', /unknown named group "trxid"/],
    [String.raw`^Paid (?<amount>\d+)(?!\d) ref (?<trx_id>\w+)`, '', /linear-time engine/],
    [String.raw`^Paid (?<amount>\d+) ref (?<trx_id>\w+) \k<trx_id>`, '', /linear-time engine/],
    [String.raw`(?<amount>\d*)(?<trx_id>\w*)`, '', /matches an empty message/],
  ])('%s /%s', (source, flags, message) => {
    const e = rejection(source, flags);
    expect(e).toBeInstanceOf(AppError);
    expect(e.code).toBe('INVALID_SMS_TEMPLATE');
    expect(e.field).toBe('pattern');
    expect(e.message).toMatch(message);
  });

  it('does not mistake escaped or bracketed parentheses for groups', () => {
    expect(() => compileTemplate(String.raw`^\((?<amount>\d+)\)+ [(]x[)]* (?<trx_id>\w+)`)).not.toThrow();
  });
});

describe('compileTemplate runs admin templates in linear time', () => {
  // Each of these backtracks for seconds or longer on V8 with such a body.
  it.each([
    [String.raw`^Paid (?<amount>(?:\w|\d)*)! ref (?<trx_id>\w+)`, `Paid ${'1'.repeat(100_000)}`],
    [String.raw`Paid (?<amount>\d*\d*\d*)! ref (?<trx_id>\w+)`, `Paid ${'1'.repeat(3_000)}`],
    [String.raw`^Paid (?<amount>(\d+)+)$ ref (?<trx_id>\w+)`, `Paid ${'1'.repeat(100)}x`],
    [String.raw`Paid (?<amount>(a+)+)$(?<trx_id>\w+)`, `Paid ${'a'.repeat(100_000)}!`],
  ])('%s', (source, body) => {
    const re = compileTemplate(source);
    const started = performance.now();
    expect(re.exec(body)).toBeNull();
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
