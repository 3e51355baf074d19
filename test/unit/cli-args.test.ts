import { describe, expect, it } from 'vitest';
import { UsageError, decimalNumber, defined, list, oneOf, pageQuery, positiveInt, toggle } from '../../scripts/cli/args.ts';
import { table, block } from '../../scripts/cli/output.ts';

const usage = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  return null;
};

describe('CLI option parsing', () => {
  it.each([
    ['12', 12, null],
    ['1', 1, null],
    ['0', undefined, '--id must be a positive whole number'],
    ['-3', undefined, '--id must be a positive whole number'],
    ['1.5', undefined, '--id must be a positive whole number'],
    ['12abc', undefined, '--id must be a positive whole number'],
    ['', undefined, '--id must be a positive whole number'],
  ])('positiveInt(%j)', (raw, value, error) => {
    let got: number | undefined;
    expect(usage(() => (got = positiveInt({ id: raw }, 'id', true)))).toBe(error);
    expect(got).toBe(value);
  });

  it('positiveInt: absent is undefined unless required', () => {
    expect(positiveInt({}, 'page')).toBeUndefined();
    expect(usage(() => positiveInt({}, 'brand', true))).toBe('--brand must be a positive whole number');
  });

  it.each([
    ['bKash, NAGAD ,16216', ['bKash', 'NAGAD', '16216']],
    ['', []],
    [' , ', []],
    ['one', ['one']],
  ])('list(%j)', (raw, value) => {
    expect(list({ senders: raw }, 'senders')).toEqual(value);
  });

  it('oneOf, toggle, decimalNumber, defined, pageQuery', () => {
    expect(oneOf({ s: 'active' }, 's', ['active', 'disabled'])).toBe('active');
    expect(usage(() => oneOf({ s: 'paused' }, 's', ['active', 'disabled']))).toBe('--s must be one of active, disabled');
    expect(toggle({ enable: true }, 'enable', 'disable')).toBe(true);
    expect(toggle({ disable: true }, 'enable', 'disable')).toBe(false);
    expect(toggle({}, 'enable', 'disable')).toBeUndefined();
    expect(usage(() => toggle({ enable: true, disable: true }, 'enable', 'disable'))).toBe('--enable and --disable exclude each other');
    expect(decimalNumber({ t: '0.85' }, 't')).toBe(0.85);
    expect(usage(() => decimalNumber({ t: '.8' }, 't'))).toBe('--t must be a number such as 0.8');
    expect(defined({ a: 1, b: undefined, c: null })).toEqual({ a: 1, c: null });
    expect(Object.keys(defined({ a: undefined }))).toEqual([]);
    expect(pageQuery({ page: '2', 'per-page': '50' })).toEqual({ page: 2, per_page: 50 });
    expect(pageQuery({})).toEqual({});
  });
});

describe('CLI text output', () => {
  it('aligns blocks and tables, shows null as "-", cuts long cells, says when a list is empty', () => {
    expect(block({ id: 1, name: 'Shop', revoked_at: null, senders: ['a', 'b'] })).toBe('id:         1\nname:       Shop\nrevoked_at: -\nsenders:    a,b');
    expect(table([{ id: 1, name: 'A' }, { id: 22, name: 'x'.repeat(60) }], ['id', 'name'], { page: 1, total: 2, total_pages: 1 })).toBe(
      ['id  name', '1   A', `22  ${'x'.repeat(47)}…`, 'page 1 of 1, 2 in all'].join('\n'),
    );
    expect(table([], ['id'])).toBe('id\n(none)');
  });
});
