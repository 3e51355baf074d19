import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { makePng } from '../support/images.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, openConsolePage, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * The brands screen's "Checkout look" card in a real Chromium: an owner uploads
 * a logo and sees it, is told why an SVG and a bad colour are refused (under the
 * field, with the code), saves a colour and support contact. At 1280 and 375 px, axe clean.
 */

let t: TestContext;
let browser: Browser;
let owner: { email: string; password: string };
const dir = mkdtempSync(path.join(tmpdir(), 'brand-look-'));

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  await t.createBrand('Look Shop');
  const res = await adminRequest(t, 'POST', '/operators', { email: 'owner@look.test', name: 'The owner', role: 'owner' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  owner = { email: 'owner@look.test', password: res.body.data.password };
  writeFileSync(path.join(dir, 'logo.png'), makePng(64, 64, [226, 19, 110]));
  writeFileSync(path.join(dir, 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

for (const width of [1280, 375] as const) {
  it(`owner at ${width} px: uploads a logo, sees an SVG and a bad colour refused, saves colour and contact`, async () => {
    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, width);
    await page.goto(`${t.baseUrl}/admin/brands`);
    await logIn(page, owner.email, owner.password);
    await page.getByRole('heading', { name: 'Checkout look of Look Shop' }).waitFor();

    await page.setInputFiles('#brand-logo-file', path.join(dir, 'logo.svg'));
    await expect.poll(() => page.locator('#brand-logo-file-error').innerText().catch(() => '')).toContain('BRAND_LOGO_UNSUPPORTED_TYPE');

    await page.setInputFiles('#brand-logo-file', path.join(dir, 'logo.png'));
    const logo = page.getByTestId('brand-logo');
    await logo.waitFor();
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);

    await page.fill('#brand-color', 'pink');
    await page.getByRole('button', { name: 'Save checkout look' }).click();
    await expect.poll(() => page.locator('#brand-color-error').innerText().catch(() => '')).toContain('INVALID_BRAND_COLOR');
    await expectAccessible(page, `brand look with errors at ${width}`);

    await page.fill('#brand-color', '#e2136e');
    await page.fill('#brand-support-phone', '+880 1700-000000');
    await page.getByRole('button', { name: 'Save checkout look' }).click();
    await page.getByText('Checkout look saved.').waitFor();
    const [row] = await t.sql<{ primary_color: string; support_phone: string }>("SELECT primary_color, support_phone FROM brands WHERE name = 'Look Shop'");
    expect(row).toEqual({ primary_color: '#e2136e', support_phone: '+880 1700-000000' });
    await expectAccessible(page, `brand look at ${width}`);
    // The SVG's refusal is a 415 the browser logs; nothing else may fail.
    expect(unexpectedErrors(errors).filter((e) => !/status of 415/.test(e))).toEqual([]);
    await ctx.close();
  });
}
