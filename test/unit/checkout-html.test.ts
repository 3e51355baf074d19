import { describe, expect, it } from 'vitest';
import { escapeHtml, html, safeHttpUrl } from '../../server/http/checkout-pages/html.ts';
import { formatAmount, initialOf } from '../../server/http/checkout-pages/format.ts';

describe('escapeHtml', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    [`" onmouseover="x`, '&quot; onmouseover=&quot;x'],
    ["' autofocus onfocus='x", '&#39; autofocus onfocus=&#39;x'],
    ['Tom & Jerry', 'Tom &amp; Jerry'],
    ['&amp;', '&amp;amp;'],
    ['`${x}`', '&#96;${x}&#96;'],
    ['plain text 123', 'plain text 123'],
    ['বাংলা দোকান', 'বাংলা দোকান'],
  ])('%j -> %j', (input, out) => {
    expect(escapeHtml(input)).toBe(out);
  });
});

describe('html templates escape every interpolation', () => {
  it('escapes strings, numbers and arrays, keeps nested templates, drops null/undefined/false', () => {
    const name = '<b>Shop</b>';
    const nested = html`<i>${'a&b'}</i>`;
    const out = html`<p title="${name}">${name} ${42} ${[nested, '<x>']} ${null}${undefined}${false}</p>`;
    expect(out.text).toBe('<p title="&lt;b&gt;Shop&lt;/b&gt;">&lt;b&gt;Shop&lt;/b&gt; 42 <i>a&amp;b</i>&lt;x&gt; </p>');
  });

  it('an object that merely looks like a template result is escaped, not trusted', () => {
    const fake = { text: '<script>x</script>' };
    expect(html`${fake}`.text).toBe('[object Object]');
    expect(html`${JSON.parse('{"text":"<img>"}')}`.text).not.toContain('<img>');
  });
});

describe('safeHttpUrl', () => {
  it.each([
    ['https://shop.example/thanks?o=1', 'https://shop.example/thanks?o=1'],
    ['http://127.0.0.1:3000/x', 'http://127.0.0.1:3000/x'],
    ['javascript:alert(1)', null],
    ['JAVASCRIPT:alert(1)', null],
    ['data:text/html,<script>x</script>', null],
    ['//evil.example/', null],
    ['/relative', null],
    ['', null],
    [null, null],
  ])('%j -> %j', (input, out) => {
    expect(safeHttpUrl(input)).toBe(out);
  });
});

describe('display formatting', () => {
  it.each([
    ['0.01', '0.01'],
    ['999.00', '999.00'],
    ['1000.00', '1,000.00'],
    ['1250000.50', '1,250,000.50'],
    ['999999999999.99', '999,999,999,999.99'],
    ['12', '12'],
    ['not money', 'not money'],
  ])('formatAmount(%j) = %j', (input, out) => {
    expect(formatAmount(input)).toBe(out);
  });

  it('formats brand initials', () => {
    expect(initialOf('corner shop')).toBe('C');
    expect(initialOf('  <script>')).toBe('S');
    expect(initialOf('ঢাকা স্টোর')).toBe('ঢ');
    expect(initialOf('!!!')).toBe('•');
  });
});
