import { describe, expect, it } from 'vitest';
import { parseBrandList } from '../../admin-ui/src/brand-list.ts';

describe('the add-operator form’s brand list', () => {
  it.each([
    ['', null],
    ['   ', null],
    ['1', [1]],
    ['1, 2', [1, 2]],
    [' 3 ,4,3 ', [3, 4]],
  ])('%j reads as %j', (text, ids) => {
    expect(parseBrandList(text)).toEqual({ ok: true, ids });
  });

  it.each(['1 2', 'Shop A', '1, Shop A', '0', '-1', '1.5', '1,', ',', '1,,2', '99999999999', '0x10', '1e3'])('%j is refused, never read as every brand', (text) => {
    const r = parseBrandList(text);
    expect(r.ok).toBe(false);
  });
});
