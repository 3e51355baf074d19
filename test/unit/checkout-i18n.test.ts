import { describe, expect, it } from 'vitest';
import { catalogs, formatDayIn, formatQuantityIn, formatMoney, formatMomentIn, negotiateLanguage, parseAcceptLanguage, t, tHtml, withCatalog } from '../../server/http/checkout-pages/i18n.ts';
import { buttonColors, checkLogo, contrastRatio, readableOnWhite, textOn } from '../../server/domain/brands/look.ts';
import { html } from '../../server/http/checkout-pages/html.ts';
import { readFileSync } from 'node:fs';
import { checkoutPaymentsContract } from '../../contract/checkout/payments.ts';
import { jpegHeader, makePng, webpHeader } from '../support/images.ts';

describe('Accept-Language', () => {
  it('orders ranges by q, ties in header order, and drops q=0 and malformed parts', () => {
    expect(parseAcceptLanguage('en-US,en;q=0.9,bn;q=0.95, fr;q=0, de;q=abc, *;q=0.1')).toEqual([
      { range: 'en-us', q: 1 },
      { range: 'bn', q: 0.95 },
      { range: 'en', q: 0.9 },
      { range: '*', q: 0.1 },
    ]);
    expect(parseAcceptLanguage('')).toEqual([]);
    expect(parseAcceptLanguage(undefined)).toEqual([]);
    expect(parseAcceptLanguage('bn;q=1.5')).toEqual([]);
  });

  it.each([
    ['bn-BD,bn;q=0.9,en-US;q=0.8,en;q=0.7', 'bn'],
    ['en-GB,en;q=0.9,bn;q=0.8', 'en'],
    ['fr-FR, bn-IN;q=0.5', 'bn'],
    ['bn;q=0.4, en;q=0.6', 'en'],
    ['BN', 'bn'],
    ['fr, de', null],
    ['en;q=0, *', 'bn'],
    ['*', 'en'],
    ['', null],
  ])('%s -> %s', (header, lang) => {
    expect(negotiateLanguage(header)).toBe(lang);
  });
});

describe('catalogs', () => {
  it('Bangla has every English key, none empty, and the same {placeholders}', () => {
    const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    expect(Object.keys(catalogs.bn).sort()).toEqual(Object.keys(catalogs.en).sort());
    for (const [key, en] of Object.entries(catalogs.en)) {
      const bn = catalogs.bn[key as keyof typeof catalogs.bn];
      expect(bn.trim(), key).not.toBe('');
      expect(names(bn), key).toEqual(names(en));
    }
  });

  it('fills values as text or as SafeHtml, escaping what is not HTML', () => {
    expect(t('en', 'pay_to')).toBe('Pay to');
    expect(t('bn', 'page_title_pay', { brand: 'Corner <Shop>' })).toBe('Corner <Shop>-কে পেমেন্ট করুন');
    expect(tHtml('en', 'return_to', { brand: '<script>' }).text).toBe('Return to &lt;script&gt;');
    expect(tHtml('en', 'updates_itself', { ref: html`<b>${'T1'}</b>` }).text).toContain('Reference <b>T1</b>');
  });

  it('a page can add its own strings on top', () => {
    const inv = withCatalog({ en: { due: 'Due {date}' }, bn: { due: '{date} এর মধ্যে' } });
    expect(inv.t('bn', 'due', { date: 'কাল' })).toBe('কাল এর মধ্যে');
    expect(inv.t('en', 'pay_to')).toBe('Pay to');
  });
});

describe('Bangladeshi formats', () => {
  it('Bangla digits, taka sign and lakh/crore grouping from Intl bn-BD; exact decimals', () => {
    expect(formatMoney('bn', '100000.00', 'BDT')).toBe('১,০০,০০০.০০\u00a0৳');
    expect(formatMoney('bn', '12345678.50', 'BDT')).toBe('১,২৩,৪৫,৬৭৮.৫০\u00a0৳');
    expect(formatMoney('bn', '12.50', 'USD')).toBe('১২.৫০\u00a0USD');
    // A value a float cannot hold: printed digit for digit.
    expect(formatMoney('bn', '90071992547409931.25', 'BDT')).toBe('৯০,০৭,১৯,৯২,৫৪,৭৪,০৯,৯৩১.২৫\u00a0৳');
    expect(formatMoney('en', '1250000.00', 'BDT')).toBe('1,250,000.00\u00a0BDT');
  });

  it('times in Dhaka, with the part of the day in Bangla', () => {
    expect(formatMomentIn('bn', '2026-11-28T17:31:00Z', 'Asia/Dhaka')).toBe('২৮ নভেম্বর ২০২৬, রাত ১১:৩১ (বাংলাদেশ সময়)');
    expect(formatMomentIn('bn', '2026-11-28T03:05:00Z', 'Asia/Dhaka')).toBe('২৮ নভেম্বর ২০২৬, সকাল ৯:০৫ (বাংলাদেশ সময়)');
    expect(formatMomentIn('en', '2026-11-28T17:31:00Z', 'Asia/Dhaka')).toBe('28 Nov 2026, 23:31 (UTC+06:00 Asia/Dhaka)');
  });
});

describe('brand colour contrast (WCAG)', () => {
  it('computes the ratio and picks the readable text colour', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#1f5eff', '#ffffff')).toBeGreaterThan(4.5);
    expect(textOn('#ffeb3b')).toBe('#14171f');
    expect(textOn('#0a7d4f')).toBe('#ffffff');
  });

  it('every colour gets a button and link text of at least 4.5:1', () => {
    for (const c of ['#ffffff', '#ffeb3b', '#808080', '#7f7f7f', '#00ff00', '#e2136e', '#000000', '#1f5eff']) {
      const { background, ink } = buttonColors(c);
      expect(contrastRatio(background, ink), c).toBeGreaterThanOrEqual(4.5);
      expect(contrastRatio(readableOnWhite(c), '#ffffff'), c).toBeGreaterThanOrEqual(4.5);
    }
  });
});

describe('logo check by magic bytes', () => {
  it('reads PNG, JPEG and WebP sizes', () => {
    expect(checkLogo(makePng(64, 32))).toEqual({ contentType: 'image/png', width: 64, height: 32 });
    expect(checkLogo(jpegHeader(200, 100))).toEqual({ contentType: 'image/jpeg', width: 200, height: 100 });
    expect(checkLogo(webpHeader(300, 120))).toEqual({ contentType: 'image/webp', width: 300, height: 120 });
  });

  it.each([
    ['svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'BRAND_LOGO_UNSUPPORTED_TYPE'],
    ['xml svg', Buffer.from('<?xml version="1.0"?>\n<svg></svg>'), 'BRAND_LOGO_UNSUPPORTED_TYPE'],
    ['gif', Buffer.from('GIF89a\x10\x00\x10\x00', 'latin1'), 'BRAND_LOGO_UNSUPPORTED_TYPE'],
    ['html named .png', Buffer.from('<html><body>hi</body></html>'), 'BRAND_LOGO_UNSUPPORTED_TYPE'],
    ['tiny', makePng(8, 8), 'BRAND_LOGO_BAD_DIMENSIONS'],
    ['huge', webpHeader(5000, 100), 'BRAND_LOGO_BAD_DIMENSIONS'],
    ['oversize', makePng(32, 32, [1, 2, 3], 70_000), 'BRAND_LOGO_TOO_LARGE'],
  ])('refuses %s', (_name, bytes, code) => {
    expect(() => checkLogo(bytes)).toThrow(expect.objectContaining({ code }));
  });
});

describe("the checkout script's refusals in Bangla", () => {
  it('every code the checkout page shows a customer has its own Bangla words (the rest reload the page)', () => {
    const script = readFileSync(new URL('../../server/http/checkout-pages/assets/checkout.js', import.meta.url), 'utf8');
    const reloads = JSON.parse(/var RELOAD_CODES = (\[[^\]]*\]);/.exec(script)![1]!.replace(/'/g, '"')) as string[];
    expect(reloads).toContain('PAYMENT_EXPIRED');
    const { startTransaction, replaceSubmission, cancel } = checkoutPaymentsContract;
    const routeCodes = [startTransaction, replaceSubmission, cancel].flatMap((r) => [...r.metadata.errors]);
    // Every route also answers these; CONFLICT on a change of the id reloads (checkout.js).
    const shown = [...new Set([...routeCodes, 'VALIDATION_ERROR', 'RATE_LIMITED'])].filter((c) => !reloads.includes(c) && c !== 'CONFLICT');
    expect(shown.length).toBeGreaterThan(5);
    const missing = shown.filter((c) => !(`js_code_${c}` in catalogs.bn) || /^[ -~]*$/.test((catalogs.bn as Record<string, string>)[`js_code_${c}`]!));
    expect(missing).toEqual([]);
  });
});

describe('days and quantities in Bangla', () => {
  it('a due day in Bangla digits and month, never moved by a zone; English as given', () => {
    expect(formatDayIn('bn', '2026-12-12')).toBe('১২ ডিসেম্বর ২০২৬');
    expect(formatDayIn('bn', '2027-01-01')).toBe('১ জানুয়ারি ২০২৭');
    expect(formatDayIn('en', '2026-12-12')).toBe('2026-12-12');
    expect(formatDayIn('bn', 'not a day')).toBe('not a day');
  });
  it('a quantity exactly, in Bangla digits', () => {
    expect(formatQuantityIn('bn', '0.5')).toBe('০.৫');
    expect(formatQuantityIn('bn', '1250.125')).toBe('১,২৫০.১২৫');
    expect(formatQuantityIn('en', '1250.125')).toBe('1250.125');
  });
});
