import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { launchChromium } from './support/browser.ts';
import { logIn, openConsolePage, unexpectedErrors } from './console-support.ts';

/**
 * The add-operator form refuses a brand list that does not read as brand ids
 * (it would otherwise be sent as "every brand"): a field error, nothing sent.
 */

let t: TestContext;
let browser: Browser;
let owner: { email: string; password: string };

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  const res = await t.request('POST', '/api/admin/v1/operators', { token: t.runtime.deps.secrets.adminToken, body: { email: 'owner@operators.test', name: 'Owner', role: 'owner' } });
  expect(res.status).toBe(201);
  owner = { email: 'owner@operators.test', password: res.body.data.password };
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

it('a brand list that does not parse is a field error and nothing is sent; a valid one creates the operator', async () => {
  const brand = await t.createBrand('Shop A');
  const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, 1280);
  const creates: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/admin/v1/operators') creates.push(r.postData() ?? '');
  });
  await page.goto(`${t.baseUrl}/admin/operators`);
  await logIn(page, owner.email, owner.password);
  await page.getByRole('button', { name: 'Add operator' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('E-mail').fill('scoped@operators.test');
  await dialog.getByLabel('Name').fill('Scoped');
  for (const text of ['1 2', 'Shop A']) {
    await dialog.getByLabel('Brand ids').fill(text);
    await dialog.getByRole('button', { name: 'Add operator' }).click();
    const error = dialog.locator('#op-brands-error');
    await error.waitFor();
    expect(await error.innerText()).toContain('Not a brand id');
    expect(await dialog.getByLabel('Brand ids').getAttribute('aria-invalid')).toBe('true');
  }
  expect(creates).toEqual([]);
  expect(await t.sql('SELECT id FROM operators WHERE email = $1', ['scoped@operators.test'])).toEqual([]);

  await dialog.getByLabel('Brand ids').fill(String(brand.brandId));
  await dialog.getByRole('button', { name: 'Add operator' }).click();
  await page.getByTestId('one-time-password').waitFor();
  expect(creates.map((b) => JSON.parse(b).brand_ids)).toEqual([[brand.brandId]]);
  expect(unexpectedErrors(errors)).toEqual([]);
  await ctx.close();
});
