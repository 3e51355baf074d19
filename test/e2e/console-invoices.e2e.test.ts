import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PaycollectMerchant } from '../../clients/merchant/index.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * The Invoices screen in a real Chromium against the real server: an owner
 * filters the list, opens an invoice (lines, totals, links), is told plainly
 * when it cannot be e-mailed (no SMTP server configured), and voids it after a
 * confirmation; the list then shows it void and offers no void again. At 1280
 * and 375 px, axe clean.
 */

let t: TestContext;
let browser: Browser;
let merchant: PaycollectMerchant;
const owner = { email: 'owner@invoices.test', password: '' };

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  const brand = await t.createBrand('Invoice Shop');
  merchant = new PaycollectMerchant({ apiKey: brand.apiKey, baseUrl: t.baseUrl });
  const res = await adminRequest(t, 'POST', '/operators', { email: owner.email, name: 'The owner', role: 'owner' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  owner.password = res.body.data.password;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.getByRole('status').filter({ hasText: /^Loading/ }).waitFor({ state: 'detached' }).catch(() => undefined);
}

const due = () => new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);

for (const width of [1280, 375] as const) {
  it(`owner at ${width} px: filters, opens an invoice, sees why it cannot be e-mailed, voids it`, async () => {
    const inv = await merchant.invoices.create({
      customer: { name: `Karim ${width}`, email: `karim${width}@example.com` },
      currency: 'BDT',
      due_date: due(),
      status: 'open',
      lines: [{ description: `Consulting ${width}`, quantity: '3', unit_price: '1250.50' }],
    });
    await merchant.invoices.create({ customer: { email: `draft${width}@example.com` }, currency: 'BDT', due_date: due(), lines: [{ description: 'Draft work', quantity: '1', unit_price: '10.00' }] });

    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, width);
    await page.goto(`${t.baseUrl}/admin/invoices`);
    await logIn(page, owner.email, owner.password);
    await page.getByRole('heading', { name: 'Invoices', level: 1 }).waitFor();
    await settled(page);
    await page.getByLabel('Status').selectOption('open');
    await settled(page);
    const open = page.getByRole('button', { name: `Open invoice ${inv.number} of Invoice Shop` });
    await open.waitFor();
    expect(await page.getByRole('table', { name: 'Invoices' }).innerText()).not.toContain('Draft work');
    await expectAccessible(page, `invoices ${width}`);

    await open.click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('table', { name: 'Lines' }).waitFor();
    expect(await dialog.innerText()).toContain(`Consulting ${width}`);
    expect(await dialog.innerText()).toContain('3751.50 BDT');
    expect(await dialog.getByRole('link', { name: 'Hosted page' }).getAttribute('href')).toBe(inv.hosted_url);

    // No SMTP server is configured: the console says so and nothing changes.
    await dialog.getByRole('button', { name: 'E-mail again' }).click();
    await dialog.getByText(/SMTP/).waitFor();
    expect((await merchant.invoices.retrieve(inv.id)).last_sent_at).toBeNull();
    await expectAccessible(page, `invoice dialog ${width}`);
    await shot(page, `invoices-${width}-dialog`);

    await dialog.getByRole('button', { name: 'Void…' }).click();
    await dialog.getByRole('button', { name: 'Void invoice' }).click();
    await expect.poll(async () => (await merchant.invoices.retrieve(inv.id)).status).toBe('void');
    // Once the dialog has the void invoice again, it offers neither e-mail nor void.
    await expect.poll(async () => (await dialog.getByRole('button', { name: /^(E-mail again|Void…)$/ }).count())).toBe(0);
    expect(unexpectedErrors(errors).filter((e) => !/status of 503/.test(e))).toEqual([]);
    await ctx.close();
  });
}
